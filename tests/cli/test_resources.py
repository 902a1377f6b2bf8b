"""Skills, prompt templates and context files: where they are found, in which order, what a
conflict does, how a template expands, and what reaches the system prompt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tau.cli.prompt import build_system_prompt
from tau.cli.registry import Registry
from tau.cli.resources import (
    ResourceOptions,
    load_resources,
    read_head,
    split_args,
    substitute,
)
from tau.cli.tools import Workspace, build_tools


def skill(root: Path, name: str, description: str = "", body: str = "Do it.", **extra: str) -> Path:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    fields = {"name": name, "description": description or f"The {name} skill.", **extra}
    head = "".join(f"{k}: {v}\n" for k, v in fields.items() if v is not None)
    path = folder / "SKILL.md"
    path.write_text(f"---\n{head}---\n{body}\n")
    return path


@pytest.fixture
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A home, a TAU_HOME, and a repository with the working directory two levels down."""
    home = tmp_path / "home"
    repo = tmp_path / "repo"
    cwd = repo / "pkg" / "sub"
    cwd.mkdir(parents=True)
    (repo / ".git").mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("TAU_HOME", str(home / "tau"))
    return {"home": home, "tau": home / "tau", "repo": repo, "cwd": cwd, "above": tmp_path}


def test_skills_from_every_place_nearest_first(places: dict[str, Path]) -> None:
    cwd, repo, home = places["cwd"], places["repo"], places["home"]
    skill(cwd / ".tau" / "skills", "near")
    skill(repo / ".agents" / "skills", "repo-wide")
    skill(cwd / ".pi" / "skills", "from-pi-project")
    skill(places["tau"] / "skills", "user-tau")
    skill(home / ".agents" / "skills", "user-agents")
    skill(home / ".pi" / "agent" / "skills", "user-pi")
    # Above the repository root: not this project's.
    skill(places["above"] / ".agents" / "skills", "outside")
    # A plain .md at a root's top is a skill too; a deeper folder holds one at any depth.
    (cwd / ".tau" / "skills" / "flat.md").write_text("---\ndescription: A flat one.\n---\nx\n")
    skill(places["tau"] / "skills" / "group" / "inner", "deep")
    found = load_resources(cwd)
    names = [(s.name, s.source) for s in found.skills]
    assert names == [
        ("flat", "project"),
        ("near", "project"),
        ("repo-wide", "project"),
        ("from-pi-project", "project"),
        ("user-tau", "user"),
        ("deep", "user"),  # nearer the root first
        ("user-agents", "user"),
        ("user-pi", "pi"),
    ]
    assert found.problems == []


def test_duplicates_and_invalid_skills_are_reported_not_fatal(places: dict[str, Path]) -> None:
    cwd = places["cwd"]
    winner = skill(cwd / ".tau" / "skills", "lint", "Project lint.")
    loser = skill(places["tau"] / "skills", "lint", "User lint.")
    skill(cwd / ".tau" / "skills", "no-description", description=" ")
    (cwd / ".tau" / "skills" / "no-description" / "SKILL.md").write_text("---\nname: x\n---\n")
    skill(cwd / ".tau" / "skills", "Bad_Name")
    mismatch = cwd / ".tau" / "skills" / "folder" / "SKILL.md"
    mismatch.parent.mkdir()
    mismatch.write_text("---\nname: other\ndescription: Named unlike its folder.\n---\n")
    broken = cwd / ".tau" / "skills" / "broken" / "SKILL.md"
    broken.parent.mkdir()
    broken.write_text("---\nname: broken\ndescription: never closed\n")
    found = load_resources(cwd)
    by_name = {s.name: s for s in found.skills}
    assert by_name["lint"].path == winner
    assert by_name["lint"].description == "Project lint."
    assert "Bad_Name" in by_name and "other" in by_name  # lenient, as pi: loaded with a warning
    problems = [str(p) for p in found.problems]
    assert f"{loser}: skipped: skill 'lint' is already defined by {winner}" in problems
    assert any("no-description" in p and "no description" in p for p in problems)
    assert any("'Bad_Name' is not 1-64 lowercase" in p for p in problems)
    assert any("'other' differs from its folder 'folder'" in p for p in problems)
    assert any(str(broken) in p and "never closes" in p for p in problems)
    assert "broken" not in by_name


def test_discovery_reads_no_skill_body(places: dict[str, Path]) -> None:
    cwd = places["cwd"]
    path = skill(cwd / ".tau" / "skills", "big", body="x" * 100_000)
    # Past the front matter the file is not even text: discovery never gets there.
    with path.open("ab") as file:
        file.write(b"\xff\xfe" * 1000)
    found = load_resources(cwd)
    assert [s.name for s in found.skills] == ["big"]
    assert found.problems == []
    assert "\ufffd" in found.skills[0].body()  # read on demand, invalid bytes replaced


