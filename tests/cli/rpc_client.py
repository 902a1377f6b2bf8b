"""A test client for ``tau --mode rpc``: a subprocess, commands in, JSON lines out."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.cli.conftest import clean_env


class RpcClient:
    """``tau --mode rpc ARGS`` in ``tmp_path/work``; every output line is kept in ``seen``."""

    def __init__(self, tmp_path: Path, *args: str) -> None:
        work = tmp_path / "work"
        work.mkdir(exist_ok=True)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tau.cli", "--mode", "rpc", *args],
            cwd=work,
            env=clean_env(tmp_path),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.seen: list[dict[str, Any]] = []
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def send(self, command: dict[str, Any] | bytes) -> None:
        """One command (a dict as JSON, bytes as they are) and a newline."""
        raw = command if isinstance(command, bytes) else json.dumps(command).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(raw + b"\n")
        self.process.stdin.flush()

    def wait_for(
        self, match: Callable[[dict[str, Any]], bool], timeout: float = 20
    ) -> dict[str, Any]:
        """The next output line ``match`` accepts (every line read is kept in ``seen``)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no matching line; seen: {self.seen[-5:]}")
            try:
                line = self._lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                raise EOFError(f"tau exited; seen: {self.seen[-5:]}")
            data = json.loads(line)
            assert isinstance(data, dict), line
            self.seen.append(data)
            if match(data):
                return data

    def response(self, request_id: Any) -> dict[str, Any]:
        """The response to the command with ``request_id``."""
        return self.wait_for(lambda d: d.get("type") == "response" and d.get("id") == request_id)

    def call(self, command: dict[str, Any]) -> dict[str, Any]:
        """Send ``command`` and return its response."""
        self.send(command)
        return self.response(command.get("id"))

    def event(self, kind: str) -> dict[str, Any]:
        """The next event of type ``kind``."""
        return self.wait_for(lambda d: d.get("type") == kind)

    def close(self) -> int:
        """Close stdin and wait for the exit status."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        status = self.process.wait(20)
        assert self.process.stderr is not None
        self.stderr = self.process.stderr.read().decode()
        return status
