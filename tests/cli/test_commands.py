"""The slash-command registry that front ends dispatch to."""

from __future__ import annotations

import pytest

import tau.cli.commands  # noqa: F401  (registers the shared slash commands)
from tau.cli.registry import SLASH_COMMANDS, UnknownCommandError


def test_a_line_names_a_command_and_its_argument() -> None:
    found, argument = SLASH_COMMANDS.parse_line("/usage   ")
    assert found is SLASH_COMMANDS["usage"]
    assert argument == ""


def test_an_unknown_command_is_a_clear_error() -> None:
    with pytest.raises(UnknownCommandError, match=r"unknown command /nope \(/help lists them\)"):
        SLASH_COMMANDS.parse_line("/nope now")
    with pytest.raises(UnknownCommandError, match=r"did you mean /model\?"):
        SLASH_COMMANDS.parse_line("/modle gpt")


def test_help_lists_every_command_with_its_usage() -> None:
    lines = SLASH_COMMANDS.help_lines()
    assert len(lines) == len(SLASH_COMMANDS)
    assert any(line.strip().startswith("/usage") for line in lines)
    # The usage comes from the declared argument: choices, a metavar, optional in brackets.
    assert any(line.strip().startswith("/thinking [off|minimal|") for line in lines)
    assert any(line.strip().startswith("/model [PROVIDER/ID]") for line in lines)


def test_the_old_names_still_work_with_a_deprecation_warning() -> None:
    from tau.cli import commands

    with pytest.warns(DeprecationWarning, match="use tau.cli.registry.SLASH_COMMANDS"):
        assert commands.COMMANDS is SLASH_COMMANDS
    with pytest.warns(DeprecationWarning, match=r"SLASH_COMMANDS\.parse_line"):
        assert commands.parse_command("/usage")[0].name == "usage"
    with pytest.warns(DeprecationWarning):
        assert commands.help_lines() == SLASH_COMMANDS.help_lines()
