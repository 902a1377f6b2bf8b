"""tau.batch against hostile files: an input that is a FIFO, a directory, a huge line, bytes
that are not UTF-8, duplicate ids; an output that cannot be written, is not a file, or is the
input itself; text that cannot be UTF-8. Each is a clear error before anything runs (or is
written safely), never a hang, never a traceback from ``tau batch``."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

import tau.batch.items as batch_items
from tau.ai import get_model
from tau.batch import (
    BatchInputError,
    BatchOutputError,
    load_items,
    read_results,
    run_batch,
    run_batch_sync,
)
from tests.cli.conftest import clean_env

from .tool_calls import make_fifo, unblock_fifo

ECHO = get_model("faux", "echo")


async def test_an_input_fifo_is_refused_at_once(tmp_path: Path) -> None:
    fifo = make_fifo(tmp_path / "in.jsonl")
    try:
        with pytest.raises(BatchInputError, match="a FIFO: the input is read whole"):
            await asyncio.wait_for(asyncio.to_thread(load_items, fifo), 5)
    finally:
        unblock_fifo(fifo)


def test_an_input_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BatchInputError, match=r"file: (a directory|cannot read it)"):
        load_items(tmp_path)


def test_a_huge_line_is_reported_and_skipped_without_holding_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(batch_items, "MAX_LINE_BYTES", 1_000)
    path = tmp_path / "in.jsonl"
    huge = json.dumps({"id": "big", "prompt": "x" * 50_000})
    path.write_text(f'{{"id": "a", "prompt": "1"}}\n{huge}\n{{"id": "b", "prompt": "2"\n')
    with pytest.raises(BatchInputError) as caught:
        load_items(path)
    assert caught.value.problems == [
        ("line 2", "longer than the limit of 1,000 bytes"),
        ("line 3", "not valid JSON: Expecting ',' delimiter at column 26"),
    ]


def test_bytes_that_are_not_utf8_are_reported_with_their_position(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_bytes(b'{"id": "a", "prompt": "ok"}\n{"id": "b", "prompt": "caf\xe9"}\n')
    with pytest.raises(
        BatchInputError, match=r"line 2: not valid UTF-8 \(byte 0xe9 at column 27\)"
    ):
        load_items(path)


def test_a_byte_order_mark_is_allowed(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"id": "a", "prompt": "ok"}\r\n')
    items, _ = load_items(path)
    assert [(i.id, i.prompt) for i in items] == [("a", "ok")]


def test_thousands_of_duplicate_ids_are_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text(
        "".join(json.dumps({"id": "same", "prompt": str(n)}) + "\n" for n in range(5000))
    )
    with pytest.raises(BatchInputError) as caught:
        run_batch(path, ECHO, output=tmp_path / "out.jsonl")
    assert len(caught.value.problems) == 4999
    assert str(caught.value).count("\n") == 21  # the first twenty, and a count of the rest
    assert not (tmp_path / "out.jsonl").exists()


@pytest.mark.parametrize(
    ("where", "message"),
    [
        (lambda tmp: tmp, "Is a directory"),
        (lambda tmp: tmp / "missing" / "out.jsonl", "No such file or directory"),
        (lambda tmp: tmp / "in.jsonl" / "out.jsonl", "Not a directory"),
        (lambda tmp: Path("/dev/null"), "is not a regular file"),
    ],
    ids=["a directory", "no such directory", "under a file", "a device"],
)
def test_an_unusable_output_is_refused_before_anything_runs(
    tmp_path: Path, where: object, message: str
) -> None:
    (tmp_path / "in.jsonl").write_text('{"id": "a", "prompt": "x"}\n')
    with pytest.raises(BatchOutputError, match=message):
        run_batch(tmp_path / "in.jsonl", ECHO, output=where(tmp_path))  # type: ignore[operator]


async def test_an_output_fifo_is_refused_at_once(tmp_path: Path) -> None:
    fifo = make_fifo(tmp_path / "out.jsonl")
    try:
        with pytest.raises(BatchOutputError, match="is not a regular file"):
            await asyncio.wait_for(
                asyncio.to_thread(run_batch, [{"id": "a", "prompt": "x"}], ECHO, output=fifo), 5
            )
    finally:
        unblock_fifo(fifo)


@pytest.mark.parametrize("link", ["same", "symlink", "hardlink"])
@pytest.mark.parametrize("resume", [True, False])
def test_the_input_as_its_own_output_is_refused_and_left_alone(
    tmp_path: Path, link: str, resume: bool
) -> None:
    path = tmp_path / "data.jsonl"
    original = '{"id": "a", "prompt": "x"}\n'
    path.write_text(original)
    output = tmp_path / "out.jsonl"
    match link:
        case "same":
            output = path
        case "symlink":
            output.symlink_to(path)
        case _:
            output.hardlink_to(path)
    # --no-resume truncated the input before
    flags = ["-m", "faux/echo"] + ([] if resume else ["--no-resume"])
    done = subprocess.run(
        [sys.executable, "-m", "tau.cli", "batch", str(path), "-o", str(output), *flags],
        env=clean_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert done.returncode == 2
    assert "is the input file" in done.stderr and "Traceback" not in done.stderr
    assert path.read_text() == original
    with pytest.raises(BatchOutputError, match="is the input file"):
        run_batch(str(path), ECHO, output=output, resume=resume)
    assert path.read_text() == original


def test_text_that_cannot_be_utf8_is_written_escaped_and_reads_back(tmp_path: Path) -> None:
    output = tmp_path / "out.jsonl"
    run_batch_sync(
        [{"id": "s", "prompt": "broken \ud800 surrogate"}, {"id": "é", "prompt": "café"}],
        ECHO,
        output=output,
    )
    raw = output.read_bytes()
    raw.decode("utf-8")  # the file is valid UTF-8
    assert "café".encode() in raw  # ordinary text stays readable
    assert {r.id: r.text for r in read_results(output)} == {
        "s": "broken \ud800 surrogate",
        "é": "café",
    }


def test_an_empty_input_runs_nothing(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text("\n\n")
    summary = run_batch_sync(path, ECHO, output=tmp_path / "out.jsonl")
    assert (summary.total, summary.done, summary.results) == (0, 0, [])
