"""tau.ui's tests: a real server on 127.0.0.1, and the protocols' own clients as oracles.

The AI SDK's client (the ``ai`` npm package) and AG-UI's schemas (``@ag-ui/core``) are
installed, pinned, into ``tests/ui/.npm-cache`` (gitignored) by npm on first use; the
oracle tests skip, saying why, only when node or npm is missing.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("ag_ui")
pytest.importorskip("uvicorn")

HERE = Path(__file__).resolve().parent
CACHE = HERE / ".npm-cache"
NPM_PACKAGES = {"ai": "7.0.185", "@ag-ui/core": "1.0.0"}
SCRIPTS = ("ai_sdk_client.mjs", "ag_ui_client.mjs")


def _installed(name: str, version: str) -> bool:
    manifest = CACHE / "node_modules" / name / "package.json"
    try:
        return json.loads(manifest.read_text())["version"] == version
    except (OSError, ValueError, KeyError):
        return False


@pytest.fixture(scope="session")
def node_oracle() -> Path:
    """The npm cache with the pinned packages and the client scripts (skips without node)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip(
            "node and npm are needed for the AI SDK / AG-UI oracle tests (apt-get install nodejs npm)"
        )
    if not all(_installed(name, version) for name, version in NPM_PACKAGES.items()):
        CACHE.mkdir(exist_ok=True)
        (CACHE / "package.json").write_text('{"private": true}\n')
        specs = [f"{name}@{version}" for name, version in NPM_PACKAGES.items()]
        subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--silent", "--save-exact", *specs],
            cwd=CACHE,
            check=True,
            timeout=600,
        )
    for script in SCRIPTS:
        # ESM resolves packages from the script's folder: the scripts run from the cache.
        shutil.copyfile(HERE / script, CACHE / script)
    return CACHE


async def run_node(cache: Path, script: str, payload: dict[str, Any]) -> dict[str, Any]:
    """Run an oracle script with ``payload`` on stdin; its JSON answer."""
    process = await asyncio.create_subprocess_exec(
        "node",
        str(cache / script),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(json.dumps(payload).encode()), 60)
    assert process.returncode == 0, err.decode()
    answer: dict[str, Any] = json.loads(out)
    return answer
