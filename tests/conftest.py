"""Shared test configuration."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import httpx2
import pytest
from hypothesis import settings

# The suite is CI's gate, so property tests draw the same examples on every run: a failure is
# reproducible and never a coin toss. `HYPOTHESIS_PROFILE=explore` draws fresh random ones.
settings.register_profile("ci", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
RECORDED = SHARED / "fixtures" / "recorded" / "pydantic-ai"


@pytest.fixture
def recorded_dir() -> Path:
    """The recorded real provider traffic (see ../shared/fixtures/recorded/README.md)."""
    if not RECORDED.is_dir():
        pytest.skip("../shared/fixtures/recorded is not present")
    return RECORDED


@pytest.fixture
async def client() -> AsyncIterator[httpx2.AsyncClient]:
    """A caller-supplied HTTP client (the ``client`` stream option), closed after the test."""
    c = httpx2.AsyncClient()
    yield c
    await c.aclose()
