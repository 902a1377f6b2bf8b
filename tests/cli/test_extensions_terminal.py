"""The example extensions in the interactive session, read from a pyte screen: the permission
gate's question at the prompt, the protected paths, the custom tool and command, and the
status-line widget."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.cli.terminal import Terminal
from tests.cli.test_extensions import bash_call, example

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a pty")


def test_examples_in_the_terminal(tmp_path: Path) -> None:
    responses = [
        *bash_call("rm -rf build"),
        *bash_call("rm -rf build"),
        {"tool_calls": [{"name": "write", "arguments": {"path": ".env", "content": "x"}}]},
        {"text": "could not"},
        {"tool_calls": [{"name": "count_words", "arguments": {"text": "a b c"}}]},
        {"text": "three"},
    ]
    names = ("permission_gate", "protected_paths", "custom_tool", "custom_command", "status_line")
    extensions = [a for name in names for a in ("-e", example(name))]
    term = Terminal.scripted(
        tmp_path, responses, "--no-session", "-y", "--tools", "bash,write", *extensions
    )
    term.wait("/help for commands")
    term.wait_prompt()
    term.wait("turns: 0 · tool calls: 0")  # the widget, in the status line
    # The gate asks at the prompt; "n" blocks the command.
    term.send("clean up\r")
    term.wait("Dangerous command: Allow `rm -rf build`? [y/N]")
    term.send("n\r")
    term.wait("warning: blocked: rm -rf build")
    term.wait_prompt()
    # "y" lets it run.
    term.send("clean up again\r")
    term.wait_count("Dangerous command: Allow `rm -rf build`? [y/N]", 2)
    term.send("y\r")
    term.wait_prompt()
    term.wait("turns: 4 · tool calls: 2")
    term.send("write the env\r")
    term.wait("could not")
    term.wait_prompt()
    term.send("count\r")
    term.wait("three")
    term.wait_prompt()
    term.send("/gr")
    term.wait("/greet  say hello to NAME")  # completion, from the session's registry
    term.send("eet Ada\r")
    term.wait("Hello, Ada!")
    term.wait_prompt()
    assert term.exit() == 0
    assert not (tmp_path / "work" / ".env").exists()


def test_an_extensions_key(tmp_path: Path) -> None:
    path = tmp_path / "keys.py"
    path.write_text(
        "def setup(tau):\n"
        "    tau.register_shortcut('c-t', 'toggle the thing', lambda api: api.notify('toggled'))\n"
        "    tau.register_shortcut('c-p', 'taken', lambda api: None)\n"
    )
    term = Terminal.scripted(tmp_path, [{"echo": True}], "--no-session", "-e", str(path))
    term.wait("/help for commands")
    term.wait("the key 'c-p' is taken")  # reported, and the extension left out …
    term.wait_prompt()
    term.send("\x14")  # … so Ctrl+T does nothing
    term.send("/hotkeys\r")
    term.wait("!!command")
    term.wait_prompt()
    assert "toggled" not in term.text()
    assert term.exit() == 0
    path.write_text(
        "def setup(tau):\n"
        "    tau.register_shortcut('c-t', 'toggle the thing', lambda api: api.notify('toggled'))\n"
    )
    term = Terminal.scripted(tmp_path, [{"echo": True}], "--no-session", "-e", str(path))
    term.wait("/help for commands")
    term.wait_prompt()
    term.send("\x14")
    term.wait("toggled")
    term.send("/hotkeys\r")
    term.wait("toggle the thing (keys)")
    term.wait_prompt()
    assert term.exit() == 0


def test_an_extensions_model(tmp_path: Path) -> None:
    path = tmp_path / "models_ext.py"
    path.write_text(
        "from tau.ai import faux\n\n"
        "def setup(tau):\n"
        "    tau.register_model(faux.faux_model(provider='team', id='echo-bot'))\n"
    )
    term = Terminal.scripted(
        tmp_path, [{"text": "from the script"}], "--no-session", "-e", str(path)
    )
    term.wait("/help for commands")
    term.wait_prompt()
    term.send("/model team/echo-bot\r")
    term.wait("model: team/echo-bot")
    term.wait_prompt()
    term.send("echo this back\r")
    term.wait_count("echo this back", 2)  # the extension's echo model answered
    term.wait_prompt()
    assert "from the script" not in term.text()
    assert term.exit() == 0
