"""tau next to what users would pick instead, in one run on one loopback server.

    python -m venv .venv-bench
    .venv-bench/bin/pip install -e . -r benchmarks/requirements-peers.txt
    .venv-bench/bin/python benchmarks/run_peers.py

Measures cold import time, client CPU µs per event (OpenAI-shaped stream of 5,000 deltas;
Anthropic-shaped stream with a 200 KB tool call), time to first event, peak memory, and CPU per
event as concurrency grows to 1,000 streams in one process. Writes benchmarks/RESULTS.md and
benchmarks/results_cpu_per_event.png. A library that is not installed is reported as such.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PEERS = HERE / "peers"
LIBS = ["floor", "tau", "openai", "anthropic", "pydantic_ai", "litellm"]
IMPORTS = {
    "tau": "tau.ai",
    "openai": "openai",
    "anthropic": "anthropic",
    "pydantic_ai": "pydantic_ai",
    "litellm": "litellm",
    "floor": "httpx2",
}
DISTS = {
    "tau": "tau",
    "openai": "openai",
    "anthropic": "anthropic",
    "pydantic_ai": "pydantic-ai-slim",
    "litellm": "litellm",
    "floor": "httpx2",
}
REQUESTS = {"floor": 10, "tau": 10, "openai": 5, "anthropic": 5, "pydantic_ai": 5, "litellm": 3}
CONCURRENCY = [1, 10, 100, 1000]


def version(lib: str) -> str | None:
    try:
        return importlib.metadata.version(DISTS[lib])
    except importlib.metadata.PackageNotFoundError:
        return None


def import_time(module: str, runs: int = 5) -> float:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    code = f"import time; t=time.perf_counter(); import {module}; print(time.perf_counter()-t)"
    times = [
        float(
            subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
            ).stdout
        )
        for _ in range(runs)
    ]
    return statistics.median(times) * 1e3


def run_client(
    lib: str, shape: str, port: int, requests: int, concurrency: int, short: bool = False
) -> dict[str, object] | str:
    env = {
        **os.environ,
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "PYTHONPATH": f"{PEERS}:{HERE.parent / 'src'}",
    }
    proc = subprocess.run(
        [
            sys.executable,
            str(PEERS / "client.py"),
            lib,
            shape,
            str(port),
            str(requests),
            str(concurrency),
            "short" if short else "full",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    if proc.returncode != 0:
        return (proc.stderr.strip().splitlines() or ["failed"])[-1][:120]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    port_file = Path(tempfile.mkdtemp()) / "port"
    server = subprocess.Popen(
        [sys.executable, str(PEERS / "server.py"), str(port_file)],
        stdin=subprocess.PIPE,
        cwd=PEERS,
    )
    try:
        for _ in range(100):
            if port_file.exists() and port_file.read_text():
                break
            time.sleep(0.05)
        port = int(port_file.read_text())
        report(port)
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=10)


def report(port: int) -> None:
    installed = [lib for lib in LIBS if version(lib) is not None]
    print("libraries:", ", ".join(f"{lib} {version(lib)}" for lib in installed))
    imports = {lib: import_time(IMPORTS[lib]) for lib in installed}
    for lib, ms in imports.items():
        print(f"import {IMPORTS[lib]:12} {ms:8.1f} ms")

    results: dict[tuple[str, str], dict[str, object] | str] = {}
    for shape in ("openai", "anthropic"):
        for lib in installed:
            if (lib, shape) in (("openai", "anthropic"), ("anthropic", "openai")):
                continue
            results[(lib, shape)] = r = run_client(lib, shape, port, REQUESTS[lib], 1)
            shown = f"{r['cpu_us_per_event']:.1f} µs/event" if isinstance(r, dict) else r
            print(f"{shape:9} {lib:12} {shown}")

    scaling: dict[tuple[str, int], dict[str, object] | str] = {}
    for lib in ("floor", "tau"):
        for n in CONCURRENCY:
            scaling[(lib, n)] = r = run_client(lib, "openai", port, max(1, 200 // n), n, short=True)
            shown = f"{r['cpu_us_per_event']:.1f} µs/event" if isinstance(r, dict) else r
            print(f"concurrency {n:5} {lib:6} {shown}")

    write_results(installed, imports, results, scaling)
    plot(installed, results)


def _cell(r: dict[str, object] | str | None, key: str, fmt: str) -> str:
    if r is None:
        return "–"
    if isinstance(r, str):
        return f"failed: {r}"
    return format(r[key], fmt)


def write_results(installed, imports, results, scaling) -> None:  # type: ignore[no-untyped-def]
    lines = [
        "# tau next to its peers",
        "",
        f"Run `{Path(sys.argv[0]).name}` on {time.strftime('%Y-%m-%d')}: {platform.python_implementation()} "
        f"{platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs, "
        f"{platform.processor() or platform.platform()}.",
        "",
        "Versions: " + ", ".join(f"{DISTS[lib]} {version(lib)}" for lib in installed) + ".",
        "",
        "The floor is httpx2 + SSE split + `json.loads`, nothing else. Server and client run in",
        "separate processes on 127.0.0.1; CPU is the client's process time per SSE event.",
        "",
        "## Import time (cold process, median of 5)",
        "",
        "| library | ms | × tau |",
        "|---|---:|---:|",
    ]
    tau_import = imports.get("tau")
    for lib in installed:
        ratio = f"{imports[lib] / tau_import:.1f}" if tau_import else "–"
        lines.append(f"| `import {IMPORTS[lib]}` | {imports[lib]:.1f} | {ratio} |")
    for shape, title in (
        ("openai", "OpenAI-shaped stream, 5,000 text deltas"),
        ("anthropic", "Anthropic-shaped stream, 1,000 text deltas + a 200 KB tool call"),
    ):
        floor = results.get(("floor", shape))
        floor_cpu = floor["cpu_us_per_event"] if isinstance(floor, dict) else None
        lines += [
            "",
            f"## {title}",
            "",
            "| library | CPU µs/event | × floor | first event ms | peak RSS MB |",
            "|---|---:|---:|---:|---:|",
        ]
        for lib in installed:
            if (lib, shape) not in results:
                continue
            r = results[(lib, shape)]
            ratio = (
                f"{r['cpu_us_per_event'] / floor_cpu:.2f}"
                if isinstance(r, dict) and floor_cpu
                else "–"
            )  # type: ignore[operator]
            lines.append(
                f"| {lib} | {_cell(r, 'cpu_us_per_event', '.1f')} | {ratio} | {_cell(r, 'first_event_ms', '.2f')} | {_cell(r, 'peak_rss_mb', '.0f')} |"
            )
    lines += [
        "",
        "## Concurrency (OpenAI shape, 200 deltas per stream, N streams at once in one process)",
        "",
        "| streams | floor µs/event | tau µs/event | tau × floor |",
        "|---:|---:|---:|---:|",
    ]
    for n in CONCURRENCY:
        f, t = scaling.get(("floor", n)), scaling.get(("tau", n))
        ratio = (
            f"{t['cpu_us_per_event'] / f['cpu_us_per_event']:.2f}"
            if isinstance(f, dict) and isinstance(t, dict)
            else "–"
        )  # type: ignore[operator]
        lines.append(
            f"| {n} | {_cell(f, 'cpu_us_per_event', '.1f')} | {_cell(t, 'cpu_us_per_event', '.1f')} | {ratio} |"
        )
    lines += [
        "",
        "## Targets",
        "",
        *_targets(imports, results),
        "",
        "Per-event CPU of the floor itself grows with the number of open streams (httpcore2's",
        "connection pool); with short streams tau's fixed cost per request (building and sending",
        "the request, the task, the pooled connection's bookkeeping) weighs more, so the ratio",
        "is highest for one short stream and shrinks as streams get longer or more numerous.",
    ]
    (HERE / "RESULTS.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {HERE / 'RESULTS.md'}")


def _targets(imports, results) -> list[str]:  # type: ignore[no-untyped-def]
    def cpu(lib: str, shape: str) -> float | None:
        r = results.get((lib, shape))
        return r["cpu_us_per_event"] if isinstance(r, dict) else None

    out = []
    if "tau" in imports and "pydantic_ai" in imports:
        share = imports["tau"] / imports["pydantic_ai"]
        out.append(
            f"- import: tau is {share:.2f} of pydantic-ai's (target ≤ 0.20): {'met' if share <= 0.2 else 'MISSED'}"
        )
    for shape in ("openai", "anthropic"):
        tau, floor = cpu("tau", shape), cpu("floor", shape)
        if tau and floor:
            out.append(
                f"- {shape} stream: tau {tau / floor:.2f}× the floor (target ≤ 1.5): {'met' if tau <= 1.5 * floor else 'MISSED'}"
            )
    tau, sdk = cpu("tau", "openai"), cpu("openai", "openai")
    if tau and sdk:
        out.append(
            f"- tau is {tau / sdk:.3f} of the openai SDK's CPU per event (target ≤ 0.20): {'met' if tau <= 0.2 * sdk else 'MISSED'}"
        )
    return out


def plot(installed, results) -> None:  # type: ignore[no-untyped-def]
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no plot")
        return
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, shape in zip(axes, ("openai", "anthropic"), strict=True):
        libs = [lib for lib in installed if isinstance(results.get((lib, shape)), dict)]
        values = [results[(lib, shape)]["cpu_us_per_event"] for lib in libs]
        ax.bar(
            libs,
            values,
            color=[
                "#888" if lib == "floor" else "#2a7" if lib == "tau" else "#57a" for lib in libs
            ],
        )
        ax.set_title(f"{shape}-shaped stream")
        ax.set_ylabel("client CPU µs per event")
        for i, v in enumerate(values):
            ax.text(i, v, f"{v:.0f}", ha="center", va="bottom")
    fig.tight_layout()
    fig.savefig(HERE / "results_cpu_per_event.png", dpi=100)
    print(f"wrote {HERE / 'results_cpu_per_event.png'}")


if __name__ == "__main__":
    main()
