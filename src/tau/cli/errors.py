"""The ``tau`` command's error kinds and exit statuses (a module of its own: cheap to import)."""

from __future__ import annotations

import sys

EXIT_OK = 0
EXIT_FAILURE = 1
"""The run failed (a provider error, a missing key or extra, an unreadable session)."""
EXIT_USAGE = 2
"""Bad usage: an unknown flag, model, provider or tool, or a bad flag value."""
EXIT_INTERRUPTED = 130
"""Ctrl-C (as a shell reports SIGINT)."""
EXIT_BROKEN_PIPE = 141
"""Whoever read stdout stopped reading (as a shell reports a process killed by SIGPIPE)."""


class UsageError(Exception):
    """Bad command-line input: one line on stderr, exit status 2."""


def error_line(text: str) -> None:
    """``tau: text`` on stderr: how a failure is reported."""
    # The library's advice names its option; on the command line it is a flag.
    text = text.replace("the `timeout` option", "--timeout")
    print(f"tau: {text}", file=sys.stderr)
