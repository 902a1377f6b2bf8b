"""``tau --mode rpc``: drive the agent from another program over stdin and stdout (pi's shape).

Each line of stdin is one JSON command, ``{"id"?, "type", ...}``; stdout carries one JSON
object per line: the agent's events (as ``tau --json`` prints them, with no ``id``), the
``auto_compaction_start``/``auto_compaction_end`` events, and one response per command,
``{"id"?, "type": "response", "command", "success", "data"?|"error"?}``, with the command's
``id`` when it had one. A line that is not a JSON object, names no known command, or lacks a
field gets ``success: false`` and the process goes on. When stdin closes, tau waits for the run
in progress to finish, then exits.

Commands:

* ``prompt {message, images?, streamingBehavior?}``: answered as soon as the run starts; the run's
  events follow. While a run is going on, ``streamingBehavior`` must be ``steer`` or
  ``followUp`` (the message is queued), else the prompt is refused.
  ``images`` are pi's ``[{"type": "image", "data": base64, "mimeType"}]``, for models that
  take images.
* ``steer {message, images?}``, ``follow_up {message, images?}``: queue a message (delivered after the current
  tool calls, or when the agent would stop).
* ``abort``: abort the run or compaction; answered once the agent is idle. Queued steering and
  follow-up messages are dropped, never sent with the next prompt: a
  ``{"type": "queue_dropped", "steering": [text], "followUp": [text]}`` event lists them.
* ``get_state``: model, thinking level, whether a run or compaction is going on, session
  file and id, message and queue counts.
* ``set_model {provider, modelId}`` (or ``{model: "provider/id"}``), ``set_thinking {level}``
  (also ``set_thinking_level``): recorded in the session.
* ``compact {customInstructions?}``: answered with the compaction's result.
* ``new_session``; also ``get_messages``, ``get_last_assistant_text``, ``get_session_stats``
  and ``export_html {outputPath?}`` (a path inside the working directory or an
  ``--allow-path`` root, as for the tools).
* ``get_commands``: every command with its fields as JSON Schema.
* ``approve {toolCallId, arguments?}``, ``deny {toolCallId, reason?}``: decide a tool call a
  ``tool_approval_request`` event announced (:mod:`tau.cli.rpc_approvals`).

Each command is declared once in :data:`~tau.cli.registry.RPC_COMMANDS` (name, help, fields,
handler): its fields are checked from that declaration before the handler runs, and
``get_commands`` serves the same declarations.

Tools that change files or run commands are asked about (a ``tool_approval_request`` event),
unless ``--yes``. Started with ``-c`` on a session whose last run stopped at calls waiting for
approval, tau asks about them at once and resumes that run with the answers.
"""

from __future__ import annotations

import asyncio
import binascii
import json
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import Any, BinaryIO, TextIO

from tau.agent import AgentEvent, dump_agent_message, event_to_json
from tau.ai import ImageContent, TextContent, UserContent, UserMessage, redact_secrets
from tau.cli.app import App, Settings, message_text
from tau.cli.app_events import AppEvent, dump_app_event, dump_compaction
from tau.cli.errors import EXIT_OK
from tau.cli.extensions.ui import RpcUI
from tau.cli.paused_run import asks
from tau.cli.registry import RPC_COMMANDS, Arg, FieldError
from tau.cli.rpc_approvals import RpcApprovals
from tau.cli.tools.paths import PathNotAllowedError

MAX_LINE = 16 * 1024 * 1024
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
MAX_IMAGES = 64
"""A command line longer than this is refused (and skipped to its end)."""

Handler = Callable[["RpcServer", dict[str, Any]], Awaitable[Any]]
rpc_command = RPC_COMMANDS.command
"""Declare an RPC command: its name, help and fields (checked before the handler runs)."""


class CommandFailed(Exception):
    """The command cannot be done; the message is the response's ``error``."""


def _text_field(command: dict[str, Any], name: str) -> str:
    value = command.get(name)
    if not isinstance(value, str) or not value.strip():
        raise CommandFailed(f'"{name}" must be a non-empty string')
    return value


_MESSAGE = (
    Arg("message", "the text", required=True),
    Arg(
        "images",
        'images for models that take them: [{"type": "image", "data": base64, "mimeType"}]',
        json_type="array",
    ),
)


