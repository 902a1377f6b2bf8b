"""``$TAU_HOME/models.json``: providers and models beyond the catalog, in pi's format.

::

    {"providers": {
      "ollama": {
        "baseUrl": "http://localhost:11434/v1",
        "api": "openai-completions",
        "models": [{"id": "qwen2.5-coder:7b", "contextWindow": 32768}]
      },
      "work-proxy": {
        "baseUrl": "https://llm.example.com/v1", "api": "openai-completions",
        "apiKey": "WORK_LLM_KEY", "headers": {"X-Team": "tools"},
        "compat": {"maxTokensField": "max_tokens"},
        "models": [{"id": "gpt-4o", "name": "GPT-4o (proxy)", "reasoning": false,
                    "input": ["text", "image"], "contextWindow": 128000, "maxTokens": 16384,
                    "cost": {"input": 2.5, "output": 10, "cacheRead": 1.25, "cacheWrite": 0}}]
      },
      "anthropic": {"baseUrl": "https://anthropic-proxy.example.com"}
    }}

A provider gives ``baseUrl`` and ``api`` (``openai-completions`` for Ollama, vLLM, LM Studio and
llama.cpp's server) and its models; each model may override ``api``, ``baseUrl``, ``headers``
and ``compat``, and gives its ``name``, ``reasoning``, ``input``, ``contextWindow``,
``maxTokens`` and ``cost`` (defaults as in pi: text only, 128000, 16384, free). A catalog
provider named here without models keeps its models and takes the ``baseUrl``, ``headers``,
``apiKey`` and ``compat`` given (a proxy); with models, they are added to the catalog's.

``apiKey`` is the name of an environment variable (an unset one is a missing key), ``!command``
(its output, run once), or the key itself; header values may be ``!command`` or a variable's
name too. A provider without ``apiKey`` sends none (local servers need none).

A mistake is a warning naming the file and the field, and only that provider is left out: a
broken file never stops tau from starting.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tau.ai import (
    Model,
    OpenAICompletionsCompat,
    SerializationError,
    find_model,
    get_models,
    load_model,
)
from tau.ai.adapters import get_api_providers, remember_secret
from tau.cli.config import tau_home

_VARIABLE = re.compile(r"[A-Z][A-Z0-9_]*")
_COMMAND_TIMEOUT = 10.0
_MAX_FILE = 4 * 1024 * 1024
_PROVIDER_KEYS = frozenset({"baseUrl", "api", "apiKey", "headers", "compat", "models"})
_MODEL_KEYS = frozenset(
    {
        "id",
        "name",
        "api",
        "baseUrl",
        "reasoning",
        "input",
        "cost",
        "contextWindow",
        "maxTokens",
        "headers",
        "compat",
    }
)


class CustomModelError(ValueError):
    """A provider of models.json cannot be used (the message names the field)."""


def models_path() -> Path:
    """The models file."""
    return tau_home() / "models.json"


def _run_command(command: str, what: str) -> str:
    try:
        done = subprocess.run(
            command,
            shell=True,
            capture_output=True,
            text=True,
            timeout=_COMMAND_TIMEOUT,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        raise CustomModelError(f"{what}: `{command}` took over {_COMMAND_TIMEOUT:g} s") from None
    except OSError as exc:
        raise CustomModelError(f"{what}: `{command}` could not run: {exc}") from None
    if done.returncode != 0:
        detail = done.stderr.strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
        raise CustomModelError(f"{what}: `{command}` failed: {detail[0]}")
    return done.stdout.strip()


def resolve_value(value: str, what: str, *, variable_only: bool) -> str | None:
    """A config value: ``!command``'s output, an environment variable's value, or the text.

    With ``variable_only`` (keys), text shaped like a variable name is one: unset, it gives None.
    """
    if value.startswith("!"):
        return _run_command(value[1:], what) or None
    found = os.environ.get(value)
    if found:
        return found
    if _VARIABLE.fullmatch(value) and variable_only:
        return None
    return value


@dataclass
class CustomProvider:
    """One provider of models.json."""

    name: str
    models: list[Model] = field(default_factory=list)
    api_key: str | None = None
    """As written: a variable name, ``!command`` or a key."""
    base_url: str | None = None
    headers: dict[str, str] | None = None
    compat: dict[str, Any] | None = None
    _key: str | None = None
    _key_resolved: bool = False

    def key(self) -> str | None:
        """The key (None when none is configured); raises :class:`CustomModelError`.

        A variable is read on every call (a key exported later is seen); a command runs once.
        """
        if self.api_key is None:
            return None
        where = f"models.json providers.{self.name}.apiKey"
        if not self.api_key.startswith("!"):
            key = resolve_value(self.api_key, where, variable_only=True)
        else:
            if not self._key_resolved:
                self._key = resolve_value(self.api_key, where, variable_only=True)
                self._key_resolved = True
            key = self._key
        if key is None:
            raise CustomModelError(
                f"no API key for provider {self.name!r}: set {self.api_key} ({where})"
            )
        remember_secret(key)  # redacted from every error message written from now on
        return key

    def apply(self, model: Model) -> Model:
        """A catalog model of this provider with its overrides (a proxy's URL and headers)."""
        changes: dict[str, Any] = {}
        if self.base_url:
            changes["base_url"] = self.base_url
        if self.headers:
            changes["headers"] = {**(model.headers or {}), **_resolved(self.headers, self.name)}
        if self.compat is not None:
            changes["compat"] = _load_compat(self.compat, f"providers.{self.name}")
        return replace(model, **changes) if changes else model


@dataclass
class CustomModels:
    """What models.json adds: providers by name, and what was wrong in it."""

    providers: dict[str, CustomProvider] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def find(self, provider: str, model_id: str) -> Model | None:
        """The model ``provider/model_id`` of the file (a copy), or None."""
        entry = self.providers.get(provider)
        if entry is None:
            return None
        for model in entry.models:
            if model.id == model_id:
                return replace(model, headers=_resolved(model.headers or {}, provider) or None)
        return None

    def all_models(self) -> list[Model]:
        """Every model the file defines."""
        return [replace(m) for p in self.providers.values() for m in p.models]


def _load_compat(raw: dict[str, Any], where: str) -> OpenAICompletionsCompat | None:
    """pi's ``compat`` object as tau's flags (errors named ``<where>.compat``), read the way
    a model's own ``compat`` is."""
    return load_model({"id": "-", "api": "-", "provider": "-", "compat": raw}, where).compat


def _typed(value: Any, kind: type | tuple[type, ...], where: str, what: str) -> Any:
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise CustomModelError(f"{where} must be {what}")
    return value


def _headers(raw: Any, where: str) -> dict[str, str] | None:
    """Header values as written (resolved only when a model is picked: a ``!command`` runs
    only for the provider in use)."""
    if raw is None:
        return None
    _typed(raw, dict, where, "an object of header names and values")
    for name, value in raw.items():
        _typed(value, str, f"{where}.{name}", "a string")
    return {str(name): value for name, value in raw.items()}


def _resolved(headers: Mapping[str, str], provider: str) -> dict[str, str]:
    """Header values resolved (raises :class:`CustomModelError` for a failing command)."""
    return {
        name: resolve_value(value, f"providers.{provider} header {name}", variable_only=False) or ""
        for name, value in headers.items()
    }


def _unknown(raw: Mapping[str, Any], known: frozenset[str], where: str) -> None:
    for key in raw:
        if key not in known:
            raise CustomModelError(
                f"{where}: unknown field {json.dumps(key)} (known: {', '.join(sorted(known))})"
            )


def _model(
    raw: Any, where: str, name: str, defaults: dict[str, Any], headers: dict[str, str] | None
) -> Model:
    _typed(raw, dict, where, 'an object with an "id"')
    _unknown(raw, _MODEL_KEYS, where)
    model_id = _typed(raw.get("id"), str, f"{where}.id", "a non-empty string")
    if not model_id:
        raise CustomModelError(f"{where}.id must be a non-empty string")
    data = {**defaults, **raw, "provider": name}
    for key in ("api", "baseUrl"):
        if not data.get(key):
            raise CustomModelError(f"{where}: no {key} (give it on the provider or the model)")
    apis = get_api_providers()
    if data["api"] not in apis:
        raise CustomModelError(f"{where}: unknown api {data['api']!r} (known: {', '.join(apis)})")
    model_headers = {**(headers or {}), **(_headers(raw.get("headers"), f"{where}.headers") or {})}
    data["headers"] = model_headers or None
    try:
        model = load_model(data, where)
    except SerializationError as exc:
        raise CustomModelError(str(exc)) from None
    for key, number in (("contextWindow", model.context_window), ("maxTokens", model.max_tokens)):
        if key in raw and (not isinstance(raw[key], int) or number <= 0):
            raise CustomModelError(f"{where}.{key} must be a whole number above 0")
    return model


def _provider(name: str, raw: Any) -> CustomProvider:
    where = f"providers.{name}"
    _typed(raw, dict, where, "an object")
    _unknown(raw, _PROVIDER_KEYS, where)
    for key in ("baseUrl", "api", "apiKey"):
        if key in raw:
            _typed(raw[key], str, f"{where}.{key}", "a string")
    compat = raw.get("compat")
    if compat is not None:
        _typed(compat, dict, f"{where}.compat", "an object")
    headers = _headers(raw.get("headers"), f"{where}.headers")
    provider = CustomProvider(
        name, api_key=raw.get("apiKey"), base_url=raw.get("baseUrl"), headers=headers, compat=compat
    )
    builtin = get_models(name)
    defaults: dict[str, Any] = {}
    if builtin:
        defaults = {"api": builtin[0].api, "baseUrl": builtin[0].base_url}
    defaults.update({k: raw[k] for k in ("api", "baseUrl", "compat") if k in raw})
    models = raw.get("models", [])
    _typed(models, list, f"{where}.models", "a list of models")
    if not models and not builtin:
        raise CustomModelError(f"{where}: no models (and no catalog provider of that name)")
    seen: set[str] = set()
    for number, entry in enumerate(models):
        model = _model(entry, f"{where}.models[{number}]", name, defaults, headers)
        if model.id in seen:
            raise CustomModelError(f"{where}.models[{number}]: model {model.id!r} given twice")
        seen.add(model.id)
        provider.models.append(model)
    return provider


def parse_models_file(data: bytes, source: str) -> CustomModels:
    """The providers of a models.json file; each bad one becomes a warning."""
    result = CustomModels()
    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        result.warnings.append(f"{source} is not valid JSON ({exc}); its models are not available")
        return result
    providers = document.get("providers") if isinstance(document, dict) else None
    if not isinstance(providers, dict):
        result.warnings.append(f'{source}: expected {{"providers": {{...}}}}; nothing is used')
        return result
    for name, raw in providers.items():
        if not name or "/" in name:
            result.warnings.append(f"{source}: provider name {name!r} must be non-empty, no '/'")
            continue
        try:
            result.providers[name] = _provider(name, raw)
        except (CustomModelError, RecursionError) as exc:
            result.warnings.append(f"{source}: {exc}; provider {name!r} left out")
    return result


_cache: dict[tuple[Path, int, int], CustomModels] = {}


def custom_models(warn: Callable[[str], None] | None = None) -> CustomModels:
    """The models.json of ``$TAU_HOME``, read again only when it changes (its warnings go to
    ``warn``, default stderr, each time it is read)."""
    path = models_path()
    try:
        info = path.stat()
    except FileNotFoundError:
        return CustomModels()
    except OSError as exc:
        info = None
        problem = exc.strerror
    key = (path, info.st_mtime_ns, info.st_size) if info is not None else (path, -1, -1)
    cached = _cache.get(key)
    if cached is not None:
        return cached
    if info is None:
        result = CustomModels(warnings=[f"cannot read {path}: {problem}"])
    else:
        result = _read(path)
    _cache.clear()  # one file: only its newest reading is worth keeping
    _cache[key] = result
    for line in result.warnings:
        (warn or _warn)(line)
    return result


def _read(path: Path) -> CustomModels:
    try:
        # Non-blocking, and only a regular file: a FIFO put there must not hang tau.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return CustomModels(warnings=[f"cannot read {path}: not a regular file"])
            with os.fdopen(os.dup(fd), "rb") as f:
                data = f.read(_MAX_FILE + 1)
        finally:
            os.close(fd)
    except OSError as exc:
        return CustomModels(warnings=[f"cannot read {path}: {exc.strerror}"])
    if len(data) > _MAX_FILE:
        return CustomModels(warnings=[f"{path} is over 4 MB: not read"])
    return parse_models_file(data, str(path))


def _warn(line: str) -> None:
    import sys

    print(f"tau: warning: {line}", file=sys.stderr, flush=True)


_ADDED: dict[tuple[str, str], Model] = {}


def add_model(model: Model) -> None:
    """Make ``model`` findable by ``provider/id`` in this process (an extension's model)."""
    _ADDED[(model.provider, model.id)] = model


def added_models() -> list[Model]:
    """The models extensions added in this process (:func:`add_model`)."""
    return list(_ADDED.values())


def remove_model(model: Model) -> None:
    """Forget a model :func:`add_model` added (``/reload``)."""
    _ADDED.pop((model.provider, model.id), None)


def lookup(provider: str, model_id: str) -> Model | None:
    """``provider/model_id`` as an extension added it, else from models.json, else the
    catalog with models.json's overrides."""
    added = _ADDED.get((provider, model_id))
    if added is not None:
        return added
    models = custom_models()
    found = models.find(provider, model_id)
    if found is not None:
        return found
    model = find_model(provider, model_id)
    entry = models.providers.get(provider)
    return entry.apply(model) if model is not None and entry is not None else model
