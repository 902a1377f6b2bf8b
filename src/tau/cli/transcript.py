"""A conversation as text for people: Markdown or a self-contained HTML page, and the last
exchange shown when a session is resumed.

Every piece of the conversation is escaped in HTML (a message holding ``<script>`` shows it as
text), and the page loads nothing: no script, no remote style or font.
"""

from __future__ import annotations

import html
import json
import os
import re
import tempfile
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from tau.agent import AgentMessage
from tau.ai import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolResultMessage,
    UserMessage,
    redact_secrets,
)
from tau.cli.compaction import CompactionSummary

_PREVIEW_LINES = 12

_GENERATOR = '<meta name="generator" content="tau">'
_MARKDOWN_MARK = "# tau session "


class ExportError(Exception):
    """An export that was not written; the message says why."""


def export_conversation(
    messages: Sequence[AgentMessage], target: str | Path | None, cwd: Path, short: str, title: str
) -> Path:
    """Write ``messages`` to ``target``: Markdown for a ``.md`` name, else HTML; the default
    is ``tau-<short>.html`` in ``cwd`` (``-2``, ``-3``… when taken). Raises
    :class:`ExportError`."""
    path = Path(target).expanduser() if target else None
    if path is None:
        path = cwd / f"tau-{short}.html"
        number = 1
        while path.exists():
            number += 1
            path = cwd / f"tau-{short}-{number}.html"
    markdown = path.suffix.lower() in (".md", ".markdown")
    write_export(path, to_markdown(messages, title) if markdown else to_html(messages, title))
    return path


