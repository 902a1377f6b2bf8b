"""The documentation site, built once per test session."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.docs.blocks import REPO


@dataclass
class Site:
    """A built site: its folder and what ``mkdocs build --strict`` wrote on stderr."""

    root: Path
    log: str


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    """``mkdocs build --strict`` of the repository's site into a temporary folder."""
    pytest.importorskip("mkdocs", reason="the [docs] extra (mkdocs) is not installed")
    pytest.importorskip("mkdocstrings", reason="the [docs] extra (mkdocstrings) is not installed")
    root = tmp_path_factory.mktemp("site")
    env = os.environ | {"PYTHONPATH": str(REPO / "src"), "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(root)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return Site(root, done.stderr)
