"""The extensions' user interface in the interactive session and in RPC mode (print mode has
:class:`~tau.cli.extensions.api.HeadlessUI`).

In RPC mode each call is an ``extension_ui_request`` line on stdout, as in pi's RPC protocol:
``notify`` and ``setStatus`` expect nothing back; ``confirm`` and ``select`` wait for the
client's ``extension_ui_response`` command with the same ``id`` (``confirmed``, ``value`` or
``cancelled``).
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from tau.cli.extensions.api import Level
from tau.cli.registry import RPC_COMMANDS, Arg


class TerminalUI:
    """The interactive session's: messages above the prompt, questions at the prompt, and the
    statuses in the status line."""

    has_ui = True

    def __init__(
        self,
        notice: Callable[[str], None],
        ask: Callable[[str, str, Callable[[str], Any]], Awaitable[Any]],
        changed: Callable[[], None],
    ) -> None:
        self._notice = notice
        self._ask = ask
        self._changed = changed
        self.statuses: dict[str, str] = {}

    def notify(self, text: str, level: Level) -> None:
        """A line above the prompt."""
        self._notice(text if level == "info" else f"{level}: {text}")

    async def confirm(self, title: str, message: str, default: bool) -> bool:
        """``TITLE: MESSAGE [y/N]`` at the prompt."""
        question = f"{title}: {message}" if message else title
        hint = "[Y/n]" if default else "[y/N]"

        def parse(text: str) -> bool:
            answer = text.strip().lower()
            return default if not answer else answer in ("y", "yes")

        return bool(await self._ask(question, hint, parse))

    async def select(self, title: str, options: Sequence[str], default: str | None) -> str | None:
        """``TITLE [1] a [2] b`` at the prompt: a number or an option's text picks it."""
        listing = "  ".join(f"[{n}] {option}" for n, option in enumerate(options, 1))

        def parse(text: str) -> str | None:
            answer = text.strip()
            if not answer:
                return default
            if answer.isdigit() and 1 <= int(answer) <= len(options):
                return options[int(answer) - 1]
            return answer if answer in options else None

        result = await self._ask(f"{title}  {listing}", "›", parse)
        return result if isinstance(result, str) else None  # Ctrl-C answers False

    def set_status(self, key: str, text: str | None) -> None:
        """Shown after the status line's own text."""
        if text is None:
            self.statuses.pop(key, None)
        else:
            self.statuses[key] = text
        self._changed()

    def status(self) -> str:
        """The statuses, joined."""
        return " · ".join(self.statuses.values())


def bind_shortcuts(bindings: Any, custom: Any) -> None:
    """Add the extensions' keys (:meth:`~tau.cli.extensions.host.Customizations.run_shortcut`)
    to a prompt_toolkit ``KeyBindings``; a key prompt_toolkit does not know is reported."""
    running: set[asyncio.Task[None]] = set()  # kept until done: a bare task may be collected
    for keys in list(custom.shortcuts):

        def run(event: Any, keys: str = keys) -> None:
            task = asyncio.ensure_future(custom.run_shortcut(keys))
            running.add(task)
            task.add_done_callback(running.discard)

        try:
            bindings.add(*keys.split())(run)
        except ValueError as exc:
            custom.report(f"extension key {keys!r}: {exc}")


class RpcUI:
    """RPC mode's: requests to the client (see the module's note)."""

    has_ui = True

    def __init__(self, write: Callable[[dict[str, Any]], None]) -> None:
        self.write = write
        self.waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._ids = itertools.count(1)

    def _request(self, method: str, **fields: Any) -> str:
        request_id = f"ext-{next(self._ids)}"
        self.write({"type": "extension_ui_request", "id": request_id, "method": method, **fields})
        return request_id

    async def _dialog(self, method: str, **fields: Any) -> dict[str, Any]:
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        request_id = self._request(method, **fields)
        self.waiting[request_id] = future
        try:
            return await future
        finally:
            self.waiting.pop(request_id, None)

    def notify(self, text: str, level: Level) -> None:
        """A ``notify`` request."""
        self._request("notify", message=text, notifyType=level)

    async def confirm(self, title: str, message: str, default: bool) -> bool:
        """A ``confirm`` request; cancelled is ``default``."""
        answer = await self._dialog("confirm", title=title, message=message)
        if answer.get("cancelled") or not isinstance(answer.get("confirmed"), bool):
            return default
        return bool(answer["confirmed"])

    async def select(self, title: str, options: Sequence[str], default: str | None) -> str | None:
        """A ``select`` request; cancelled, or a value not offered, is ``default``."""
        answer = await self._dialog("select", title=title, options=list(options))
        value = answer.get("value")
        return value if not answer.get("cancelled") and value in options else default

    def set_status(self, key: str, text: str | None) -> None:
        """A ``setStatus`` request."""
        self._request("setStatus", statusKey=key, statusText=text)

    def answer(self, response: dict[str, Any]) -> bool:
        """The client's ``extension_ui_response``; False for an id nothing waits for."""
        future = self.waiting.get(response["id"])
        if future is None or future.done():
            return False
        future.set_result(response)
        return True


@RPC_COMMANDS.command(
    "extension_ui_response",
    "answer an extension_ui_request (confirm: confirmed; select: value; or cancelled)",
    args=[
        Arg("id", "the request's id", required=True),
        Arg("confirmed", "a confirm's answer", json_type="boolean"),
        Arg("value", "a select's answer"),
        Arg("cancelled", "the user dismissed the question", json_type="boolean"),
    ],
)
async def _extension_ui_response(server: Any, command: dict[str, Any]) -> None:
    ui = server.app.custom.ui
    if not isinstance(ui, RpcUI) or not ui.answer(command):
        raise LookupError(f"no extension question has the id {command['id']!r}")
