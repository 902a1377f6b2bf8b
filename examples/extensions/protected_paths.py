"""Refuse writes and edits to files that must not change: `.env`, anything under `.git/`,
and `*.pem` keys. Reads stay allowed."""

from pathlib import PurePath

from tau.cli.extensions import Block, ExtensionAPI, ToolCallEvent

PROTECTED_NAMES = {".env", ".env.local"}
PROTECTED_DIRS = {".git", "node_modules"}
PROTECTED_SUFFIXES = {".pem", ".key"}


def is_protected(path: str) -> bool:
    parts = PurePath(path.removeprefix("@")).parts
    name = parts[-1] if parts else ""
    return (
        name in PROTECTED_NAMES
        or any(part in PROTECTED_DIRS for part in parts)
        or PurePath(name).suffix in PROTECTED_SUFFIXES
    )


def setup(tau: ExtensionAPI) -> None:
    @tau.on("tool_call")
    def protect(event: ToolCallEvent) -> Block | None:
        if event.tool_name not in ("write", "edit"):
            return None
        path = str(event.input.get("path", ""))
        if is_protected(path):
            return Block(f"{path} is protected: it must not be changed.")
        return None
