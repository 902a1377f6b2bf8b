"""``--output-schema``: the run ends on a validated value, printed as JSON on stdout.

``--output-schema schema.json`` takes a JSON Schema file; ``--output-schema module:Model`` a
pydantic model, imported from the working directory or the installed packages (``a.b:C.D``
reaches a nested class). A path that names an existing file is always read as a schema file.

In print mode stdout gets the validated JSON and nothing else: the answer is not streamed,
tool activity and notices go to stderr. In JSON mode (``--json``) the output is on the
``agent_end`` event. A run that ends without a valid output fails (exit 1) with the reason.
"""

from __future__ import annotations

import importlib
import json
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tau.cli.errors import UsageError

if TYPE_CHECKING:
    from tau.ai.structured import OutputSpec

__all__ = ["MAX_SCHEMA_BYTES", "dump_output", "load_output_type"]

MAX_SCHEMA_BYTES = 1024 * 1024
"""A schema file larger than this is refused (no model's prompt holds it)."""

_REFERENCE = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


def load_output_type(value: str) -> OutputSpec[Any]:
    """The output type ``--output-schema value`` names, as an :class:`~tau.ai.OutputSpec` of a
    JSON Schema dict or a pydantic model class (built here, so a bad schema fails here). A
    schema without a ``title`` is named after its file (``city.json``: ``city``), so that
    messages such as ``No valid output (city) …`` say which output. Raises
    :class:`UsageError` with the reason."""
    from tau.ai.structured import OutputSpec

    path = Path(value).expanduser()
    name: str | None = None
    if path.is_file():
        output_type: Any = _read_schema(path)
        title = output_type.get("title")
        if not (isinstance(title, str) and title.strip()):
            name = path.stem
    elif _REFERENCE.match(value):
        output_type = _import_model(value)
    elif path.exists():
        raise UsageError(f"--output-schema {value}: not a file")
    else:
        raise UsageError(
            f"--output-schema {value}: no such file (give a JSON Schema file or module:Model)"
        )
    try:
        return OutputSpec(output_type, name=name)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"--output-schema {value}: {exc}") from None


def _read_schema(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as file:
            data = file.read(MAX_SCHEMA_BYTES + 1)
    except OSError as exc:
        raise UsageError(f"--output-schema {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_SCHEMA_BYTES:
        raise UsageError(f"--output-schema {path}: over {MAX_SCHEMA_BYTES // 1024} KB: too large")
    try:
        schema = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise UsageError(f"--output-schema {path}: not UTF-8 text") from None
    except RecursionError:
        raise UsageError(f"--output-schema {path}: nested too deeply") from None
    except ValueError as exc:
        raise UsageError(f"--output-schema {path}: not valid JSON: {exc}") from None
    if not isinstance(schema, dict):
        raise UsageError(
            f"--output-schema {path}: a JSON Schema must be an object, not {type(schema).__name__}"
        )
    return schema


def _import_model(reference: str) -> Any:
    module_name, _, attribute = reference.partition(":")
    # As with `python -m`, the working directory's modules come first.
    cwd = str(Path.cwd())
    added = cwd not in sys.path
    if added:
        sys.path.insert(0, cwd)
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise UsageError(f"--output-schema {reference}: no module named {exc.name!r}") from None
    except Exception as exc:
        text = str(exc).strip() or type(exc).__name__
        raise UsageError(
            f"--output-schema {reference}: importing {module_name} failed: "
            f"{type(exc).__name__}: {text.splitlines()[0]}"
        ) from None
    finally:
        if added:
            sys.path.remove(cwd)
    target: Any = module
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise UsageError(f"--output-schema {reference}: {module_name} has no {attribute!r}")
        target = getattr(target, part)
    from pydantic import BaseModel

    if not (isinstance(target, type) and issubclass(target, BaseModel)):
        kind = type(target).__name__ if not isinstance(target, type) else "class"
        raise UsageError(
            f"--output-schema {reference}: not a pydantic model (a {kind}); "
            "give a pydantic BaseModel subclass or a JSON Schema file"
        )
    return target


def dump_output(output: Any) -> str:
    """The output as one line of JSON (a pydantic model by its fields' aliases, as its schema
    names them)."""
    from pydantic_core import to_json

    return to_json(output, by_alias=True).decode("utf-8")
