"""Every recorded Bedrock ConverseStream response, replayed through tau.

Expected values come from decoding the raw binary frames here with botocore's own
event-stream parser and the ConverseStream output shape (not through tau).
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

botocore = pytest.importorskip("botocore")

from botocore.eventstream import EventStream  # noqa: E402
from botocore.parsers import EventStreamJSONParser  # noqa: E402
from botocore.session import get_session  # noqa: E402

from tau.ai import Context, UserMessage, stream  # noqa: E402
from tau.ai.core.types import Model, TextContent, ThinkingContent, ToolCall  # noqa: E402
from tests.ai import replay  # noqa: E402
from tests.ai.servers import LocalServer  # noqa: E402
from tests.ai.stream_checks import check_grammar  # noqa: E402
from tests.conftest import RECORDED  # noqa: E402


def _recordings() -> list[tuple[str, replay.Recorded]]:
    if not RECORDED.is_dir():
        return []
    found = []
    for path in sorted(RECORDED.rglob("*.yaml")):
        if "/converse-stream" not in path.read_text():
            continue
        for i, recorded in enumerate(replay.load(path)):
            if recorded.uri.endswith("/converse-stream"):
                found.append((f"{path.relative_to(RECORDED)}#{i}", recorded))
    return found


RECORDINGS = _recordings()


class _Raw:
    def __init__(self, body: bytes) -> None:
        self._body = body

    def stream(self) -> Any:
        yield self._body

    def close(self) -> None:
        pass


def _decode(body: bytes) -> list[dict[str, Any]]:
    operation = get_session().get_service_model("bedrock-runtime").operation_model("ConverseStream")
    shape = operation.output_shape.members["stream"]
    return list(EventStream(_Raw(body), shape, EventStreamJSONParser(), "ConverseStream"))


def _expected(events: list[dict[str, Any]]) -> dict[str, Any]:
    blocks: dict[int, dict[str, Any]] = {}
    server_tools: set[int] = set()
    stop = None
    usage: dict[str, int] = {}
    for event in events:
        if "contentBlockStart" in event:
            start = event["contentBlockStart"]
            tool = start["start"].get("toolUse")
            if tool is None:
                continue
            if tool.get("type") == "server_tool_use":
                server_tools.add(start["contentBlockIndex"])
            else:
                blocks[start["contentBlockIndex"]] = {
                    "kind": "call", "id": tool["toolUseId"], "name": tool["name"], "input": ""
                }  # fmt: skip
        elif "contentBlockDelta" in event:
            index = event["contentBlockDelta"]["contentBlockIndex"]
            delta = event["contentBlockDelta"]["delta"]
            if index in server_tools:
                continue
            if delta.get("text"):
                blocks.setdefault(index, {"kind": "text", "text": ""})["text"] += delta["text"]
            elif "toolUse" in delta:
                blocks[index]["input"] += delta["toolUse"]["input"]
            elif "reasoningContent" in delta:
                r = delta["reasoningContent"]
                b = blocks.setdefault(
                    index, {"kind": "thinking", "text": "", "signature": None, "redacted": False}
                )
                b["text"] += r.get("text", "")
                if "signature" in r:
                    b["signature"] = r["signature"]
                if "redactedContent" in r:
                    b["redacted"] = True
                    b["signature"] = base64.b64encode(r["redactedContent"]).decode()
        elif "messageStop" in event:
            stop = event["messageStop"]["stopReason"]
        elif "metadata" in event:
            usage = event["metadata"]["usage"]
    return {"blocks": [blocks[i] for i in sorted(blocks)], "stop": stop, "usage": usage}


@pytest.fixture(autouse=True)
def _aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_BEDROCK_SKIP_AUTH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "test-token")


@pytest.mark.skipif(not RECORDINGS, reason="recordings not present")
@pytest.mark.parametrize(("name", "recorded"), RECORDINGS, ids=[n for n, _ in RECORDINGS])
async def test_recorded_stream_replays(name: str, recorded: replay.Recorded) -> None:
    expected = _expected(_decode(recorded.body))
    model_id = recorded.uri.split("/model/")[1].split("/")[0]
    # Odd-sized chunks split frames (and their preludes) across reads.
    async with LocalServer(replay.replies([recorded], chunk_size=61)) as server:
        model = Model(
            id=model_id.replace("%3A", ":"),
            name="Bedrock",
            api="bedrock-converse-stream",
            provider="amazon-bedrock",
            base_url=server.url,
            reasoning=True,
        )
        s = stream(model, Context([UserMessage("hi")]))
        events = [e async for e in s]
        message = await s.result()
        check_grammar(events, message)
        request = server.requests[0]

    assert request.path == f"/model/{model_id}/converse-stream"
    assert request.headers["authorization"] == "Bearer test-token"
    assert events[0].type == "start"
    assert events[-1].type == "done", message.error_message

    assert len(message.content) == len(expected["blocks"])
    for block, want in zip(message.content, expected["blocks"], strict=True):
        if want["kind"] == "text":
            assert isinstance(block, TextContent)
            assert block.text == want["text"]
        elif want["kind"] == "thinking":
            assert isinstance(block, ThinkingContent)
            assert block.thinking == want["text"]
            assert block.thinking_signature == want["signature"]
            assert bool(block.redacted) == want["redacted"]
        else:
            assert isinstance(block, ToolCall)
            assert (block.id, block.name) == (want["id"], want["name"])
            assert block.arguments == json.loads(want["input"])

    stops = {"end_turn": "stop", "tool_use": "toolUse", "max_tokens": "length"}
    assert message.stop_reason == stops[expected["stop"]]
    usage = expected["usage"]
    assert message.usage.input == usage["inputTokens"]
    assert message.usage.output == usage["outputTokens"]
    assert message.usage.cache_read == usage.get("cacheReadInputTokens", 0)
    assert message.usage.cache_write == usage.get("cacheWriteInputTokens", 0)
    assert message.usage.total_tokens == usage["totalTokens"]


def test_every_bedrock_recording_is_covered() -> None:
    if not RECORDED.is_dir():
        pytest.skip("recordings not present")
    assert len(RECORDINGS) == 9
