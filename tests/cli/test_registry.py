"""One command pattern: a command declared once is parsed, listed in help, completed and
described in the RPC schema from that one declaration."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tau.cli.main import main
from tau.cli.registry import RPC_COMMANDS, SUBCOMMANDS, Arg, Command, FieldError, Registry
from tests.cli.rpc_client import RpcClient


@pytest.fixture
def greet() -> Iterator[list[argparse.Namespace]]:
    """A subcommand added the way an extension adds one: one declaration."""
    calls: list[argparse.Namespace] = []

    def handler(args: argparse.Namespace) -> int:
        calls.append(args)
        return 3

    SUBCOMMANDS.add(
        Command(
            "greet",
            "say hello to someone",
            handler,
            args=(
                Arg("who", "whom to greet"),
                Arg("loud", "shout", flags=("--loud",), action="store_true", default=False),
            ),
        )
    )
    try:
        yield calls
    finally:
        SUBCOMMANDS.remove("greet")


def test_a_declared_subcommand_is_parsed_dispatched_and_listed(
    greet: list[argparse.Namespace], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["greet", "ada", "--loud"]) == 3
    assert (greet[0].who, greet[0].loud) == ("ada", True)
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "greet WHO" in capsys.readouterr().out
    main(["help"])
    listing = capsys.readouterr().out
    assert "  greet WHO" in listing and "say hello to someone" in listing
    main(["help", "greet"])
    assert "--loud" in capsys.readouterr().out
    with pytest.raises(SystemExit) as missing:  # its required argument: bad usage
        main(["greet"])
    assert missing.value.code == 2


def test_tau_help_command_is_the_commands_own_help(tau: Any) -> None:
    assert tau("help", "batch").stdout == tau("batch", "--help").stdout
    assert "commands (each has --help)" in tau("help").stdout
    done = tau("help", "me", "with", "this")
    assert done.returncode == 2
    assert 'to ask the model, quote the prompt: tau "help me with this"' in done.stderr


def test_a_subcommand_group_runs_its_default_child_with_its_flags(tau: Any) -> None:
    # `tau sessions --all` is `tau sessions list --all`: parsed, not rewritten.
    both = tau("sessions", "--all"), tau("sessions", "list", "--all")
    assert [d.returncode for d in both] == [0, 0]
    assert both[0].stderr == both[1].stderr == "no saved sessions\n"


def test_a_name_taken_twice_is_refused() -> None:
    registry: Registry[Any] = Registry("test")
    registry.add(Command("one", "first", aliases=("uno",)))
    with pytest.raises(ValueError, match="'uno' is already registered"):
        registry.add(Command("uno", "again"))


def test_rpc_fields_are_checked_from_the_declaration() -> None:
    import tau.cli.rpc  # noqa: F401  (registers the RPC commands)

    compact = RPC_COMMANDS["compact"]
    with pytest.raises(FieldError, match='"customInstructions" must be a string'):
        RPC_COMMANDS.check_fields(compact, {"customInstructions": 5})
    with pytest.raises(FieldError, match='"message" must be a non-empty string'):
        RPC_COMMANDS.check_fields(RPC_COMMANDS["steer"], {"message": "  "})
    with pytest.raises(FieldError, match='"streamingBehavior" must be one of steer, followUp'):
        RPC_COMMANDS.check_fields(
            RPC_COMMANDS["prompt"], {"message": "hi", "streamingBehavior": "now"}
        )
    RPC_COMMANDS.check_fields(RPC_COMMANDS["prompt"], {"message": "hi", "images": []})


def test_the_rpc_schema_is_served_from_the_registry(tmp_path: Path) -> None:
    client = RpcClient(tmp_path, "--model", "faux/echo", "--no-session")
    try:
        answer = client.call({"id": 1, "type": "get_commands"})
        assert answer["success"], answer
        commands = {c["name"]: c for c in answer["data"]["commands"]}
        assert set(commands) == {c.name for c in RPC_COMMANDS}
        prompt = commands["prompt"]["parameters"]
        assert prompt["required"] == ["message"]
        assert prompt["properties"]["streamingBehavior"]["enum"] == ["steer", "followUp"]
        assert commands["set_thinking"]["aliases"] == ["set_thinking_level"]
        # The declaration's check answers a bad field before the handler runs.
        refused = client.call({"id": 2, "type": "export_html", "outputPath": 7})
        assert refused["error"] == '"outputPath" must be a string'
    finally:
        client.close()
