"""``read`` on awkward files: a directory, a final newline, bytes that are not UTF-8, and
images far over what a provider accepts (item 19 of issue 17, item 13 of issue 18)."""

from __future__ import annotations

import base64
import io
import os
import sys
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tau.ai.core.types import ImageContent
from tau.cli.tools import read as read_module

from .tool_calls import call, text_of, tool

_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
_LIMIT = 5 * 1024 * 1024  # the smallest per-image limit among the providers (base64 bytes)


def test_a_directory_is_not_file_not_found(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    with pytest.raises(IsADirectoryError, match=r"Is a directory: src \(use ls to list it\)"):
        call(tool("read", tmp_path), {"path": "src"})


def test_a_final_newline_does_not_count_as_a_line(tmp_path: Path) -> None:
    (tmp_path / "four.txt").write_text("1\n2\n3\n4\n")
    read = tool("read", tmp_path)
    assert text_of(call(read, {"path": "four.txt"})) == "1\n2\n3\n4"
    assert text_of(call(read, {"path": "four.txt", "limit": 2})) == (
        "1\n2\n\n[2 more lines in file. Use offset=3 to continue.]"
    )
    with pytest.raises(ValueError, match=r"Offset 5 is beyond end of file \(4 lines total\)"):
        call(read, {"path": "four.txt", "offset": 5})


def test_an_empty_file_says_so(tmp_path: Path) -> None:
    (tmp_path / "empty.txt").write_bytes(b"")
    assert text_of(call(tool("read", tmp_path), {"path": "empty.txt"})) == "(empty file)"


def test_non_utf8_text_comes_with_a_note(tmp_path: Path) -> None:
    (tmp_path / "latin1.txt").write_bytes("café\nnaïve\n".encode("latin-1"))
    out = text_of(call(tool("read", tmp_path), {"path": "latin1.txt"}))
    assert out.startswith("caf\ufffd\nna\ufffdve\n\n")
    assert "not valid UTF-8" in out


def test_utf8_text_has_no_note(tmp_path: Path) -> None:
    (tmp_path / "utf8.txt").write_text("café\n", encoding="utf-8")
    assert text_of(call(tool("read", tmp_path), {"path": "utf8.txt"})) == "café"


def test_a_huge_file_is_read_in_bounded_memory(tmp_path: Path) -> None:
    # 64 MB of text: only the shown lines are kept, the rest are counted.
    line = b"y" * 63 + b"\n"
    with (tmp_path / "huge.log").open("wb") as out:
        for _ in range(64):
            out.write(line * (1024 * 1024 // len(line)))
    read = tool("read", tmp_path)
    tracemalloc.start()
    try:
        out = text_of(call(read, {"path": "huge.log", "offset": 1_000_000}))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 1024 * 1024, f"read held {peak / 1e6:.0f} MB for a 64 MB file"
    assert out.endswith(
        "[Showing lines 1000000-1000799 of 1048576 (50.0KB limit). Use offset=1000800 to continue.]"
    )


def _sent_size(result: object) -> int:
    images = [b for b in result.content if isinstance(b, ImageContent)]  # type: ignore[attr-defined]
    return sum(len(b.data) for b in images)


def test_a_huge_fake_png_is_refused_not_inflated(tmp_path: Path) -> None:
    # Before: a 60 MB "PNG" became 84 MB of base64 in the transcript.
    (tmp_path / "big.png").write_bytes(_PNG_MAGIC + os.urandom(12 * 1024 * 1024))
    with pytest.raises(ValueError, match=r"big\.png"):
        call(tool("read", tmp_path), {"path": "big.png"})


def test_without_pillow_a_big_image_is_refused_with_the_way_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "PIL", None)  # as if Pillow were not installed
    (tmp_path / "big.png").write_bytes(_PNG_MAGIC + b"\0" * (8 * 1024 * 1024))
    with pytest.raises(ValueError, match=r"big\.png is 8\.0MB, over the .* limit\. Install Pillow"):
        call(tool("read", tmp_path), {"path": "big.png"})


def test_with_pillow_a_big_image_is_resized_under_the_limit(tmp_path: Path) -> None:
    image_module = pytest.importorskip("PIL.Image")
    # Noise does not compress: 1,600 x 1,600 RGB is a PNG of about 7.7 MB.
    noise = image_module.frombytes("RGB", (1600, 1600), os.urandom(1600 * 1600 * 3))
    noise.save(tmp_path / "noise.png")
    assert (tmp_path / "noise.png").stat().st_size > 7 * 1024 * 1024
    result = call(tool("read", tmp_path), {"path": "noise.png"}, deadline=60)
    assert "[Image resized from 1600x1600" in text_of(result)
    assert 0 < _sent_size(result) <= _LIMIT
    image = next(b for b in result.content if isinstance(b, ImageContent))
    decoded = image_module.open(io.BytesIO(base64.b64decode(image.data)))
    assert decoded.format == "JPEG" and image.mime_type == "image/jpeg"


def test_with_pillow_a_very_wide_image_is_scaled_to_the_side_limit(tmp_path: Path) -> None:
    image_module = pytest.importorskip("PIL.Image")
    image_module.new("RGB", (6000, 300), "white").save(tmp_path / "wide.png")
    result = call(tool("read", tmp_path), {"path": "wide.png"})
    image = next(b for b in result.content if isinstance(b, ImageContent))
    decoded = image_module.open(io.BytesIO(base64.b64decode(image.data)))
    assert decoded.size == (2000, 100)
    assert image.mime_type == "image/png"


def _reference(data: bytes, offset: int | None, limit: int | None) -> str | None:
    """What read shows for small text, computed the plain way (None: offset past the end)."""
    text = data.decode("utf-8")
    lines = text.split("\n")
    if text.endswith("\n") or not text:  # a final newline ends the last line
        lines.pop()
    start = max(1, offset) if offset is not None else 1
    if not lines and offset is None:
        return "(empty file)"
    if start > len(lines):
        return None
    end = min(len(lines), start - 1 + limit) if limit is not None else len(lines)
    shown = "\n".join(lines[start - 1 : end])
    if end < len(lines):
        shown += f"\n\n[{len(lines) - end} more lines in file. Use offset={end + 1} to continue.]"
    return shown


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(st.text(alphabet="ab é\t", max_size=12), max_size=12),
    final_newline=st.booleans(),
    offset=st.none() | st.integers(0, 14),
    limit=st.none() | st.integers(0, 14),
    chunk=st.integers(1, 9),
)
def test_chunked_scanning_matches_the_plain_reading(
    lines: list[str], final_newline: bool, offset: int | None, limit: int | None, chunk: int
) -> None:
    data = "\n".join(lines).encode("utf-8")
    if final_newline and data:
        data += b"\n"
    expected = _reference(data, offset, limit)
    original = read_module._CHUNK
    read_module._CHUNK = chunk  # tiny chunks: lines and characters split across reads
    try:
        handle = io.BytesIO(data)
        if expected is None:
            with pytest.raises(ValueError, match="beyond end of file"):
                read_module.read_text(handle, "x", offset, limit)
        else:
            read = read_module.read_text(handle, "x", offset, limit)
            assert "\n\n".join([read.text, *read.notes]) == expected
    finally:
        read_module._CHUNK = original
