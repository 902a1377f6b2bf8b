"""``tau batch INPUT.jsonl -o OUT.jsonl``: one agent over every line of a JSONL file.

Each input line is ``{"id": …, "prompt": …}`` or ``{"id": …, "context": <tau Context JSON>}``;
each result is one JSON line in OUT (see :mod:`tau.batch`). OUT is resumed: ids already in it
are skipped, so a rerun after a crash or Ctrl-C pays for nothing twice (``--no-resume`` starts
it afresh). Ctrl-C stops starting items and gives the running ones ``--grace`` seconds (a
second Ctrl-C drops them); everything finished is written. A summary ends the run.

Exit status: 0 when every item is ``ok`` or ``limited``, 1 when one ended in ``error`` (or the
batch could not go on), 2 for bad usage or a malformed input (every bad line is listed),
130 when interrupted.

Its flags are declared in :mod:`tau.cli.subcommands`; the work is imported once they are parsed.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tau.cli.errors import EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_OK, UsageError

if TYPE_CHECKING:
    from tau.agent import Agent, AgentThinkingLevel
    from tau.ai import Model
    from tau.ai import Settings as ModelSettings

__all__ = ["BatchAgent", "batch_command"]


class BatchAgent:
    """``make_agent`` of ``tau batch``: picklable, so that Ray workers can build their agents
    (a worker resolves the model from its ``provider/id`` again)."""

    def __init__(
        self,
        model: Model,
        spec: str,
        *,
        system: str,
        tools: Sequence[str],
        cwd: Path,
        thinking: AgentThinkingLevel,
        settings: ModelSettings,
        limits: dict[str, Any],
        output_type: Any = None,
    ) -> None:
        self.model: Model | None = model
        self.spec = spec
        self.system = system
        self.tools = list(tools)
        self.cwd = cwd
        self.thinking = thinking
        self.settings = settings
        self.limits = limits
        self.output_type = output_type

    def __getstate__(self) -> dict[str, Any]:
        # A scripted (faux) model holds a closure: send its name, not the object.
        state = dict(self.__dict__)
        state["model"] = None
        return state

    def __call__(self) -> Agent:
        from tau.agent import Agent, UsageLimits
        from tau.cli.models import custom_key, parse_model
        from tau.cli.tools import Workspace, build_tools

        model = self.model
        if model is None or model.provider == "faux":
            # A scripted model is played from its start for each item: one shared script would
            # run out after the first items ("no response left").
            model = parse_model(self.spec)
            self.model = self.model or model
        return Agent(
            model=model,
            system_prompt=self.system,
            tools=build_tools(self.tools, Workspace(self.cwd)),
            thinking_level=self.thinking,
            settings=self.settings,
            get_api_key=custom_key,  # models.json's keys, as the interactive command has them
            usage_limits=UsageLimits(**self.limits) if self.limits else None,
            output_type=self.output_type,
        )


def _tool_names(text: str | None, yes: bool) -> list[str]:
    from tau.cli.flags import tool_names
    from tau.cli.tools import MUTATING_TOOLS

    names = tool_names(text, ())
    if "task" in names:
        raise UsageError("--tools task is for the tau command's sessions, not tau batch")
    risky = [n for n in names if n in MUTATING_TOOLS]
    if risky and not yes:
        raise UsageError(
            f"--tools {','.join(risky)} would run unattended on every item: add --yes to allow it"
        )
    return names


def _output_type(spec: str | None) -> Any:
    if spec is None:
        return None
    from tau.cli.output_schema import load_output_type

    return load_output_type(spec)


def _make_agent(args: argparse.Namespace) -> BatchAgent:
    from tau.cli.models import check_credentials, choose_model, model_spec
    from tau.cli.run_settings import model_settings

    model = choose_model(args.model)
    check_credentials(model)
    settings = model_settings(args, model)
    limits: dict[str, Any] = {}
    if args.max_cost_per_item is not None:
        limits["max_cost"] = args.max_cost_per_item
    if args.max_turns is not None:
        limits["max_turns"] = args.max_turns
    return BatchAgent(
        model,
        args.model or model_spec(model),
        system=args.system or "",
        tools=_tool_names(args.tools, args.yes),
        cwd=Path.cwd().resolve(),
        thinking=args.thinking,
        settings=settings,
        limits=limits,
        output_type=_output_type(args.output_schema),
    )


def _say(line: str) -> None:
    print(f"tau: {line}", file=sys.stderr, flush=True)


async def _run(args: argparse.Namespace, agent: BatchAgent) -> int:
    from tau.batch import BatchFatalError, BatchInputError, BatchOutputError, RateLimit, run_batch

    assert agent.model is not None
    limits = {}
    if args.rpm is not None or args.tpm is not None:
        limits[agent.model.provider] = RateLimit(rpm=args.rpm, tpm=args.tpm)
    try:
        batch = run_batch(
            args.input,
            agent,
            concurrency=args.concurrency,
            rate_limits=limits,
            output=args.output,
            resume=not args.no_resume,
            backend="local" if args.ray is None else "ray",
            max_attempts=args.max_attempts,
            transcripts=args.transcripts,
            progress=args.progress,
            ray_address=args.ray or None,
        )
    except BatchInputError as exc:
        raise UsageError(str(exc)) from None
    except BatchOutputError as exc:
        raise UsageError(str(exc.strerror or exc)) from None
    for note in batch.notes:
        _say(f"note: {note}")
    if batch.summary.skipped:
        _say(f"resuming {args.output}: {batch.summary.skipped:,} items already done")
    restore = batch.stop_on_interrupt(args.grace, _say)
    failure: str | None = None
    try:
        async with batch:
            async for _ in batch:
                pass
    except BatchFatalError as exc:
        failure = str(exc)
    finally:
        restore()
    summary = batch.summary
    print(summary.describe(), flush=True)
    if failure is not None:
        _say(f"error: {failure}")
        return EXIT_FAILURE
    if summary.interrupted and summary.remaining:
        return EXIT_INTERRUPTED
    return EXIT_FAILURE if summary.counts.get("error") else EXIT_OK


def batch_command(args: argparse.Namespace) -> int:
    """``tau batch …`` with its parsed flags; returns the exit status."""
    if not Path(args.input).exists():
        raise UsageError(f"input {args.input!r} does not exist")
    agent = _make_agent(args)
    import asyncio

    try:
        return asyncio.run(_run(args, agent))
    except UsageError:
        raise
    except ImportError as exc:
        _say(f"error: {exc}")
        return EXIT_FAILURE
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
