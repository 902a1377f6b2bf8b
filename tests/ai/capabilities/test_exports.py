"""The utilities are public names of their face, and importing tau.ai stays light."""

from __future__ import annotations

import subprocess
import sys

import tau.ai
import tau.ai.adapters

# The utilities a user calls are on tau.ai; the ones adapters are built from on tau.ai.adapters.
UTILITIES = {
    "validate_tool_call": tau.ai,
    "validate_tool_arguments": tau.ai,
    "ToolValidationError": tau.ai,
    "is_context_overflow": tau.ai,
    "context_chars": tau.ai,
    "IncrementalJsonParser": tau.ai.adapters,
    "parse_streaming_json": tau.ai.adapters,
    "transform_messages": tau.ai.adapters,
    "MistralIdNormalizer": tau.ai.adapters,
    "normalize_id_anthropic": tau.ai.adapters,
    "normalize_id_openai_completions": tau.ai.adapters,
    "normalize_id_responses": tau.ai.adapters,
    "overflow_patterns": tau.ai.adapters,
    "sanitize_surrogates": tau.ai.adapters,
    "short_hash": tau.ai.adapters,
}


def test_utilities_are_exported() -> None:
    for name, face in UTILITIES.items():
        assert name in face.__all__, (face.__name__, name)
        assert getattr(face, name) is not None


def test_validation_libraries_load_only_when_validating() -> None:
    code = (
        "import sys, tau.ai\n"
        "assert 'pydantic' not in sys.modules and 'jsonschema_rs' not in sys.modules\n"
        "t = tau.ai.Tool('t', '', {'type': 'object', 'properties': {'a': {'type': 'integer'}}})\n"
        "assert tau.ai.validate_tool_call([t], tau.ai.ToolCall('1', 't', {'a': '2'})) == {'a': 2}\n"
        "assert 'jsonschema_rs' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
