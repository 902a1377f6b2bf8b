"""The output file: whole lines only, resume, repair of a cut-off line, one writer, fsync."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from tau.batch import BatchOutputError, BatchResult, read_results
from tau.batch.output import ResultFile


def result(ident: str, text: str = "fine") -> BatchResult:
    return BatchResult(id=ident, status="ok", text=text)


def test_each_result_is_one_line_and_resume_reads_the_ids(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    out = ResultFile(path)
    assert out.done == set()
    for ident in ("a", "b"):
        out.write(result(ident, "línea\nwith a newline"))
    out.close()
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) == 3
    assert [json.loads(line)["id"] for line in lines[:2]] == ["a", "b"]
    again = ResultFile(path)
    assert again.done == {"a", "b"} and again.notes == []
    again.write(result("c"))
    again.close()
    assert [r.id for r in read_results(path)] == ["a", "b", "c"]
    assert next(read_results(path)).text == "línea\nwith a newline"


def test_a_cut_off_last_line_is_removed_and_its_item_runs_again(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    whole = result("a").to_line()
    path.write_bytes(whole + result("b").to_line()[:17])
    out = ResultFile(path)
    assert out.done == {"a"}
    assert "cut off an unfinished last line (17 bytes)" in out.notes[0]
    out.write(result("b"))
    out.close()
    assert [r.id for r in read_results(path)] == ["a", "b"]
    assert path.read_bytes().startswith(whole)


def test_without_resume_the_file_starts_afresh(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    path.write_bytes(result("a").to_line())
    out = ResultFile(path, resume=False)
    assert out.done == set()
    out.close()
    assert path.read_bytes() == b""


def test_a_file_that_is_not_batch_results_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.jsonl"
    path.write_text('{"id": "a", "status": "ok"}\n{"hello": "world"}\n')
    with pytest.raises(BatchOutputError, match=r"not a batch result \(line 2\)"):
        ResultFile(path)
    assert path.read_text().endswith('{"hello": "world"}\n')  # untouched


def test_a_second_batch_on_the_same_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    first = ResultFile(path)
    with pytest.raises(BatchOutputError, match="another batch is writing"):
        ResultFile(path)
    first.close()
    ResultFile(path).close()  # the lock went with the first


def test_a_short_write_is_taken_back_before_the_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "out.jsonl"
    out = ResultFile(path)
    out.write(result("a"))
    real_write = os.write
    calls = 0

    def disk_fills_up(fd: int, data: bytes) -> int:
        nonlocal calls
        calls += 1
        if calls == 1:
            return real_write(fd, bytes(data)[:10])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", disk_fills_up)
    with pytest.raises(OSError, match="No space left"):
        out.write(result("b"))
    monkeypatch.undo()
    out.write(result("c"))
    out.close()
    assert [r.id for r in read_results(path)] == ["a", "c"]


@pytest.mark.parametrize(("interval", "expected"), [(0, 3 + 1), (None, 1), (3600, 1)])
def test_fsync_policy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, interval: float | None, expected: int
) -> None:
    out = ResultFile(tmp_path / "out.jsonl", fsync=interval)
    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd) or real_fsync(fd))
    for ident in "abc":
        out.write(result(ident))
    out.close()  # always flushes at the end
    assert len(synced) == expected


def test_results_round_trip_through_json() -> None:
    from tau.agent import RunUsage

    original = BatchResult(
        id="x",
        status="error",
        text="partial",
        output={"a": [1, 2]},
        error="503 overloaded",
        error_kind="server_error",
        model="p/m",
        usage=RunUsage(turns=2, requests=3, input_tokens=10, output_tokens=4, cost=0.5),
        attempts=3,
        started=1000.5,
        elapsed=2.25,
        rate_wait=0.5,
        transcript=[{"role": "user", "content": "hi"}],
    )
    data = json.loads(original.to_line())
    assert data["errorKind"] == "server_error" and data["usage"]["inputTokens"] == 10
    assert BatchResult.from_json(data) == original
    with pytest.raises(ValueError, match="needs a string"):
        BatchResult.from_json({"id": "x", "status": "maybe"})


def test_a_typed_output_is_written_as_its_json() -> None:
    from dataclasses import dataclass

    from pydantic import BaseModel

    class City(BaseModel):
        name: str
        population: int

    @dataclass
    class Pair:
        left: City
        right: float

    value = Pair(City(name="Paris", population=2_100_000), 0.5)
    line = BatchResult(id="x", status="ok", output=value).to_line()
    expected = {"left": {"name": "Paris", "population": 2_100_000}, "right": 0.5}
    assert json.loads(line)["output"] == expected
    assert BatchResult(id="x", status="ok", output=value).to_json()["output"] == expected
