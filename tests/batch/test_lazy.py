"""``import tau.batch`` is light, and a local batch loads neither Ray nor rich unless asked."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import REPO

HEAVY = ("ray", "rich", "httpx2", "pydantic", "tau.agent")


def loaded_after(code: str) -> list[str]:
    probe = f"{code}\nimport sys\nprint(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    return eval(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_importing_tau_batch_loads_nothing_heavy() -> None:
    assert loaded_after("import tau.batch") == []


def test_a_local_batch_off_a_terminal_loads_neither_ray_nor_rich() -> None:
    code = (
        "from tau.ai import get_model\n"
        "from tau.batch import run_batch_sync\n"
        "run_batch_sync([{'id': 'a', 'prompt': 'hi'}], get_model('faux', 'echo'))"
    )
    assert loaded_after(code) == ["pydantic", "tau.agent"]
