"""A batch in a child process, for test_interrupt.py: ``python interrupted_run.py URL IN OUT``.

It runs ``run_batch_sync`` against the fake server at URL (5 items at once) and exits 130 when
Ctrl-C stopped it, printing the summary otherwise.
"""

from __future__ import annotations

import sys

from tau.batch import run_batch_sync
from tests.batch.agents import HttpAgent
from tests.batch.fake_llm import fake_model


def main() -> int:
    url, source, output = sys.argv[1:4]
    try:
        summary = run_batch_sync(source, HttpAgent(fake_model(url)), output=output, concurrency=5)
    except KeyboardInterrupt:
        return 130
    print(summary.describe(), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
