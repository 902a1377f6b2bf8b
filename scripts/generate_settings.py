"""Write ``src/tau/ai/core/settings_types.py`` (the typed settings of every built-in provider)
and ``src/tau/ai/lookup/provider_options.py`` (the union of their options).

A provider declares each of its own options once, in its ``options.py``; its settings keys
are those options under its record's prefix (see :func:`tau.ai.lookup.provider.own_setting_key`).
Type checkers need them written out, so this script writes them from the records:

    python scripts/generate_settings.py          # rewrite the file
    python scripts/generate_settings.py --check  # exit 1 if it is stale (the tests run this)
"""

from __future__ import annotations

import argparse
import builtins
import json
import re
import sys
from pathlib import Path
from typing import Any, ForwardRef

SRC = Path(__file__).resolve().parents[1] / "src" / "tau" / "ai"
TARGET = SRC / "core" / "settings_types.py"
UNION = SRC / "lookup" / "provider_options.py"

_STRINGS = re.compile(r"'[^']*'|\"[^\"]*\"")
_NAMES = re.compile(r"\b[A-Za-z_]\w*\b")


def _class_name(prefix: str) -> str:
    special = {"openai": "OpenAI", "llama_cpp": "LlamaCpp"}
    stem = prefix.rstrip("_")
    return special.get(stem, "".join(part.title() for part in stem.split("_"))) + "Settings"


def _annotation(ref: Any, imports: dict[str, str]) -> str:
    """The annotation's source text, noting where each name in it comes from."""
    if not isinstance(ref, ForwardRef):
        raise TypeError(f"expected a string annotation (PEP 563), got {ref!r}")
    text = ref.__forward_arg__
    module = sys.modules[ref.__forward_module__ or "builtins"]
    for name in _NAMES.findall(_STRINGS.sub("", text)):
        if hasattr(builtins, name) and name != "Literal":
            continue
        if name == "Literal":
            continue  # imported at the top of the file
        value = getattr(module, name, None)
        if value is None:
            raise LookupError(f"{name!r} of {text!r} is not found in {module.__name__}")
        imports[name] = _home(name, value, module.__name__)
    return text


def _home(name: str, value: Any, found_in: str) -> str:
    """The module that defines ``value`` (the data model's first: a type alias has no
    ``__module__`` of its own)."""
    for candidate in ("tau.ai.core.types", "tau.ai.core.options"):
        if vars(sys.modules[candidate]).get(name) is value:
            return candidate
    home = getattr(value, "__module__", None)
    if home in sys.modules and vars(sys.modules[home]).get(name) is value:
        return str(home)
    return found_in


def render() -> str:
    """The module's text, from the built-in records."""
    from tau.ai.lookup.provider import own_setting_key
    from tau.ai.lookup.registry import builtin_records

    groups: dict[str, dict[str, str]] = {}
    apis: dict[str, list[str]] = {}
    imports: dict[str, str] = {}
    for record in builtin_records():
        annotations = record.options.__annotations__
        own = groups.setdefault(record.prefix, {})
        apis.setdefault(record.prefix, []).append(record.api)
        for option in sorted(record.own_keys):
            key = own_setting_key(record.prefix, option)
            text = _annotation(annotations[option], imports)
            if own.get(key, text) != text:
                raise TypeError(f"{key}: {own[key]} in one record, {text} in another")
            own[key] = text
    lines = [
        '"""The typed settings of every built-in provider: GENERATED from the provider records by',
        "``scripts/generate_settings.py`` (do not edit; a test fails when this file is stale).",
        "",
        "Each provider's own options are its settings under its prefix; :class:`Settings` is",
        "their union with :class:`CommonSettings`. See :mod:`tau.ai.core.settings`.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import TYPE_CHECKING, Literal, TypedDict",
        "",
        "from tau.ai.core.options import SimpleStreamOptions, ToolChoiceOption",
        "",
        "if TYPE_CHECKING:",
    ]
    by_module: dict[str, list[str]] = {}
    for name, module in imports.items():
        by_module.setdefault(module, []).append(name)
    for module in sorted(by_module):
        lines.append(f"    from {module} import {', '.join(sorted(by_module[module]))}")
    names = ["CommonSettings", "Settings"]
    lines += [
        "",
        "",
        "class CommonSettings(SimpleStreamOptions, ToolChoiceOption, total=False):",
        '    """The keys every provider reads (one that a provider has no use for is ignored)."""',
    ]
    bases = ["CommonSettings"]
    for prefix in sorted(groups):
        if not groups[prefix]:
            continue
        cls = _class_name(prefix)
        bases.append(cls)
        names.append(cls)
        served = ", ".join(f"``{api}``" for api in apis[prefix])
        lines += [
            "",
            "",
            f"class {cls}(TypedDict, total=False):",
            f'    """The own settings of {served} (prefix ``{prefix}``)."""',
            "",
        ]
        lines += [f"    {key}: {text}" for key, text in sorted(groups[prefix].items())]
    lines += [
        "",
        "",
        f"class Settings({', '.join(bases)}, total=False):",
        '    """One typed settings object for every provider: the common keys, and each',
        "    provider's own under its prefix (another provider's are ignored, so one object serves",
        '    a fallback across providers)."""',
        "",
        "",
        f"__all__ = {json.dumps(sorted(names))}",
        "",
    ]
    return _formatted("\n".join(lines), TARGET)


def _formatted(text: str, target: Path) -> str:
    # ruff's formatting, so the file is written exactly as `ruff format` keeps it.
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--stdin-filename", str(target), "-"],
        input=text,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def render_union() -> str:
    """The text of :mod:`tau.ai.lookup.provider_options`: the union of the records' options
    (of the providers that have options of their own)."""
    from tau.ai.lookup.registry import builtin_records

    types = {r.options: None for r in builtin_records() if r.own_keys}
    imports: dict[str, list[str]] = {}
    for typed in types:
        imports.setdefault(typed.__module__, []).append(typed.__name__)
    lines = [
        '"""The union of every built-in provider\'s options: GENERATED from the provider records by',
        "``scripts/generate_settings.py`` (do not edit; a test fails when this file is stale).",
        "",
        "Loaded when ``tau.ai.ProviderStreamOptions`` is first used (``tau.ai`` resolves it lazily),",
        "so ``import tau.ai`` imports no provider package.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
    ]
    for module in sorted(imports):
        lines.append(f"from {module} import {', '.join(sorted(imports[module]))}")
    bases = "".join(f"    {t.__name__},\n" for t in types)
    lines += [
        "",
        '__all__ = ["ProviderStreamOptions"]',
        "",
        "",
        f"class ProviderStreamOptions(\n{bases}    total=False,\n):",
        '    """Every option any built-in provider takes (for typing :func:`tau.ai.stream`\'s',
        "    keywords). Each provider accepts only its own; this union is what a caller that does",
        '    not know the api yet may pass."""',
        "",
    ]
    return _formatted("\n".join(lines), UNION)


def main(argv: list[str] | None = None) -> int:
    """Write the file, or with ``--check`` say whether it is up to date."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    args = parser.parse_args(argv)
    stale = []
    for target, text in ((TARGET, render()), (UNION, render_union())):
        current = target.read_text(encoding="utf-8") if target.exists() else ""
        if current == text:
            continue
        if args.check:
            stale.append(str(target))
        else:
            target.write_text(text, encoding="utf-8")
    if stale:
        print(
            f"stale: {', '.join(stale)}: run python scripts/generate_settings.py", file=sys.stderr
        )
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
