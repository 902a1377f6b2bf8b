"""The extensions' event bus: handlers in load order, each bounded in time, a failing one
reported with its file and line and its extension disabled.

With no handler for an event, :meth:`EventBus.has` is one dictionary lookup and nothing else
runs: a session without extensions pays nothing per turn (``benchmarks/bench_startup.py``
measures it). A handler may be a plain function or a coroutine function; a plain one runs in a
daemon thread, so that one that never returns is given up on (and its thread cannot keep the
process alive). Time spent waiting for the user (a ``confirm`` or ``select``) does not count
against the limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import threading
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from tau.cli.extensions.api import ExtensionAPI, Handler

DEFAULT_TIMEOUT = 30.0
"""Seconds a handler may run (not counting questions to the user) before it is given up on."""
_SLICE = 0.05


class HandlerTimeoutError(TimeoutError):
    """A handler ran past the limit."""


def where(exc: BaseException, path: Path) -> str:
    """``FILE:LINE`` of the innermost frame of ``exc`` in the extension's file (or folder);
    the innermost frame of all when none is."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{exc.filename}:{exc.lineno}"
    frames = traceback.extract_tb(exc.__traceback__)
    root = path.parent if path.name == "__init__.py" else path
    mine = [f for f in frames if Path(f.filename) == path or Path(f.filename).is_relative_to(root)]
    chosen = mine or list(frames)
    if not chosen:
        return str(path)
    return f"{chosen[-1].filename}:{chosen[-1].lineno}"


def describe_failure(exc: BaseException, extension: ExtensionAPI, doing: str) -> str:
    """The one line that reports a failing extension."""
    if isinstance(exc, HandlerTimeoutError):
        return f"extension {extension.name} ({extension.path}): {doing} did not finish: {exc}"
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return f"extension {extension.name}: {where(exc, extension.path)}: {doing} failed: {text}"


class EventBus:
    """Event name → the handlers subscribed to it, in the order they were."""

    def __init__(
        self, report: Callable[[str], None], disable: Callable[[ExtensionAPI], None]
    ) -> None:
        self._handlers: dict[str, list[tuple[ExtensionAPI, Handler]]] = {}
        self.report = report
        self.disable = disable
        self.timeout = DEFAULT_TIMEOUT
        self._asking = 0

    def subscribe(self, extension: ExtensionAPI, event: str, handler: Handler) -> None:
        """Call ``handler`` (of ``extension``) on ``event``."""
        self._handlers.setdefault(event, []).append((extension, handler))

    def drop(self, extension: ExtensionAPI) -> None:
        """Forget every handler of ``extension``."""
        for event, handlers in list(self._handlers.items()):
            kept = [(e, h) for e, h in handlers if e is not extension]
            if kept:
                self._handlers[event] = kept
            else:
                del self._handlers[event]

    def clear(self) -> None:
        """Forget every handler (``/reload``)."""
        self._handlers.clear()

    def has(self, event: str) -> bool:
        """Whether anything listens to ``event``."""
        return event in self._handlers

    def has_any(self, exclude: frozenset[str] = frozenset()) -> bool:
        """Whether anything listens to an event not in ``exclude``."""
        return any(event not in exclude for event in self._handlers)

    @contextlib.contextmanager
    def asking(self) -> Iterator[None]:
        """While a question waits for the user, no handler's clock runs."""
        self._asking += 1
        try:
            yield
        finally:
            self._asking -= 1

    async def emit(self, event: str, payload: Any) -> list[Any]:
        """Call each handler of ``event`` with ``payload``, in order; their answers (a failing
        handler's extension is reported, disabled, and gives none)."""
        answers = []
        for extension, handler in list(self._handlers.get(event, ())):
            try:
                answers.append(await self.call(handler, payload))
            except asyncio.CancelledError:
                raise
            except (Exception, SystemExit) as exc:
                self.report(describe_failure(exc, extension, f"its {event} handler"))
                self.disable(extension)
        return answers

    async def call(self, function: Callable[..., Any], *args: Any) -> Any:
        """``function(*args)`` within the time limit (see the module's note)."""
        if inspect.iscoroutinefunction(function):
            task: asyncio.Future[Any] = asyncio.ensure_future(function(*args))
        else:
            task = _in_thread(function, *args)
        spent = 0.0
        try:
            while True:
                done, _ = await asyncio.wait({task}, timeout=_SLICE)
                if done:
                    result = task.result()
                    if inspect.isawaitable(result):  # a plain function that returned one
                        task = asyncio.ensure_future(result)
                        continue
                    return result
                if not self._asking:
                    spent += _SLICE
                if spent >= self.timeout:
                    raise HandlerTimeoutError(f"still running after {self.timeout:g} s")
        finally:
            if not task.done():
                task.cancel()


def _in_thread(function: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def settle(result: Any, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)

    def run() -> None:
        result, error = None, None
        try:
            result = function(*args)
        except BaseException as exc:  # handed to the loop, which reports it
            error = exc
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits any more
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=run, daemon=True, name=f"tau-extension-{function.__name__}").start()
    return future
