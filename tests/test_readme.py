"""The README fits on a screen and leads to the documentation: the two set-up commands first,
one example each (run, with what they print, by tests/docs/test_examples.py), and links that
resolve. The manual itself is the site in docs/."""

from __future__ import annotations

import re
from pathlib import Path

from tests.docs.blocks import blocks, console_blocks, python_blocks

REPO = Path(__file__).resolve().parents[1]
README_PATH = REPO / "README.md"
README = README_PATH.read_text(encoding="utf-8")


def test_readme_keeps_the_two_setup_commands_at_the_top() -> None:
    top = README.split("```bash\n", 1)[1].split("```", 1)[0].splitlines()
    assert [line.split()[:2] for line in top] == [
        ["bash", "scripts/demo.sh"],
        ["bash", "scripts/test.sh"],
    ]
    assert README.index("scripts/demo.sh") < README.index("\n## ")


def test_readme_fits_on_a_screen() -> None:
    assert len(README.splitlines()) <= 200


def test_readme_has_one_example_of_each_and_they_run() -> None:
    # A streamed call, an agent with a tool, typed output (Python), and the command (shell).
    found = python_blocks(README_PATH)
    assert len(found) == 3
    assert "stream(" in found[0].body
    assert "@agent_tool" in found[1].body
    assert "output_type=" in found[2].body
    assert all(block.output for block in found), "each example shows what it prints"
    assert console_blocks(README_PATH)
    install = next(b for b in blocks(README_PATH) if "pip install tau" in b.body)
    assert len(install.body.splitlines()) == 3


def test_readme_links_resolve() -> None:
    for link in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README):
        if "://" not in link:
            assert (REPO / link).exists(), link
