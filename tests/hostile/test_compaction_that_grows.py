"""Issue 24 item 10: a compaction that would grow the context is rejected.

``/compact`` reported ``113 → 231 tokens`` with a summary longer than what it replaced, and
``118 → 1,246`` with a local model whose summary was a repetition loop cut at its length limit.
Such a summary is now rejected (the context stays as it was, the user is told), and the summary
request's ``max_tokens`` is well under what it replaces.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tau.agent import AgentMessage
from tau.ai.providers.faux import FauxResponse, faux_calls, faux_model, text
from tau.cli.app import App, Settings
from tau.cli.compaction import CompactionError, CompactionSettings, estimate_tokens
from tau.cli.tools import Workspace

LOOP = "the summary of the summary of " * 200  # a repetition loop, far longer than the talk


def _app(tmp_path: Path, summary: FauxResponse) -> tuple[App, Any]:
    answers: Iterator[FauxResponse] = iter(
        [
            FauxResponse([text("The first answer, of a few words.")]),
            FauxResponse([text("The second answer.")]),
            summary,
        ]
    )
    model = faux_model(lambda context, options: next(answers), context_window=100_000)
    settings = Settings(
        model=model,
        tool_names=[],
        workspace=Workspace(tmp_path),
        compaction=CompactionSettings(enabled=False),  # only /compact here
    )
    return App(settings, None), model


async def _talk(app: App) -> list[AgentMessage]:
    await app.run("A first question, short.")
    await app.run("A second question.")
    return list(app.agent.state.messages)


@pytest.mark.parametrize(
    "summary",
    [
        FauxResponse([text(LOOP)]),  # longer than what it replaces
        FauxResponse([text(LOOP[:200])], stop_reason="length"),  # cut mid-sentence
    ],
    ids=["grows", "cut-at-the-limit"],
)
async def test_a_summary_that_does_not_shrink_the_context_is_rejected(
    tmp_path: Path, summary: FauxResponse
) -> None:
    app, model = _app(tmp_path, summary)
    before = await _talk(app)
    with pytest.raises(CompactionError, match="the context is left as it was"):
        await app.compact()
    assert app.agent.state.messages == before  # nothing replaced
    # The request asked for well under what the summary would replace.
    _, options = faux_calls(model)[-1]
    replaced = sum(estimate_tokens(m) for m in before[:1])
    assert options["max_tokens"] <= max(64, replaced // 2)
