"""Typed output: the CPU of partial outputs for a ~200 KB object streamed in 2,000 deltas.

Run: ``python benchmarks/bench_structured.py`` (from the repo root, with tau installed or
``PYTHONPATH=src``). Feeds the JSON text of a ~200 KB pydantic object, delta by delta, to
:class:`tau.ai.PartialOutput` (the incremental JSON parser plus pydantic's partial
validation, on the schedule ``stream_structured`` uses), then validates the final text, and
prints the CPU time as a multiple of one ``model_validate_json`` of the final text (target:
at most 10x), best of 15 interleaved rounds. For scale it also measures the naive approach (a partial ``validate_json`` of
the whole text so far after every delta) on the first deltas and extrapolates it: that cost
grows with the square of the size.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import contextlib

from pydantic import BaseModel, TypeAdapter

from tau.ai.structured import NOTHING, OutputSpec, PartialOutput

DELTAS = 2_000
TARGET = 200_000
ROUNDS = 15


class Address(BaseModel):
    street: str
    city: str
    postcode: str


class Order(BaseModel):
    id: int
    customer: str
    total: float
    paid: bool
    tags: list[str]
    address: Address


class Report(BaseModel):
    title: str
    orders: list[Order]


def report_text(size: int) -> str:
    """The JSON of a report of many orders, about ``size`` characters, with non-ASCII text."""
    rng = random.Random(5)
    orders: list[Order] = []
    text = ""
    while len(text) < size:
        i = len(orders)
        orders.append(
            Order(
                id=i,
                customer=f'Client {rng.randint(0, 10**6)} — Müller & "Söhne"',
                total=round(rng.uniform(1, 10_000), 2),
                paid=rng.random() < 0.5,
                tags=[rng.choice(["rush", "gift", "b2b", "retour"]) for _ in range(3)],
                address=Address(street=f"{i} rue de l'Été", city="Lyon", postcode="69001"),
            )
        )
        if i % 50 == 0:
            text = Report(title="Q3 orders", orders=orders).model_dump_json()
    return Report(title="Q3 orders", orders=orders).model_dump_json()


def split(text: str, parts: int) -> list[str]:
    step = -(-len(text) // parts)
    return [text[i : i + step] for i in range(0, len(text), step)]


def baseline(text: str) -> float:
    start = time.process_time()
    Report.model_validate_json(text)
    return time.process_time() - start


def tau_partials(deltas: list[str], text: str) -> tuple[float, float, int]:
    """CPU of the partials alone, and with the final validation; how many were given out."""
    spec = OutputSpec.of(Report)
    spec.validate_partial({})  # build the partial type outside the timing (done once per type)
    tracker = PartialOutput(spec)
    given = 0
    start = time.process_time()
    for delta in deltas:
        if tracker.feed(delta) is not NOTHING:
            given += 1
    partials = time.process_time() - start
    tracker.settle(spec.validate_json(text))
    return partials, time.process_time() - start, given


def naive(deltas: list[str], sample: int) -> float:
    """A partial validate_json of everything so far after each of the first ``sample`` deltas,
    extrapolated to all of them (cost ~ sum of prefix lengths)."""
    adapter = TypeAdapter(Report)
    text = ""
    start = time.process_time()
    for delta in deltas[:sample]:
        text += delta
        with contextlib.suppress(ValueError):
            adapter.validate_json(text, experimental_allow_partial="trailing-strings")
    spent = time.process_time() - start
    n = len(deltas)
    return spent * (n * (n + 1) / 2) / (sample * (sample + 1) / 2)


def main() -> None:
    text = report_text(TARGET)
    deltas = split(text, DELTAS)
    # Interleaved rounds, best of each: the least disturbed figure on a shared machine.
    bases: list[float] = []
    runs: list[tuple[float, float, int]] = []
    for _ in range(ROUNDS):
        bases.append(baseline(text))
        runs.append(tau_partials(deltas, text))
    base = min(bases)
    partials = min(r[0] for r in runs)
    total = min(r[1] for r in runs)
    given = runs[0][2]
    slow = naive(deltas, 200)
    print(f"object: {len(text):,} characters of JSON in {len(deltas):,} deltas")
    print(f"{'':44}{'CPU ms':>10}{'ratio':>10}")
    print(f"{'model_validate_json of the final text':44}{base * 1e3:>10.2f}{1.0:>9.2f}x")
    print(f"{'tau partial outputs':44}{partials * 1e3:>10.2f}{partials / base:>9.2f}x")
    print(f"{'tau partial outputs + final validation':44}{total * 1e3:>10.2f}{total / base:>9.2f}x")
    print(
        f"{'naive: partial validate_json per delta (est.)':44}{slow * 1e3:>10.0f}{slow / base:>9.0f}x"
    )
    print(f"partial outputs given out: {given} (each one different from the one before)")
    print(f"target: tau partial outputs <= 10x  ->  {'met' if partials / base <= 10 else 'MISSED'}")


if __name__ == "__main__":
    main()
