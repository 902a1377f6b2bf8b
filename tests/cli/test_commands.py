"""The slash-command registry that front ends dispatch to."""

from __future__ import annotations

import pytest

from tau.cli.commands import COMMANDS, UnknownCommandError, help_lines, parse_command


def test_a_line_names_a_command_and_its_argument() -> None:
    found, argument = parse_command("/usage   ")
    assert found is COMMANDS["usage"]
    assert argument == ""


def test_an_unknown_command_is_a_clear_error() -> None:
    with pytest.raises(UnknownCommandError, match=r"unknown command /nope \(/help lists them\)"):
        parse_command("/nope now")


def test_help_lists_every_command_with_its_usage() -> None:
    lines = help_lines()
    assert len(lines) == len(COMMANDS)
    assert any(line.strip().startswith("/usage") for line in lines)
