"""Every built-in provider is one package of one shape, declaring one record per api."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from dataclasses import replace
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from tau.ai import Context, Model, UserMessage
from tau.ai.lookup.provider import Provider
from tau.ai.lookup.registry import BUILTIN_PROVIDERS, builtin_records

REPO = Path(__file__).resolve().parents[2]
PROVIDERS = REPO / "src" / "tau" / "ai" / "providers"
CORE_MODULES = ("options", "request", "decoder", "provider")


def _packages() -> list[str]:
    return sorted(p.name for p in PROVIDERS.iterdir() if (p / "__init__.py").is_file())


def _module_of(target: str) -> str:
    return EntryPoint("api", target, "tau.providers").module


def _package_of(target: str) -> str:
    return _module_of(target).removeprefix("tau.ai.providers.").partition(".")[0]


@pytest.mark.parametrize("package", _packages())
def test_every_provider_package_has_the_core_modules(package: str) -> None:
    missing = [name for name in CORE_MODULES if not (PROVIDERS / package / f"{name}.py").is_file()]
    assert not missing, f"providers/{package} lacks {', '.join(m + '.py' for m in missing)}"
    # Its record module is the one the registry names, and nothing else stands in for it.
    assert not (PROVIDERS / package / "adapter.py").exists() or package == "llama_cpp"


def test_every_package_is_a_built_in_provider_and_every_built_in_a_package() -> None:
    assert sorted({_package_of(t) for t in BUILTIN_PROVIDERS.values()}) == _packages()
    for target in BUILTIN_PROVIDERS.values():
        assert _module_of(target).endswith(".provider"), target


def test_each_built_in_line_names_a_record_of_its_api() -> None:
    records = builtin_records()
    # Left out only when its extra is missing (llama-cpp without [local], say).
    left_out = set(BUILTIN_PROVIDERS) - {r.api for r in records}
    assert all("[" in BUILTIN_PROVIDERS[api] for api in left_out), left_out
    for record in records:
        assert isinstance(record, Provider)
        # A record either runs over HTTP from its parts, or brings its own stream.
        assert record.stream is not None or (
            record.build_request is not None and record.decoder is not None
        ), record.api
        assert record.prefix.endswith("_"), record.api


def test_a_record_module_imports_no_other_provider() -> None:
    # One provider never imports another's code: load each record alone, in a fresh process.
    code = (
        "import importlib, json, sys\n"
        "from importlib.metadata import EntryPoint\n"
        "from tau.ai.lookup.registry import BUILTIN_PROVIDERS\n"
        "bad = {}\n"
        "for api, target in BUILTIN_PROVIDERS.items():\n"
        "    before = set(sys.modules)\n"
        "    module = EntryPoint(api, target, 'g').module\n"
        "    try:\n"
        "        importlib.import_module(module)\n"
        "    except ImportError:\n"
        "        continue\n"
        "    own = module.split('.')[3]\n"
        "    other = sorted(m for m in set(sys.modules) - before\n"
        "                   if m.startswith('tau.ai.providers.') and m.split('.')[3] != own)\n"
        "    if other: bad[api] = other\n"
        "    for m in [m for m in sys.modules if m.startswith('tau.ai.providers.')]:\n"
        "        del sys.modules[m]\n"
        "print(json.dumps(bad))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    # Shared protocol helpers (parts, output_schema, simple_options, copilot) are modules, not
    # provider packages; a package's import of another package is what this forbids.
    packages = set(_packages())
    offenders = {
        api: [m for m in mods if m.split(".")[3] in packages]
        for api, mods in json.loads(done.stdout).items()
    }
    assert not {api: mods for api, mods in offenders.items() if mods}


def test_the_generated_settings_types_are_up_to_date() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "generate_settings.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr


def test_each_record_module_is_importable_on_its_own() -> None:
    for api, target in BUILTIN_PROVIDERS.items():
        point = EntryPoint(api, target, "tau.providers")
        try:
            record = getattr(importlib.import_module(point.module), point.attr or "PROVIDER")
        except ImportError:
            continue  # a missing extra: the registry's error event covers it
        assert isinstance(record, Provider) and record.api == api


async def test_a_decoder_that_contradicts_its_records_framing_is_an_error_event() -> None:
    from tau.ai.providers.anthropic.provider import PROVIDER

    # Anthropic's decoder reads server-sent events: declared binary, it is refused up front.
    wrong = replace(PROVIDER, api="framing-test", framing="binary")
    model = Model("m", "m", "framing-test", "anthropic", "http://127.0.0.1:9")
    message = await wrong.run()(model, Context([UserMessage("hi")]), {"api_key": "k"}).result()
    assert message.stop_reason == "error"
    assert "declares binary framing" in (message.error_message or "")
