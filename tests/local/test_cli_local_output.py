"""``tau --output-schema`` with the embedded SmolLM2 model: the grammar makes the answer valid."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import TauRunner


def test_embedded_model_answers_a_nested_model(tau: TauRunner, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    (work / "trip.py").write_text(
        "from pydantic import BaseModel\n"
        "class City(BaseModel):\n"
        "    name: str\n"
        "    country: str\n"
        "class Trip(BaseModel):\n"
        "    title: str\n"
        "    days: int\n"
        "    cities: list[City]\n"
    )
    # No --model and no key: the embedded model, in native mode (a grammar from the schema).
    done = tau(
        "--output-schema", "trip:Trip", "--max-tokens", "160", "Plan a short trip.", timeout=300
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1, done.stdout
    data = json.loads(lines[0])
    assert set(data) == {"title", "days", "cities"}
    assert isinstance(data["days"], int) and isinstance(data["title"], str)
    for city in data["cities"]:
        assert set(city) == {"name", "country"}