def test_no_skills_and_no_templates(places: dict[str, Path]) -> None:
    cwd = places["cwd"]
    skill(cwd / ".tau" / "skills", "near")
    (cwd / ".tau" / "prompts").mkdir(parents=True)
    (cwd / ".tau" / "prompts" / "review.md").write_text("Review $1\n")
    found = load_resources(cwd, ResourceOptions(skills=False, templates=False))
    assert found.skills == [] and found.templates == []
    assert found.expand("/review x") == "/review x"


@pytest.mark.parametrize(
    ("text", "args", "expected"),
    [
        ("$1 and $2", ["a", "b"], "a and b"),
        ("$1 and $3", ["a"], "a and "),  # a missing argument is empty
        ("all: $@", ["a", "b c"], "all: a b c"),
        ("all: $ARGUMENTS", ["a", "b"], "all: a b"),
        ("rest: ${@:2}", ["a", "b", "c"], "rest: b c"),
        ("two: ${@:2:2}", ["a", "b", "c", "d"], "two: b c"),
        ("zero: ${@:0}", ["a", "b"], "zero: a b"),  # bash's ${@:0} has no $0 here
        ("past: ${@:5}", ["a"], "past: "),
        ("$10", [str(n) for n in range(1, 11)], "10"),
        ("$0", ["a"], ""),
        # One pass: an argument that looks like a placeholder is sent as typed.
        ("$1 / $@", ["$2", "x"], "$2 / $2 x"),
        ("cost $5.00 and ${x}", [], "cost .00 and ${x}"),  # $5 is a placeholder, as in pi
        ("no placeholders", ["a"], "no placeholders"),
    ],
)
def test_substitute(text: str, args: list[str], expected: str) -> None:
    assert substitute(text, args) == expected


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("a b  c", ["a", "b", "c"]),
        ('Button "click handler" x', ["Button", "click handler", "x"]),
        ("x'y z'w", ["xy zw"]),  # a quote opens inside a word, as in a shell
        ('""', [""]),  # an empty quoted argument is an argument
        ('"unclosed rest', ["unclosed rest"]),
        ("", []),
        ("\ttab\tseparated ", ["tab", "separated"]),
    ],
)
def test_split_args(line: str, words: list[str]) -> None:
    assert split_args(line) == words


def test_templates_found_described_and_expanded(places: dict[str, Path]) -> None:
    cwd = places["cwd"]
    prompts = cwd / ".tau" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "component.md").write_text(
        "---\ndescription: Create a component\n---\nCreate $1 with: ${@:2}\n"
    )
    (prompts / "plain.md").write_text("\n\nFirst line is the description\nand more.\n")
    (prompts / "model.md").write_text("shadowed by the built-in /model\n")
    (prompts / "notes.txt").write_text("not a template\n")
    user = places["tau"] / "prompts"
    user.mkdir(parents=True)
    (user / "component.md").write_text("the user's, shadowed by the project's\n")
    (user / "mine.md").write_text("---\ndescription: >\n  Folded\n  text\n---\nMine: $@\n")
    (places["home"] / ".pi" / "agent" / "prompts").mkdir(parents=True)
    (places["home"] / ".pi" / "agent" / "prompts" / "pi-one.md").write_text("From pi $1\n")
    found = load_resources(cwd)
    assert [(t.name, t.description) for t in found.templates] == [
        ("component", "Create a component"),
        ("model", "shadowed by the built-in /model"),
        ("plain", "First line is the description"),
        ("mine", "Folded text"),
        ("pi-one", "From pi $1"),
    ]
    assert any("/component is already defined" in str(p) for p in found.problems)
    assert found.expand('/component Button "on click" disabled') == (
        "Create Button with: on click disabled"
    )
    assert found.expand("/mine") == "Mine: "
    assert found.expand("/unknown words") == "/unknown words"
    assert found.expand("not a command") == "not a command"
    registry: Registry[object] = Registry("slash", "/")
    found.fill(registry, reserved={"model", "help"})
    assert "model" not in registry and "component" in registry
    assert registry["component"].help == "Create a component"
    assert any("/model is already a command" in str(p) for p in found.problems)


