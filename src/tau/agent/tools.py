"""Executable tools: :class:`AgentTool` (a :class:`~tau.ai.core.types.Tool` that can run) and
:func:`tool_from_function` / :func:`agent_tool`, which build one from a typed Python function.

A tool reports failure by raising: the loop turns the exception into an error result carrying
its message, which the model sees and can act on. A normal return is never an error.

A synchronous tool runs in a worker thread (see :func:`run_tool`), so a blocking
call never stalls the event loop: other tools, listeners and abort go on, and an aborted run
stops waiting for it after the grace period. The thread cannot be killed; it is a daemon, so a
tool stuck for good never keeps the process from exiting. ``threaded=False`` opts out.

Function tools take their parameter schema from the signature and the docstring (Google
``Args:`` sections and Sphinx ``:param x:`` lines are read), built as a pydantic model so that
arguments are validated and coerced (``"5"`` becomes ``5`` for an ``int``) before the function
runs. Parameters named ``tool_call_id``, ``signal`` (or annotated :class:`AbortSignal`) and
``on_update`` are not shown to the model; the loop passes them in::

    @agent_tool
    async def read_file(path: str, limit: int = 100, signal: AbortSignal | None = None) -> str:
        \"\"\"Read a text file.

        Args:
            path: The file to read.
            limit: Read at most this many lines.
        \"\"\"
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias, overload

from pydantic import BaseModel, ConfigDict, Field, create_model

from tau.agent.tool_threads import run_in_thread
from tau.ai import AbortSignal, ImageContent, TextContent, Tool, UserContent

if typing.TYPE_CHECKING:
    from tau.agent.approval import ApprovalRequirement

__all__ = [
    "AgentTool",
    "AgentToolResult",
    "ToolResultLike",
    "ToolUpdateCallback",
    "agent_tool",
    "as_tool_result",
    "error_tool_result",
    "run_in_thread",
    "run_tool",
    "tool_from_function",
]


@dataclass(slots=True)
class AgentToolResult:
    """What a tool returns: ``content`` goes to the model, ``details`` only to apps and UIs."""

    content: list[UserContent] = field(default_factory=list)
    details: Any = None


ToolUpdateCallback: TypeAlias = Callable[[Any], None]
"""Called by a running tool with its whole partial result so far (not a delta).