def _message_field(server: RpcServer, command: dict[str, Any]) -> str | UserMessage:
    """The ``message`` with its ``images`` (``[{"type": "image", "data": base64, "mimeType"}]``,
    as in pi) when there are any; each image is checked before anything is queued or sent."""
    # `/template args` and `/skill:name args` are expanded, as pi's RPC mode does.
    text: str = server.app.custom.resources.expand(command["message"])
    images = command.get("images")
    if images is None or images == []:
        return text
    if len(images) > MAX_IMAGES:
        raise CommandFailed(f'"images" must be a list of at most {MAX_IMAGES} images')
    model = server.app.model
    if "image" not in model.input:
        raise CommandFailed(f"{model.provider}/{model.id} takes no images")
    content: list[UserContent] = [TextContent(text)]
    for index, image in enumerate(images):
        where = f'"images"[{index}]'
        if not isinstance(image, dict) or image.get("type", "image") != "image":
            raise CommandFailed(f'{where} must be {{"type": "image", "data", "mimeType"}}')
        mime, data = image.get("mimeType"), image.get("data")
        if mime not in IMAGE_TYPES:
            raise CommandFailed(f"{where}.mimeType must be one of {', '.join(sorted(IMAGE_TYPES))}")
        try:
            valid = (
                isinstance(data, str)
                and bool(data)
                and bool(binascii.a2b_base64(data, strict_mode=True))
            )
        except (binascii.Error, ValueError):
            valid = False
        if not valid:
            raise CommandFailed(f"{where}.data must be base64 image data")
        assert isinstance(data, str) and isinstance(mime, str)
        content.append(ImageContent(data=data, mime_type=mime))
    return UserMessage(content)


class RpcServer:
    """One RPC session: an :class:`App`, the command reader and the output."""

    def __init__(self, settings: Settings, out: TextIO | None = None) -> None:
        self.out = out or sys.stdout
        self.approvals = RpcApprovals(self.write)
        self.app = App(settings, self.approvals.ask, on_event=self._app_event)
        self.app.agent.subscribe(self._agent_event)
        self.tasks: set[asyncio.Task[Any]] = set()
        self.run: asyncio.Task[Any] | None = None
        self.closed = False

    # ----------------------------------------------------------------------- output

    def write(self, data: dict[str, Any] | str) -> None:
        """One line of output (a closed stdout ends the session)."""
        if self.closed:
            return
        line = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        try:
            self.out.write(line + "\n")
            self.out.flush()
        except (BrokenPipeError, ValueError):
            self.closed = True
            self.app.abort("stdout was closed")

    def respond(
        self, command: str | None, request_id: Any, *, data: Any = None, error: str | None = None
    ) -> None:
        """The response to one command."""
        response: dict[str, Any] = {} if request_id is None else {"id": request_id}
        response |= {"type": "response", "command": command, "success": error is None}
        if error is not None:
            response["error"] = redact_secrets(error)
        elif data is not None:
            response["data"] = data
        self.write(response)

    def _agent_event(self, event: AgentEvent) -> None:
        self.write(event_to_json(event))

    def _app_event(self, event: AppEvent) -> None:
        self.write(dump_app_event(event))

    # ----------------------------------------------------------------------- input

    async def handle_line(self, raw: bytes) -> None:
        """Parse and run one command line (a background one is only started)."""
        try:
            command = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            self.respond("parse", None, error=f"not a JSON command: {exc}")
            return
        except RecursionError:
            self.respond("parse", None, error="not a JSON command: nested too deeply")
            return
        if not isinstance(command, dict):
            self.respond("parse", None, error="a command must be a JSON object")
            return
        request_id = command.get("id")
        kind = command.get("type")
        found = RPC_COMMANDS.get(kind) if isinstance(kind, str) else None
        if found is None or found.handler is None:
            known = ", ".join(RPC_COMMANDS.names())
            self.respond(
                kind if isinstance(kind, str) else None,
                request_id,
                error=f"unknown command {kind!r} (known: {known})",
            )
            return
        assert isinstance(kind, str)  # a command was found under it
        try:
            RPC_COMMANDS.check_fields(found, command)
        except FieldError as exc:
            self.respond(kind, request_id, error=str(exc))
            return
        answer = self._answer(kind, request_id, found.handler, command)
        if not found.background:
            await answer
            return
        task = asyncio.get_running_loop().create_task(answer)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _answer(
        self, kind: str, request_id: Any, handler: Handler, command: dict[str, Any]
    ) -> None:
        try:
            data = await handler(self, command)
        except CommandFailed as exc:
            self.respond(kind, request_id, error=str(exc))
        except Exception as exc:  # a bad model name, an unwritable export file…
            self.respond(kind, request_id, error=str(exc) or type(exc).__name__)
        else:
            if kind != "prompt":  # a prompt is answered as its run starts
                self.respond(kind, request_id, data=data)

    async def serve(self, stdin: BinaryIO | None = None) -> int:
        """Read commands until stdin closes, then wait for the work in progress."""
        loop = asyncio.get_running_loop()
        lines: asyncio.Queue[bytes | None] = asyncio.Queue()
        source = stdin or sys.stdin.buffer

        def read() -> None:
            # A thread, not a pipe transport: stdin may be a file, a pipe or a terminal.
            try:
                while True:
                    raw = source.readline(MAX_LINE + 1)
                    if not raw:
                        break
                    if len(raw) > MAX_LINE and not raw.endswith(b"\n"):
                        while (rest := source.readline(MAX_LINE)) and not rest.endswith(b"\n"):
                            pass
                        raw = b"\0too long"
                    loop.call_soon_threadsafe(lines.put_nowait, raw)
            finally:
                loop.call_soon_threadsafe(lines.put_nowait, None)

        threading.Thread(target=read, name="tau-rpc-stdin", daemon=True).start()
        session = self.app.session.path if self.app.session else None
        await self.app.custom.start(RpcUI(self.write), "rpc", session)
        paused, tools = self.app.paused, self.app.agent.state.tools
        yes = self.app.settings.yes
        if paused is not None and any(asks(c, tools, yes=yes) for c in paused.pending):
            self.start_run(None)  # ask about the calls the session stopped at, then go on
        try:
            while (raw := await lines.get()) is not None and not self.closed:
                if raw == b"\0too long":
                    self.respond(
                        "parse", None, error=f"command line over {MAX_LINE} bytes: skipped"
                    )
                elif raw.strip():
                    await self.handle_line(raw.rstrip(b"\r\n"))
            self.approvals.close()  # nobody is left to decide: those runs pause
            while self.tasks:
                await asyncio.gather(*list(self.tasks), return_exceptions=True)
        finally:
            await self.app.aclose()
        return EXIT_OK

    # ----------------------------------------------------------------------- runs

    def start_run(self, text: str | UserMessage | None, *, command: bool = False) -> None:
        """Start a prompt's run in the background (None: resume the paused run;
        ``command``: an extension's command, whose ``tau.send`` starts the run)."""

        async def run() -> None:
            if text is None:
                await self.app.resume_paused()
            elif command and isinstance(text, str):
                sent: list[str] = []
                await self.app.custom.dispatch(text, _collect(sent))
                for message in sent:
                    await self.app.run(message)
            else:
                await self.app.run(text)

        self.run = asyncio.get_running_loop().create_task(run())
        self.tasks.add(self.run)
        self.run.add_done_callback(self.tasks.discard)

    async def wait_idle(self) -> None:
        """Return once no run is going on."""
        while self.run is not None and not self.run.done():
            await asyncio.wait({self.run})


