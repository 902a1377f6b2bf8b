"""tau.cli: the ``tau`` command (built on tau.agent)."""
