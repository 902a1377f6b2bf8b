"""A provider that answers 401 repeating the caller's key: the key reaches none of the places an
error message leaves the process (the ``invoke_agent`` span's status, the session file's
``errorMessage``, ``tau sessions export``/``show``, ``--json`` events, the proxy), whichever way the
key came (options, ``get_api_key``, ``models.json``, an OAuth-style store). The key is shaped like no
known key, so only the exact-key half of the rule can catch it."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import tau.telemetry
from tau.agent import Agent
from tau.ai import Model, add_secret_source, dump_message, redact_secrets
from tests.ai.servers import JSON_HEADERS, LocalServer, Reply, Request
from tests.cli.conftest import clean_env

KEY = "live-Qx7f3Kp9LmZ2vB8nR4tW"
"""Not ``sk-``/``AIza``-shaped: no pattern finds it, only knowing the key does."""


def echo_key(request: Request) -> Reply:
    sent = request.headers.get("authorization", "").removeprefix("Bearer ")
    body = json.dumps({"error": {"message": f"Incorrect API key provided: {sent}."}})
    return Reply(401, JSON_HEADERS, [body.encode()])


def _model(url: str) -> Model:
    return Model(id="m", name="m", api="openai-completions", provider="p", base_url=url + "/v1")


async def test_the_agent_span_status_never_holds_the_echoed_key() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tau.telemetry.instrument(tracer_provider=provider, capture_content=False)
    try:
        async with LocalServer(echo_key) as server:
            agent = Agent(model=_model(server.url), get_api_key=lambda provider: KEY)
            await agent.prompt("hi")
    finally:
        tau.telemetry.uninstrument()
    last = agent.state.messages[-1]
    assert KEY in (getattr(last, "error_message", None) or "")  # the caller still sees it
    spans = exporter.get_finished_spans()
    assert {s.name.split()[0] for s in spans} >= {"invoke_agent", "chat"}
    for span in spans:
        assert span.status.status_code.name == "ERROR"
        assert KEY not in (span.status.description or "")
        assert "[redacted]" in (span.status.description or "")
    assert KEY not in json.dumps(dump_message(last))


async def test_the_command_writes_and_exports_no_echoed_key_from_models_json(
    tmp_path: Path,
) -> None:
    async with LocalServer(echo_key) as server:
        home = tmp_path / "tau-home"
        home.mkdir()
        provider = {"baseUrl": server.url + "/v1", "api": "openai-completions", "apiKey": KEY}
        provider["models"] = [{"id": "m"}]
        (home / "models.json").write_text(json.dumps({"providers": {"keyed": provider}}))
        work = tmp_path / "work"
        work.mkdir()
        env = clean_env(tmp_path)

        async def tau(*args: str) -> tuple[int, str, str]:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "tau.cli", *args, cwd=work, env=env,
                stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )  # fmt: skip
            out, err = await asyncio.wait_for(proc.communicate(), 60)
            return proc.returncode or 0, out.decode(), err.decode()

        code, events, stderr = await tau("--json", "--tools", "none", "-m", "keyed/m", "hi")
        assert server.requests, stderr
        assert "Incorrect API key provided" in events
        assert KEY not in events
        (session_file,) = (home / "sessions").rglob("*.jsonl")
        saved = session_file.read_text()
        assert "Incorrect API key provided: [redacted]" in saved
        assert KEY not in saved
        assert KEY not in await rpc_prompt(work, env)
        for command in (["show"], ["export", "--md"], ["export", "--html"]):
            code, out, err = await tau("sessions", *command, str(session_file))
            assert code == 0, err
            assert "Incorrect API key provided" in out
            assert KEY not in out + err


async def rpc_prompt(work: Path, env: dict[str, str]) -> str:
    """``tau --mode rpc``: one prompt; everything it wrote until the run ended."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tau.cli", "--mode", "rpc", "--no-session", "--tools", "none",
        "-m", "keyed/m", cwd=work, env=env, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b'{"type": "prompt", "message": "hi"}\n')
    await proc.stdin.drain()
    seen = ""
    while '"agent_end"' not in seen:
        line = await asyncio.wait_for(proc.stdout.readline(), 60)
        assert line, seen
        seen += line.decode()
    proc.stdin.close()
    await asyncio.wait_for(proc.wait(), 30)
    assert "Incorrect API key provided" in seen
    return seen


def test_a_plugged_in_store_feeds_the_rule() -> None:
    token = "oauth-access-9d8c7b6a5f4e3d2c"  # an OAuth store's token, no known shape
    assert redact_secrets(f"denied: {token}") == f"denied: {token}"
    remove = add_secret_source(lambda: [token])
    try:
        assert redact_secrets(f"denied: {token}") == "denied: [redacted]"
    finally:
        remove()
    # Shapes the proxy already knew are part of the same rule.
    assert redact_secrets("bad key sk-proj-abcdef123456") == "bad key [redacted]"
    assert redact_secrets("Authorization: Bearer abcdef123456") == (
        "Authorization: Bearer [redacted]"
    )


@pytest.fixture(autouse=True)
def _env_key(monkeypatch: pytest.MonkeyPatch) -> None:
    # A key only the environment holds is known too.
    monkeypatch.setenv("SOMEPROVIDER_API_KEY", "envkey-0a1b2c3d4e5f")


def test_a_key_in_the_environment_is_redacted() -> None:
    assert redact_secrets("you sent envkey-0a1b2c3d4e5f") == "you sent [redacted]"
