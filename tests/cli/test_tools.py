"""The built-in tools, called the way the agent calls them, on real files and processes."""

from __future__ import annotations

import asyncio
import struct
import subprocess
import time
import zlib
from pathlib import Path
from typing import Any

import pytest

from tau.agent.tools import AgentTool, AgentToolResult, as_tool_result
from tau.ai.core.abort import AbortController
from tau.ai.core.types import ImageContent, TextContent
from tau.cli.tools import Workspace, build_tools
from tau.cli.tools.paths import PathNotAllowedError
from tau.cli.tools.truncate import format_size, truncate_head, truncate_tail


def _tool(name: str, root: Path, allowed: tuple[Path, ...] = ()) -> AgentTool:
    return build_tools([name], Workspace(root.resolve(), allowed))[0]


def _run(
    tool: AgentTool,
    params: dict[str, Any],
    *,
    updates: list[Any] | None = None,
    abort_after: float | None = None,
) -> AgentToolResult:
    """Execute ``tool`` on a fresh event loop, as the agent loop would."""

    async def call() -> AgentToolResult:
        controller = AbortController()
        if abort_after is not None:
            asyncio.get_running_loop().call_later(abort_after, controller.abort)
        sink = updates if updates is not None else []
        result = tool.execute("call_1", params, controller.signal, sink.append)
        if asyncio.iscoroutine(result):
            result = await result
        return as_tool_result(result)

    return asyncio.run(call())


def _text(result: AgentToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, TextContent))


# --------------------------------------------------------------------------- limits


def test_format_size() -> None:
    assert format_size(512) == "512B"
    assert format_size(1536) == "1.5KB"
    assert format_size(50 * 1024) == "50.0KB"
    assert format_size(3 * 1024 * 1024) == "3.0MB"


def test_truncate_head_and_tail_keep_whole_lines() -> None:
    text = "\n".join(str(i) for i in range(1, 3001))
    head = truncate_head(text)
    assert (head.first_line, head.last_line, head.total_lines, head.by) == (1, 2000, 3000, "lines")
    tail = truncate_tail(text)
    assert (tail.first_line, tail.last_line, tail.by) == (1001, 3000, "lines")
    assert tail.text.startswith("1001\n") and tail.text.endswith("\n3000")


# --------------------------------------------------------------------------- read


