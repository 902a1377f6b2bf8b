"""Shared test configuration."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
RECORDED = SHARED / "fixtures" / "recorded" / "pydantic-ai"


@pytest.fixture
def recorded_dir() -> Path:
    """The recorded real provider traffic (see ../shared/fixtures/recorded/README.md)."""
    if not RECORDED.is_dir():
        pytest.skip("../shared/fixtures/recorded is not present")
    return RECORDED
