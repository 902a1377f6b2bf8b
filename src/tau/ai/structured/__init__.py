"""Typed output: a validated Python value from any model, streamed as it forms.

:func:`complete_structured` returns a :class:`StructuredResult`; :func:`stream_structured` a
:class:`StructuredStream` whose iteration yields partial values. :class:`OutputSpec` is the
resolved output type (schema, name, validators, output tool, native option) for code that
drives the calls itself, such as an agent loop.
"""

from tau.ai.structured.extract import NOTHING, PartialOutput, find_json
from tau.ai.structured.modes import (
    OutputMode,
    answer_text,
    output_call,
    output_feedback,
    read_output,
    resolve_mode,
    supports_native_output,
)
from tau.ai.structured.result import StructuredOutputError, StructuredResult, total_usage
from tau.ai.structured.run import StructuredStream, complete_structured, stream_structured
from tau.ai.structured.spec import OUTPUT_TOOL_NAME, OutputSpec, OutputValidationError

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
    "supports_native_output",
    "total_usage",
]
