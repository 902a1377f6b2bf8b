"""Agent messages: the three LLM messages plus the message types an application registers.

TypeScript's pi extends ``AgentMessage`` by declaration merging; Python has no such thing, so
an application registers each of its own roles once::

    @dataclass
    class Notification:
        text: str
        timestamp: int = field(default_factory=now_ms)
        role: Literal["notification"] = "notification"

    register_message_type("notification", Notification)

A registered type is a pydantic model or a dataclass with a ``role`` field. It lives in the
transcript next to LLM messages, is dropped by :func:`default_convert_to_llm` (a custom
``convert_to_llm`` may translate it instead), and round-trips through JSON with
:func:`dump_agent_message` / :func:`load_agent_message`, the role being the discriminator.
LLM messages keep exactly the pi JSON form of :mod:`tau.ai.capabilities.serialization`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any, Protocol, TypeAlias, runtime_checkable

from pydantic import BaseModel, TypeAdapter

from tau.ai import (
    AssistantMessage,
    Message,
    SerializationError,
    ToolResultMessage,
    UserMessage,
    dump_message,
    load_message,
)

__all__ = [
    "LLM_ROLES",
    "AgentMessage",
    "CustomMessage",
    "default_convert_to_llm",
    "dump_agent_message",
    "load_agent_message",
    "message_role",
    "register_message_type",
    "registered_message_types",
    "unregister_message_type",
]

LLM_ROLES = ("user", "assistant", "toolResult")
"""The roles a provider understands; every other role is application-defined."""


@runtime_checkable
class CustomMessage(Protocol):
    """What the loop needs of an application message: a ``role`` that is not an LLM role."""

    @property
    def role(self) -> str: ...


AgentMessage: TypeAlias = UserMessage | AssistantMessage | ToolResultMessage | CustomMessage
"""A transcript entry: an LLM message or a registered application message."""


class _Entry:
    __slots__ = ("adapter", "cls")

    def __init__(self, cls: type[Any]) -> None:
        self.cls = cls
        # Dataclasses go through a TypeAdapter; pydantic models use their own methods.
        self.adapter: TypeAdapter[Any] | None = (
            None if issubclass(cls, BaseModel) else TypeAdapter(cls)
        )

    def dump(self, message: Any) -> dict[str, Any]:
        if self.adapter is None:
            data: dict[str, Any] = message.model_dump(mode="json", by_alias=True)
        else:
            data = self.adapter.dump_python(message, mode="json", by_alias=True)
        data["role"] = message.role
        return data

    def load(self, data: Mapping[str, Any]) -> Any:
        if self.adapter is None:
            return self.cls.model_validate(data)
        return self.adapter.validate_python(dict(data))


_by_role: dict[str, _Entry] = {}
_by_class: dict[type[Any], _Entry] = {}


def _has_role_field(cls: type[Any]) -> bool:
    if isinstance(cls, type) and issubclass(cls, BaseModel):
        return "role" in cls.model_fields
    if dataclasses.is_dataclass(cls):
        return any(f.name == "role" for f in dataclasses.fields(cls))
    return False


def register_message_type(role: str, cls: type[Any]) -> None:
    """Make ``cls`` the type of application messages with ``role``.

    ``cls`` must be a pydantic model or a dataclass with a ``role`` field. Registering the same
    class again is a no-op; another class for a taken role, or an LLM role, is an error.
    """
    if role in LLM_ROLES:
        raise ValueError(f"role {role!r} is an LLM message role and cannot be registered")
    if not isinstance(cls, type) or not _has_role_field(cls):
        raise TypeError(
            f"{cls!r} must be a pydantic model or a dataclass with a 'role' field "
            f"to be registered as the {role!r} message type"
        )
    existing = _by_role.get(role)
    if existing is not None:
        if existing.cls is cls:
            return
        raise ValueError(
            f"message role {role!r} is already registered to {existing.cls.__qualname__}"
        )
    entry = _Entry(cls)
    _by_role[role] = entry
    _by_class[cls] = entry


def unregister_message_type(role: str) -> None:
    """Forget the type registered for ``role`` (no-op if none)."""
    entry = _by_role.pop(role, None)
    if entry is not None:
        _by_class.pop(entry.cls, None)


def registered_message_types() -> dict[str, type[Any]]:
    """The registered application roles and their classes."""
    return {role: entry.cls for role, entry in _by_role.items()}


def message_role(message: object) -> str | None:
    """The ``role`` of any transcript entry (None if it has none)."""
    role = getattr(message, "role", None)
    return role if isinstance(role, str) else None


def default_convert_to_llm(messages: Iterable[AgentMessage]) -> list[Message]:
    """Keep the user, assistant and tool-result messages; drop every application message."""
    return [
        m for m in messages if isinstance(m, UserMessage | AssistantMessage | ToolResultMessage)
    ]


def dump_agent_message(message: AgentMessage) -> dict[str, Any]:
    """A transcript entry as JSON-compatible data (pi JSON for LLM messages)."""
    if isinstance(message, UserMessage | AssistantMessage | ToolResultMessage):
        return dump_message(message)
    entry = _by_class.get(type(message))
    if entry is None:
        role = message_role(message)
        entry = _by_role.get(role) if role is not None else None
        if entry is None or not isinstance(message, entry.cls):
            raise TypeError(
                f"cannot serialise {type(message).__qualname__} (role {role!r}): "
                "register its type with register_message_type(role, cls)"
            )
    return entry.dump(message)


def load_agent_message(data: Any, path: str = "message") -> AgentMessage:
    """A transcript entry from :func:`dump_agent_message` output.

    Raises :class:`~tau.ai.capabilities.serialization.SerializationError` for an unknown role or data the
    registered type rejects.
    """
    if not isinstance(data, Mapping):
        raise SerializationError(f"{path}: expected an object, got {type(data).__name__}")
    role = data.get("role")
    if role in LLM_ROLES:
        return load_message(data, path)
    entry = _by_role.get(role) if isinstance(role, str) else None
    if entry is None:
        known = ", ".join([*LLM_ROLES, *_by_role]) or "none"
        raise SerializationError(f"{path}.role: unknown message role {role!r} (known: {known})")
    try:
        loaded: AgentMessage = entry.load(data)
    except ValueError as exc:
        raise SerializationError(f"{path}: invalid {role!r} message: {exc}") from exc
    return loaded
