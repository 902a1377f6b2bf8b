"""What skills, prompt templates and extensions cost ``tau``: at start-up, and per turn.

Run: ``python benchmarks/bench_customizations.py [--rounds N]`` from the repository root.

1. Start-up: ``tau --no-session -m faux/<script> "hi"`` (a whole print-mode run, fresh
   interpreter) in a project holding 100 skills, 50 prompt templates and the 5 example
   extensions, against the same run in an empty project; interleaved round by round, the
   verdict on the median of the paired differences (and the ratio of the medians).
2. Discovery alone, in process: ``Customizations.load()`` with those resources, with skill
   bodies of 1 KiB and of 256 KiB (discovery reads front matter only: the two must match).
3. The event bus with no handler: the per-turn cost of what an App always installs (with no
   handler the bus does not even subscribe to the agent's events: ``transform_context`` once per
   model call is all), against one scripted-model turn through the App measured in the same
   run; and what subscribing would cost (``on_agent_event`` for each event of a turn).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "extensions"


def make_project(root: Path, *, full: bool, body_bytes: int = 1024) -> Path:
    work = root / "work"
    (work / ".git").mkdir(parents=True)
    if not full:
        return work
    for n in range(100):
        folder = work / ".tau" / "skills" / f"skill-{n:03d}"
        folder.mkdir(parents=True)
        head = f"---\nname: skill-{n:03d}\ndescription: Skill number {n}, for task {n}.\n---\n"
        (folder / "SKILL.md").write_text(head + "x" * body_bytes)
    prompts = work / ".tau" / "prompts"
    prompts.mkdir(parents=True)
    for n in range(50):
        (prompts / f"t{n:02d}.md").write_text(f"---\ndescription: Template {n}\n---\nDo $1 {n}\n")
    extensions = work / ".tau" / "extensions"
    extensions.mkdir(parents=True)
    for example in sorted(EXAMPLES.glob("*.py")):
        shutil.copy(example, extensions / example.name)
    return work


def env_for(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if "API_KEY" not in k}
    env["PYTHONPATH"] = str(ROOT / "src")
    env["TAU_HOME"] = str(home / "tau-home")
    env["HOME"] = str(home)
    return env


def startup(rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        script = base / "script.json"
        script.write_text(json.dumps([{"text": "ok"}]))
        runs = {}
        for name, full in (("none", False), ("100 skills, 50 templates, 5 extensions", True)):
            work = make_project(base / name.split()[0], full=full)
            argv = [sys.executable, "-m", "tau.cli", "--no-session", "-m", f"faux/{script}", "hi"]
            runs[name] = (argv, work, env_for(work.parent))
        times: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(rounds):
            for name, (argv, work, env) in runs.items():
                started = time.perf_counter()
                subprocess.run(argv, cwd=work, env=env, check=True, capture_output=True)
                times[name].append(time.perf_counter() - started)
        names = list(runs)
        diffs = [b - a for a, b in zip(times[names[0]], times[names[1]], strict=True)]
        print(f"start-up, a whole print-mode run ({rounds} rounds, interleaved):")
        for name in names:
            print(f"  {name:40s} median {statistics.median(times[name]) * 1000:7.1f} ms")
        ratio = statistics.median(times[names[1]]) / statistics.median(times[names[0]])
        print(
            f"  paired difference: median {statistics.median(diffs) * 1000:+.1f} ms; ratio {ratio:.2f}"
        )


def discovery(rounds: int) -> None:
    from tau.cli.extensions import Customizations, ExtensionOptions
    from tau.cli.resources import ResourceOptions
    from tau.cli.tools import Workspace

    print("discovery in process (Customizations.load(), median of rounds):")
    with tempfile.TemporaryDirectory() as tmp:
        for label, body in (("bodies of 1 KiB", 1024), ("bodies of 256 KiB", 256 * 1024)):
            work = make_project(Path(tmp) / str(body), full=True, body_bytes=body)
            os.environ["TAU_HOME"] = str(work.parent / "tau-home")
            custom = Customizations(
                Workspace(work), ResourceOptions(), ExtensionOptions(entry_points=False)
            )
            samples = []
            for _ in range(rounds):
                started = time.perf_counter()
                custom.load()
                samples.append(time.perf_counter() - started)
            count = (len(custom.resources.skills), len(custom.resources.templates))
            print(
                f"  {label:18s} {statistics.median(samples) * 1000:6.2f} ms "
                f"({count[0]} skills, {count[1]} templates, {len(custom.extensions)} extensions)"
            )


def bus(calls: int) -> None:
    from tau.agent import TurnEndEvent
    from tau.ai import AbortController
    from tau.cli.extensions import Customizations, ExtensionOptions
    from tau.cli.resources import ResourceOptions
    from tau.cli.tools import Workspace

    with tempfile.TemporaryDirectory() as tmp:
        work = make_project(Path(tmp), full=False)
        os.environ["TAU_HOME"] = str(work.parent / "tau-home")
        custom = Customizations(
            Workspace(work), ResourceOptions(), ExtensionOptions(entry_points=False)
        )
        custom.load()
        event: Any = TurnEndEvent.__new__(TurnEndEvent)
        started = time.perf_counter()
        for _ in range(calls):
            custom.on_agent_event(event)
        per_event = (time.perf_counter() - started) / calls
        signal = AbortController().signal

        async def hooks() -> float:
            messages: list[Any] = []
            started = time.perf_counter()
            for _ in range(calls // 10):
                await custom.transform_context(messages, signal)
            return (time.perf_counter() - started) / (calls // 10)

        per_transform = asyncio.run(hooks())
        turn, events = one_turn(work)
    print("event bus with no handler:")
    print(f"  transform_context   {per_transform * 1e9:7.0f} ns per model call")
    print(
        f"  per turn (1 model call): {per_transform * 1e6:.2f} µs, against {turn * 1e3:.2f} ms "
        f"for a scripted turn through the App: {per_transform / turn:.3%}"
    )
    print(
        f"  (were the bus subscribed: {per_event * 1e9:.0f} ns per event, "
        f"{events} events a turn: {events * per_event / turn:.3%})"
    )


def one_turn(work: Path) -> tuple[float, int]:
    """The median wall time of one scripted turn through the App, and its events."""
    from tau.cli.app import App, Settings
    from tau.cli.faux_script import scripted_model
    from tau.cli.tools import Workspace

    script = work.parent / "turns.json"
    script.write_text(json.dumps([{"text": "an answer of a few words"}] * 200))
    app = App(Settings(scripted_model(script), [], Workspace(work)), None)
    seen: list[str] = []
    app.agent.subscribe(lambda event: seen.append(event.type))

    async def turns() -> list[float]:
        samples = []
        for _ in range(200):
            app.agent.reset()
            started = time.perf_counter()
            await app.agent.prompt("hi")
            samples.append(time.perf_counter() - started)
        return samples

    samples = asyncio.run(turns())
    return statistics.median(samples), len(seen) // 200


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    startup(args.rounds)
    discovery(args.rounds)
    bus(100_000)


if __name__ == "__main__":
    main()
