"""``tau batch INPUT.jsonl -o OUT.jsonl``: one agent over every line of a JSONL file.

Each input line is ``{"id": …, "prompt": …}`` or ``{"id": …, "context": <tau Context JSON>}``;
each result is one JSON line in OUT (see :mod:`tau.batch`). OUT is resumed: ids already in it
are skipped, so a rerun after a crash or Ctrl-C pays for nothing twice (``--no-resume`` starts
it afresh). Ctrl-C stops starting items and gives the running ones ``--grace`` seconds (a
second Ctrl-C drops them); everything finished is written. A summary ends the run.

Exit status: 0 when every item is ``ok`` or ``limited``, 1 when one ended in ``error`` (or the
batch could not go on), 2 for bad usage or a malformed input (every bad line is listed),
130 when interrupted.

Only the standard library is imported until the flags are parsed: ``tau batch --help`` is fast.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tau.cli.argtypes import THINKING_LEVELS, positive_int, positive_number
from tau.cli.errors import EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_OK, UsageError

if TYPE_CHECKING:
    from tau.agent import Agent, AgentThinkingLevel
    from tau.ai import Model

__all__ = ["BatchAgent", "batch_command", "batch_parser"]


def _seconds(text: str) -> float:
    return positive_number(text, "a number of seconds")


def _dollars(text: str) -> float:
    return positive_number(text.removeprefix("$"), "an amount of US dollars")


def batch_parser() -> argparse.ArgumentParser:
    """The flags of ``tau batch``."""
    parser = argparse.ArgumentParser(
        prog="tau batch",
        description="Run one agent over every item of a JSONL file, each line "
        '{"id": ..., "prompt": ...} or {"id": ..., "context": <tau Context JSON>}; each result '
        "is one JSON line in the output, written as it finishes. A rerun resumes: ids already "
        "in the output are skipped.",
        epilog="Ctrl-C stops starting items and lets the running ones finish (up to --grace); a "
        "second Ctrl-C drops them. Exit status: 0 all ok, 1 an item failed, 2 bad usage or "
        "input, 130 interrupted.",
    )
    parser.add_argument("input", metavar="INPUT.jsonl", help="the items, one JSON object a line")
    parser.add_argument(
        "-o", "--output", required=True, metavar="OUT.jsonl", help="the results file (resumed)"
    )
    parser.add_argument("-m", "--model", help="provider/id (see `tau models`)")
    parser.add_argument("--system", help="the system prompt (default: none)")
    parser.add_argument(
        "--tools",
        help="comma-separated tools for the agent (default: none); write, edit and bash need --yes",
    )
    parser.add_argument(
        "-y", "--yes", action="store_true", help="let write/edit/bash run without asking"
    )
    parser.add_argument(
        "--thinking", choices=THINKING_LEVELS, default="off", help="reasoning level"
    )
    parser.add_argument(
        "--max-tokens", type=positive_int, metavar="N", help="cap on output tokens per response"
    )
    parser.add_argument(
        "--concurrency",
        type=positive_int,
        default=16,
        metavar="N",
        help="items in flight at once (with --ray: in each worker; default 16)",
    )
    parser.add_argument(
        "--rpm", type=positive_number, metavar="N", help="requests per minute to the provider"
    )
    parser.add_argument(
        "--tpm", type=positive_number, metavar="N", help="tokens per minute to the provider"
    )
    parser.add_argument(
        "--output-schema",
        metavar="SCHEMA",
        help="typed output: a JSON Schema file, or module:Model for a pydantic model",
    )
    parser.add_argument(
        "--max-cost-per-item",
        type=_dollars,
        metavar="USD",
        help="stop an item once it has cost this much (its status is then 'limited')",
    )
    parser.add_argument(
        "--max-turns", type=positive_int, metavar="N", help="stop an item after N model responses"
    )
    parser.add_argument(
        "--max-attempts",
        type=positive_int,
        default=3,
        metavar="N",
        help="tries per item for transient failures (rate limits, overload, network; default 3)",
    )
    parser.add_argument(
        "--no-resume", action="store_true", help="start the output afresh instead of resuming it"
    )
    parser.add_argument(
        "--transcripts", action="store_true", help="put each item's messages in its result"
    )
    parser.add_argument(
        "--grace",
        type=_seconds,
        default=30.0,
        metavar="SECONDS",
        help="how long Ctrl-C waits for running items (default 30)",
    )
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="the progress bar on stderr (default: when stderr is a terminal)",
    )
    parser.add_argument(
        "--ray",
        nargs="?",
        const="",
        default=None,
        metavar="ADDRESS",
        help="run on a Ray cluster (ADDRESS, else RAY_ADDRESS, else a local Ray); "
        "needs pip install 'tau[ray]'",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    return parser


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
        options: dict[str, Any],
        limits: dict[str, Any],
        output_type: Any = None,
    ) -> None:
        self.model: Model | None = model
        self.spec = spec
        self.system = system
        self.tools = list(tools)
        self.cwd = cwd
        self.thinking = thinking
        self.options = options
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

        if self.model is None:
            self.model = parse_model(self.spec)
        return Agent(
            model=self.model,
            system_prompt=self.system,
            tools=build_tools(self.tools, Workspace(self.cwd)),
            thinking_level=self.thinking,
            stream_options=self.options,
            get_api_key=custom_key,  # models.json's keys, as the interactive command has them
            usage_limits=UsageLimits(**self.limits) if self.limits else None,
            output_type=self.output_type,
        )


def _tool_names(text: str | None, yes: bool) -> list[str]:
    from tau.cli.main import KNOWN_TOOL_NAMES
    from tau.cli.tools import MUTATING_TOOLS

    names = [n.strip() for n in (text or "").split(",") if n.strip()]
    names = [] if names == ["none"] else names
    unknown = [n for n in names if n not in KNOWN_TOOL_NAMES]
    if unknown:
        raise UsageError(f"unknown tool {unknown[0]!r} (known: {', '.join(KNOWN_TOOL_NAMES)})")
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

    model = choose_model(args.model)
    check_credentials(model)
    options: dict[str, Any] = {}
    if args.max_tokens is not None:
        options["max_tokens"] = args.max_tokens
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
        options=options,
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


def batch_command(argv: Sequence[str]) -> int:
    """``tau batch …``; returns the exit status."""
    args = batch_parser().parse_args(argv)
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
