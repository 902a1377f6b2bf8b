"""Item 4: the documentation says plainly that ``bash`` is not confined, and states the tool and
session guarantees that the other tests in this folder hold the code to (the `tau` command's
pages, docs/cli/, which hold what the README's command section held)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = ROOT / "docs"
COMMAND_SECTION = (DOCS / "cli" / "daily-use.md").read_text(encoding="utf-8")
SESSIONS = (DOCS / "cli" / "sessions.md").read_text(encoding="utf-8")
EVERY_PAGE = "\n".join(p.read_text(encoding="utf-8") for p in sorted(DOCS.rglob("*.md")))


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_bash_is_stated_to_be_unconfined() -> None:
    text = _flat(COMMAND_SECTION)
    assert "**`bash` is not confined.**" in text
    assert "runs any command with your user's rights" in text
    assert "`--allow-path` and the working directory do not limit it" in text


def test_paths_are_not_promised_for_every_tool() -> None:
    # The old sentence promised confinement for all tools, bash included.
    assert "Paths stay inside the working directory unless" not in _flat(README + EVERY_PAGE)


def test_the_tool_guarantees_are_stated() -> None:
    text = _flat(COMMAND_SECTION)
    for promise in (
        "this holds for each file `grep` and `find` walk into",
        "No tool opens a FIFO, a device or a socket",
        "`grep` searches at most the first 16 MB of each file",
        "`bash` returns when its shell exits",
        "writes no temporary files",
        "The tools run in worker threads",
        "pip install 'tau[images]'",
    ):
        assert promise in text, promise


def test_the_session_guarantees_are_stated() -> None:
    text = _flat(SESSIONS)
    for promise in (
        "An existing empty file starts a new session",
        "Writes hold an `fcntl` lock",
        "`FILE:LINE` warnings",
        "keeps the original as `FILE.damaged`",
    ):
        assert promise in text, promise
