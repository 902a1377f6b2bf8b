"""Partial-JSON scaling: streaming a ~1 MB tool-call argument in 10,000 deltas.

Run: ``python benchmarks/bench_partial_json.py`` (from the repo root, with tau installed or
``PYTHONPATH=src``). Prints, for two realistic ~1 MB arguments, the total time spent in
:class:`tau.ai.utils.partial_json.IncrementalJsonParser` as a multiple of one ``json.loads`` of
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

from tau.ai.utils.partial_json import IncrementalJsonParser, parse_streaming_json

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


def main() -> None:
    print(f"python {sys.version.split()[0]}, {DELTAS:,} deltas per argument\n")
    for name, make in (("file-write", file_write_args), ("structured", structured_args)):
        text = make(TARGET)
        deltas = split(text, DELTAS)
        expected = json.loads(text)
        assert incremental(deltas, True)() == expected
        assert parse_streaming_json(text) == expected
        base = best(lambda text=text: json.loads(text), 5)  # type: ignore[misc]
        feed = best(incremental(deltas, False))
        feed_value = best(incremental(deltas, True))
        print(f"{name}: {len(text) / 1e6:.2f} MB in {len(deltas):,} deltas")
        print(f"  one json.loads of the final text        {base * 1e3:9.1f} ms    1.0x")
        print(
            f"  tau feed() every delta + final()        {feed * 1e3:9.1f} ms  {feed / base:5.1f}x"
        )
        print(
            f"  tau feed() + value() every delta + final {feed_value * 1e3:8.1f} ms  {feed_value / base:5.1f}x"
        )
        # The naive approach on growing sizes (same delta size), to show its quadratic growth.
        delta_len = len(text) // DELTAS
        for size in (TARGET // 16, TARGET // 8, TARGET // 4):
            small = make(size)
            small_deltas = split(small, len(small) // delta_len)
            t = best(naive(small_deltas), 1)
            base_small = best(lambda small=small: json.loads(small), 5)  # type: ignore[misc]
            print(
                f"  naive re-parse, {len(small) / 1e3:6.0f} kB in {len(small_deltas):5,} deltas"
                f" {t * 1e3:9.1f} ms  {t / base_small:5.0f}x its json.loads"
            )
        ratio = (TARGET / (TARGET // 4)) ** 2
        print(
            f"  naive extrapolated to full size (x{ratio:.0f} per 4x size) {t * ratio * 1e3:9.0f} ms\n"
        )


if __name__ == "__main__":
    main()
