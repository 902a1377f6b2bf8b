"""Issue 24 item 8: a batch whose consumer leaves the ``async for`` stops spending.

``async for r in run_batch(...): break`` (or an exception in the loop body, or cancelling the
iterating task) used to leave the driver running: hundreds more items went to the provider, the
output stayed locked (an immediate resume failed with "another batch is writing") and at exit
the end marker raised ``QueueFull``. Now leaving the loop stops the batch at that moment.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tau.ai import Context, Model
from tau.ai.providers.faux import FauxResponse, faux_model, text
from tau.batch import run_batch
from tests.conftest import REPO

ITEMS = [{"id": f"item-{n}", "prompt": f"question {n}"} for n in range(1000)]
CONCURRENCY = 4


def counting_model(calls: list[str]) -> Model:
    def reply(context: Context, options: Mapping[str, Any]) -> FauxResponse:
        calls.append("call")  # one LLM request sent (and paid for)
        return FauxResponse([text("answer")], first_delay=0.005)

    return faux_model(reply, id=f"counting-{id(calls)}")


async def _assert_stopped(calls: list[str], output: Path) -> None:
    # The output is free at once, before any await: a resume can open it.
    resumed = run_batch(ITEMS, counting_model([]), output=str(output))
    await resumed.aclose()
    # Requests already made when the loop was left may still reach the (faux) provider on the
    # next tick; nothing after them.
    await asyncio.sleep(0.2)
    settled = len(calls)
    assert settled <= 2 * CONCURRENCY, f"{settled} requests for {CONCURRENCY} items in flight"
    await asyncio.sleep(0.5)
    assert len(calls) == settled, f"{len(calls) - settled} more items were sent after leaving"


async def test_break_stops_the_batch_and_frees_the_output(tmp_path: Path) -> None:
    calls: list[str] = []
    output = tmp_path / "out.jsonl"
    async for result in run_batch(
        ITEMS, counting_model(calls), output=str(output), concurrency=CONCURRENCY
    ):
        assert result.status == "ok"
        break
    await _assert_stopped(calls, output)


async def test_an_exception_in_the_loop_stops_the_batch(tmp_path: Path) -> None:
    calls: list[str] = []
    output = tmp_path / "out.jsonl"
    with pytest.raises(LookupError):
        async for _ in run_batch(
            ITEMS, counting_model(calls), output=str(output), concurrency=CONCURRENCY
        ):
            raise LookupError("the consumer failed")
    await _assert_stopped(calls, output)


async def test_cancelling_the_iterating_task_stops_the_batch(tmp_path: Path) -> None:
    calls: list[str] = []
    output = tmp_path / "out.jsonl"
    seen = asyncio.Event()

    async def consume() -> None:
        async for _ in run_batch(
            ITEMS, counting_model(calls), output=str(output), concurrency=CONCURRENCY
        ):
            seen.set()
            await asyncio.sleep(3600)  # a slow consumer, cancelled by its owner

    task = asyncio.create_task(consume())
    await asyncio.wait_for(seen.wait(), 30)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await _assert_stopped(calls, output)


def test_leaving_a_full_queue_ends_the_process_cleanly(tmp_path: Path) -> None:
    # The consumer lets more than the queue's 256 results pile up, then leaves the loop and
    # the program ends: no QueueFull, no "exception was never retrieved", nothing on stderr.
    script = textwrap.dedent(
        """
        import asyncio
        from tau.ai import get_model
        from tau.batch import run_batch

        async def main():
            items = [{"id": str(n), "prompt": "q"} for n in range(2000)]
            async for _ in run_batch(items, get_model("faux", "echo"), concurrency=64):
                await asyncio.sleep(1.0)  # the batch fills the queue meanwhile
                break

        asyncio.run(main())
        print("done")
        """
    )
    run = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env={"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.stdout == "done\n"
    assert run.stderr == ""