def write_export(path: Path, text: str) -> None:
    """Write an export to ``path``, replacing only an earlier tau export.

    An export names its file from user (or RPC client) input, and tau may run with rights
    over files that matter: a name that already holds anything else (``/etc/passwd``, a
    source file, a link to either) is refused rather than overwritten. The text goes to a
    temporary file first, so a failed write leaves the earlier export whole.
    """
    if os.path.lexists(path):
        if not path.is_file() or path.is_symlink():
            raise ExportError(f"refusing to overwrite {path}: it is not a regular file")
        try:
            with path.open("rb") as existing:
                head = existing.read(512).decode("utf-8", "replace")
        except OSError as exc:
            raise ExportError(f"cannot read {path}: {exc.strerror}") from None
        if _GENERATOR not in head and not head.startswith(_MARKDOWN_MARK):
            raise ExportError(
                f"refusing to overwrite {path}: it is not a tau export (remove it or pick "
                "another name)"
            )
    # A fresh temporary file, created exclusively (O_EXCL: never an existing file or a link
    # planted under a predictable name), then renamed over the export.
    try:
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tau-export", dir=path.parent)
    except OSError as exc:
        raise ExportError(f"cannot write {path}: {exc.strerror}") from None
    temporary = Path(name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            os.fchmod(out.fileno(), 0o666 & ~_umask())  # as an ordinary new file would be
            out.write(text)
        os.replace(temporary, path)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise ExportError(f"cannot write {path}: {exc.strerror}") from None


def _umask() -> int:
    # Read, not set and restored: os.umask() would change it for the tools' threads meanwhile.
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in content if isinstance(content, list) else ():
        if isinstance(block, TextContent):
            parts.append(block.text)
        elif isinstance(block, ImageContent):
            parts.append(f"[image {block.mime_type}]")
    return "\n".join(parts)


def _when(timestamp: int) -> str:
    if timestamp <= 0:
        return ""
    return datetime.fromtimestamp(timestamp / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _call(name: str, arguments: object) -> str:
    return f"{name}({json.dumps(arguments, ensure_ascii=False, default=str)})"


def _fence(text: str) -> str:
    # A fence longer than any run of backticks inside, so the text cannot close it.
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}\n{text}\n{ticks}"


def to_markdown(messages: Sequence[AgentMessage], title: str) -> str:
    """The conversation as Markdown."""
    out = [f"# {title}", ""]
    for message in messages:
        match message:
            case CompactionSummary():
                out += ["## Summary of the conversation before (compaction)", "", message.summary]
            case UserMessage():
                out += ["## User", "", _text(message.content)]
            case AssistantMessage():
                out += [f"## Assistant ({message.provider}/{message.model})", ""]
                for block in message.content:
                    if isinstance(block, ThinkingContent) and block.thinking:
                        out += ["> " + line for line in block.thinking.splitlines()] + [""]
                    elif isinstance(block, TextContent):
                        out += [block.text, ""]
                for call in message.tool_calls:
                    out += [f"**tool call** `{_call(call.name, call.arguments)}`", ""]
                if message.stop_reason in ("error", "aborted"):
                    out += [
                        f"*{message.stop_reason}: {redact_secrets(message.error_message or '')}*"
                    ]
            case ToolResultMessage():
                mark = " (error)" if message.is_error else ""
                out += [f"**{message.tool_name} result{mark}**", "", _fence(_text(message.content))]
            case _:
                continue
        out.append("")
    return "\n".join(out).rstrip() + "\n"


_STYLE = """
body{font:15px/1.5 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#222}
section{border-left:4px solid #ccc;padding:.3rem 1rem;margin:1rem 0}
.user{border-color:#3b82f6}.assistant{border-color:#10b981}.tool{border-color:#a3a3a3}
.summary{border-color:#f59e0b;background:#fffbeb}.error{color:#b91c1c}
h2{font-size:.85rem;text-transform:uppercase;color:#666;margin:.2rem 0}
pre{white-space:pre-wrap;word-wrap:break-word;background:#f5f5f5;padding:.5rem;margin:.3rem 0}
.text{white-space:pre-wrap}.thinking{color:#777;font-style:italic;white-space:pre-wrap}
time{color:#999;font-size:.8rem;float:right}
"""


def _section(kind: str, heading: str, body: str, timestamp: int = 0) -> str:
    when = _when(timestamp)
    stamp = f"<time>{html.escape(when)}</time>" if when else ""
    return f'<section class="{kind}">{stamp}<h2>{html.escape(heading)}</h2>{body}</section>'


def _div(css: str, text: str) -> str:
    return f'<div class="{css}">{html.escape(text)}</div>'


def to_html(messages: Sequence[AgentMessage], title: str) -> str:
    """The conversation as one self-contained HTML page."""
    parts = []
    for message in messages:
        match message:
            case CompactionSummary():
                body = _div("text", message.summary)
                parts.append(_section("summary", "compacted: summary", body, message.timestamp))
            case UserMessage():
                body = _div("text", _text(message.content))
                parts.append(_section("user", "user", body, message.timestamp))
            case AssistantMessage():
                body = ""
                for block in message.content:
                    if isinstance(block, ThinkingContent) and block.thinking:
                        body += _div("thinking", block.thinking)
                    elif isinstance(block, TextContent):
                        body += _div("text", block.text)
                for call in message.tool_calls:
                    body += f"<pre>→ {html.escape(_call(call.name, call.arguments))}</pre>"
                if message.stop_reason in ("error", "aborted"):
                    error = redact_secrets(message.error_message or "")
                    body += _div("error", f"{message.stop_reason}: {error}")
                heading = f"assistant · {message.provider}/{message.model}"
                parts.append(_section("assistant", heading, body, message.timestamp))
            case ToolResultMessage():
                text = html.escape(_text(message.content))
                error = " error" if message.is_error else ""
                body = (
                    f"<details><summary>output</summary><pre class='{error}'>{text}</pre></details>"
                )
                heading = f"{message.tool_name} result{error}"
                parts.append(_section("tool", heading, body, message.timestamp))
    escaped = html.escape(title)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"{_GENERATOR}"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escaped}</title><style>{_STYLE}</style></head>\n<body><h1>{escaped}</h1>\n"
        + "\n".join(parts)
        + "\n</body></html>\n"
    )


def _clip(text: str) -> str:
    lines = text.strip().splitlines()
    if len(lines) <= _PREVIEW_LINES:
        return "\n".join(lines)
    return "\n".join([*lines[:_PREVIEW_LINES], f"… ({len(lines) - _PREVIEW_LINES} more lines)"])


def last_answer(messages: Sequence[AgentMessage]) -> str | None:
    """The text of the newest answer that has text (what ``/copy`` copies)."""
    for message in reversed(messages):
        if isinstance(message, AssistantMessage) and message.text.strip():
            return message.text
    return None


def last_exchange(messages: Sequence[AgentMessage]) -> str | None:
    """The newest prompt and its answer, shortened, for a resumed session (None if none)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, UserMessage):
            prompt = _clip(_text(message.content))
            answer = last_answer(messages[index + 1 :])
            lines = ["> " + line for line in prompt.splitlines()] or ["> "]
            if answer is not None:
                lines.append(_clip(answer))
            return "\n".join(lines)
    return None
