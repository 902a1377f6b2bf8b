#!/usr/bin/env bash
# Install tau with its test dependencies into .venv, then run lint, types and the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q -U pip
.venv/bin/python -m pip install -q -e '.[dev,server]'
# The [local] extra (and llama-cpp-python's server, for the real-server tests), built from source
# so that it works on this CPU; later runs reuse the checked build.
bash scripts/install_local.sh .venv/bin/python server
.venv/bin/ruff check src tests benchmarks scripts
.venv/bin/ruff format --check src tests benchmarks scripts
.venv/bin/mypy
.venv/bin/python -m pytest -q "$@"