def test_read_whole_small_file(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\nthree")
    assert _text(_run(_tool("read", tmp_path), {"path": "a.txt"})) == "one\ntwo\nthree"


def test_read_offset_and_limit_with_continuation_notice(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("\n".join(f"line {i}" for i in range(1, 11)))
    out = _text(_run(_tool("read", tmp_path), {"path": "a.txt", "offset": 3, "limit": 2}))
    assert out == "line 3\nline 4\n\n[6 more lines in file. Use offset=5 to continue.]"


def test_read_offset_past_end(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\ny")
    with pytest.raises(ValueError, match=r"Offset 9 is beyond end of file \(2 lines total\)"):
        _run(_tool("read", tmp_path), {"path": "a.txt", "offset": 9})


def test_read_truncates_at_2000_lines(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("\n".join(str(i) for i in range(1, 2501)))
    out = _text(_run(_tool("read", tmp_path), {"path": "big.txt"}))
    assert out.endswith(
        "\n1999\n2000\n\n[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]"
    )


def test_read_truncates_at_50kb(tmp_path: Path) -> None:
    (tmp_path / "wide.txt").write_text("\n".join("x" * 1000 for _ in range(100)))
    out = _text(_run(_tool("read", tmp_path), {"path": "wide.txt"}))
    # 51 lines of 1000 bytes plus newlines fit in 51,200 bytes; the 52nd does not.
    assert out.endswith("[Showing lines 1-51 of 100 (50.0KB limit). Use offset=52 to continue.]")


def test_read_first_line_too_long(tmp_path: Path) -> None:
    (tmp_path / "one.txt").write_text("y" * 60_000)
    out = _text(_run(_tool("read", tmp_path), {"path": "one.txt"}))
    assert out == (
        "[Line 1 is 58.6KB, exceeds 50.0KB limit. Use bash: sed -n '1p' one.txt | head -c 51200]"
    )


def test_read_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"File not found: nope.txt"):
        _run(_tool("read", tmp_path), {"path": "nope.txt"})


def _png_1x1() -> bytes:
    """A valid one-pixel RGB PNG, built by hand (no image library needed)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


def test_read_image(tmp_path: Path) -> None:
    (tmp_path / "p.png").write_bytes(_png_1x1())
    result = _run(_tool("read", tmp_path), {"path": "@p.png"})
    assert _text(result) == "Read image file [image/png]"
    assert isinstance(result.content[1], ImageContent)
    assert result.content[1].mime_type == "image/png"


def test_paths_stay_inside_the_working_directory(tmp_path: Path) -> None:
    inside = tmp_path / "work"
    inside.mkdir()
    (tmp_path / "secret.txt").write_text("s")
    with pytest.raises(PathNotAllowedError, match=r"outside the working directory"):
        _run(_tool("read", inside), {"path": "../secret.txt"})
    with pytest.raises(PathNotAllowedError):
        _run(_tool("read", inside), {"path": str(tmp_path / "secret.txt")})
    allowed = _tool("read", inside, (tmp_path.resolve(),))
    assert _text(_run(allowed, {"path": "../secret.txt"})) == "s"


def test_symlink_out_of_the_working_directory_is_refused(tmp_path: Path) -> None:
    inside = tmp_path / "work"
    inside.mkdir()
    (tmp_path / "secret.txt").write_text("s")
    (inside / "link.txt").symlink_to(tmp_path / "secret.txt")
    with pytest.raises(PathNotAllowedError):
        _run(_tool("read", inside), {"path": "link.txt"})


# --------------------------------------------------------------------------- write / edit


def test_write_creates_parents(tmp_path: Path) -> None:
    out = _text(_run(_tool("write", tmp_path), {"path": "d/e/f.txt", "content": "héllo"}))
    assert out == "Successfully wrote 5 bytes to d/e/f.txt"
    assert (tmp_path / "d/e/f.txt").read_text(encoding="utf-8") == "héllo"


def test_edit_exact_unique_replacement_with_diff(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("a = 1\nb = 2\nc = 3\n")
    result = _run(
        _tool("edit", tmp_path), {"path": "m.py", "oldText": "b = 2", "newText": "b = 20"}
    )
    assert _text(result) == "Successfully replaced text in m.py."
    assert (tmp_path / "m.py").read_text() == "a = 1\nb = 20\nc = 3\n"
    assert result.details["firstChangedLine"] == 2
    assert "-   2 b = 2" in result.details["diff"] and "+   2 b = 20" in result.details["diff"]


def test_edit_errors(tmp_path: Path) -> None:
    (tmp_path / "m.txt").write_text("x\nx\ny\n")
    edit = _tool("edit", tmp_path)
    with pytest.raises(ValueError, match=r"Could not find the exact text in m.txt"):
        _run(edit, {"path": "m.txt", "oldText": "zzz", "newText": "q"})
    with pytest.raises(ValueError, match=r"Found 2 occurrences of the text in m.txt"):
        _run(edit, {"path": "m.txt", "oldText": "x", "newText": "q"})
    with pytest.raises(ValueError, match=r"No changes made to m.txt"):
        _run(edit, {"path": "m.txt", "oldText": "y", "newText": "y"})
    with pytest.raises(FileNotFoundError, match=r"File not found: gone.txt"):
        _run(edit, {"path": "gone.txt", "oldText": "a", "newText": "b"})
    assert (tmp_path / "m.txt").read_text() == "x\nx\ny\n"


def test_edit_keeps_crlf_and_bom(tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_bytes("\ufeffone\r\ntwo\r\n".encode())
    _run(_tool("edit", tmp_path), {"path": "w.txt", "oldText": "two", "newText": "2"})
    assert (tmp_path / "w.txt").read_bytes() == "\ufeffone\r\n2\r\n".encode()


def test_edit_fuzzy_match_of_smart_quotes_and_trailing_spaces(tmp_path: Path) -> None:
    (tmp_path / "q.txt").write_text("say \u201chi\u201d   \nend\n")
    _run(_tool("edit", tmp_path), {"path": "q.txt", "oldText": 'say "hi"', "newText": "ok"})
    assert (tmp_path / "q.txt").read_text() == "ok\nend\n"


# --------------------------------------------------------------------------- bash


def test_bash_output_and_updates(tmp_path: Path) -> None:
    updates: list[Any] = []
    result = _run(
        _tool("bash", tmp_path), {"command": "echo one; echo two >&2; pwd"}, updates=updates
    )
    assert _text(result).splitlines() == ["one", "two", str(tmp_path.resolve())]
    assert updates, "on_update was never called"


def test_bash_no_output(tmp_path: Path) -> None:
    assert _text(_run(_tool("bash", tmp_path), {"command": "true"})) == "(no output)"


def test_bash_nonzero_exit_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match=r"(?s)oops.*Command exited with code 3"):
        _run(_tool("bash", tmp_path), {"command": "echo oops; exit 3"})


def test_bash_timeout_kills_the_process_group(tmp_path: Path) -> None:
    marker = tmp_path / "survived"
    with pytest.raises(RuntimeError, match=r"Command timed out after 0.5 seconds"):
        _run(
            _tool("bash", tmp_path),
            {"command": f"(sleep 2; touch {marker}) & sleep 5", "timeout": 0.5},
        )
    time.sleep(2.5)
    assert not marker.exists()


def test_bash_abort(tmp_path: Path) -> None:
    started = time.monotonic()
    with pytest.raises(RuntimeError, match=r"(?s)start.*Command aborted"):
        _run(_tool("bash", tmp_path), {"command": "echo start; sleep 10"}, abort_after=0.3)
    assert time.monotonic() - started < 5, "abort must kill the command, not wait for it"


def test_bash_truncates_long_output_to_its_tail(tmp_path: Path) -> None:
    result = _run(_tool("bash", tmp_path), {"command": "seq 1 5000"})
    text = _text(result)
    assert text.startswith("3001\n")
    assert text.endswith(
        "\n5000\n\n[Showing lines 3001-5000 of 5000. Earlier output is not kept: "
        "redirect it to a file to see all of it.]"
    )


def test_bash_output_over_50kb_keeps_whole_lines_numbered_against_all(tmp_path: Path) -> None:
    line = "x" * 99
    result = _run(_tool("bash", tmp_path), {"command": f"yes {line} | head -n 3000"})
    # 512 lines of 100 bytes (less the last newline) fit in 51,200 bytes; they are numbered against all 3,000.
    assert _text(result).endswith(
        f"\n{line}\n\n[Showing lines 2489-3000 of 3000 (50.0KB limit). Earlier output is not "
        "kept: redirect it to a file to see all of it.]"
    )


# --------------------------------------------------------------------------- ls / find / grep


def _tree(root: Path) -> None:
    (root / "src").mkdir()
    (root / "src" / "a.py").write_text("import os\nprint('hello')\n")
    (root / "src" / "b.txt").write_text("Hello world\nbye\n")
    (root / ".hidden").write_text("h")
    (root / "README.md").write_text("# readme\nhello there\n")


def test_ls(tmp_path: Path) -> None:
    _tree(tmp_path)
    out = _text(_run(_tool("ls", tmp_path), {}))
    assert out.splitlines() == [".hidden", "README.md", "src/"]
    limited = _text(_run(_tool("ls", tmp_path), {"limit": 1}))
    assert limited == ".hidden\n\n[1 entries limit reached. Use limit=2 for more]"
    with pytest.raises(FileNotFoundError, match=r"Path not found: nope"):
        _run(_tool("ls", tmp_path), {"path": "nope"})


def test_find(tmp_path: Path) -> None:
    _tree(tmp_path)
    assert _text(_run(_tool("find", tmp_path), {"pattern": "*.py"})) == "src/a.py"
    assert _text(_run(_tool("find", tmp_path), {"pattern": "**/*.txt"})) == "src/b.txt"
    assert (
        _text(_run(_tool("find", tmp_path), {"pattern": "*.rs"}))
        == "No files found matching pattern"
    )
    limited = _text(_run(_tool("find", tmp_path), {"pattern": "*", "limit": 2}))
    assert limited.endswith("[2 results limit reached. Use limit=4 for more, or refine pattern]")


def test_find_and_grep_respect_gitignore(tmp_path: Path) -> None:
    _tree(tmp_path)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / ".gitignore").write_text("src/b.txt\n")
    assert "src/b.txt" not in _text(_run(_tool("find", tmp_path), {"pattern": "*"}))
    out = _text(_run(_tool("grep", tmp_path), {"pattern": "hello", "ignoreCase": True}))
    assert "b.txt" not in out and "src/a.py:2:" in out


def test_grep(tmp_path: Path) -> None:
    _tree(tmp_path)
    grep = _tool("grep", tmp_path)
    out = _text(_run(grep, {"pattern": "hello"}))
    assert out.splitlines() == ["README.md:2: hello there", "src/a.py:2: print('hello')"]
    out = _text(_run(grep, {"pattern": "hello", "ignoreCase": True, "glob": "*.txt"}))
    assert out == "src/b.txt:1: Hello world"
    out = _text(_run(grep, {"pattern": "print(", "literal": True, "context": 1}))
    assert out.splitlines() == ["src/a.py-1- import os", "src/a.py:2: print('hello')"]
    assert _text(_run(grep, {"pattern": "zzz"})) == "No matches found"
    out = _text(_run(grep, {"pattern": "e", "limit": 1}))
    assert out.endswith("[1 matches limit reached. Use limit=2 for more, or refine pattern]")
    with pytest.raises(ValueError, match=r"Invalid regular expression"):
        _run(grep, {"pattern": "("})


def test_grep_clips_long_lines(tmp_path: Path) -> None:
    (tmp_path / "long.txt").write_text("needle" + "z" * 1000)
    out = _text(_run(_tool("grep", tmp_path), {"pattern": "needle"}))
    assert out.endswith("... [truncated]") and len(out) < 600


# --------------------------------------------------------------------------- examples


def test_example_tools(tmp_path: Path) -> None:
    weather, calc = build_tools(["weather", "calculator"], Workspace(tmp_path))
    assert weather.name == "get_weather" and calc.name == "calculate"
    assert _text(_run(weather, {"city": "Paris"})) == "The weather in Paris is sunny, 22°C."
    assert _text(_run(calc, {"expression": "(2 + 3) * 4"})) == "(2 + 3) * 4 = 20"
    with pytest.raises(ValueError, match=r"only numbers"):
        _run(calc, {"expression": "__import__('os')"})


def test_unknown_tool_name(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"unknown tool 'bsh'"):
        build_tools(["bsh"], Workspace(tmp_path))
