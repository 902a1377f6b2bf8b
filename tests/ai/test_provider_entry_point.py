"""A third-party provider: a package built into a wheel here, installed beside tau, declaring
its one record through the ``tau.providers`` entry point, and streamed from over 127.0.0.1.

Nothing of tau is changed to add it: the wheel's entry point is all the registry reads.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.ai.servers import SSE_HEADERS, LocalServer, Reply

REPO = Path(__file__).resolve().parents[2]

PACKAGE = {
    "pyproject.toml": """
        [build-system]
        requires = ["hatchling"]
        build-backend = "hatchling.build"

        [project]
        name = "tiny-provider"
        version = "0.1.0"

        [project.entry-points."tau.providers"]
        "tiny-chat" = "tiny_provider.provider:PROVIDER"
    """,
    "tiny_provider/__init__.py": '''
        """A third-party tau provider: one JSON request, one SSE stream of deltas."""
    ''',
    "tiny_provider/options.py": """
        from __future__ import annotations

        from typing import Literal

        from tau.ai import StreamOptions


        class TinyOptions(StreamOptions, total=False):
            style: Literal["plain", "shout"]
    """,
    "tiny_provider/request.py": """
        from __future__ import annotations

        from tau.ai import Context, Model, UserMessage
        from tau.ai.adapters import ProviderRequest, require_api_key

        from tiny_provider.options import TinyOptions


        def build_request(model: Model, context: Context, options: TinyOptions) -> ProviderRequest:
            last = context.messages[-1]
            prompt = last.content if isinstance(last, UserMessage) else ""
            body = {
                "model": model.id,
                "prompt": prompt,
                "style": options.get("style", "plain"),
                "max_tokens": options.get("max_tokens"),
                "seen": sorted(options),
            }
            key = require_api_key(model, options)
            return ProviderRequest(
                model.base_url + "/chat", {"authorization": f"Bearer {key}"}, body
            )
    """,
    "tiny_provider/decoder.py": """
        from __future__ import annotations

        import json

        from tau.ai.adapters import MessageBuilder


        class TinyDecoder:
            def __init__(self, builder: MessageBuilder) -> None:
                self.builder = builder
                self.done = False

            def feed(self, data: str, event: str) -> bool:
                item = json.loads(data)
                if "delta" in item:
                    self.builder.text(0, item["delta"])
                    return True
                self.builder.message.stop_reason = item["stop"]
                self.done = True
                return False

            def finish(self) -> None:
                if not self.done:
                    raise ValueError("the tiny stream ended early")
    """,
    "tiny_provider/provider.py": """
        from __future__ import annotations

        import os

        from tau.ai import Model
        from tau.ai.adapters import Provider

        from tiny_provider.decoder import TinyDecoder
        from tiny_provider.options import TinyOptions
        from tiny_provider.request import build_request

        PROVIDER = Provider(
            api="tiny-chat",
            options=TinyOptions,
            prefix="tiny_",
            env_keys={"tiny": ("TINY_API_KEY",)},
            build_request=build_request,
            decoder=lambda builder, model, context, options: TinyDecoder(builder),
            catalog=lambda: [
                Model("tiny-1", "Tiny", "tiny-chat", "tiny", os.environ.get("TINY_URL", ""))
            ],
        )
    """,
}

CLIENT = """
import json
from tau.ai import complete_sync, get_env_api_key, get_model

model = get_model("tiny/tiny-1")  # the catalog the record brings
settings = {"tiny_style": "shout", "max_tokens": 50, "anthropic_effort": "max"}
message = complete_sync(model, "hello", settings=settings)
try:
    complete_sync(model, "hello", settings={"tiny_stlye": "shout"})
    refused = None
except TypeError as exc:
    refused = str(exc)
print(json.dumps({
    "text": message.content[0].text if message.content else None,
    "stop": message.stop_reason,
    "error": message.error_message,
    "refused": refused,
    "key": get_env_api_key("tiny"),
}))
"""


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny provider, built into a wheel and installed into a folder of its own."""
    root = tmp_path_factory.mktemp("tiny")
    source = root / "src"
    for name, text in PACKAGE.items():
        path = source / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    wheels = root / "wheels"
    pip = [sys.executable, "-m", "pip", "-q", "--disable-pip-version-check"]
    build = [*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(wheels), str(source)]
    subprocess.run(build, check=True, capture_output=True)
    (wheel,) = wheels.glob("tiny_provider-*.whl")
    target = root / "site"
    subprocess.run(
        [*pip, "install", "--no-deps", "--no-index", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
    )
    return target


async def test_a_provider_from_a_wheel_streams_through_its_entry_point(installed: Path) -> None:
    events = [{"delta": "HEL"}, {"delta": "LO!"}, {"stop": "stop"}]
    body = [f"data: {json.dumps(e)}\n\n".encode() for e in events]
    async with LocalServer([Reply(200, SSE_HEADERS, body)]) as server:
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(installed), str(REPO / "src")]),
            "TINY_API_KEY": "tiny-secret",
            "TINY_URL": server.url,
        }
        child = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            CLIENT,
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(child.communicate(), 60)
        assert child.returncode == 0, err.decode()
        assert server.requests, out.decode()
        request = server.requests[0]
    result = json.loads(out)
    assert result["error"] is None, result
    assert result["text"] == "HELLO!"
    assert result["stop"] == "stop"
    assert result["key"] == "tiny-secret"  # its env_keys, from the record
    assert "did you mean 'tiny_style'" in result["refused"]
    assert request.path == "/chat"
    assert request.headers["authorization"] == "Bearer tiny-secret"
    sent = json.loads(request.body)
    # Its own setting arrives without its prefix; another provider's is not passed on.
    assert sent["style"] == "shout"
    assert sent["max_tokens"] == 50
    assert sent["prompt"] == "hello"
    assert not [key for key in sent["seen"] if "effort" in key or key.startswith("tiny_")]
