"""Issue 24 items 4 and 5: exports neither follow a planted link nor write outside the project.

4. A symlink planted at the temporary name ``.NAME.tau-export`` made the export overwrite the
   link's target, and the export became the link (``/export``, ``tau sessions export``, RPC
   ``export_html``). The temporary file is now created exclusively.
5. RPC ``export_html`` wrote new files anywhere (``"outputPath": "../../outside/x.html"``,
   ``~/…``); it now follows the tools' path policy.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.cli.conftest import clean_env
from tests.cli.rpc_client import RpcClient

PRECIOUS = "the link's target: must never be written by an export\n"


def _plant(work: Path, name: str, outside: Path) -> Path:
    """A link at the name the export's temporary file used to have, pointing outside."""
    target = outside / "precious.txt"
    target.write_text(PRECIOUS)
    (work / f".{name}.tau-export").symlink_to(target)
    return target


def test_sessions_export_ignores_a_planted_temporary_link(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    target = _plant(work, "out.html", outside)

    def tau(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "tau.cli", *args], cwd=work, env=clean_env(tmp_path),
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip

    assert tau("-m", "faux/echo", "hello").returncode == 0
    (session,) = (tmp_path / "tau-home" / "sessions").rglob("*.jsonl")
    run = tau("sessions", "export", str(session), "-o", "out.html")
    assert run.returncode == 0, run.stderr
    assert target.read_text() == PRECIOUS
    exported = work / "out.html"
    assert not exported.is_symlink() and "hello" in exported.read_text()
    assert (work / ".out.html.tau-export").is_symlink()  # left as it was, unused
    assert sorted(p.name for p in work.iterdir()) == [".out.html.tau-export", "out.html"]


def test_rpc_export_html_ignores_a_planted_link_and_stays_inside(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    target = _plant(work, "x.html", outside)
    client = RpcClient(tmp_path, "--model", "faux/echo")
    assert client.call({"id": 1, "type": "prompt", "message": "hello"})["success"]
    client.wait_for(lambda d: d.get("type") == "agent_end")

    for hostile in ("../outside/x.html", str(outside / "y.html"), "~/z.html"):
        answer = client.call({"id": 2, "type": "export_html", "outputPath": hostile})
        assert answer["success"] is False, answer
        assert "outside the working directory" in answer["error"]
        assert "--allow-path" in answer["error"]
    assert sorted(p.name for p in outside.iterdir()) == ["precious.txt"]
    assert not (tmp_path / "z.html").exists()

    answer = client.call({"id": 3, "type": "export_html", "outputPath": "x.html"})
    assert answer["success"], answer
    assert target.read_text() == PRECIOUS
    assert not (work / "x.html").is_symlink() and "hello" in (work / "x.html").read_text()
    assert client.close() == 0, client.stderr


def test_rpc_export_html_may_write_under_an_allowed_path(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    client = RpcClient(tmp_path, "--model", "faux/echo", "--allow-path", str(shared))
    assert client.call({"id": 1, "type": "prompt", "message": "hello"})["success"]
    client.wait_for(lambda d: d.get("type") == "agent_end")
    answer = client.call({"id": 2, "type": "export_html", "outputPath": str(shared / "s.html")})
    assert answer["success"], answer
    assert "hello" in (shared / "s.html").read_text()
    assert client.close() == 0, client.stderr
