"""docs/guides/subscription-logins.md: its Python blocks run as written, and it states that
each subscription's terms govern its use outside the vendor's tools."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
GUIDE = (REPO / "docs" / "guides" / "subscription-logins.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"^```python\n(.*?)^```", GUIDE, re.S | re.M)


def test_the_guide_states_whose_terms_govern() -> None:
    assert "Each subscription's own terms govern its use outside the vendor's own tools" in GUIDE


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_each_python_block_runs(block: str, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "TAU_HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", block], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
