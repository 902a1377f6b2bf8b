"""``tau install`` / ``tau list`` / ``tau remove``: a local folder and a local git repository,
whose skills, templates and extensions the next session uses."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.cli.test_resources import skill


def make_package(root: Path) -> Path:
    skill(root / "skills", "pkg-skill", "A skill from a package.")
    (root / "prompts").mkdir(parents=True)
    (root / "prompts" / "pkg-hello.md").write_text("---\ndescription: Hello\n---\nHello $1!\n")
    (root / "extensions").mkdir()
    (root / "extensions" / "pkg_ext.py").write_text(
        "def setup(tau):\n"
        "    tau.register_command('pkg-ping', 'ping', lambda api, arg: api.notify('pong'))\n"
    )
    return root


def test_install_a_local_folder(tau, script, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    package = make_package(tmp_path / "my-pack")
    done = tau("install", str(package))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        f"installed my-pack (path: {package}): 1 extensions, 1 skills, 1 prompts"
    )
    listed = json.loads(tau("list", "--json").stdout)
    assert [(p["name"], p["kind"], p["holds"]) for p in listed] == [
        ("my-pack", "path", {"extensions": 1, "skills": 1, "prompts": 1})
    ]
    echo = script([{"echo": True}])
    done = tau("--model", echo, "--no-session", "/pkg-hello world")
    assert done.stdout.strip() == "Hello world!"
    done = tau("--model", echo, "--no-session", "/pkg-ping")
    assert "tau: pong" in done.stderr
    done = tau("--model", echo, "--no-session", "/skill:pkg-skill")
    assert "A skill" not in done.stdout and "Do it." in done.stdout
    # Installed twice under one name: refused, in one line.
    again = tau("install", str(package))
    assert again.returncode == 1
    assert "a package named 'my-pack' is installed (tau remove my-pack first)" in again.stderr
    assert tau("remove", "my-pack").stdout.strip() == "removed my-pack"
    assert package.is_dir()  # a local folder is used in place, never deleted
    assert tau("--model", echo, "--no-session", "/pkg-hello world").stdout.strip() == (
        "/pkg-hello world"
    )
    assert "no packages installed" in tau("list").stdout


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_install_a_local_git_repository(tau, script, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = make_package(tmp_path / "repo")
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
        "HOME": str(tmp_path),
        "PATH": "/usr/bin:/bin",
    }
    for argv in (["init", "-q"], ["add", "."], ["commit", "-qm", "package"]):
        subprocess.run(["git", *argv], cwd=repo, env=env, check=True)
    done = tau("install", f"git+file://{repo}", "--name", "team")
    assert done.returncode == 0, done.stderr
    clone = tmp_path / "tau-home" / "packages" / "team"
    assert (clone / "prompts" / "pkg-hello.md").is_file()
    echo = script([{"echo": True}])
    assert tau("--model", echo, "--no-session", "/pkg-hello git").stdout.strip() == "Hello git!"
    assert tau("remove", "team").returncode == 0
    assert not clone.exists()


def test_bad_sources_fail_in_one_line(tau, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    empty = tmp_path / "empty"
    empty.mkdir()
    done = tau("install", str(empty))
    assert done.returncode == 1
    assert done.stderr.strip().endswith("holds none of extensions/, skills/, prompts/")
    done = tau("install", str(tmp_path / "missing"))
    assert done.returncode == 1 and "no such folder" in done.stderr
    done = tau("install", f"git+file://{tmp_path}/nothing.git")
    assert done.returncode == 1 and "git clone" in done.stderr
    assert not (tmp_path / "tau-home" / "packages" / "nothing").exists()
    done = tau("remove", "ghost")
    assert done.returncode == 1 and "no package named 'ghost'" in done.stderr
    done = tau("install", str(empty), "--name", "../escape")
    assert done.returncode == 2 and "is not a package name" in done.stderr


def test_config_turns_resources_off_and_on(tau, script, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    work = tmp_path / "work"
    skill(work / ".tau" / "skills", "lint", "Lint things.")
    (work / ".tau" / "prompts").mkdir(parents=True)
    (work / ".tau" / "prompts" / "hello.md").write_text("Hello $1!\n")
    make_package(tmp_path / "pack")
    assert tau("install", str(tmp_path / "pack")).returncode == 0
    listed = tau("config").stdout
    assert "[on ] skill:lint" in listed and "[on ] template:hello" in listed
    assert "[on ] extension:pkg_ext" in listed and "[on ] package:pack" in listed
    assert tau("config", "disable", "template:hello").returncode == 0
    done = tau("config", "disable", "package:pack")
    assert "[off] template:hello" in done.stdout and "[off] package:pack" in done.stdout
    echo = script([{"echo": True}])
    assert tau("--model", echo, "--no-session", "/hello x").stdout.strip() == "/hello x"
    assert tau("--model", echo, "--no-session", "/pkg-hello x").stdout.strip() == "/pkg-hello x"
    assert tau("config", "enable", "template:hello").returncode == 0
    assert tau("--model", echo, "--no-session", "/hello x").stdout.strip() == "Hello x!"
    bad = tau("config", "disable", "thing")
    assert bad.returncode == 2 and "give KIND:NAME" in bad.stderr