@rpc_command(
    "prompt",
    "start a run (while one goes on: queue the message with streamingBehavior)",
    args=[
        *_MESSAGE,
        Arg(
            "streamingBehavior",
            "while a run goes on: steer (after the current tool calls) or followUp",
            choices=("steer", "followUp"),
        ),
    ],
)
async def _prompt(server: RpcServer, command: dict[str, Any]) -> None:
    text = _message_field(server, command)
    app = server.app
    behaviour = command.get("streamingBehavior")
    if (server.run is not None and not server.run.done()) or app.busy:
        if behaviour == "steer":
            app.agent.steer(text)
        elif behaviour == "followUp":
            app.agent.follow_up(text)
        else:
            raise CommandFailed(
                'the agent is working: give "streamingBehavior": "steer" or "followUp" to '
                "queue the message, or wait for agent_end"
            )
        server.respond("prompt", command.get("id"))
        return
    server.respond("prompt", command.get("id"))
    if isinstance(text, str) and app.custom.runs_command(text):
        # In the background: a command that asks the client must not stop the reading.
        server.start_run(text, command=True)
        return
    server.start_run(text)


@rpc_command("steer", "queue a message for after the current tool calls", args=_MESSAGE)
async def _steer(server: RpcServer, command: dict[str, Any]) -> None:
    server.app.agent.steer(_message_field(server, command))


@rpc_command("follow_up", "queue a message for when the agent would stop", args=_MESSAGE)
async def _follow_up(server: RpcServer, command: dict[str, Any]) -> None:
    server.app.agent.follow_up(_message_field(server, command))


@rpc_command("abort", "abort the run or compaction; answered once the agent is idle")
async def _abort(server: RpcServer, command: dict[str, Any]) -> None:
    queued = server.app.abort("Aborted")
    if queued:
        # Never sent with the next prompt: the client learns what was dropped.
        server.write(
            {
                "type": "queue_dropped",
                "steering": [message_text(m) for m in queued.steering],
                "followUp": [message_text(m) for m in queued.follow_ups],
            }
        )
    await server.wait_idle()


def _model_data(server: RpcServer) -> dict[str, Any]:
    model = server.app.model
    return {
        "provider": model.provider,
        "id": model.id,
        "name": model.name,
        "api": model.api,
        "contextWindow": model.context_window,
        "maxTokens": model.max_tokens,
        "reasoning": model.reasoning,
    }