def test_system_prompt_lists_skills_and_context(places: dict[str, Path]) -> None:
    cwd, repo = places["cwd"], places["repo"]
    shown = skill(cwd / ".tau" / "skills", "pdf", "Work with <PDF> files.", body="SECRET BODY")
    skill(cwd / ".tau" / "skills", "manual", **{"disable-model-invocation": "true"})
    places["tau"].mkdir(parents=True, exist_ok=True)
    (places["tau"] / "AGENTS.md").write_text("user-wide rules")
    (repo / "CLAUDE.md").write_text("repo rules")
    (repo / "pkg" / "AGENTS.md").write_text("package rules")
    (repo / "pkg" / "CLAUDE.md").write_text("not read: AGENTS.md comes first")
    options = ResourceOptions(append_system="APPENDED")
    found = load_resources(cwd, options)
    workspace = Workspace(cwd)
    prompt = build_system_prompt(build_tools(["read"], workspace), cwd, resources=found)
    order = [prompt.index(t) for t in ("APPENDED", "user-wide", "repo rules", "package rules")]
    assert order == sorted(order)
    assert "not read" not in prompt
    assert f"<location>{shown}</location>" in prompt
    assert "Work with &lt;PDF&gt; files." in prompt
    assert "SECRET BODY" not in prompt and "manual" not in prompt
    # Without read the model could not open a skill: none listed.
    assert "<available_skills>" not in build_system_prompt([], cwd, resources=found)
    custom = build_system_prompt([], cwd, custom="ONLY THIS", resources=found)
    assert custom.startswith("ONLY THIS\n\nAPPENDED")


def test_front_matter_subset() -> None:
    from tau.cli.resources.frontmatter import parse_fields

    lines = [
        "name: x  # a comment",
        'quoted: "a \\"b\\" c"',
        "single: 'it''s'",
        "block: |",
        "  line one",
        "  line two",
        "metadata:",
        "  author: someone",
        "plain: continues",
        "  on the next line",
    ]
    assert parse_fields(lines) == {
        "name": "x",
        "quoted": 'a "b" c',
        "single": "it's",
        "block": "line one\nline two",
        "plain": "continues on the next line",
    }


def test_read_head_without_front_matter(tmp_path: Path) -> None:
    path = tmp_path / "t.md"
    path.write_text("\n\n  Hello there\nrest\n")
    head = read_head(path, first_line=True)
    assert head.fields == {} and head.first_line == "Hello there"


# ---------------------------------------------------------------- through the command


def _project(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    (work / ".git").mkdir(parents=True)
    skill(work / ".tau" / "skills", "pdf", "Extract text from PDFs.", body="Run pdftotext FILE.")
    prompts = work / ".tau" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "review.md").write_text("---\ndescription: Review a file\n---\nReview $1 ($@)\n")
    return work


def test_print_mode_expands_templates_and_skills(tau, script, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _project(tmp_path)
    echo = script([{"echo": True}])
    done = tau("--model", echo, "--no-session", '/review app.py "with care"')
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Review app.py (app.py with care)"
    done = tau("--model", echo, "--no-session", "--no-prompt-templates", "/review app.py")
    assert done.stdout.strip() == "/review app.py"
    done = tau("--model", echo, "--no-session", "/skill:pdf now")
    assert done.stdout.startswith('<skill name="pdf" location="')
    assert "Run pdftotext FILE.\n</skill>\n\nnow" in done.stdout


def test_a_scripted_model_reads_a_skill_on_demand(tau, script, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # The skill lives in TAU_HOME, outside the working directory: its folder is opened to read.
    _project(tmp_path)
    user_skill = skill(tmp_path / "tau-home" / "skills", "deploy", body="Deploy with `make ship`.")
    model = script(
        [
            {"tool_calls": [{"name": "read", "arguments": {"path": str(user_skill)}}]},
            {"text": "Following the deploy skill."},
        ]
    )
    done = tau("--model", model, "--no-session", "--json", "deploy the app")
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    results = [e for e in events if e["type"] == "tool_execution_end"]
    assert not results[0]["isError"], results
    assert "Deploy with `make ship`." in json.dumps(results[0]["result"])


def test_problems_are_reported_once_on_stderr(tau, script, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    work = _project(tmp_path)
    (work / ".tau" / "skills" / "bad").mkdir()
    (work / ".tau" / "skills" / "bad" / "SKILL.md").write_text("---\nname: bad\n---\n")
    done = tau("--model", script([{"text": "ok"}]), "--no-session", "hi")
    assert done.returncode == 0
    warnings = [line for line in done.stderr.splitlines() if "no description" in line]
    assert len(warnings) == 1 and warnings[0].startswith("tau: warning: ")


def test_rpc_prompt_expands_a_template(tmp_path: Path) -> None:
    from tests.cli.rpc_client import RpcClient

    _project(tmp_path)
    model = tmp_path / "echo.json"
    model.write_text(json.dumps([{"echo": True}]))
    client = RpcClient(tmp_path, "--model", f"faux/{model}", "--no-session")
    try:
        assert client.call({"type": "prompt", "message": "/review x.py"})["success"]
        client.event("agent_end")
        text = client.call({"type": "get_last_assistant_text"})["data"]["text"]
        assert text == "Review x.py (x.py)"
    finally:
        client.close()
