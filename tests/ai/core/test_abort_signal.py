"""AbortController / AbortSignal on their own: callbacks, threads, signal-handler re-entrancy."""

from __future__ import annotations

import threading

import pytest

from tau.ai import AbortController, AbortedError


def test_callbacks_run_once_and_removers_work() -> None:
    controller = AbortController()
    calls: list[str] = []
    controller.signal.add_callback(lambda: calls.append("a"))
    remove_b = controller.signal.add_callback(lambda: calls.append("b"))
    remove_b()
    controller.abort("why")
    controller.abort("again")
    assert calls == ["a"]
    assert controller.signal.aborted and controller.signal.reason == "why"
    # Registering after the abort runs at once.
    controller.signal.add_callback(lambda: calls.append("late"))
    assert calls == ["a", "late"]
    with pytest.raises(AbortedError, match="why"):
        controller.signal.throw_if_aborted()


def test_abort_from_many_threads_fires_each_callback_once() -> None:
    controller = AbortController()
    calls: list[int] = []
    for i in range(50):
        controller.signal.add_callback(lambda i=i: calls.append(i))
    threads = [threading.Thread(target=controller.abort) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=5)
    assert sorted(calls) == list(range(50))


class _InterruptingList(list):  # type: ignore[type-arg]
    """Fires an abort the way a signal handler would: in this thread, inside the locked section."""

    def __init__(self, controller: AbortController) -> None:
        super().__init__()
        self.controller = controller

    def append(self, item: object) -> None:
        self.controller.abort("interrupted")  # re-enters the signal's lock
        super().append(item)


def _in_thread(fn: object) -> None:
    t = threading.Thread(target=fn, daemon=True)  # type: ignore[arg-type]
    t.start()
    t.join(timeout=5)
    assert not t.is_alive(), "deadlocked"


def test_abort_from_a_signal_handler_during_add_callback_neither_deadlocks_nor_loses_it() -> None:
    controller = AbortController()
    controller.signal._callbacks = _InterruptingList(controller)
    calls: list[str] = []
    _in_thread(lambda: controller.signal.add_callback(lambda: calls.append("cb")))
    assert calls == ["cb"]
    assert controller.signal.reason == "interrupted"
