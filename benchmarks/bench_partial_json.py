"""Partial-JSON scaling: streaming a ~1 MB tool-call argument in 10,000 deltas.

Run: ``python benchmarks/bench_partial_json.py`` (from the repo root, with tau installed or
``PYTHONPATH=src``). Prints, for two realistic ~1 MB arguments, the total time spent in
:class:`tau.ai.streaming.partial_json.IncrementalJsonParser` as a multiple of one ``json.loads`` of
the final text (target: at most 10x), next to the naive approach of pi and most peers (a full
jiter partial re-parse after every delta), whose cost grows quadratically.
"""

from __future__ import annotations

import contextlib
import json
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import jiter

from tau.ai.streaming.partial_json import IncrementalJsonParser, parse_streaming_json

DELTAS = 10_000
TARGET = 1_000_000


def file_write_args(size: int) -> str:
    """A file-write call: a path and source text with quotes, backslashes, tabs, non-ASCII."""
    rng = random.Random(7)
    lines: list[str] = []
    total = 0
    while total < size:
        n = rng.randint(0, 10**6)
        line = rng.choice(
            [
                f'    msg = "h\u00e9llo \\\\ w\u00f6rld {n}"  # caf\u00e9 \U0001f600',
                f"\tif x[{n}] != 'quote \"{n}\"':",
                f"        return {{'k': {n}, 'v': [1, 2, 3]}}  // \u65e5\u672c\u8a9e",
                "",
                f"def f_{n}(a, b):",
            ]
        )
        lines.append(line)
        total += len(line) + 1
    return json.dumps({"path": "/src/app/main.py", "content": "\n".join(lines)}, ensure_ascii=False)


def structured_args(size: int) -> str:
    """A structured call: a list of many small objects."""
    rng = random.Random(11)
    items: list[dict[str, object]] = []
    total = 0
    i = 0
    while total < size:
        item = {
            "id": i,
            "name": f"item {i} \u00e9",
            "price": round(rng.random() * 100, 2),
            "tags": ["a", 'b"c'],
            "active": i % 2 == 0,
            "parent": None,
        }
        items.append(item)
        total += len(json.dumps(item)) + 2
        i += 1
    return json.dumps({"items": items, "count": len(items)}, indent=None)


def split(text: str, parts: int) -> list[str]:
    step = max(1, len(text) // parts)
    return [text[i : i + step] for i in range(0, len(text), step)]


def best(fn: Callable[[], object], repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return min(times)


def incremental(deltas: list[str], with_value: bool) -> Callable[[], object]:
    def run() -> object:
        parser = IncrementalJsonParser()
        if with_value:
            for d in deltas:
                parser.feed(d)
                parser.value()
        else:
            for d in deltas:
                parser.feed(d)
        return parser.final()

    return run


def naive(deltas: list[str]) -> Callable[[], object]:
    """The reference approach: re-parse the whole buffer after every delta."""

    def run() -> object:
        buf = ""
        value: object = {}
        for d in deltas:
            buf += d
            with contextlib.suppress(ValueError):
                value = jiter.from_json(buf.encode(), partial_mode="trailing-strings")
        return value

    return run


def row(label: str, seconds: float, base: float, note: str = "") -> None:
    print(f"  {label:<46} {seconds * 1e3:10.1f} ms {seconds / base:8.1f}x {note}")


def main() -> None:
    print(f"python {sys.version.split()[0]}, CPU time, best of 5; ratios to one json.loads\n")
    for name, make in (("file-write", file_write_args), ("structured", structured_args)):
        text = make(TARGET)
        deltas = split(text, DELTAS)
        expected = json.loads(text)
        assert incremental(deltas, True)() == expected
        assert parse_streaming_json(text) == expected
        base = best(lambda text=text: json.loads(text))  # type: ignore[misc]
        feed = best(incremental(deltas, False))
        feed_value = best(incremental(deltas, True))
        print(f"{name}: {len(text) / 1e6:.2f} MB in {len(deltas):,} deltas")
        row("one json.loads of the final text", base, base)
        verdict = "(target <= 10x: met)" if feed / base <= 10 else "(target <= 10x: MISSED)"
        row("tau: feed() every delta, then final()", feed, base, verdict)
        row("tau: feed() + value() every delta, then final()", feed_value, base)
        # The naive approach on growing sizes (same delta size): it grows quadratically.
        delta_len = len(text) // DELTAS
        t = 0.0
        for size in (TARGET // 32, TARGET // 16, TARGET // 8):
            small = make(size)
            small_deltas = split(small, len(small) // delta_len)
            t = best(naive(small_deltas), 1)
            row(
                f"naive re-parse per delta, {len(small) / 1e3:4.0f} kB, {len(small_deltas):,} deltas",
                t,
                base,
            )
        ratio = (TARGET / (TARGET // 8)) ** 2
        row("naive extrapolated to the full size (x64)", t * ratio, base)
        print()


if __name__ == "__main__":
    main()
