"""The session's slash commands (``/new``, ``/session``, ``/copy``, ``/export``, ``/model``,
``/thinking``, ``/compact``) through the registry every front end dispatches to."""

from __future__ import annotations

import base64
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest

from tau.ai.providers.faux import FauxResponse, faux_model, text
from tau.cli.app import App, Settings
from tau.cli.clipboard import copy_to_clipboard
from tau.cli.commands import CommandContext, run_command
from tau.cli.compaction import CompactionSettings, CompactionSummary
from tau.cli.registry import SLASH_COMMANDS
from tau.cli.render import Renderer
from tau.cli.tools import Workspace


class Console:
    """A front end in miniature: runs command lines, keeps what they say."""

    def __init__(self, app: App) -> None:
        self.app = app
        self.lines: list[str] = []
        self.ctx = CommandContext(
            app, Renderer(out=io.StringIO(), err=io.StringIO()), self.lines.append
        )

    async def __call__(self, line: str) -> str:
        start = len(self.lines)
        await run_command(self.ctx, line)
        return "\n".join(self.lines[start:])

    def complete(self, name: str, partial: str) -> list[str]:
        complete = SLASH_COMMANDS[name].args[0].complete
        assert complete is not None
        return list(complete(self.ctx, partial))


@pytest.fixture
def console(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Console:
    monkeypatch.setenv("TAU_HOME", str(tmp_path / "home"))
    model = faux_model([FauxResponse([text("the answer is 42")])] * 20, context_window=4000)
    app = App(
        Settings(
            model=model,
            tool_names=[],
            workspace=Workspace(tmp_path),
            session_dir=tmp_path / "sessions",
            compaction=CompactionSettings(enabled=False),
        ),
        None,
    )
    return Console(app)


def _entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_model_shows_switches_records_and_completes(console: Console) -> None:
    assert (await console("/model")).startswith("model: faux/faux-model (Faux faux-model")
    await console.app.run("hello")
    assert (
        await console("/model faux/echo")
        == "model: faux/echo (Faux echo (scripted test provider), 128,000 tokens of context)"
    )
    assert console.app.model.id == "echo"
    await console.app.run("next")
    path = console.app.session.path  # type: ignore[union-attr]
    changes = [e for e in _entries(path) if e["type"] == "model_change"]
    assert [(e["provider"], e["modelId"]) for e in changes] == [
        ("faux", "faux-model"),
        ("faux", "echo"),
    ]
    assert "unknown model 'nope' for provider 'anthropic'" in await console("/model anthropic/nope")
    assert console.app.model.id == "echo", "a failed switch changes nothing"
    assert "faux/echo" in console.complete("model", "faux/ec")
    # No key here: the whole catalog is offered; a prefix of an id alone matches too.
    assert {"openai/gpt-4o", "openai/gpt-4o-mini"} <= set(
        console.complete("model", "openai/gpt-4o")
    )
    assert "openai/gpt-4o" in console.complete("model", "gpt-4o")


async def test_thinking_sets_records_and_completes(console: Console) -> None:
    assert await console("/thinking") == "thinking: off"
    assert await console("/thinking high") == "thinking: high (this model does not reason)"
    assert console.app.agent.state.thinking_level == "high"
    assert "unknown thinking level 'lots'" in await console("/thinking lots")
    assert console.complete("thinking", "m") == ["minimal", "medium"]
    await console.app.run("hi")
    path = console.app.session.path  # type: ignore[union-attr]
    [change] = [e for e in _entries(path) if e["type"] == "thinking_level_change"]
    assert change["thinkingLevel"] == "high"


async def test_session_new_export_and_compact(console: Console, tmp_path: Path) -> None:
    info = await console("/session")
    assert "written after the first answer" in info and "0 user, 0 assistant" in info
    # The first long enough that its summary is smaller (a summary that is not is rejected).
    for prompt in ("one" + ", told at length" * 30, "two", "three"):
        await console.app.run(prompt)
    info = await console("/session")
    first_path = console.app.session.path  # type: ignore[union-attr]
    assert f"file:     {first_path}" in info
    assert "3 user, 3 assistant, 0 tool results (6 in the context)" in info
    assert "cost:     $0.0000" in info and "of 4,000 tokens" in info
    exported = await console("/export")
    page = tmp_path / f"tau-{console.app.session.id[:8]}.html"  # type: ignore[union-attr]
    assert exported == f"exported to {page}" and "the answer is 42" in page.read_text()
    await console(f"/export {tmp_path / 'chat.md'}")
    assert (tmp_path / "chat.md").read_text().count("## User") == 3
    said = await console("/compact keep the numbers")
    assert said.startswith("compacting…\ncompacted: ")
    assert isinstance(console.app.agent.state.messages[0], CompactionSummary)
    after = await console("/session")
    assert "3 user, 3 assistant, 0 tool results (" in after, "counts cover compacted turns"
    assert f"({len(console.app.agent.state.messages)} in the context)" in after
    new = await console("/new")
    assert new.startswith("new session: ") and console.app.session.path != first_path  # type: ignore[union-attr]
    assert console.app.agent.state.messages == []
    assert first_path.is_file(), "the old session stays saved"
    assert "nothing to export yet" in await console("/export")


async def test_copy_uses_a_clipboard_tool(
    console: Console, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert await console("/copy") == "no answer to copy yet"
    await console.app.run("what is it?")
    tools = tmp_path / "bin"
    tools.mkdir()
    copied = tmp_path / "clipboard"
    fake = tools / "xclip"
    fake.write_text(f"#!/bin/sh\ncat > {copied}\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert await console("/copy") == "copied 16 characters to the clipboard (xclip)"
    assert copied.read_text() == "the answer is 42"


def test_without_a_tool_the_terminal_gets_osc_52_or_the_user_is_told(tmp_path: Path) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    bare = {"PATH": str(tmp_path)}
    said = copy_to_clipboard("héllo", env=bare, terminal=terminal)
    assert said == "copied 5 characters through the terminal (OSC 52)"
    encoded = base64.b64encode("héllo".encode()).decode()
    assert terminal.getvalue() == f"\033]52;c;{encoded}\a"
    said = copy_to_clipboard("x", env=bare, terminal=io.StringIO())
    assert said.startswith("no clipboard available")


async def test_a_failing_command_says_why_and_never_raises(console: Console) -> None:
    nothing = "nothing to compact yet: the conversation is only its latest turn"
    assert await console("/compact") == f"compacting…\n/compact: {nothing}"
    await console.app.run("hi")
    said = await console("/export /nonexistent-dir/x.html")
    assert said == "/export: cannot write /nonexistent-dir/x.html: No such file or directory"
