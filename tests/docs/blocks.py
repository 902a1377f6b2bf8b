"""The code blocks of the README and the documentation pages, as the tests run them.

The conventions a page follows (the site's home page states them for writers):

* a ```` ```python ```` block runs, each in a fresh interpreter, unless the line before it is
  ``<!-- not-run: REASON -->`` (it needs a key, a network, or it is a fragment of a page);
* a ```` ```text title="Output" ```` block right after a python block is what that block
  prints, compared line by line: a line ``...`` stands for any number of lines, and ``...``
  inside a line for any text;
* a ```` ```console ```` block after ``<!-- run -->`` is a shell session: each ``$ `` line is
  run by bash (with ``tau`` and its ``python`` on ``PATH``, no API key in the environment, in
  an empty folder whose ``.tau`` is ``$TAU_HOME``; a continuation line is shown after ``> ``)
  and the lines up to the next ``$ `` are its output, stdout and stderr together, compared the
  same way;
* a page holding ``<!-- blocks: sequence -->`` runs its python blocks in order in one
  interpreter, as a reader typing them one after another would.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"

# A fence, at the start of a line or indented in a list item, with the marker comment before it.
_FENCE = re.compile(
    r"^(?P<indent>[ \t]*)(?:<!-- (?P<mark>[^>]*?) -->\n(?P=indent))?```(?P<info>[^\n]*)\n"
    r"(?P<body>.*?)^(?P=indent)```[ \t]*$",
    re.S | re.M,
)
ELLIPSIS = "..."


@dataclass
class Block:
    """One fenced block: where it is, its language, its marker comment and its text."""

    path: Path
    line: int
    lang: str
    info: str
    mark: str
    body: str
    output: list[str] | None = None
    commands: list[tuple[str, list[str]]] = field(default_factory=list)

    @property
    def name(self) -> str:
        """``docs/guides/streaming.md:12``: where the block starts."""
        return f"{self.path.relative_to(REPO)}:{self.line}"


def pages() -> list[Path]:
    """The README and every page of the site."""
    return [REPO / "README.md", *sorted(DOCS.rglob("*.md"))]


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of a page, each python block with the output shown after it."""
    text = path.read_text(encoding="utf-8")
    found: list[Block] = []
    previous_end = 0  # where the last block ended: an output block follows its code directly
    for match in _FENCE.finditer(text):
        info = match["info"].strip()
        lang = info.split(" ", 1)[0]
        line = text.count("\n", 0, match.start("info")) + 1
        body = textwrap.dedent(match["body"]) if match["indent"] else match["body"]
        block = Block(path, line, lang, info, (match["mark"] or "").strip(), body)
        if (
            lang == "text"
            and 'title="Output"' in info
            and found
            and found[-1].lang == "python"
            and not text[previous_end : match.start()].strip()
        ):
            found[-1].output = block.body.splitlines()
        elif lang == "console":
            block.commands = _commands(block.body)
            found.append(block)
        else:
            found.append(block)
        previous_end = match.end()
    return found


def output_fences(path: Path) -> int:
    """How many ``Output`` blocks the page holds (each must follow a python block)."""
    return len(re.findall(r'^[ \t]*```text title="Output"', path.read_text(encoding="utf-8"), re.M))


def python_blocks(path: Path) -> list[Block]:
    """The python blocks of a page that run."""
    return [b for b in blocks(path) if b.lang == "python" and not b.mark.startswith("not-run")]


def console_blocks(path: Path) -> list[Block]:
    """The shell sessions of a page marked to run."""
    return [b for b in blocks(path) if b.lang == "console" and b.mark == "run"]


def is_sequence(path: Path) -> bool:
    """Whether the page's python blocks run in one interpreter, in order."""
    return "<!-- blocks: sequence -->" in path.read_text(encoding="utf-8")


def _commands(body: str) -> list[tuple[str, list[str]]]:
    """``$ command`` lines (with ``\\`` continuations, shown after ``> ``, and ``<<'EOF'``
    documents) and the output lines shown after each."""
    commands: list[tuple[str, list[str]]] = []
    lines = body.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if not line.startswith("$ "):
            if commands:
                commands[-1][1].append(line)
            continue
        command = [line[2:]]
        while command[-1].endswith("\\") and index < len(lines):
            command.append(lines[index].removeprefix("> "))
            index += 1
        heredoc = re.search(r"<<-?'?(\w+)'?", command[0])
        if heredoc:
            while index < len(lines):
                command.append(lines[index])
                index += 1
                if command[-1] == heredoc[1]:
                    break
        commands.append(("\n".join(command), []))
    return commands


def matches(expected: list[str], actual: str) -> bool:
    """Whether ``actual`` is what ``expected`` shows (``...`` lines and in-line ``...``)."""
    parts = []
    for line in expected:
        line = line.rstrip()
        if line == ELLIPSIS:
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(".*".join(map(re.escape, line.split(ELLIPSIS))) + r"\n")
    pattern = "".join(parts)
    text = "".join(line.rstrip() + "\n" for line in actual.rstrip("\n").splitlines())
    return re.fullmatch(pattern, text) is not None
