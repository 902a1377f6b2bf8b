"""tau: one small, exact, fast streaming API over every major LLM provider, and an agent loop.

``tau.ai`` is one stateless LLM call as a typed event stream; ``tau.agent`` runs turns and
tools on top of it; ``tau.cli`` is the ``tau`` command.
"""

__version__ = "0.1.0"
