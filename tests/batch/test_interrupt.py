"""Ctrl-C and SIGKILL in the middle of a real batch process, then a resume: every id once in
the output, and (after Ctrl-C) no item paid twice, counted on the fake server."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO

from .fake_llm import FakeLLM

SCRIPT = Path(__file__).with_name("interrupted_run.py")
COUNT = 60


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


def write_input(path: Path) -> dict[str, str]:
    prompts = {f"id-{n}": f"question {n} [delay=0.2]" for n in range(COUNT)}
    path.write_text("".join(json.dumps({"id": k, "prompt": v}) + "\n" for k, v in prompts.items()))
    return prompts


def lines(path: Path) -> list[dict[str, object]]:
    data = path.read_bytes() if path.exists() else b""
    assert data == b"" or data.endswith(b"\n"), "a partial line"
    return [json.loads(line) for line in data.splitlines()]


async def start(*args: str) -> asyncio.subprocess.Process:
    env = {**os.environ, "PYTHONPATH": f"{REPO / 'src'}{os.pathsep}{REPO}"}
    return await asyncio.create_subprocess_exec(
        sys.executable,
        *args,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def wait_for_lines(path: Path, count: int, limit: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while len(lines(path)) < count:
        assert loop.time() < deadline, "the batch wrote too little"
        await asyncio.sleep(0.02)


async def ten_lines_into_a_run(
    llm: FakeLLM, tmp_path: Path
) -> tuple[asyncio.subprocess.Process, Path, Path, dict[str, str]]:
    """A batch child process that has written 10 results: (child, input, output, prompts)."""
    source, output = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    prompts = write_input(source)
    child = await start(str(SCRIPT), llm.url, str(source), str(output))
    await wait_for_lines(output, 10)
    return child, source, output, prompts


async def test_ctrl_c_then_resume_runs_every_item_once_and_pays_for_none_twice(
    llm: FakeLLM, tmp_path: Path
) -> None:
    child, source, output, prompts = await ten_lines_into_a_run(llm, tmp_path)
    child.send_signal(signal.SIGINT)
    _, err = await asyncio.wait_for(child.communicate(), 60)
    assert child.returncode == 130, err.decode()
    assert b"stopping: no new items" in err
    first = [line["id"] for line in lines(output)]
    assert 10 <= len(first) < COUNT
    # Every request the server answered belongs to an item that is in the output: the running
    # items were let finish, and none had started unseen.
    asked = Counter(s.prompt for s in llm.seen)
    assert set(asked) == {prompts[i] for i in first}

    child = await start(str(SCRIPT), llm.url, str(source), str(output))
    out, err = await asyncio.wait_for(child.communicate(), 60)
    assert child.returncode == 0, err.decode()
    assert f"{COUNT - len(first)} of {COUNT} items done this run".encode() in out
    written = [line["id"] for line in lines(output)]
    assert sorted(written) == sorted(prompts)  # each id exactly once
    asked = Counter(s.prompt for s in llm.seen)
    assert asked == Counter(prompts.values())  # each item asked for (and paid) exactly once


async def test_sigkill_then_resume_leaves_whole_lines_and_every_id_once(
    llm: FakeLLM, tmp_path: Path
) -> None:
    child, source, output, prompts = await ten_lines_into_a_run(llm, tmp_path)
    child.kill()
    await child.wait()
    first = lines(output)  # whole lines only
    assert all(line["status"] == "ok" for line in first)
    child = await start(str(SCRIPT), llm.url, str(source), str(output))
    _, err = await asyncio.wait_for(child.communicate(), 60)
    assert child.returncode == 0, err.decode()
    assert sorted(line["id"] for line in lines(output)) == sorted(prompts)
