"""``tau web`` in a real browser: headless Chromium (Debian's ``chromium``) driven by
Playwright's Python API. Send a message and watch it stream, approve a tool call, reload and
see the chat kept, switch the model, attach an image. Screenshots go to ``tests/ui/.artifacts/``."""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is needed (apt-get install chromium)"
)

ARTIFACTS = Path(__file__).resolve().parent / ".artifacts"
SRC = Path(__file__).resolve().parents[2] / "src"
# A 2x2 red PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEklEQVR4nGP4z8DAwMDAxMDAAAAnEwMB1nVZ8gAAAABJRU5ErkJggg=="
)
SCRIPT = [
    {
        "text": "Hello! Here is **code**:\n\n```python\ndef answer():\n    return 42\n```",
        "chunk_size": 3,
        "delay": 0.01,
    },
    {"tool_calls": [{"name": "write", "arguments": {"path": "note.txt", "content": "hi"}}]},
    {"text": "Written."},
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture
def tau_web(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """``tau web`` on a faux model, in a process of its own; its URL and working folder."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT))
    work = tmp_path / "work"
    work.mkdir()
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(SRC), "TAU_HOME": str(tmp_path / "home")}
    process = subprocess.Popen(
        [sys.executable, "-m", "tau.cli", "web", "--port", str(port), "-m", f"faux/{script}",
         "--models", "faux/echo", "--tools", "read,write"],
        cwd=work,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        for _ in range(300):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                break
            except OSError:
                assert process.poll() is None, process.stderr.read() if process.stderr else ""
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/", work
    finally:
        process.terminate()
        process.wait(10)


def test_chat_stream_approve_reload_and_attach(tau_web: tuple[str, Path], tmp_path: Path) -> None:
    url, work = tau_web
    ARTIFACTS.mkdir(exist_ok=True)
    image = tmp_path / "red.png"
    image.write_bytes(PNG)
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox"]
        )
        page = browser.new_page(viewport={"width": 1100, "height": 760})
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(url)
        expect = sync_api.expect

        # Send a message and watch it stream: Markdown, highlighted code.
        page.fill("#input", "hi")
        page.press("#input", "Enter")
        expect(page.locator(".message.assistant pre code")).to_contain_text("return 42")
        expect(page.locator(".message.assistant strong")).to_have_text("code")
        expect(page.locator(".message.assistant .kw").first).to_have_text("def")
        page.screenshot(path=str(ARTIFACTS / "1-streamed.png"))

        # A write asks first: approve it in the page, the tool runs, the answer continues.
        page.fill("#input", "write a note")
        page.press("#input", "Enter")
        approve = page.get_by_role("button", name="Approve")
        expect(approve).to_be_visible()
        assert not (work / "note.txt").exists()
        page.screenshot(path=str(ARTIFACTS / "2-approval.png"))
        approve.click()
        expect(page.locator(".message.assistant").last).to_contain_text("Written.")
        assert (work / "note.txt").read_text() == "hi"
        expect(page.locator(".tool .state").first).to_have_text("output-available")
        page.screenshot(path=str(ARTIFACTS / "3-approved.png"))

        # Reload: the chat is kept, and listed.
        page.reload()
        expect(page.locator(".message.assistant").last).to_contain_text("Written.")
        expect(page.locator("#chats li")).to_have_count(1)
        expect(page.locator("#chats li a")).to_have_text("hi")
        page.screenshot(path=str(ARTIFACTS / "4-reloaded.png"))

        # Switch the model (the scripted one has no answer left; faux/echo repeats the text),
        # attach an image: it goes with the message.
        expect(page.locator("#model option")).to_have_count(2)
        page.select_option("#model", "faux/echo")
        page.set_input_files("#file", str(image))
        expect(page.locator("#attachments img")).to_have_count(1)
        page.fill("#input", "what colour is this?")
        page.press("#input", "Enter")
        expect(page.locator(".message.user img")).to_have_count(1)
        expect(page.locator(".message.assistant").last).to_contain_text("what colour is this?")
        page.screenshot(path=str(ARTIFACTS / "5-image.png"))

        # Rename the chat, then start a new one and delete the first.
        page.once("dialog", lambda dialog: dialog.accept("Notes"))
        page.click("#chats li button.rename")
        expect(page.locator("#chats li a")).to_have_text("Notes")
        page.click("#new-chat")
        expect(page.locator(".message")).to_have_count(0)
        page.click("#chats li button.delete")
        expect(page.locator("#chats li")).to_have_count(0)
        browser.close()
    assert errors == []
