"""The local backend against a fake OpenAI-compatible server on 127.0.0.1: rate limits measured
on the server's clock, 429s that slow the whole provider, retries, recorded and fatal errors."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

import tau.ai.streaming.http as tau_http
from tau.batch import BatchFatalError, RateLimit, read_results, run_batch

from .agents import HttpAgent
from .fake_llm import COMPLETION_TOKENS, FakeLLM, Seen, prompt_tokens
from .test_local import collect


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


@pytest.fixture(autouse=True)
def fast_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tau_http._retry, "BACKOFF_BASE_S", 0.01)


def most_in_a_window(times: Sequence[float], weights: Sequence[float], window: float) -> float:
    """The largest total weight of arrivals within any ``window`` seconds."""
    best = 0.0
    for start in times:
        best = max(
            best, sum(w for t, w in zip(times, weights, strict=True) if start <= t < start + window)
        )
    return best


def prompts(count: int, marks: str = "", size: int = 0) -> list[dict[str, str]]:
    return [
        {"id": f"q{n}", "prompt": f"question {n} {marks}".strip() + " " + "x" * size}
        for n in range(count)
    ]


async def test_requests_per_minute_hold_on_the_servers_clock(llm: FakeLLM) -> None:
    # 600/min is 10 a second, with a burst of one second's worth: 30 requests take ~2 s.
    limits = {"fake": RateLimit(rpm=600)}
    results = await collect(
        run_batch(prompts(30), HttpAgent(llm.model()), concurrency=30, rate_limits=limits)
    )
    assert [r.status for r in results] == ["ok"] * 30
    times = sorted(s.at for s in llm.seen)
    assert len(times) == 30
    for window in (0.5, 1.0, 2.0):
        # At most rate × window + the burst (+1 for an arrival on the window's edge).
        assert most_in_a_window(times, [1] * 30, window) <= 10 * window + 10 + 1
    assert max(r.rate_wait for r in results) > 1.0


async def test_tokens_per_minute_hold_on_the_servers_clock(llm: FakeLLM) -> None:
    # 30,000/min is 500 tokens a second (and a 500-token burst); each request is ~106 tokens.
    limits = {"fake": RateLimit(tpm=30_000)}
    items = prompts(15, size=400)
    results = await collect(
        run_batch(items, HttpAgent(llm.model()), concurrency=15, rate_limits=limits)
    )
    assert {r.status for r in results} == {"ok"}
    seen = sorted(llm.seen, key=lambda s: s.at)
    tokens = [prompt_tokens(s.prompt) + COMPLETION_TOKENS for s in seen]
    per_request = max(tokens)
    for window in (0.5, 1.0, 2.0):
        # The bucket's rate and size, plus one request that may go on a full bucket.
        limit = 500 * window + 500 + per_request
        assert most_in_a_window([s.at for s in seen], tokens, window) <= limit


def first_refusal(seen: list[Seen]) -> float:
    return min(s.at for s in seen if s.status == 429)


@pytest.mark.parametrize(
    "http_retries",
    [1, 0],
    ids=["tau.ai's HTTP layer waits and retries", "the request fails and the item is retried"],
)
async def test_a_429_with_retry_after_pauses_the_whole_provider(
    llm: FakeLLM, http_retries: int
) -> None:
    refused_item = {"id": "refused", "prompt": "refused [status=429] [retry=1] [times=1]"}
    items = prompts(60, "[delay=0.03]")
    items.insert(10, refused_item)
    agent = HttpAgent(llm.model(), max_retries=http_retries)
    results = await collect(run_batch(items, agent, concurrency=3, retry_delay=0.01))
    assert {r.status for r in results} == {"ok"}
    refused = next(r for r in results if r.id == "refused")
    assert refused.attempts == (1 if http_retries else 2)
    at = first_refusal(llm.seen)
    # Other items kept the server busy before the 429; after it, nobody sent anything until
    # the Retry-After second had passed.
    assert len([s for s in llm.seen if s.at < at]) >= 10
    quiet = [s for s in llm.seen if at + 0.1 < s.at < at + 0.9]
    assert quiet == []
    assert len(llm.requests_for(refused_item["prompt"])) == 2


async def test_permanent_errors_are_recorded_and_transient_ones_retried(
    llm: FakeLLM, tmp_path: Path
) -> None:
    rejected = "bad [status=400]"
    flaky = "flaky [status=503] [times=1]"
    items = [{"id": "bad", "prompt": rejected}, {"id": "flaky", "prompt": flaky}]
    items += prompts(5)
    output = tmp_path / "out.jsonl"
    results = await collect(
        run_batch(items, HttpAgent(llm.model()), output=output, retry_delay=0.01)
    )
    by_id = {r.id: r for r in results}
    bad = by_id["bad"]
    assert (bad.status, bad.error_kind, bad.attempts) == ("error", "other", 1)
    assert bad.error is not None and bad.error.startswith("400")
    assert len(llm.requests_for(rejected)) == 1  # never retried
    assert (by_id["flaky"].status, by_id["flaky"].attempts) == ("ok", 2)
    assert len(llm.requests_for(flaky)) == 2
    assert sorted(r.id for r in read_results(output)) == sorted(by_id)


async def test_refused_credentials_stop_the_batch(llm: FakeLLM, tmp_path: Path) -> None:
    items = prompts(40, "[delay=0.05]")
    items.insert(5, {"id": "denied", "prompt": "denied [status=401]"})
    output = tmp_path / "out.jsonl"
    batch = run_batch(items, HttpAgent(llm.model()), output=output, concurrency=4)
    with pytest.raises(BatchFatalError, match=r"fake refused the request .*401"):
        await collect(batch)
    written = [r.id for r in read_results(output)]
    assert "denied" not in written and {"q0", "q1", "q2"} <= set(written)
    assert len(llm.seen) < len(items)  # it stopped
