"""Compaction with a scripted model and a small window: a long session compacts, goes on,
resumes to the same context, and the summary request carries the turns it drops."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tau.ai import AssistantMessage, Context, TextContent, UserMessage
from tau.ai.providers.faux import FauxResponse, faux_model, text, tool_call
from tau.cli.app import App, Settings
from tau.cli.app_events import CompactionEnd, CompactionStart
from tau.cli.compaction import (
    SUMMARY_PREFIX,
    SUMMARY_SYSTEM_PROMPT,
    CompactionError,
    CompactionSettings,
    CompactionSummary,
    context_tokens,
    find_cut,
    load_settings,
)
from tau.cli.session import Session
from tau.cli.tools import Workspace
from tests.cli.conftest import TauRunner

WINDOW = 1000
OVERFLOW = "prompt is too long: 1200 tokens > 1000 maximum"


def _text(message: Any) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(b.text for b in content if isinstance(b, TextContent))


class Scripted:
    """A model with a small window: answers each prompt, writes summaries when asked, and
    (like a provider) refuses a request whose context is over its window."""

    def __init__(self, *, enforce_window: bool = False, answer_chars: int = 200) -> None:
        self.summary_requests: list[str] = []
        self.requests: list[Context] = []
        self.enforce_window = enforce_window
        self.answer_chars = answer_chars
        self.model = faux_model(self, context_window=WINDOW, max_tokens=512)

    def __call__(self, context: Context, options: Mapping[str, Any]) -> FauxResponse:
        if context.system_prompt == SUMMARY_SYSTEM_PROMPT:
            prompt = _text(context.messages[0])
            self.summary_requests.append(prompt)
            return FauxResponse([text(f"SUMMARY #{len(self.summary_requests)}")])
        self.requests.append(context)
        size = sum(len(_text(m)) for m in context.messages) // 4
        if self.enforce_window and size > WINDOW:
            return FauxResponse(error=OVERFLOW, error_status=400)
        asked = _text(context.messages[-1])
        return FauxResponse([text(f"answer to {asked[:12]} " + "x" * self.answer_chars)])


def _app(tmp_path: Path, model: Any, events: list[Any], **settings: Any) -> App:
    return App(
        Settings(
            model=model,
            tool_names=[],
            workspace=Workspace(tmp_path),
            session_dir=tmp_path / "sessions",
            system="be brief",
            **settings,
        ),
        None,
        on_event=events.append,
    )


async def test_a_long_session_compacts_goes_on_and_resumes_to_the_same_context(
    tmp_path: Path,
) -> None:
    scripted = Scripted()
    events: list[Any] = []
    app = _app(tmp_path, scripted.model, events)
    prompts = [f"question {i:02d} " + "q" * 100 for i in range(12)]
    for prompt in prompts:
        result = await app.run(prompt)
        assert result.stop_reason == "stop"
    # The threshold (80% of 1000 tokens) was passed: compacted once, automatically.
    starts = [e for e in events if isinstance(e, CompactionStart)]
    ends = [e for e in events if isinstance(e, CompactionEnd)]
    assert [e.reason for e in starts] == ["threshold"]
    assert ends[0].result is not None and ends[0].error is None
    # (checked before a prompt too: the context plus the prompt about to be sent passed 80%)
    assert ends[0].result.tokens_before > 0.7 * WINDOW > 0.5 * WINDOW > ends[0].result.tokens_after
    # The summary request carried the dropped turns, verbatim, and none of the kept ones.
    request = "\n".join(scripted.summary_requests)
    dropped = ends[0].result.messages_summarised
    assert dropped >= 4
    for prompt in prompts[: dropped // 2]:
        assert f"[User]: {prompt}" in request
    assert "[Assistant]: answer to question 00" in request
    kept_prompts = [_text(m) for m in ends[0].result.kept if isinstance(m, UserMessage)]
    assert kept_prompts and all(p not in request for p in kept_prompts)
    # The conversation went on from the summary: the next request starts with it.
    messages = app.agent.state.messages
    assert isinstance(messages[0], CompactionSummary)
    after = scripted.requests[-1].messages
    assert _text(after[0]).startswith(SUMMARY_PREFIX) and "SUMMARY #" in _text(after[0])
    assert _text(after[-1]) == prompts[-1]
    # Nothing was deleted from the file; a resume rebuilds the very same context.
    path = app.session.path  # type: ignore[union-attr]
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    user_entries = [e for e in entries if e["type"] == "message" and e["message"]["role"] == "user"]
    assert len(user_entries) == len(prompts)
    [compaction] = [e for e in entries if e["type"] == "compaction"]
    assert compaction["summary"].startswith("SUMMARY #")
    assert compaction["tokensBefore"] == ends[0].result.tokens_before
    assert compaction["firstKeptEntryId"] in {e["id"] for e in entries}
    resumed = Session.open(path)
    assert resumed.messages == messages
    # ... and a resumed session goes on from that context.
    again = _app(tmp_path, scripted.model, events, session=resumed)
    await again.run("one more")
    sent = scripted.requests[-1].messages
    assert _text(sent[0]) == _text(after[0]) and len(sent) == len(messages) + 1


async def test_a_context_overflow_is_compacted_and_the_turn_retried(tmp_path: Path) -> None:
    scripted = Scripted(enforce_window=True, answer_chars=700)
    events: list[Any] = []
    never = CompactionSettings(threshold=10.0)  # never by size: only the provider's refusal
    app = _app(tmp_path, scripted.model, events, compaction=never)
    results = [await app.run(f"question {i} " + "q" * 300) for i in range(6)]
    assert all(r.stop_reason == "stop" for r in results), [r.error for r in results]
    reasons = [(type(e).__name__, e.reason) for e in events]
    assert ("CompactionStart", "overflow") in reasons
    retried = next(e for e in events if isinstance(e, CompactionEnd) and e.reason == "overflow")
    assert retried.will_retry and retried.result is not None
    # The failed attempt stays in the file; the retried turn answered the same question.
    path = app.session.path  # type: ignore[union-attr]
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    errors = [e for e in entries if e.get("message", {}).get("stopReason") == "error"]
    assert errors and errors[0]["message"]["errorMessage"] == OVERFLOW
    assert Session.open(path).messages == app.agent.state.messages


async def test_overflow_twice_in_a_row_is_reported_not_looped(tmp_path: Path) -> None:
    summaries: list[str] = []

    def always_overflow(context: Context, options: Mapping[str, Any]) -> FauxResponse:
        if context.system_prompt == SUMMARY_SYSTEM_PROMPT:
            summaries.append("x")
            return FauxResponse([text("SUMMARY")])
        if len(context.messages) < 3:
            return FauxResponse([text("fine")])
        return FauxResponse(error=OVERFLOW, error_status=400)

    model = faux_model(always_overflow, context_window=WINDOW)
    app = _app(tmp_path, model, [])
    await app.run("first")
    result = await app.run("second")
    assert result.stop_reason == "error" and result.error == OVERFLOW
    assert len(summaries) == 1, "one compaction, one retry, then the error"


async def test_manual_compact_takes_instructions_and_refuses_when_nothing_to_drop(
    tmp_path: Path,
) -> None:
    scripted = Scripted()
    app = _app(tmp_path, scripted.model, [])
    with pytest.raises(CompactionError, match="nothing to compact"):
        await app.compact()
    for i in range(3):
        await app.run(f"question {i} " + "q" * 400)
    result = await app.compact("keep the numbers")
    assert "Pay particular attention to: keep the numbers" in scripted.summary_requests[-1]
    assert isinstance(app.agent.state.messages[0], CompactionSummary)
    assert result.messages_summarised >= 2


async def test_files_read_and_written_accumulate_across_compactions(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha")
    turns = iter(
        [
            FauxResponse([tool_call("read", {"path": "a.txt"})]),
            FauxResponse([text("read it " + "x" * 1200)]),
            FauxResponse([text("SUMMARY one")]),
            FauxResponse([tool_call("write", {"path": "b.txt", "content": "beta"})]),
            FauxResponse([text("wrote it " + "x" * 1200)]),
            FauxResponse([text("SUMMARY two")]),
        ]
    )
    model = faux_model(lambda context, options: next(turns), context_window=WINDOW)
    app = App(
        Settings(
            model=model,
            tool_names=["read", "write"],
            workspace=Workspace(tmp_path),
            yes=True,
            compaction=CompactionSettings(enabled=False),  # only /compact here
        ),
        None,
    )
    # Long enough that its summary is smaller (a summary that is not is rejected).
    await app.run("read a.txt" + " (a long request, worth summarising)" * 20)
    await app.compact()
    await app.run("write b.txt")
    await app.compact()
    summary = app.agent.state.messages[0]
    assert isinstance(summary, CompactionSummary)
    assert (summary.read_files, summary.modified_files) == (["a.txt"], ["b.txt"])
    assert summary.summary.endswith("<modified-files>\nb.txt\n</modified-files>")


def _assistant(words: str, stop: str = "stop", tokens: int = 0) -> AssistantMessage:
    message = AssistantMessage([text(words)], api="faux", provider="faux", model="m")
    message.stop_reason = stop  # type: ignore[assignment]
    message.usage.total_tokens = tokens
    return message


def test_the_cut_never_drops_a_call_without_its_result_nor_the_failed_request() -> None:
    call = AssistantMessage(
        [tool_call("read", {"path": "x"})], api="faux", provider="faux", model="m"
    )
    from tau.ai import ToolResultMessage

    result = ToolResultMessage(call.tool_calls[0].id, "read", [text("y" * 4000)])
    messages = [UserMessage("a" * 400), call, result, UserMessage("b"), _assistant("", "error")]
    # Little room: the latest boundary is the failed request's prompt (index 3), not the
    # failed answer (4) nor the tool result (2).
    assert find_cut(messages, keep_tokens=1) == 3
    assert find_cut(messages, keep_tokens=10_000) == 1
    assert find_cut([UserMessage("only")], keep_tokens=1) is None


def test_context_size_uses_reported_usage_only_after_the_summary() -> None:
    old = _assistant("old", tokens=900)
    summary = CompactionSummary(summary="s", tokens_before=900)
    assert context_tokens([UserMessage("x" * 40), old]) == 900
    assert context_tokens([summary, UserMessage("x" * 40), old]) < 100
    new = _assistant("new", tokens=120)
    new.timestamp = summary.timestamp + 1
    assert context_tokens([summary, UserMessage("x" * 40), old, new, UserMessage("y" * 8)]) == 122


def test_settings_come_from_the_config_with_warnings_for_bad_values() -> None:
    warnings: list[str] = []
    settings = load_settings(
        {"enabled": "yes", "threshold": 5, "keepRecentTokens": 1000}, warnings.append
    )
    assert settings == CompactionSettings(enabled=True, threshold=0.8, keep_recent_tokens=1000)
    assert len(warnings) == 2
    assert load_settings([1], warnings.append) == CompactionSettings()


def test_the_command_compacts_on_overflow_and_retries(
    tau: TauRunner, script, tmp_path: Path
) -> None:
    """Through the command: the provider's overflow error, then the summary, then the retry."""
    first = script([{"text": "one " + "x" * 400}])
    assert tau("--model", first, "question one " + "q" * 400).returncode == 0
    second = script(
        [{"error": OVERFLOW, "status": 400}, {"text": "SUMMARY of one"}, {"text": "answered two"}]
    )
    done = tau("-c", "--model", second, "question two")
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith("answered two\n")
    assert "[the context overflowed the model's window: compacting, then retrying]" in done.stderr
    assert "[compacted: " in done.stderr
    shown = tau("sessions", "show", tau("sessions").stdout.split()[0])
    assert "SUMMARY of one" in shown.stdout and "question one" in shown.stdout


def test_json_mode_reports_compaction_as_events(tau: TauRunner, script) -> None:
    # A question long enough that its summary is smaller (one that is not is rejected).
    question = "question one, at length: " + "words that a summary can shorten. " * 20
    assert tau("--model", script([{"text": "one"}]), question).returncode == 0
    second = script([{"error": OVERFLOW, "status": 400}, {"text": "SUMMARY"}, {"text": "two"}])
    done = tau("-c", "--json", "--model", second, "question two")
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    kinds = [e["type"] for e in events]
    start = kinds.index("auto_compaction_start")
    assert events[start] == {"type": "auto_compaction_start", "reason": "overflow"}
    end = events[kinds.index("auto_compaction_end")]
    assert end["willRetry"] is True and end["result"]["summary"] == "SUMMARY"
    assert kinds[start - 1] == "agent_end" and kinds[-1] == "agent_end", "the retry is a run"
    assert events[-1]["messages"][-1]["content"][0]["text"] == "two"
