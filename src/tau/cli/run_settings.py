"""The :class:`~tau.cli.app.Settings` of a run, from the parsed command line: the model (the
flag, the resumed session's, or the default), the tools, the session, the limits and options.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any, cast

from tau.cli.argtypes import THINKING_LEVELS
from tau.cli.errors import UsageError
from tau.cli.flags import DEFAULT_TOOL_NAMES, option_pair, tool_names
from tau.cli.input_text import clean_text
from tau.cli.run_control import fallback_models, usage_limits

if TYPE_CHECKING:
    from collections.abc import Callable

    from tau.ai import Model
    from tau.ai import Settings as ModelSettings
    from tau.cli.app import Settings


def _warn(text: str) -> None:
    sys.stderr.write(f"tau: warning: {text}\n")


def _or_an_extensions_model(args: argparse.Namespace, find: Callable[[], Model]) -> Model:
    """``find()``; when the model it names is unknown, it may be one an extension adds: the
    extensions are loaded first (as the run loads them later) and ``find`` tries again."""
    try:
        return find()
    except UsageError:
        if getattr(args, "no_extensions", False):
            raise
        from tau.cli.extensions import preload

        if not preload(getattr(args, "extension", ())).models:
            raise
        return find()


def _session_model(args: argparse.Namespace, entry: dict[str, Any] | None) -> Model | None:
    """The resumed session's model, if it can still be used here (else a warning)."""
    from tau.cli.models import ModelChoiceError, check_credentials, model_from_entry

    if entry is None:
        return None
    try:
        model = _or_an_extensions_model(args, lambda: model_from_entry(entry))
        check_credentials(model)
    except (UsageError, ModelChoiceError) as exc:
        name = f"{entry.get('provider')}/{entry.get('modelId')}"
        _warn(f"the session's model {name} cannot be used here ({exc}); using the default")
        return None
    return model


def model_settings(args: argparse.Namespace, model: Model) -> ModelSettings:
    """The model call's settings the flags set (``--max-tokens``, ``--timeout``,
    ``--temperature``, ``-o KEY=VALUE`` with any :class:`tau.ai.Settings` key, such as
    ``-o anthropic_effort=max``), each key checked against what ``model``'s provider takes (an
    unknown one is a :class:`UsageError` naming the close matches). The one place the CLI
    builds them: every command that runs the model takes them from here."""
    options: dict[str, Any] = {}
    for key, flag in (("max_tokens", "max_tokens"), ("timeout", "timeout")):
        if getattr(args, flag, None) is not None:
            options[key] = getattr(args, flag)
    if args.temperature is not None:
        options["temperature"] = args.temperature
    for text in args.options:
        key, value = option_pair(text)
        options[key] = value
    if args.options or args.temperature is not None:
        _check_option_keys(model, options)
    return cast("ModelSettings", options)


def _check_option_keys(model: Model, options: dict[str, Any]) -> None:
    import difflib

    from tau.ai.adapters import get_api_provider

    provider = get_api_provider(model.api)
    # No adapter (the run will say so), or one registered without its options type: any key.
    known = provider.simple_option_keys if provider is not None else None
    if known is None:
        return
    for key in options:
        if key not in known:
            close = difflib.get_close_matches(key, sorted(known), n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise UsageError(f"-o {key}: {model.api} takes no option {key!r}{hint}")


def settings_from_args(args: argparse.Namespace) -> Settings:
    """The settings the flags in ``args`` ask for (raises UsageError for bad ones)."""
    from pathlib import Path

    from tau.ai.adapters import LOCAL_PROVIDER
    from tau.cli.app import Settings
    from tau.cli.compaction import load_settings
    from tau.cli.config import load_config
    from tau.cli.extensions import DEFAULT_TIMEOUT, ExtensionOptions
    from tau.cli.models import check_credentials, choose_model
    from tau.cli.packages import disabled_resources, package_roots
    from tau.cli.pi_habits import use_api_key
    from tau.cli.resources import ResourceOptions
    from tau.cli.session import Session
    from tau.cli.sessions_cli import session_choice
    from tau.cli.tools import Workspace

    output_type = None
    if args.output_schema is not None:
        from tau.cli.output_schema import load_output_type

        output_type = load_output_type(args.output_schema)
    cwd = Path.cwd().resolve()
    session_path, session_dir = session_choice(args, cwd)
    session = Session.open(session_path) if session_path is not None else None
    model = None
    if args.model is None and args.base_url is None and session is not None:
        model = _session_model(args, session.model_entry)
    if model is None:
        model = _or_an_extensions_model(
            args, lambda: choose_model(args.model, base_url=args.base_url)
        )
        use_api_key(getattr(args, "api_key", None), model)
        check_credentials(model)
    thinking = args.thinking
    if thinking is None and session is not None and session.thinking_level in THINKING_LEVELS:
        thinking = session.thinking_level
    # A local model gets no tools it was not given: the embedded 135M one would call the coding
    # tools at random instead of answering.
    default = () if model.provider == LOCAL_PROVIDER else DEFAULT_TOOL_NAMES
    names = tool_names(args.tools, default)
    workspace = Workspace(cwd, tuple(Path(p).expanduser().resolve() for p in args.allow_path))
    settings = model_settings(args, model)
    disabled = disabled_resources()
    return Settings(
        model=model,
        tool_names=names,
        workspace=workspace,
        thinking=thinking or "off",
        system=_text_or_file(args.system, "--system"),
        session=session,
        session_dir=session_dir,
        yes=args.yes,
        model_settings=settings,
        mcp_file=None if args.mcp is None else Path(args.mcp),
        usage_limits=usage_limits(args),
        fallback_models=fallback_models(args, model),
        compaction=load_settings(load_config().get("compaction"), _warn),
        output_type=output_type,
        cycle_models=tuple(
            m.strip() for m in (getattr(args, "models", None) or "").split(",") if m.strip()
        ),
        extensions=ExtensionOptions(
            enabled=not getattr(args, "no_extensions", False),
            paths=tuple(getattr(args, "extension", ())),
            flags=tuple(getattr(args, "extension_flags", ())),
            timeout=_positive(load_config().get("extensionTimeout"), DEFAULT_TIMEOUT),
            disabled=frozenset(n[10:] for n in disabled if n.startswith("extension:")),
        ),
        resources=ResourceOptions(
            skills=not getattr(args, "no_skills", False),
            templates=not getattr(args, "no_templates", False),
            extra_roots=package_roots(disabled),
            disabled=disabled,
            append_system=_text_or_file(
                getattr(args, "append_system", None), "--append-system-prompt"
            ),
        ),
    )


def _positive(value: Any, default: float) -> float:
    """A positive number from config.json, else ``default`` (with a warning when malformed)."""
    if value is None:
        return default
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 < value < 1e9:
        return float(value)
    _warn(f"config.json: extensionTimeout must be a positive number of seconds, not {value!r}")
    return default


def _text_or_file(value: str | None, flag: str) -> str | None:
    """A flag's text, or the text of the file it names (as pi reads ``--system-prompt``)."""
    from pathlib import Path

    if value is None:
        return None
    path = Path(value).expanduser()
    try:
        if "\n" not in value and len(value) < 4096 and path.is_file():
            value = path.read_text(encoding="utf-8", errors="replace")
    except (OSError, ValueError):
        pass
    return clean_text(value, flag)
