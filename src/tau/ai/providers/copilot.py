"""Request headers GitHub Copilot derives from the conversation.

Copilot bills and rate-limits by who started a request and whether it carries images; every
adapter that can talk to Copilot adds these when ``model.provider == "github-copilot"``. The
static identity headers (User-Agent, Editor-Version…) live in ``model.headers``.
"""

from __future__ import annotations

from tau.ai.core.types import Context, ImageContent, ToolResultMessage, UserMessage

COPILOT_PROVIDER = "github-copilot"


def copilot_dynamic_headers(context: Context) -> dict[str, str]:
    """``X-Initiator``, ``Openai-Intent`` and, when images are sent, ``Copilot-Vision-Request``."""
    messages = context.messages
    last_is_user = not messages or isinstance(messages[-1], UserMessage)
    headers = {
        "X-Initiator": "user" if last_is_user else "agent",
        "Openai-Intent": "conversation-edits",
    }
    if any(_has_image(m) for m in messages):
        headers["Copilot-Vision-Request"] = "true"
    return headers


def _has_image(message: object) -> bool:
    if isinstance(message, UserMessage | ToolResultMessage) and not isinstance(
        message.content, str
    ):
        return any(isinstance(block, ImageContent) for block in message.content)
    return False
