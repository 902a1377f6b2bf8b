"""Bad ``--output-schema`` values: exit 2 with one clear line, never a traceback, no run."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import TauRunner, tau  # noqa: F401

CASES = [
    ("missing.json", None, "no such file"),
    (".", None, "not a file"),
    ("bad.json", b"[1, 2", "not valid JSON"),
    ("list.json", b"[1, 2]", "a JSON Schema must be an object, not list"),
    ("wrong.json", b'{"type": 12}', "not a valid JSON Schema"),
    ("binary.json", b"\xff\xfe\x00garbage", "not UTF-8"),
    ("deep.json", b"[" * 100_000, "nested too deeply"),
    ("big.json", b" " * (1024 * 1024 + 1), "too large"),
    ("nomodule:City", None, "no module named 'nomodule'"),
    ("models:Missing", None, "models has no 'Missing'"),
    ("models:helper", None, "not a pydantic model (a function)"),
    ("models:Plain", None, "not a pydantic model (a class)"),
    ("crashing:City", None, "importing crashing failed: RuntimeError: broken at import"),
    ("models:Weird", None, "Weird"),
]


@pytest.mark.parametrize(("value", "content", "message"), CASES, ids=[c[0] for c in CASES])
def test_bad_output_schema(
    tau: TauRunner,  # noqa: F811
    tmp_path: Path,
    value: str,
    content: bytes | None,
    message: str,
) -> None:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    (work / "models.py").write_text(
        "from pydantic import BaseModel\n"
        "def helper(): pass\n"
        "class Plain: pass\n"
        "class Weird(BaseModel):\n"
        "    x: object = None\n"
        "    f: type = int\n"
    )
    (work / "crashing.py").write_text("raise RuntimeError('broken at import')\n")
    if content is not None:
        (work / value).write_bytes(content)
    done = tau("--model", "faux/echo", "--output-schema", value, "go")
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""
    line = done.stderr.strip()
    assert line.startswith(f"tau: --output-schema {value}: ") and message in line, line


def test_output_schema_needs_a_prompt(tau: TauRunner) -> None:  # noqa: F811
    # No prompt (and nothing piped): refused before the schema is even read.
    done = tau("--output-schema", "x.json")
    assert done.returncode == 2
    assert done.stderr == "tau: no prompt given (stdin is empty)\n"