@rpc_command("get_state", "model, thinking level, run and compaction state, session, counts")
async def _get_state(server: RpcServer, command: dict[str, Any]) -> dict[str, Any]:
    app = server.app
    agent = app.agent
    session = app.session
    return {
        "model": _model_data(server),
        "thinkingLevel": agent.state.thinking_level,
        "isStreaming": agent.state.is_streaming,
        "isCompacting": app.compacting,
        "steeringMode": agent.steering_mode,
        "followUpMode": agent.follow_up_mode,
        "sessionFile": str(session.path) if session else None,
        "sessionId": session.id if session else None,
        "autoCompactionEnabled": app.settings.compaction.enabled,
        "messageCount": len(agent.state.messages),
        "pendingMessageCount": len(agent.steering_queue) + len(agent.follow_up_queue),
        "pendingApprovals": list(server.approvals.waiting),
    }


@rpc_command(
    "set_model",
    "switch the model ({provider, modelId} or {model: provider/id})",
    args=[
        Arg("provider", "the provider (with modelId)"),
        Arg("modelId", "the model's id (with provider)"),
        Arg("model", "provider/id (instead of provider and modelId)"),
    ],
)
async def _set_model(server: RpcServer, command: dict[str, Any]) -> dict[str, Any]:
    spec = command.get("model")
    if not isinstance(spec, str):
        spec = f"{_text_field(command, 'provider')}/{_text_field(command, 'modelId')}"
    server.app.switch_model(spec)
    return _model_data(server)


@rpc_command(
    "set_thinking",
    "set the reasoning level",
    args=[Arg("level", "the level (off, minimal, low, medium, high, xhigh)", required=True)],
    aliases=["set_thinking_level"],
)
async def _set_thinking(server: RpcServer, command: dict[str, Any]) -> dict[str, Any]:
    server.app.set_thinking(command["level"])
    return {"thinkingLevel": server.app.agent.state.thinking_level}


@rpc_command(
    "compact",
    "summarise the older turns; answered with the result",
    args=[Arg("customInstructions", "what the summary should keep")],
    background=True,
)
async def _compact(server: RpcServer, command: dict[str, Any]) -> dict[str, Any]:
    instructions = command.get("customInstructions")
    return dump_compaction(await server.app.compact(instructions or None))


@rpc_command("new_session", "start a new session")
async def _new_session(server: RpcServer, command: dict[str, Any]) -> dict[str, Any]:
    session = server.app.new_session()
    return {"cancelled": False, "sessionFile": str(session.path) if session else None}


@rpc_command("get_messages", "the messages of the session")
async def _get_messages(server: RpcServer, command: dict[str, Any]) -> dict[str, Any]:
    return {"messages": [dump_agent_message(m) for m in server.app.agent.state.messages]}


@rpc_command("get_last_assistant_text", "the text of the last answer")
async def _get_last_text(server: RpcServer, command: dict[str, Any]) -> dict[str, Any]:
    return {"text": server.app.last_answer()}


@rpc_command("get_session_stats", "the session's file, message counts, tokens and cost")
async def _get_stats(server: RpcServer, command: dict[str, Any]) -> dict[str, Any]:
    info = server.app.session_info()
    usage = info.usage
    return {
        "sessionFile": str(info.path) if info.path else None,
        "sessionId": info.session_id,
        "model": info.model,
        "userMessages": info.user_messages,
        "assistantMessages": info.assistant_messages,
        "toolResults": info.tool_results,
        "contextTokens": info.context_tokens,
        "contextWindow": info.context_window,
        "tokens": {
            "input": usage.input_tokens,
            "output": usage.output_tokens,
            "cacheRead": usage.cache_read_tokens,
            "cacheWrite": usage.cache_write_tokens,
        },
        "cost": usage.cost,
    }


@rpc_command(
    "export_html",
    "write the conversation as HTML (to outputPath, or next to the session)",
    args=[Arg("outputPath", "where to write it")],
)
async def _export_html(server: RpcServer, command: dict[str, Any]) -> dict[str, Any]:
    output = command.get("outputPath")
    target = None
    if output:
        # The tools' path policy: inside the working directory or an --allow-path root.
        try:
            target = server.app.settings.workspace.resolve(output)
        except PathNotAllowedError as exc:
            raise CommandFailed(f'"outputPath": {exc}') from None
    path = server.app.export(target)
    return {"path": str(path)}


@rpc_command("get_commands", "every RPC command with its fields as JSON Schema")
async def _get_commands(server: RpcServer, command: dict[str, Any]) -> dict[str, Any]:
    return {"commands": RPC_COMMANDS.schema()}


def _collect(sent: list[str]) -> Callable[[str], Awaitable[None]]:
    async def send(text: str) -> None:
        sent.append(text)

    return send


def run_rpc(settings: Settings) -> int:
    """Serve RPC commands on stdin until it closes."""
    return asyncio.run(RpcServer(settings).serve())
