"""Start-up time of the ``tau`` command: ``--help`` and ``--version`` next to ``python -c pass``.

Run: ``python benchmarks/bench_startup.py`` (from the repository root; uses this checkout's
``src``). Each command runs ROUNDS times in a fresh interpreter, interleaved so that load on the
machine affects all of them alike; the table shows the median and the best wall time, and the
median as a multiple of the bare interpreter's. ``tau --help`` should stay within 150 ms: the
command parses its flags before importing the agent, pydantic or any provider.

Also measured: the installed ``tau`` console script (when one sits next to this Python), and,
for scale, ``import tau.agent`` (what a run loads on top) and ``import tau.cli.interactive``
(what an interactive session loads: the agent, prompt_toolkit and rich; needs ``[cli]``).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROUNDS = 21
TARGET_MS = 150.0


def _commands() -> dict[str, list[str]]:
    python = sys.executable
    commands = {
        "python -c pass": [python, "-c", "pass"],
        "tau --help": [python, "-m", "tau.cli", "--help"],
        "tau --version": [python, "-m", "tau.cli", "--version"],
        "python -c 'import tau.agent'": [python, "-c", "import tau.agent"],
        "import tau.cli.interactive": [python, "-c", "import tau.cli.interactive"],
    }
    script = Path(python).with_name("tau")
    if script.is_file():
        commands["tau --help (console script)"] = [str(script), "--help"]
    return commands


def _once(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started


def main() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    commands = _commands()
    times: dict[str, list[float]] = {name: [] for name in commands}
    for argv in commands.values():  # warm the file cache and the bytecode caches
        _once(argv, env)
    for _ in range(ROUNDS):
        for name, argv in commands.items():
            times[name].append(_once(argv, env))
    base = statistics.median(times["python -c pass"])
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {ROUNDS} runs each\n")
    print(f"{'command':<32} {'median ms':>10} {'best ms':>9} {'× python':>9}")
    print("-" * 64)
    for name, samples in times.items():
        median = statistics.median(samples)
        print(
            f"{name:<32} {median * 1000:>10.1f} {min(samples) * 1000:>9.1f} {median / base:>8.1f}×"
        )
    help_ms = statistics.median(times["tau --help"]) * 1000
    verdict = "within" if help_ms <= TARGET_MS else "OVER"
    print(f"\ntau --help: {help_ms:.0f} ms median, {verdict} the {TARGET_MS:.0f} ms target")


if __name__ == "__main__":
    main()
