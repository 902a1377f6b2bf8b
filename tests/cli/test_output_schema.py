"""``tau --output-schema``: only the validated JSON on stdout, from a schema file or a model."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.cli.conftest import TauRunner

CITY_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "population": {"type": "integer"}},
    "required": ["name", "population"],
}
PARIS = {"name": "Paris", "population": 2100000}

Script = Callable[[list[dict[str, Any]]], str]


def _output(arguments: dict[str, Any]) -> dict[str, Any]:
    return {"tool_calls": [{"name": "final_result", "arguments": arguments}]}


def _work(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return work


def test_schema_file_prints_only_the_validated_json(
    tau: TauRunner, script: Script, tmp_path: Path
) -> None:
    (_work(tmp_path) / "city.json").write_text(json.dumps(CITY_SCHEMA))
    model = script([{"text": "Let me think."}, _output(PARIS)])
    done = tau("--model", model, "--output-schema", "city.json", "Biggest city in France?")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == PARIS
    assert done.stdout.count("\n") == 1  # one line: the JSON, nothing else
    assert "Let me think." not in done.stdout


def test_module_model_retries_and_prints_by_alias(
    tau: TauRunner, script: Script, tmp_path: Path
) -> None:
    (_work(tmp_path) / "geo.py").write_text(
        "from pydantic import BaseModel, Field\n"
        "class City(BaseModel):\n"
        "    name: str = Field(alias='cityName')\n"
        "    population: int\n"
    )
    model = script(
        [
            _output({"cityName": "Paris", "population": "many"}),
            _output({**PARIS, "cityName": "Paris"}),
        ]
    )
    done = tau("--model", model, "--output-schema", "geo:City", "Biggest city?")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"cityName": "Paris", "population": 2100000}
    assert "valid integer" in done.stderr  # the rejected call's result, shown as activity


def test_json_mode_puts_the_output_on_agent_end(
    tau: TauRunner, script: Script, tmp_path: Path
) -> None:
    (_work(tmp_path) / "city.json").write_text(json.dumps(CITY_SCHEMA))
    done = tau("--json", "--model", script([_output(PARIS)]), "--output-schema", "city.json", "go")
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[-1]["type"] == "agent_end" and events[-1]["output"] == PARIS
    assert any(e["type"] == "output_update" for e in events)


def test_no_valid_output_fails_with_the_reason(
    tau: TauRunner, script: Script, tmp_path: Path
) -> None:
    (_work(tmp_path) / "city.json").write_text(json.dumps(CITY_SCHEMA))
    model = script([_output({"name": "Paris"}), _output({"name": "Paris"})])
    done = tau("--model", model, "--output-schema", "city.json", "go")
    assert done.returncode == 1
    assert done.stdout == ""
    assert "tau: error: No valid output (city) after 2 attempts" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_schema_file_names_the_output_by_its_title_else_by_its_stem(tmp_path: Path) -> None:
    import pickle

    from tau.cli.output_schema import load_output_type

    (tmp_path / "my city.json").write_text(json.dumps(CITY_SCHEMA))
    (tmp_path / "titled.json").write_text(json.dumps({**CITY_SCHEMA, "title": "Town"}))
    (tmp_path / "odd.json").write_text(json.dumps({**CITY_SCHEMA, "title": " "}))
    assert load_output_type(str(tmp_path / "my city.json")).name == "my_city"
    assert load_output_type(str(tmp_path / "titled.json")).name == "Town"
    assert load_output_type(str(tmp_path / "odd.json")).name == "odd"
    # tau batch --ray sends the spec to its workers: it survives pickling, name included.
    spec = pickle.loads(pickle.dumps(load_output_type(str(tmp_path / "my city.json"))))
    assert spec.name == "my_city" and spec.validate_object(PARIS) == PARIS
