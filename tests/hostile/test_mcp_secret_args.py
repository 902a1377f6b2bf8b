"""Issue 24 item 2: a stdio MCP server's secret arguments are never printed.

``tau mcp list`` and the start-up warning printed the command verbatim
(``--api-key sk-live-…``). Secret-looking arguments and the values of the server's environment
are now masked, as URLs' credentials already were.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.cli.conftest import clean_env

SECRETS = [
    "sk-live-4f9a8b7c6d5e4f3a",  # after --api-key, and shaped like a key
    "tok-PLAIN-77c1d2e3f4",  # after --token=
    "hunter2hunter2",  # PASSWORD=…
    "envvalue-9z8y7x6w5v",  # the value of an environment variable given to the server
    "mysterious-0f1e2d3c",  # after --auth, no known shape
]


def _config(tmp_path: Path) -> Path:
    server = {
        "command": sys.executable,
        "args": [
            "-c", "raise SystemExit(3)",
            "--api-key", SECRETS[0],
            f"--token={SECRETS[1]}",
            f"PASSWORD={SECRETS[2]}",
            f"--dir=/data/{SECRETS[3]}",
            "--auth", SECRETS[4],
            "--verbose",
        ],
        "env": {"SERVICE_CONFIG": SECRETS[3]},
    }  # fmt: skip
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"leaky": server}}))
    return path


def _tau(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "tau.cli", *args], cwd=work, env=clean_env(tmp_path),
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_mcp_list_masks_secret_arguments(tmp_path: Path) -> None:
    run = _tau(tmp_path, "mcp", "list", str(_config(tmp_path)))
    shown = run.stdout + run.stderr
    assert "leaky: failed" in shown
    assert "--api-key *** --token=*** PASSWORD=*** '--dir=/data/***' --auth *** --verbose" in shown
    for secret in SECRETS:
        assert secret not in shown


def test_the_start_up_warning_masks_secret_arguments(tmp_path: Path) -> None:
    run = _tau(tmp_path, "--mcp", str(_config(tmp_path)), "-m", "faux/echo", "hi")
    assert "continuing without it" in run.stderr
    assert "--api-key ***" in run.stderr
    for secret in SECRETS:
        assert secret not in run.stdout + run.stderr
