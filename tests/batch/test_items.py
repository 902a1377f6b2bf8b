"""Reading the input: dicts, BatchItems and JSONL files; every problem reported before a run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tau.ai import AssistantMessage, Context, UserMessage, dump_context
from tau.batch import BatchInputError, BatchItem, load_items, run_batch

from .agents import echo_agent


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_items_from_dicts_batch_items_and_contexts() -> None:
    context = Context(messages=[UserMessage("hi")], system_prompt="Be brief.")
    items, source = load_items(
        [
            {"id": "a", "prompt": "one", "expected": "ignored"},
            {"id": 7, "prompt": "seven"},
            {"id": "c", "context": dump_context(context)},
            BatchItem("d", context=context),
        ]
    )
    assert source == "inputs"
    assert [(i.id, i.prompt) for i in items[:2]] == [("a", "one"), ("7", "seven")]
    assert items[2].context == context and items[3].context is context


def test_malformed_lines_are_reported_with_their_line_numbers(tmp_path: Path) -> None:
    assistant = AssistantMessage(content=[], api="faux", provider="faux", model="m")
    ends_with_answer = dump_context(Context(messages=[UserMessage("q"), assistant]))
    path = write_lines(
        tmp_path / "in.jsonl",
        [
            '{"id": "ok1", "prompt": "fine"}',
            '{"id": "x", "prompt": ',  # 2: not JSON
            "",  # blank lines are skipped
            '["a", "list"]',  # 4
            '{"prompt": "no id"}',  # 5
            '{"id": "y"}',  # 6
            '{"id": "z", "prompt": 3}',  # 7
            '{"id": "w", "context": {"messages": [{"role": "robot"}]}}',  # 8
            json.dumps({"id": "v", "context": ends_with_answer}),  # 9
            '{"id": "ok1", "prompt": "again"}',  # 10: duplicate
            '{"id": "", "prompt": "empty id"}',  # 11
            '{"id": "u", "prompt": "  "}',  # 12: a provider would refuse it, once per item
        ],
    )
    with pytest.raises(BatchInputError) as caught:
        load_items(path)
    where = [w for w, _ in caught.value.problems]
    assert where == [f"line {n}" for n in (2, 4, 5, 6, 7, 8, 9, 10, 11, 12)]
    text = str(caught.value)
    assert text.startswith(f"{path}: 10 problems, nothing was run:")
    assert "line 2: not valid JSON" in text
    assert "line 4: an item must be a JSON object, not a list" in text
    assert 'line 5: no "id"' in text
    assert 'line 6: item \'y\': give exactly one of "prompt" and "context"' in text
    assert "line 7: item 'z': \"prompt\" must be a string, not a number" in text
    assert "line 8: item 'w': context.messages[0]" in text
    assert "line 9: item 'v': the context must end with a user message or a tool result" in text
    assert "line 10: duplicate id 'ok1' (first at line 1)" in text
    assert 'line 11: "id" must be a non-empty string' in text
    assert "line 12: item 'u': \"prompt\" is empty" in text


def test_duplicate_ids_stop_the_batch_before_anything_runs(tmp_path: Path) -> None:
    calls = []

    def make_agent() -> object:
        calls.append(1)
        return echo_agent()

    items = [{"id": "a", "prompt": "1"}, {"id": "b", "prompt": "2"}, {"id": "a", "prompt": "3"}]
    with pytest.raises(BatchInputError, match=r"item 3: duplicate id 'a' \(first at item 1\)"):
        run_batch(items, make_agent, output=tmp_path / "out.jsonl")  # type: ignore[arg-type]
    assert calls == []
    assert not (tmp_path / "out.jsonl").exists()


def test_many_problems_are_counted_after_the_first_twenty(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "in.jsonl", ["nope"] * 25)
    with pytest.raises(BatchInputError) as caught:
        load_items(path)
    assert len(caught.value.problems) == 25
    assert str(caught.value).endswith("… and 5 more")


def test_a_missing_input_file_is_one_clear_problem(tmp_path: Path) -> None:
    with pytest.raises(BatchInputError, match="file: cannot read it: No such file"):
        load_items(tmp_path / "absent.jsonl")


def test_one_mapping_is_not_an_iterable_of_items() -> None:
    with pytest.raises(TypeError, match="not one mapping"):
        load_items({"id": "a", "prompt": "b"})  # type: ignore[arg-type]


def test_a_batch_item_needs_exactly_one_input() -> None:
    with pytest.raises(ValueError, match="exactly one of prompt and context"):
        BatchItem("a")
