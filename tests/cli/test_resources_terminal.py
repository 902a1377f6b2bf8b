"""Templates and skills in the interactive session (a pty read from a pyte screen): listed in
``/`` completion with their descriptions and in ``/help``, expanded when sent, found again by
``/reload``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.cli.terminal import Terminal
from tests.cli.test_resources import skill

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a pty")


def test_templates_and_skills_in_the_session(tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / ".git").mkdir(parents=True)
    prompts = work / ".tau" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "review.md").write_text("---\ndescription: Review a file closely\n---\nReview $1\n")
    skill(work / ".tau" / "skills", "pdf", "Extract text from PDFs.", body="Run pdftotext.")
    term = Terminal.scripted(tmp_path, [{"echo": True}] * 4, "--no-session")
    term.wait("/help for commands")
    term.wait_prompt()
    term.send("/rev")
    term.wait("/review  Review a file closely")  # the menu, with the description
    term.send("\t")
    term.wait(lambda: term.cursor_line() == "> /review")
    term.send(" main.py\r")
    term.wait("Review main.py")  # the echo model answers with the expanded text
    term.wait_prompt()
    term.send("/skill:pdf at once\r")
    term.wait("Run pdftotext.")
    term.wait_prompt()
    term.send("/help\r")
    term.wait("/skill:pdf")
    term.wait_prompt()
    (prompts / "later.md").write_text("Added later: $@\n")
    term.send("/reload\r")
    term.wait("reloaded: 0 extensions, 1 skills, 2 prompt templates")
    term.wait_prompt()
    term.send("/later one two\r")
    term.wait("Added later: one two")
    term.wait_prompt()
    assert term.exit() == 0
