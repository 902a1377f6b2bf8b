"""Start-up cost: ``import tau.ai`` next to ``import asyncio``, and the ``tau`` command next to
``python -c pass``, each in a fresh interpreter, side by side in one run.

Run: ``python benchmarks/bench_startup.py [--rounds N] [--baseline REV]`` from the repository
root (uses this checkout's ``src``). Every command runs ``N`` times (default 41), the commands
interleaved round by round so that load on the machine affects all of them alike. The table
shows each command's median and best wall time; the verdicts use the median of the paired
differences (each round's ``import tau.ai`` minus the same round's ``import asyncio``), which
cancels most of the noise a shared machine adds; the CPU time (user + system) of the same runs
is shown too, as on a loaded machine it varies much less than the wall time.

Targets (issue 23): ``import tau.ai`` costs at most 15 ms more than ``import asyncio``, and
``tau --help`` at most 80 ms more than ``python -c pass``.

``--baseline REV`` also measures ``import tau.ai`` of another commit (its ``src`` exported to a
temporary directory with ``git archive``; ``--baseline-src DIR`` takes such a directory):
the before/after of a start-up change, in one run.
The tau modules each import loads are counted too, and ``import tau.ai``'s own share: its CPU
time inside a process that has imported asyncio already.

For scale (not judged): ``import tau.agent`` and ``import tau.cli.interactive`` (what an
interactive session loads; needs ``[cli]``), and the installed ``tau`` console script when one
sits next to this Python.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IMPORT_TARGET_MS = 15.0
HELP_TARGET_MS = 80.0

# tau.ai's own share: its import timed inside a process that has imported asyncio already
# (CPU time, which a loaded machine disturbs much less than wall time).
OWN_SHARE = (
    "import asyncio, time; t = time.process_time(); import tau.ai; print(time.process_time() - t)"
)

COUNT_TAU_MODULES = (
    "import sys, {module}; print(len([m for m in sys.modules if m == 'tau' or "
    "m.startswith('tau.')]))"
)


def _commands(python: str) -> dict[str, list[str]]:
    commands = {
        "python -c pass": [python, "-c", "pass"],
        "import asyncio": [python, "-c", "import asyncio"],
        "import tau.ai": [python, "-c", "import tau.ai"],
        "tau --help": [python, "-m", "tau.cli", "--help"],
        "tau --version": [python, "-m", "tau.cli", "--version"],
        "import tau.agent": [python, "-c", "import tau.agent"],
        "import tau.cli.interactive": [python, "-c", "import tau.cli.interactive"],
    }
    script = Path(python).with_name("tau")
    if script.is_file():
        commands["tau --help (console script)"] = [str(script), "--help"]
    return commands


def _once(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system) of one run of ``argv``."""
    started = time.perf_counter()
    child = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise subprocess.CalledProcessError(child.returncode, argv)
    return wall, usage.ru_utime + usage.ru_stime


def _export(rev: str, into: Path) -> Path:
    """``rev``'s ``src`` directory, exported under ``into``."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", rev, "src"],
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def _tau_modules(module: str, env: dict[str, str]) -> int:
    out = subprocess.run(
        [sys.executable, "-c", COUNT_TAU_MODULES.format(module=module)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return int(out)


def _own_share(env: dict[str, str]) -> float:
    out = subprocess.run(
        [sys.executable, "-c", OWN_SHARE], env=env, capture_output=True, text=True, check=True
    ).stdout
    return float(out)


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=41, help="runs of each command")
    parser.add_argument("--baseline", metavar="REV", help="also measure this commit's tau.ai")
    parser.add_argument(
        "--baseline-src", metavar="DIR", help="also measure the tau.ai of this src directory"
    )
    args = parser.parse_args()

    # Bytecode is written and used, as an installed tau's is: compiling is not import cost.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    runs: dict[str, tuple[list[str], dict[str, str]]] = {
        name: (argv, env) for name, argv in _commands(sys.executable).items()
    }
    with tempfile.TemporaryDirectory() as scratch:
        base_src = args.baseline_src or (args.baseline and _export(args.baseline, Path(scratch)))
        base_name = f"import tau.ai @ {args.baseline or args.baseline_src}"
        if base_src:
            base_env = {**os.environ, "PYTHONPATH": str(Path(base_src).resolve())}
            runs[base_name] = ([sys.executable, "-c", "import tau.ai"], base_env)
        for name, (argv, run_env) in list(runs.items()):
            try:  # warm the file cache and the bytecode caches; drop what cannot run here
                _once(argv, run_env)
            except subprocess.CalledProcessError:
                print(f"(skipped {name!r}: it fails here)")
                del runs[name]
        times: dict[str, list[float]] = {name: [] for name in runs}
        cpu: dict[str, list[float]] = {name: [] for name in runs}
        share: dict[str, list[float]] = {"import tau.ai": []}
        if base_src:
            share[base_name] = []
        for _ in range(args.rounds):
            for name, (argv, run_env) in runs.items():
                wall, used = _once(argv, run_env)
                times[name].append(wall)
                cpu[name].append(used)
            share["import tau.ai"].append(_own_share(env))
            if base_src:
                share[base_name].append(_own_share(base_env))
        counts = {"import tau.ai": _tau_modules("tau.ai", env)}
        if base_src:
            counts[base_name] = _tau_modules("tau.ai", base_env)

    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {args.rounds} runs each\n")
    print(f"{'command':<36} {'median ms':>10} {'best ms':>9} {'CPU ms':>8}")
    print("-" * 66)
    for name, samples in times.items():
        median, best, used = statistics.median(samples), min(samples), statistics.median(cpu[name])
        print(f"{name:<36} {_ms(median):>10} {_ms(best):>9} {_ms(used):>8}")

    def paired(name: str, base: str, of: dict[str, list[float]] = times) -> float:
        return statistics.median(a - b for a, b in zip(of[name], of[base], strict=True))

    print()
    for name, count in counts.items():
        print(f"{name}: {count} tau modules loaded")
    asyncio_ms = statistics.median(times["import asyncio"]) * 1000
    over = paired("import tau.ai", "import asyncio") * 1000
    verdict = "within" if over <= IMPORT_TARGET_MS else "OVER"
    ratio = statistics.median(times["import tau.ai"]) * 1000 / asyncio_ms
    over_cpu = paired("import tau.ai", "import asyncio", cpu) * 1000
    print(
        f"import tau.ai: {over:+.1f} ms over import asyncio (paired median; "
        f"{ratio:.2f}x its wall time; CPU {over_cpu:+.1f} ms), {verdict} the "
        f"{IMPORT_TARGET_MS:.0f} ms target"
    )
    for name, samples in share.items():
        print(
            f"{name}: its own share after import asyncio: {_ms(statistics.median(samples))} ms "
            f"CPU (in-process median)"
        )
    for name in times:
        if name.startswith("import tau.ai @"):
            before = paired(name, "import asyncio") * 1000
            before_cpu = paired(name, "import asyncio", cpu) * 1000
            print(f"{name}: {before:+.1f} ms over import asyncio (CPU {before_cpu:+.1f} ms)")
    help_over = paired("tau --help", "python -c pass") * 1000
    help_cpu = paired("tau --help", "python -c pass", cpu) * 1000
    verdict = "within" if help_over <= HELP_TARGET_MS else "OVER"
    print(
        f"tau --help: {help_over:+.1f} ms over python -c pass (paired median; CPU "
        f"{help_cpu:+.1f} ms), {verdict} the {HELP_TARGET_MS:.0f} ms target"
    )


if __name__ == "__main__":
    main()
