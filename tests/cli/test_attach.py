"""Attachments: ``@path`` in a prompt and ``-a/--attach FILE``, as the model receives them."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any

from tau.ai import ImageContent, TextContent, UserMessage
from tau.ai.providers.faux import faux_model
from tau.cli.attach import build_prompt, find_mentions
from tau.cli.tools import Workspace
from tests.cli.conftest import TauRunner


def _user_content(stdout: str) -> list[dict[str, Any]]:
    """The content of the user message the run started with (from ``--json``)."""
    for line in stdout.splitlines():
        event = json.loads(line)
        if event["type"] == "message_start" and event["message"]["role"] == "user":
            content = event["message"]["content"]
            return [{"type": "text", "text": content}] if isinstance(content, str) else content
    raise AssertionError("no user message")


def _png() -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (4, 3), (255, 0, 0)).save(buffer, "PNG")
    return buffer.getvalue()


def _work(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    (work / "notes.txt").write_text("remember the milk\n")
    return work


def test_at_path_attaches_a_text_file_inline(tau: TauRunner, tmp_path: Path) -> None:
    _work(tmp_path)
    done = tau("--json", "--model", "faux/echo", "summarise @notes.txt please")
    assert done.returncode == 0, done.stderr
    assert _user_content(done.stdout) == [
        {"type": "text", "text": "summarise @notes.txt please"},
        {"type": "text", "text": '<file path="notes.txt">\nremember the milk\n</file>'},
    ]


def test_the_echo_model_answers_the_prompt_and_the_file_apart(
    tau: TauRunner, tmp_path: Path
) -> None:
    _work(tmp_path)
    done = tau("--model", "faux/echo", "summarise @notes.txt please")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(
        'summarise @notes.txt please\n\n<file path="notes.txt">\nremember the milk\n</file>'
    )


def test_attach_flag_and_piped_input(tau: TauRunner, tmp_path: Path) -> None:
    work = _work(tmp_path)
    (work / "b.md").write_text("# B\n")
    # Piped text goes after the prompt and is not searched for mentions.
    done = tau(
        "--json", "--model", "faux/echo", "-a", "b.md", "explain", input="see @nothing.txt\n"
    )
    assert done.returncode == 0, done.stderr
    assert _user_content(done.stdout) == [
        {"type": "text", "text": "explain\n\nsee @nothing.txt"},
        {"type": "text", "text": '<file path="b.md">\n# B\n</file>'},
    ]


def test_an_image_goes_to_a_vision_model_as_an_image(tau: TauRunner, tmp_path: Path) -> None:
    work = _work(tmp_path)
    png = _png()
    (work / "red.png").write_bytes(png)
    done = tau("--json", "--model", "faux/echo", "what colour is @red.png?")
    assert done.returncode == 0, done.stderr
    text, label, image = _user_content(done.stdout)
    assert text == {"type": "text", "text": "what colour is @red.png?"}
    assert label == {"type": "text", "text": "[image: red.png]"}
    assert image["type"] == "image" and image["mimeType"] == "image/png"
    assert base64.b64decode(image["data"]) == png


def test_an_image_for_a_model_without_vision_is_a_note(tmp_path: Path) -> None:
    work = _work(tmp_path)
    (work / "red.png").write_bytes(_png())
    prompt, notes = build_prompt("look @red.png", Workspace(work), faux_model(images=False))
    assert isinstance(prompt, UserMessage)
    assert prompt.content == [
        TextContent("look @red.png"),
        TextContent("[image red.png not attached: this model takes no images]"),
    ]
    assert notes == ["red.png is an image and faux/faux-model takes no images: it is not attached"]
    prompt, _ = build_prompt("look @red.png", Workspace(work), faux_model())
    assert isinstance(prompt, UserMessage) and isinstance(prompt.content[2], ImageContent)


def test_a_missing_file_is_an_error_not_text(tau: TauRunner, tmp_path: Path) -> None:
    _work(tmp_path)
    done = tau("--model", "faux/echo", "read @missing.txt")
    assert done.returncode == 2
    assert done.stderr == "tau: cannot attach missing.txt: no such file\n"
    assert done.stdout == ""
    done = tau("--model", "faux/echo", "-a", "gone.txt", "read it")
    assert done.returncode == 2
    assert done.stderr == "tau: cannot attach gone.txt: no such file\n"


def test_a_path_outside_the_workspace_is_refused(tau: TauRunner, tmp_path: Path) -> None:
    _work(tmp_path)
    (tmp_path / "secret.txt").write_text("top secret\n")
    done = tau("--model", "faux/echo", "leak @../secret.txt")
    assert done.returncode == 2
    assert "cannot attach ../secret.txt" in done.stderr
    assert "outside the working directory" in done.stderr and "--allow-path" in done.stderr
    assert "top secret" not in done.stdout
    allowed = tau("--model", "faux/echo", "--allow-path", str(tmp_path), "show @../secret.txt")
    assert allowed.returncode == 0, allowed.stderr
    assert "top secret" in allowed.stdout


def test_attach_without_a_prompt_is_bad_usage(tau: TauRunner, tmp_path: Path) -> None:
    _work(tmp_path)
    done = tau("--model", "faux/echo", "-a", "notes.txt")
    # stdin is empty (not a terminal): a prompt is what is missing.
    assert done.returncode == 2
    assert done.stderr.startswith("tau: ")


def test_which_words_are_mentions() -> None:
    existing = {"notes.txt", "Makefile"}
    found = find_mentions(
        "@notes.txt, @Makefile and @src/a.py. Not: user@example.com, @alice, `@b.py`,\n"
        '```\n@decorator.py\n```\n@"my file.txt" @~/x.md',
        existing.__contains__,
    )
    assert found == ["notes.txt", "Makefile", "src/a.py", "my file.txt", "~/x.md"]
