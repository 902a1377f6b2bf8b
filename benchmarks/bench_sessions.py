"""What saving sessions costs: writing each message as it ends, resuming a long session,
listing many, and measuring the context for compaction.

Run: ``python benchmarks/bench_sessions.py`` (from a checkout; uses this checkout's ``src``).
Every figure is next to its baseline measured in the same run, with the ratio; each is the
median of ROUNDS, variants interleaved.

* Per message saved: ``Session.record_message`` (encode, ``fcntl`` lock, append, one
  ``write`` per message, as tau does so that a crash loses nothing) for MESSAGES messages;
  baseline: ``json.dumps`` of the same JSON form and one ``write`` per message to an open file.
* Resume: ``Session.open`` of a file of MESSAGES messages (the parse, the branch walk, every
  message loaded as an object); baseline: ``json.loads`` of every line.
* Listing: ``session_store.recent`` over SESSIONS files of 40 messages each; baseline: reading
  each file and ``json.loads`` of every line.
* Context size: ``compaction.context_tokens`` over a context of MESSAGES messages whose last
  answer reports no usage (the worst case: everything estimated); baseline: ``len`` of every
  text block.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from tau.agent import dump_agent_message  # noqa: E402
from tau.ai import AssistantMessage, TextContent, UserMessage  # noqa: E402
from tau.cli.compaction import context_tokens  # noqa: E402
from tau.cli.session import Session  # noqa: E402

MESSAGES = 2_000
SESSIONS = 200
ROUNDS = 5
WORDS = "the quick brown fox jumps over the lazy dog " * 12


def _messages(count: int) -> list[UserMessage | AssistantMessage]:
    out: list[UserMessage | AssistantMessage] = []
    for i in range(count // 2):
        out.append(UserMessage([TextContent(f"question {i}: {WORDS}")]))
        out.append(
            AssistantMessage(
                [TextContent(f"answer {i}: {WORDS}")], api="faux", provider="f", model="m"
            )
        )
    return out


def _timed(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def _write_session(path: Path, messages: list[UserMessage | AssistantMessage]) -> None:
    session = Session.open(path)
    for message in messages:
        session.record_message(message)


def _write_bare(path: Path, messages: list[UserMessage | AssistantMessage]) -> None:
    with path.open("w", encoding="utf-8") as out:
        for message in messages:
            out.write(
                json.dumps({"type": "message", "message": dump_agent_message(message)}) + "\n"
            )
            out.flush()


def _read_bare(path: Path) -> int:
    return sum(1 for line in path.read_bytes().splitlines() if json.loads(line))


def main() -> None:
    from tau.cli import session_store

    messages = _messages(MESSAGES)
    rows: list[tuple[str, str, float, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.environ["TAU_HOME"] = str(root / "home")
        saved, bare = [], []
        for n in range(ROUNDS):
            saved.append(_timed(partial(_write_session, root / f"s{n}.jsonl", messages)))
            bare.append(_timed(partial(_write_bare, root / f"b{n}.jsonl", messages)))
        rows.append(
            (
                "save, per message",
                "µs",
                *(statistics.median(t) / MESSAGES * 1e6 for t in (saved, bare)),
            )
        )
        path = root / "s0.jsonl"
        resumed = [_timed(lambda: Session.open(path)) for _ in range(ROUNDS)]
        parsed = [_timed(lambda: _read_bare(path)) for _ in range(ROUNDS)]
        rows.append(
            (
                f"resume {MESSAGES} messages",
                "ms",
                statistics.median(resumed) * 1e3,
                statistics.median(parsed) * 1e3,
            )
        )
        cwd = root / "project"
        folder = session_store.sessions_dir(cwd)
        folder.mkdir(parents=True)
        small = _messages(40)
        for n in range(SESSIONS):
            _write_session(
                folder / f"2026-01-01T00-00-{n:04d}_{n:08d}-0000-0000-0000-000000000000.jsonl",
                small,
            )
        files = list(folder.iterdir())
        listed = [_timed(lambda: session_store.recent(cwd)) for _ in range(ROUNDS)]
        read = [_timed(lambda: [_read_bare(f) for f in files]) for _ in range(ROUNDS)]
        rows.append(
            (
                f"list {SESSIONS} sessions",
                "ms",
                statistics.median(listed) * 1e3,
                statistics.median(read) * 1e3,
            )
        )

        def lengths() -> int:
            return sum(
                len(b.text) for m in messages for b in m.content if isinstance(b, TextContent)
            )

        sized = [_timed(lambda: context_tokens(messages)) for _ in range(ROUNDS)]
        counted = [_timed(lengths) for _ in range(ROUNDS)]
        rows.append(
            (
                f"context size, {MESSAGES} messages",
                "ms",
                statistics.median(sized) * 1e3,
                statistics.median(counted) * 1e3,
            )
        )
    print(f"{'measure':<34} {'tau':>10} {'baseline':>10} {'ratio':>7}")
    for name, unit, ours, base in rows:
        print(f"{name:<34} {ours:>8.1f}{unit:>2} {base:>8.1f}{unit:>2} {ours / base:>6.2f}×")


if __name__ == "__main__":
    main()
