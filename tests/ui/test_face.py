"""tau.ui's face: documented names, and nothing below it loads it (or its extra)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import tau.ui


def test_every_public_name_is_documented() -> None:
    for name in tau.ui.__all__:
        value = getattr(tau.ui, name)
        if isinstance(value, str | bytes | dict):
            continue  # constants: documented where they are defined
        assert (value.__doc__ or "").strip(), name


def test_tau_ai_and_tau_agent_do_not_load_tau_ui() -> None:
    code = (
        "import sys, tau.ai, tau.agent, tau.proxy\n"
        "loaded = [m for m in ('tau.ui', 'starlette', 'ag_ui') if m in sys.modules]\n"
        "print(','.join(loaded))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_the_page_ships_in_the_wheel(tmp_path: Path) -> None:
    repo = Path(__file__).resolve().parents[2]
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path), str(repo)],
        check=True,
        capture_output=True,
    )  # fmt: skip
    (wheel,) = tmp_path.glob("tau-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {f"tau/ui/static/{name}" for name in ("index.html", "app.js", "style.css")} <= names
    page = zipfile.ZipFile(wheel).read("tau/ui/static/index.html").decode()
    # Nothing is fetched from elsewhere at run time.
    assert "http://" not in page and "https://" not in page
