"""Copying text to the system clipboard: ``pbcopy``, ``wl-copy``, ``xclip`` or ``xsel``, else the
terminal's own clipboard through an OSC 52 escape sequence, else a clear "not available"."""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from typing import TextIO

_TIMEOUT = 5.0


def _tools(env: Mapping[str, str]) -> list[list[str]]:
    tools = [["pbcopy"]]
    if env.get("WAYLAND_DISPLAY"):
        tools.append(["wl-copy"])
    if env.get("DISPLAY"):
        tools += [["xclip", "-selection", "clipboard"], ["xsel", "--clipboard", "--input"]]
    return tools


def _osc52(text: str) -> str:
    return f"\033]52;c;{base64.b64encode(text.encode('utf-8')).decode('ascii')}\a"


def copy_to_clipboard(
    text: str, env: Mapping[str, str] | None = None, terminal: TextIO | None = None
) -> str:
    """Copy ``text``; returns what happened, as a line for the user.

    ``terminal`` (default: the real stdout) gets the OSC 52 sequence when no tool is found and
    it is a terminal.
    """
    env = os.environ if env is None else env
    for command in _tools(env):
        path = shutil.which(command[0], path=env.get("PATH"))
        if path is None:
            continue
        try:
            # No pipes but stdin: xclip and wl-copy stay behind to hold the selection, and a
            # pipe they inherited would keep this call waiting for them.
            done = subprocess.run(
                [path, *command[1:]],
                input=text.encode("utf-8"),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=_TIMEOUT,
                env=dict(env),
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0:
            return f"copied {len(text)} characters to the clipboard ({command[0]})"
    out = terminal if terminal is not None else sys.__stdout__
    if out is not None and out.isatty():
        out.write(_osc52(text))
        out.flush()
        return f"copied {len(text)} characters through the terminal (OSC 52)"
    return "no clipboard available: install wl-copy, xclip or xsel, or use a terminal"
