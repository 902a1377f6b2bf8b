"""``tau web``'s chats are the ``tau`` command's sessions, and it uses the same MCP servers.

``tau web`` runs in a process of its own on a faux model, driven through its HTTP API (what
the page sends); the ``tau`` command runs beside it in the same working directory and
``TAU_HOME``: a chat made in the page is a session ``tau sessions list`` shows and ``tau -c``
goes on with, a session the terminal made opens in the page, an approval waiting in the page
survives a restart of the server, and an MCP server's tool is called from the page."""

from __future__ import annotations

import contextlib
import copy
import json
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tau.ai import AssistantMessage, ToolResultMessage, UserMessage
from tau.cli.paused_run import PAUSED_RUN
from tau.cli.session import Session
from tests.agent.mcp.servers import FIXTURE
from tests.cli.conftest import clean_env

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")


class Web:
    """``tau web`` and ``tau`` for one user: the same home and working directory."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path
        self.work = tmp_path / "work"
        self.work.mkdir()
        self.env = clean_env(tmp_path)
        self.scripts = 0

    def model(self, responses: list[dict[str, Any]]) -> str:
        self.scripts += 1
        path = self.tmp / f"script{self.scripts}.json"
        path.write_text(json.dumps(responses))
        return f"faux/{path}"

    def tau(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "tau.cli", *args],
            cwd=self.work, env=self.env, capture_output=True, text=True, timeout=60, input="",
        )  # fmt: skip

    @contextlib.contextmanager
    def serve(self, responses: list[dict[str, Any]], *args: str) -> Iterator[httpx2.Client]:
        """``tau web`` playing ``responses``; a client on its URL."""
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        process = subprocess.Popen(
            [sys.executable, "-m", "tau.cli", "web", "--port", str(port),
             "-m", self.model(responses), *args],
            cwd=self.work, env=self.env, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            for _ in range(600):
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                    break
                except OSError:
                    assert process.poll() is None, process.stderr.read() if process.stderr else ""
                    time.sleep(0.05)
            with httpx2.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
                yield client
        finally:
            process.terminate()
            process.wait(10)

    def session(self, chat_id: str) -> Session:
        (path,) = (self.tmp / "tau-home" / "sessions").glob(f"*/*_{chat_id}.jsonl")
        return Session.open(path)


def user(text: str) -> dict[str, Any]:
    return {"id": "u", "role": "user", "parts": [{"type": "text", "text": text}]}


def send(client: httpx2.Client, chat_id: str, *messages: Any) -> list[dict[str, Any]]:
    """POST the page's request; the stream's chunks."""
    body = {"id": chat_id, "messages": list(messages), "trigger": "submit-message"}
    response = client.post("/api/chat", json=body)
    assert response.status_code == 200, response.text
    return [
        json.loads(line[6:])
        for line in response.text.splitlines()
        if line.startswith("data: ") and line != "data: [DONE]"
    ]


def streamed(chunks: list[dict[str, Any]]) -> str:
    return "".join(c["delta"] for c in chunks if c["type"] == "text-delta")


def approved(message: dict[str, Any]) -> dict[str, Any]:
    """The page's assistant message with its approval requests answered yes."""
    answered = copy.deepcopy(message)
    for part in answered["parts"]:
        if part.get("state") == "approval-requested":
            part["state"] = "approval-responded"
            part["approval"]["approved"] = True
    return answered


@pytest.fixture
def web(tmp_path: Path) -> Web:
    return Web(tmp_path)


