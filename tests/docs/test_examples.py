"""Every example of the README and the documentation site runs as written, and prints what the
page shows (the conventions are in :mod:`tests.docs.blocks`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.blocks import (
    DOCS,
    REPO,
    Block,
    blocks,
    console_blocks,
    is_sequence,
    matches,
    output_fences,
    pages,
    python_blocks,
)

SEPARATOR = "\x1e--tau-docs-block--\x1e"
# Runs the blocks given as JSON in one namespace, in order, each output after a separator.
_SEQUENCE_RUNNER = f"""
import json, sys
namespace = {{"__name__": "__main__"}}
for code in json.loads(sys.stdin.read()):
    print({SEPARATOR!r}, flush=True)
    exec(compile(code, "<block>", "exec"), namespace)
    sys.stdout.flush()
"""


def _env(home: Path) -> dict[str, str]:
    """The environment of an example: tau's source first, no key, a home of its own."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.endswith(("_API_KEY", "_TOKEN", "_CREDENTIALS")) and not name.startswith("AWS_")
    }
    return env | {
        "PYTHONPATH": str(REPO / "src"),
        "TAU_HOME": str(home / ".tau"),
        "NO_COLOR": "1",
        "TERM": "dumb",
        "COLUMNS": "100",
    }


def _run_python(code: str, cwd: Path, stdin: str | None = None, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, *args] if args else [sys.executable, "-c", code],
        input=stdin,
        capture_output=True,
        text=True,
        env=_env(cwd),
        cwd=cwd,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _check(block: Block, out: str) -> None:
    if block.output is not None:
        assert matches(block.output, out), (
            f"{block.name} printed:\n{out}\nthe page shows:\n" + "\n".join(block.output)
        )


def _single_blocks() -> list[Block]:
    return [b for page in pages() if not is_sequence(page) for b in python_blocks(page)]


def _sequence_pages() -> list[Path]:
    return [page for page in pages() if is_sequence(page) and python_blocks(page)]


def _console() -> list[Block]:
    return [b for page in pages() for b in console_blocks(page)]


@pytest.mark.parametrize("block", _single_blocks(), ids=lambda b: b.name)
def test_python_block_runs(block: Block, tmp_path: Path) -> None:
    _check(block, _run_python(block.body, tmp_path))


@pytest.mark.parametrize("page", _sequence_pages(), ids=lambda p: str(p.relative_to(REPO)))
def test_page_blocks_run_in_sequence(page: Path, tmp_path: Path) -> None:
    found = python_blocks(page)
    runner = tmp_path / "run_blocks.py"
    runner.write_text(_SEQUENCE_RUNNER)
    out = _run_python("", tmp_path, json.dumps([b.body for b in found]), str(runner))
    outputs = out.split(SEPARATOR + "\n")[1:]
    assert len(outputs) == len(found), out
    for block, printed in zip(found, outputs, strict=True):
        _check(block, printed)


@pytest.mark.parametrize("block", _console(), ids=lambda b: b.name)
def test_console_block_runs(block: Block, tmp_path: Path) -> None:
    bin_dir = tmp_path / ".bin"
    bin_dir.mkdir()
    (bin_dir / "tau").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m tau.cli "$@"\n')
    (bin_dir / "tau").chmod(0o755)
    marker = "@@tau-docs-{}@@"
    script = "".join(
        f"printf '%s\\n' '{marker.format(i)}'\n{{ {command}\n}} 2>&1\n"
        for i, (command, _) in enumerate(block.commands)
    )
    # `tau`, and the Python it runs on (as in an activated virtual environment).
    path = [str(bin_dir), str(Path(sys.executable).parent), os.environ.get("PATH", "")]
    env = _env(tmp_path) | {"PATH": os.pathsep.join(path)}
    done = subprocess.run(
        ["bash", "-c", script],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    printed = done.stdout
    for index, (command, expected) in enumerate(block.commands):
        start = printed.index(marker.format(index)) + len(marker.format(index)) + 1
        following = marker.format(index + 1)
        end = printed.find(following) if following in printed else len(printed)
        out = printed[start:end]
        assert matches(expected, out), (
            f"{block.name}: `{command}` printed:\n{out}\nthe page shows:\n" + "\n".join(expected)
        )


def test_the_examples_are_found() -> None:
    # The runner sees the pages' blocks (a change of convention would silently run none).
    assert len(_single_blocks()) >= 20
    assert len(_console()) >= 5
    assert DOCS / "getting-started.md" in _sequence_pages()


def test_few_blocks_are_left_unrun() -> None:
    # Blocks that need a key or a network are marked, and stay few.
    unrun = [
        b
        for page in pages()
        for b in blocks(page)
        if b.lang == "python" and b.mark.startswith("not-run")
    ]
    assert all(b.mark.removeprefix("not-run:").strip() for b in unrun), "give a reason"
    assert len(unrun) <= 25, [b.name for b in unrun]


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_output_block_follows_its_code(page: Path) -> None:
    # An Output block anywhere else would be shown to readers but compared with nothing.
    shown = sum(1 for b in blocks(page) if b.output is not None)
    assert shown == output_fences(page)
