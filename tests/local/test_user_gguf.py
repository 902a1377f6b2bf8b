"""A user's own GGUF of another architecture (Gemma 3 270M, fetched once by the test setup):
streamed text with the model's own token counts, typed output under the grammar, and
``tau -m ./model.gguf`` on the command line."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from tau.ai import Context, UserMessage, complete_structured, stream
from tau.ai.lookup.local_models import local_model
from tests.cli.conftest import TauRunner


class City(BaseModel):
    name: str
    country: str


async def test_text_streams_from_another_architecture(other_gguf: Path) -> None:
    s = stream(local_model(str(other_gguf)), Context([UserMessage("Say hello.")]), max_tokens=16)
    deltas = [e.delta async for e in s if e.type == "text_delta"]
    message = await s.result()
    assert message.stop_reason in ("stop", "length"), message.error_message
    assert deltas and "".join(deltas) == message.text
    assert message.usage.input > 5 and 0 < message.usage.output <= 16


async def test_typed_output_from_another_architecture(other_gguf: Path) -> None:
    result = await complete_structured(
        local_model(str(other_gguf)), "Name a city in France.", City, max_tokens=60
    )
    assert isinstance(result.output, City)


def test_tau_runs_a_gguf_given_by_its_path(
    tau: TauRunner, tmp_path: Path, other_gguf: Path
) -> None:
    (tmp_path / "work").mkdir(exist_ok=True)
    (tmp_path / "work" / "model.gguf").symlink_to(other_gguf)
    done = tau("-m", "./model.gguf", "--tools", "none", "--max-tokens", "16", "Say hi", timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()
