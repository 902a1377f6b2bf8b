"""``import tau.ai`` stays light: no adapter, no HTTP library, no pydantic; the first call
imports only the adapter of its api."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"

PROBE = """
import json, sys
import tau.ai
after_import = sorted(sys.modules)
import asyncio
from tau.ai import Context, UserMessage, complete, get_model
get_model("anthropic", "claude-sonnet-4-5")
echo = get_model("faux", "echo")
after_catalog = sorted(sys.modules)
message = asyncio.run(complete(echo, Context([UserMessage("x")])))
assert message.text == "x", message
after_call = sorted(sys.modules)
print(json.dumps([after_import, after_catalog, after_call]))
"""


def _run_probe() -> tuple[set[str], set[str], set[str]]:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    out = subprocess.run(
        [sys.executable, "-c", PROBE], check=True, capture_output=True, text=True, env=env
    ).stdout
    a, b, c = json.loads(out)
    return set(a), set(b), set(c)


def _heavy(modules: set[str]) -> list[str]:
    roots = {
        "httpx",
        "httpx2",
        "httpcore",
        "h11",
        "h2",
        "anyio",
        "pydantic",
        "pydantic_core",
        "botocore",
        "boto3",
        "google",
        "xllamacpp",
        "anthropic",
        "openai",
        "jsonschema_rs",
    }
    return sorted(m for m in modules if m.split(".")[0] in roots)


def test_import_loads_no_adapter_no_http_and_no_pydantic() -> None:
    after_import, after_catalog, _ = _run_probe()
    assert [m for m in after_import if m.startswith("tau.ai.providers")] == []
    assert _heavy(after_import) == []
    assert not any(m.startswith(("tau.agent", "tau.cli")) for m in after_import)
    # A catalog lookup loads data, not code.
    assert [m for m in after_catalog if m.startswith("tau.ai.providers")] == []
    assert _heavy(after_catalog) == []


def test_first_call_imports_only_its_adapter() -> None:
    _, after_catalog, after_call = _run_probe()
    new = sorted(m for m in after_call - after_catalog if m.startswith("tau.ai.providers"))
    # The faux package (its core modules), and no other provider's.
    assert new[:2] == ["tau.ai.providers", "tau.ai.providers.faux"]
    assert all(m.startswith("tau.ai.providers.faux.") for m in new[2:]), new
    assert _heavy(after_call) == []


def test_import_loads_only_what_a_first_stream_needs() -> None:
    # The data model, the events, the entry points and the registry with the stream machinery
    # every adapter uses; each capability loads on first use, each adapter on its first call.
    after_import, after_catalog, after_call = _run_probe()
    capabilities = (
        "tau.ai.capabilities.",
        "tau.ai.core.compat",
        "tau.ai.structured",
        "tau.ai.lookup.catalog",
        "tau.ai.lookup.env_keys",
        "tau.ai.lookup.local_models",
        "tau.ai.streaming.adapter",
        "tau.ai.streaming.http",
        "tau.ai.streaming.sse",
        "tau.ai.streaming.partial_json",
        "tau.ai.streaming.json_path",
        "tau.ai.streaming.json_body",
        "tau.ai.streaming.headers",
        "tau.ai.adapters",
    )
    assert sorted(m for m in after_import if m.startswith(capabilities)) == []
    # A catalog lookup loads the catalog (and the JSON form it is stored in, which redacts the
    # error messages it writes, with the chat-completions compat its models may carry),
    # nothing more.
    loaded = sorted(m for m in after_catalog - after_import if m.startswith("tau."))
    assert loaded == [
        "tau.ai.capabilities",
        "tau.ai.capabilities.secrets",
        "tau.ai.capabilities.serialization",
        "tau.ai.core.compat",
        "tau.ai.lookup.catalog",
    ]
    assert "tau.ai.capabilities.fallback" not in after_call