def test_a_chat_made_in_the_page_is_a_session_tau_continues(web: Web) -> None:
    chat_id = str(uuid.uuid4())
    with web.serve([{"text": "Hello from the page."}]) as client:
        chunks = send(client, chat_id, user("hi from the browser"))
        assert streamed(chunks) == "Hello from the page."
        listed = web.tau("sessions", "list")
        assert listed.returncode == 0, listed.stderr
        assert chat_id[:8] in listed.stdout and "hi from the browser" in listed.stdout
        session = web.session(chat_id)
        assert session.id == chat_id and session.model is not None
        assert [type(m) for m in session.messages] == [UserMessage, AssistantMessage]
        # The terminal goes on with it; the page sees the whole chat.
        done = web.tau("-c", "-m", web.model([{"text": "And from the terminal."}]), "more")
        assert done.returncode == 0, done.stderr
        assert done.stdout == "And from the terminal.\n"
        chat = client.get(f"/api/chats/{chat_id}").json()
    texts = [[p.get("text") for p in m["parts"] if p["type"] == "text"] for m in chat["messages"]]
    assert texts == [
        ["hi from the browser"],
        ["Hello from the page."],
        ["more"],
        ["And from the terminal."],
    ]
    assert len(web.session(chat_id).messages) == 4


def test_a_terminal_session_opens_in_the_page(web: Web) -> None:
    done = web.tau("-m", web.model([{"text": "Terminal answer."}]), "hello from the terminal")
    assert done.returncode == 0, done.stderr
    with web.serve([{"text": "Page answer."}]) as client:
        (listed,) = client.get("/api/chats").json()
        assert listed["title"] == "hello from the terminal"
        chat_id = listed["id"]
        chat = client.get(f"/api/chats/{chat_id}").json()
        assert [m["role"] for m in chat["messages"]] == ["user", "assistant"]
        assert chat["paused"] is False
        send(client, chat_id, user("and from the page"))
        # Renamed in the page: the session's name (pi's session_info entry).
        renamed = client.patch(f"/api/chats/{chat_id}", json={"title": "Both"})
        assert renamed.status_code == 200
    session = web.session(chat_id)
    assert session.name == "Both"
    assert [type(m) for m in session.messages] == [UserMessage, AssistantMessage] * 2
    assert "Both" in web.tau("sessions", "list").stdout


def test_an_approval_waiting_in_the_page_survives_a_restart(web: Web) -> None:
    chat_id = str(uuid.uuid4())
    write = {"tool_calls": [{"name": "write", "arguments": {"path": "note.txt", "content": "hi"}}]}
    with web.serve([write], "--tools", "read,write") as client:
        chunks = send(client, chat_id, user("write a note"))
        assert any(c["type"] == "tool-approval-request" for c in chunks)
    assert not (web.work / "note.txt").exists()
    assert web.session(chat_id).custom[PAUSED_RUN]["state"]["pending"]
    with web.serve([{"text": "Written."}], "--tools", "read,write") as client:
        chat = client.get(f"/api/chats/{chat_id}").json()
        assert chat["paused"] is True
        chunks = send(client, chat_id, user("write a note"), approved(chat["messages"][-1]))
        assert any(c["type"] == "tool-output-available" for c in chunks)
        after = client.get(f"/api/chats/{chat_id}").json()
    assert after["paused"] is False
    assert (web.work / "note.txt").read_text() == "hi"
    messages = web.session(chat_id).messages
    assert isinstance(messages[-2], ToolResultMessage) and not messages[-2].is_error
    assert isinstance(messages[-1], AssistantMessage) and messages[-1].text == "Written."


def test_tau_web_calls_the_tools_of_the_mcp_servers(web: Web) -> None:
    servers = web.tmp / "mcp.json"
    fixture = {"command": sys.executable, "args": [str(FIXTURE), "--name", "files"]}
    servers.write_text(json.dumps({"mcpServers": {"files": fixture}}))
    call = {"tool_calls": [{"name": "echo", "arguments": {"text": "hi"}}]}
    with web.serve([call, {"text": "The server said hi."}], "--mcp", str(servers)) as client:
        chat_id = str(uuid.uuid4())
        # An untrusted server's tool asks first, as in the terminal.
        chunks = send(client, chat_id, user("say hi"))
        assert any(c["type"] == "tool-approval-request" for c in chunks)
        chat = client.get(f"/api/chats/{chat_id}").json()
        chunks = send(client, chat_id, user("say hi"), approved(chat["messages"][-1]))
    (output,) = [c for c in chunks if c["type"] == "tool-output-available"]
    assert output["output"]["content"] == [{"type": "text", "text": "files: hi"}]
    assert streamed(chunks) == "The server said hi."
