"""Typed output: a validated Python value from any model, streamed as it forms.

:func:`complete_structured` returns a :class:`StructuredResult`; :func:`stream_structured` a
:class:`StructuredStream` whose iteration yields partial values (the two calls and their
results are on :mod:`tau.ai` too). The rest of this face is for code that drives the calls
itself, such as an agent loop: :class:`OutputSpec` is the resolved output type (schema, name,
validators, output tool, native option); :func:`resolve_mode` picks how it is asked for,
:func:`structured_request` shapes the request, :func:`read_output` reads the answer back and
:func:`output_feedback` asks again after a bad one; :class:`PartialOutput` and
:data:`NOTHING` follow an answer as it streams. Public, documented and stable.

Every name loads on first use, so importing this package (or one of its modules) loads no more
than that module needs.
"""

from typing import TYPE_CHECKING, Any

from tau.ai import _lazy

__all__ = [
    "NOTHING",
    "OUTPUT_TOOL_NAME",
    "OutputMode",
    "OutputSpec",
    "OutputValidationError",
    "PartialOutput",
    "StructuredOutputError",
    "StructuredResult",
    "StructuredStream",
    "answer_text",
    "complete_structured",
    "find_json",
    "output_call",
    "output_feedback",
    "read_output",
    "resolve_mode",
    "stream_structured",
    "structured_request",
    "supports_native_output",
    "total_usage",
]

_LAZY = {
    "NOTHING": "tau.ai.structured.extract",
    "PartialOutput": "tau.ai.structured.extract",
    "find_json": "tau.ai.structured.extract",
    "OutputMode": "tau.ai.structured.modes",
    "answer_text": "tau.ai.structured.modes",
    "output_call": "tau.ai.structured.modes",
    "output_feedback": "tau.ai.structured.modes",
    "read_output": "tau.ai.structured.modes",
    "resolve_mode": "tau.ai.structured.modes",
    "structured_request": "tau.ai.structured.modes",
    "supports_native_output": "tau.ai.structured.modes",
    "StructuredOutputError": "tau.ai.structured.result",
    "StructuredResult": "tau.ai.structured.result",
    "total_usage": "tau.ai.structured.result",
    "StructuredStream": "tau.ai.structured.run",
    "complete_structured": "tau.ai.structured.run",
    "stream_structured": "tau.ai.structured.run",
    "OUTPUT_TOOL_NAME": "tau.ai.structured.spec",
    "OutputSpec": "tau.ai.structured.spec",
    "OutputValidationError": "tau.ai.structured.spec",
}

if TYPE_CHECKING:
    from tau.ai.structured.extract import NOTHING, PartialOutput, find_json
    from tau.ai.structured.modes import (
        OutputMode,
        answer_text,
        output_call,
        output_feedback,
        read_output,
        resolve_mode,
        structured_request,
        supports_native_output,
    )
    from tau.ai.structured.result import StructuredOutputError, StructuredResult, total_usage
    from tau.ai.structured.run import StructuredStream, complete_structured, stream_structured
    from tau.ai.structured.spec import OUTPUT_TOOL_NAME, OutputSpec, OutputValidationError


def __getattr__(name: str) -> Any:
    return _lazy.resolve(__name__, globals(), name, _LAZY, {})


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