Accepts what a tool may return (an :class:`AgentToolResult`, a string, content blocks). Safe
to call from a worker thread; calls made after the tool has finished are ignored.
"""

ExecuteFn: TypeAlias = Callable[[str, Any, AbortSignal, ToolUpdateCallback], Any]
"""``(tool_call_id, params, signal, on_update) -> result`` or an awaitable of it."""

PrepareFn: TypeAlias = Callable[[dict[str, Any]], Any]
"""``raw_arguments -> arguments`` (or an awaitable of them), run before validation."""


def error_tool_result(message: str) -> AgentToolResult:
    """The result recorded for a failed, blocked, skipped or unknown tool call."""
    return AgentToolResult([TextContent(message)], {})


def _is_block(item: object) -> bool:
    return isinstance(item, str | TextContent | ImageContent)


def as_tool_result(value: object) -> AgentToolResult:
    """Normalise what a tool returned into an :class:`AgentToolResult`.

    A string becomes one text block; a list of strings and content blocks becomes the content;
    ``None`` is empty content; any other value (a dict, a number, a list of data) is sent to the
    model as its JSON text and kept as ``details``.
    """
    if isinstance(value, AgentToolResult):
        return value
    if isinstance(value, str):
        return AgentToolResult([TextContent(value)])
    if value is None:
        return AgentToolResult([])
    if isinstance(value, TextContent | ImageContent):
        return AgentToolResult([value])
    if isinstance(value, list | tuple) and all(_is_block(item) for item in value):
        return AgentToolResult(
            [TextContent(item) if isinstance(item, str) else item for item in value]
        )
    return AgentToolResult([TextContent(_to_json_text(value))], value)


def _describe_callable(fn: Callable[..., Any]) -> str:
    """A short name for ``fn`` in messages and thread names."""
    return str(getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or fn)


def _is_async(fn: Callable[..., Any]) -> bool:
    if inspect.iscoroutinefunction(fn):
        return True
    call = getattr(fn, "__call__", None)  # noqa: B004 - an object with an async __call__
    return call is not None and inspect.iscoroutinefunction(call)


def _to_json_text(value: object) -> str:
    from pydantic_core import to_json

    return to_json(value, fallback=repr).decode()


class AgentTool(Tool):
    """A tool the agent can run: the schema of :class:`~tau.ai.core.types.Tool` plus behaviour.

    Give ``execute`` (sync or async) or override :meth:`execute` in a subclass.
    ``prepare_arguments`` repairs raw model output before validation (stringified JSON, renamed
    fields); its exceptions become error results. ``label`` is the human-readable name UIs show;
    the loop never reads it. ``threaded`` says where the loop calls ``execute`` (see
    :func:`run_tool`): ``None`` (the default) means in a worker thread when it is synchronous and
    on the event loop when it is a coroutine function; ``False`` keeps a synchronous one on the
    loop (it must not block).

    ``requires_approval`` (True, or a function of the :class:`~tau.agent.approval.PendingCall`,
    sync or async) makes each call wait for the agent's approver or pause the run;
    ``external=True`` makes a tool the caller runs: it has no ``execute``, and its calls always
    pause the run (see :mod:`tau.agent.approval`). ``idempotent=False`` tells a durable run
    (``tau.durable``) never to run a call again that was running when its process died.
    """

    __slots__ = (
        "_execute",
        "_prepare",
        "external",
        "idempotent",
        "label",
        "requires_approval",
        "threaded",
    )

    def __init__(
        self,
        name: str,
        description: str,
        parameters: dict[str, Any] | type[BaseModel] | None = None,
        *,
        execute: ExecuteFn | None = None,
        label: str | None = None,
        prepare_arguments: PrepareFn | None = None,
        threaded: bool | None = None,
        requires_approval: ApprovalRequirement = False,
        external: bool = False,
        idempotent: bool = True,
    ) -> None:
        super().__init__(name, description, parameters)
        if external and execute is not None:
            raise TypeError(f"AgentTool {name!r} is external (the caller runs it): give no execute")
        if not external and execute is None and type(self).execute is AgentTool.execute:
            raise TypeError(
                f"AgentTool {name!r} needs an execute function or an execute() override"
            )
        self._execute = execute
        self._prepare = prepare_arguments
        self.label = label if label is not None else name
        self.threaded = threaded
        self.requires_approval: ApprovalRequirement = requires_approval
        self.external = external
        self.idempotent = idempotent

    def prepare_arguments(self, raw: dict[str, Any]) -> Any:
        """Repair raw model arguments before validation (identity unless configured)."""
        if self._prepare is None:
            return raw
        return self._prepare(raw)

    def execute(
        self,
        tool_call_id: str,
        params: Any,
        signal: AbortSignal,
        on_update: ToolUpdateCallback,
    ) -> Any:
        """Run the tool with validated ``params``; returns (or resolves to) its result.

        The result is an :class:`AgentToolResult` or anything :func:`as_tool_result` accepts.
        Honour ``signal``: an aborted run waits only a short grace period for a running tool.
        """
        if self._execute is None:
            raise RuntimeError(f"tool {self.name!r} is external: the caller runs it")
        return self._execute(tool_call_id, params, signal, on_update)


async def run_tool(
    tool: AgentTool,
    tool_call_id: str,
    params: Any,
    signal: AbortSignal,
    on_update: ToolUpdateCallback,
) -> Any:
    """``tool.execute`` as the agent loop calls it: a synchronous one in a worker thread.

    Returns the tool's result, awaited if it was awaitable. ``tool.threaded`` decides; when it is
    None, a coroutine function runs on the loop and anything else in a thread.
    """
    # getattr: a subclass may skip AgentTool.__init__ and leave the slots unset.
    threaded = getattr(tool, "threaded", None)
    if threaded is None:
        execute = getattr(tool, "_execute", None) or type(tool).execute
        threaded = not _is_async(execute)
    if threaded:
        value = await run_in_thread(tool.execute, tool_call_id, params, signal, on_update)
    else:
        value = tool.execute(tool_call_id, params, signal, on_update)
    if inspect.isawaitable(value):
        value = await value
    return value


# --------------------------------------------------------------------------- function tools

_INJECTED = frozenset({"tool_call_id", "signal", "on_update"})


def _split_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """The description part of a docstring and the per-parameter descriptions."""
    if not doc:
        return "", {}
    text = inspect.cleandoc(doc)
    params: dict[str, str] = {}
    lines = text.splitlines()
    description: list[str] = []
    section: str | None = None
    current: str | None = None
    indent = 0
    for line in lines:
        stripped = line.strip()
        sphinx = re.match(r":param\s+(?:[^:]*\s)?(\w+)\s*:\s*(.*)", stripped)
        if sphinx:
            section, current = "sphinx", sphinx.group(1)
            params[current] = sphinx.group(2).strip()
            continue
        if re.match(r":(returns?|raises?|rtype|type)\b", stripped):
            section, current = "sphinx-other", None
            continue
        if re.fullmatch(r"(Args|Arguments|Parameters|Params)\s*:", stripped):
            section, current = "google", None
            indent = -1
            continue
        if re.fullmatch(r"(Returns?|Raises?|Yields?|Examples?|Notes?)\s*:", stripped):
            section, current = "other", None
            continue
        if section is None:
            description.append(line)
            continue
        if section == "google" and stripped:
            line_indent = len(line) - len(line.lstrip())
            entry = re.match(r"(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)", stripped)
            if entry and (indent < 0 or line_indent <= indent):
                indent = line_indent
                current = entry.group(1).lstrip("*")
                params[current] = entry.group(2).strip()
                continue
        if section in ("google", "sphinx") and current is not None and stripped:
            params[current] = f"{params[current]} {stripped}".strip()
    return "\n".join(description).strip(), params


def _is_signal(annotation: Any) -> bool:
    if annotation is AbortSignal:
        return True
    return any(arg is AbortSignal for arg in typing.get_args(annotation))


class _FunctionTool(AgentTool):
    __slots__ = ("_fn", "_injected", "_is_async", "_threaded")

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str,
        description: str,
        parameters: type[BaseModel],
        injected: dict[str, str],
        label: str | None,
        threaded: bool,
        requires_approval: ApprovalRequirement = False,
        idempotent: bool = True,
    ) -> None:
        super().__init__(
            name,
            description,
            parameters,
            label=label,
            threaded=False,
            requires_approval=requires_approval,
            idempotent=idempotent,
        )
        self._fn = fn
        self._injected = injected
        self._is_async = inspect.iscoroutinefunction(fn)
        self._threaded = threaded

    async def execute(
        self,
        tool_call_id: str,
        params: Any,
        signal: AbortSignal,
        on_update: ToolUpdateCallback,
    ) -> Any:
        model = self.parameters
        assert isinstance(model, type)
        if not isinstance(params, model):
            params = model.model_validate(params)
        kwargs = {name: getattr(params, name) for name in model.model_fields}
        available = {"tool_call_id": tool_call_id, "signal": signal, "on_update": on_update}
        for param, kind in self._injected.items():
            kwargs[param] = available[kind]
        if self._is_async:
            return await self._fn(**kwargs)
        if self._threaded:
            return await run_in_thread(self._fn, **kwargs)
        result = self._fn(**kwargs)
        if inspect.isawaitable(result):
            result = await result
        return result


def tool_from_function(
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    description: str | None = None,
    label: str | None = None,
    threaded: bool = True,
    requires_approval: ApprovalRequirement = False,
    idempotent: bool = True,
) -> AgentTool:
    """Build an :class:`AgentTool` from a typed function (sync or async).

    The name defaults to the function's, the description to its docstring (without the
    argument section). A sync function runs in a worker thread, so blocking work does not stall
    the event loop or the other tools of a parallel batch; ``threaded=False`` calls it on the
    loop instead (for quick functions that must touch loop-bound objects).
    """
    if not callable(fn):
        raise TypeError(f"tool_from_function needs a function, got {fn!r}")
    tool_name = name or getattr(fn, "__name__", None)
    if not tool_name or not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", tool_name):
        raise ValueError(
            f"invalid tool name {tool_name!r}: use 1-64 letters, digits, '_' or '-' (pass name=)"
        )
    doc_description, doc_params = _split_docstring(inspect.getdoc(fn))
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception as exc:
        raise TypeError(f"cannot resolve the type hints of {tool_name!r}: {exc}") from exc
    fields: dict[str, Any] = {}
    injected: dict[str, str] = {}
    for param in inspect.signature(fn).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD, param.POSITIONAL_ONLY):
            raise TypeError(
                f"tool {tool_name!r}: parameter {param.name!r} must be an ordinary named "
                "parameter (no *args, **kwargs or positional-only parameters)"
            )
        annotation = hints.get(param.name, Any)
        if param.name in _INJECTED or _is_signal(annotation):
            injected[param.name] = "signal" if _is_signal(annotation) else param.name
            continue
        default = ... if param.default is param.empty else param.default
        fields[param.name] = (
            annotation,
            Field(default, description=doc_params.get(param.name) or None),
        )
    model_name = "".join(part.title() for part in re.split(r"[_-]", tool_name)) + "Params"
    parameters = create_model(
        model_name, __config__=ConfigDict(arbitrary_types_allowed=False), **fields
    )
    return _FunctionTool(
        fn,
        name=tool_name,
        description=description if description is not None else doc_description,
        parameters=parameters,
        injected=injected,
        label=label,
        threaded=threaded,
        requires_approval=requires_approval,
        idempotent=idempotent,
    )


@overload
def agent_tool(fn: Callable[..., Any], /) -> AgentTool: ...


@overload
def agent_tool(
    *,
    name: str | None = None,
    description: str | None = None,
    label: str | None = None,
    threaded: bool = True,
    requires_approval: ApprovalRequirement = False,
    idempotent: bool = True,
) -> Callable[[Callable[..., Any]], AgentTool]: ...


def agent_tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    label: str | None = None,
    threaded: bool = True,
    requires_approval: ApprovalRequirement = False,
    idempotent: bool = True,
) -> AgentTool | Callable[[Callable[..., Any]], AgentTool]:
    """Decorator form of :func:`tool_from_function`: ``@agent_tool`` or ``@agent_tool(...)``."""
    if fn is not None:
        return tool_from_function(fn)

    def decorate(f: Callable[..., Any]) -> AgentTool:
        return tool_from_function(
            f,
            name=name,
            description=description,
            label=label,
            threaded=threaded,
            requires_approval=requires_approval,
            idempotent=idempotent,
        )

    return decorate


ToolResultLike: TypeAlias = AgentToolResult | str | Sequence[str | UserContent] | None
"""What a tool may return (other values are sent as JSON, see :func:`as_tool_result`)."""
