"""Extensions: Python modules that shape ``tau`` without forking it.

An extension is a module with ``def setup(tau: ExtensionAPI) -> None``, found in
``$TAU_HOME/extensions/``, ``.tau/extensions/``, installed packages, ``--extension PATH`` and the
``tau.extensions`` entry point of installed distributions. In ``setup`` it registers tools,
slash commands and event handlers (:class:`ExtensionAPI`); a handler can block or change a tool
call (:class:`ToolCallEvent`, :class:`Block`) and change the messages of the next model call
(:class:`ContextEvent`). See ``docs/cli/extensions.md`` and ``examples/extensions/``.
"""

from tau.cli.extensions.api import (
    Block,
    ContextEvent,
    ExtensionAPI,
    ExtensionUI,
    HeadlessUI,
    SessionEvent,
    ToolCallEvent,
)
from tau.cli.extensions.bus import DEFAULT_TIMEOUT, EventBus
from tau.cli.extensions.host import (
    Customizations,
    ExtensionOptions,
    declared_flags,
    join_flag_values,
    preload,
    unknown_flags,
)

__all__ = [
    "DEFAULT_TIMEOUT",
    "Block",
    "ContextEvent",
    "Customizations",
    "EventBus",
    "ExtensionAPI",
    "ExtensionOptions",
    "ExtensionUI",
    "HeadlessUI",
    "SessionEvent",
    "ToolCallEvent",
    "declared_flags",
    "join_flag_values",
    "preload",
    "unknown_flags",
]
