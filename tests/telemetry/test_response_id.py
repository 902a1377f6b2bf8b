"""``gen_ai.response.id`` on real recorded traffic: each adapter keeps the provider's id.

The expected id is read from the raw recording by these rules, not from tau's output:
Anthropic, the ``message.id`` of the first ``message_start`` event; chat completions, the
``id`` of the first chunk; Responses, the ``response.id`` of the terminal
``response.completed``/``incomplete``/``failed`` event; Gemini, the first chunk's
``responseId``; Mistral, the first chunk's ``id``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import pytest

from tau.ai import Context, Model, UserMessage, stream
from tests.ai.replay import Recorded, load, mock_client
from tests.conftest import RECORDED
from tests.telemetry.conftest import Otel


def _payloads(body: str) -> list[dict[str, Any]]:
    found = []
    for line in body.splitlines():
        if line.startswith("data:") and line[5:].strip() not in ("", "[DONE]"):
            try:
                value = json.loads(line[5:])
            except ValueError:
                continue
            if isinstance(value, dict):
                found.append(value)
    return found


def _anthropic(body: str) -> str | None:
    starts = [p for p in _payloads(body) if p.get("type") == "message_start"]
    return starts[0]["message"].get("id") if starts else None


def _first_id(key: str) -> Callable[[str], str | None]:
    def read(body: str) -> str | None:
        payloads = _payloads(body)
        return payloads[0].get(key) if payloads else None

    return read


def _responses(body: str) -> str | None:
    ends = [
        p for p in _payloads(body)
        if p.get("type") in ("response.completed", "response.incomplete", "response.failed")
    ]  # fmt: skip
    return ends[-1]["response"].get("id") if ends else None


# (api, provider, how the base URL ends, rule)
KINDS: list[tuple[str, str, str, str, Callable[[str], str | None]]] = [
    ("/v1/messages", "anthropic-messages", "anthropic", "", _anthropic),
    ("/chat/completions", "openai-completions", "openai", "/chat/completions", _first_id("id")),
    ("/responses", "openai-responses", "openai", "/responses", _responses),
    (":streamGenerateContent", "google-generative-ai", "google", "", _first_id("responseId")),
]

# Mistral's own adapter, for the recordings of Mistral's API: the first chunk's id.
MISTRAL = [("/chat/completions", "mistral-conversations", "mistral", "/chat/completions",
            _first_id("id"))]  # fmt: skip


def _cases() -> list[tuple[str, Recorded, Model, str]]:
    if not RECORDED.is_dir():
        return []
    cases = []
    for path in sorted(RECORDED.rglob("*.yaml")):
        if "vertex" in path.stem:
            continue  # the Vertex AI adapter needs Google credentials
        kinds = MISTRAL if path.parent.name == "test_mistral" else KINDS
        for n, recorded in enumerate(load(path)):
            if not recorded.is_sse or recorded.status != 200:
                continue
            uri = urlsplit(recorded.uri)
            for suffix, api, provider, cut, rule in kinds:
                if not uri.path.endswith(suffix) and suffix not in uri.path:
                    continue
                expected = rule(recorded.text)
                if not isinstance(expected, str) or not expected:
                    break
                if api == "google-generative-ai":
                    base = f"{uri.scheme}://{uri.netloc}/v1beta"
                elif api == "anthropic-messages":
                    base = f"{uri.scheme}://{uri.netloc}"
                else:
                    base = f"{uri.scheme}://{uri.netloc}{uri.path.removesuffix(cut)}"
                body = recorded.request_body if isinstance(recorded.request_body, dict) else {}
                model = Model(
                    id=str(body.get("model", "recorded-model")),
                    name="recorded",
                    api=api,
                    provider=provider,
                    base_url=base,
                )
                cases.append((f"{path.parent.name}/{path.stem}[{n}]", recorded, model, expected))
                break
    return cases


CASES = _cases()


def test_every_kind_of_recording_is_covered() -> None:
    if not RECORDED.is_dir():
        pytest.skip("recordings not present")
    assert {model.api for _, _, model, _ in CASES} == {kind[1] for kind in KINDS + MISTRAL}


@pytest.mark.parametrize(("name", "recorded", "model", "expected"), CASES,
                         ids=[c[0] for c in CASES])  # fmt: skip
async def test_the_response_id_reaches_message_and_span(
    otel: Otel, name: str, recorded: Recorded, model: Model, expected: str
) -> None:
    otel.instrument()
    async with mock_client([recorded]) as client:
        s = stream(model, Context([UserMessage("hi")]), api_key="k", client=client)
        message = await s.result()
    assert message.response_id == expected
    (span,) = otel.spans()
    assert span.attributes["gen_ai.response.id"] == expected  # type: ignore[index]
