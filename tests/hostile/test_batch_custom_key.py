"""Issue 24 item 13: ``tau batch`` sends the key ``models.json`` gives a custom provider.

Every request of ``tau batch`` to a custom provider arrived without ``Authorization`` (plain
``tau`` sent it): the batch agent now resolves keys as the command does.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from tests.ai.servers import SSE_HEADERS, LocalServer, Reply, Request
from tests.cli.conftest import clean_env

KEY = "team-key-3c4d5e6f7a8b"


def _chunk(delta: dict[str, object], finish: str | None = None) -> bytes:
    data = {
        "id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }  # fmt: skip
    return f"data: {json.dumps(data)}\n\n".encode()


def answer(request: Request) -> Reply:
    if request.headers.get("authorization") != f"Bearer {KEY}":
        body = json.dumps({"error": {"message": "missing or wrong key"}}).encode()
        return Reply(401, {"content-type": "application/json"}, [body])
    chunks = [
        _chunk({"role": "assistant", "content": "ok"}),
        _chunk({}, "stop"),
        b"data: [DONE]\n\n",
    ]
    return Reply(200, SSE_HEADERS, chunks)


async def test_tau_batch_sends_the_models_json_key(tmp_path: Path) -> None:
    async with LocalServer(answer) as server:
        home = tmp_path / "tau-home"
        home.mkdir()
        provider = {"baseUrl": server.url + "/v1", "api": "openai-completions", "apiKey": KEY,
                    "models": [{"id": "m"}]}  # fmt: skip
        (home / "models.json").write_text(json.dumps({"providers": {"team": provider}}))
        work = tmp_path / "work"
        work.mkdir()
        items = "".join(
            json.dumps({"id": f"q{n}", "prompt": f"question {n}"}) + "\n" for n in range(3)
        )
        (work / "in.jsonl").write_text(items)
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tau.cli", "batch", "in.jsonl", "-o", "out.jsonl",
            "-m", "team/m", "--no-progress", "--max-attempts", "1",
            cwd=work, env=clean_env(tmp_path), stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        _, stderr = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 0, stderr.decode()
    assert len(server.requests) == 3
    assert all(r.headers.get("authorization") == f"Bearer {KEY}" for r in server.requests)
    results = [json.loads(line) for line in (work / "out.jsonl").read_text().splitlines()]
    assert sorted((r["id"], r["status"], r["text"]) for r in results) == [
        ("q0", "ok", "ok"), ("q1", "ok", "ok"), ("q2", "ok", "ok"),
    ]  # fmt: skip
