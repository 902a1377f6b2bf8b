"""Run control in the ``tau`` command: ``--max-turns``, ``--max-cost`` and fallback models.

``--fallback provider/id`` (repeatable) names the models tried, in order, when the model fails
before it has answered (unreachable, timed out, rate-limited or overloaded, after tau's own
retries). Without the flag, the ``"fallback"`` list of ``$TAU_HOME/config.json`` is used::

    {"model": "anthropic/claude-sonnet-4-5", "fallback": ["openai/gpt-5-mini"]}

A model named by a flag must exist and have its key (or tau stops, as for ``--model``); one
from the config file that cannot be used is skipped with a warning, so a stale setting never
stops tau from starting. The limits apply to each run (each prompt): when one is reached the
run ends with ``Usage limit reached: …`` and exit status 1.

The flags are declared in :mod:`tau.cli.flags`; this module turns their values into limits
and models.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tau.agent import UsageLimits
    from tau.ai import Model

__all__ = ["fallback_models", "usage_limits"]

Warn = Callable[[str], None]


def usage_limits(args: argparse.Namespace) -> UsageLimits | None:
    """The limits the flags ask for, or None."""
    if args.max_turns is None and args.max_cost is None:
        return None
    from tau.agent import UsageLimits

    return UsageLimits(max_turns=args.max_turns, max_cost=args.max_cost)


def _warn_to_stderr(line: str) -> None:
    print(f"tau: warning: {line}", file=sys.stderr, flush=True)


def fallback_models(
    args: argparse.Namespace, primary: Model, warn: Warn = _warn_to_stderr
) -> list[Model]:
    """The fallback models: the ``--fallback`` flags, else the config file's list.

    A model equal to ``primary`` is left out: trying it again is what retries already do.
    """
    from tau.ai import models_are_equal
    from tau.cli.config import config_path, load_config
    from tau.cli.errors import UsageError
    from tau.cli.models import check_credentials, parse_model

    chosen: list[Model] = []
    if args.fallback is not None:
        for spec in args.fallback:
            model = parse_model(spec)
            check_credentials(model)
            chosen.append(model)
    else:
        for spec in _configured(load_config().get("fallback"), str(config_path()), warn):
            try:
                model = parse_model(spec)
                check_credentials(model)
            except (UsageError, ValueError, LookupError) as exc:  # unknown, no key, file gone
                warn(f"fallback {spec!r} in {config_path()} skipped: {exc}")
                continue
            chosen.append(model)
    return [model for model in chosen if not models_are_equal(model, primary)]


def _configured(value: Any, where: str, warn: Warn) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        warn(f'"fallback" in {where} must be a list of "provider/id" strings; ignored')
        return []
    return value
