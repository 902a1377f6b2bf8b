"""The utilities are public names of tau.ai, and importing tau.ai stays light."""

from __future__ import annotations

import subprocess
import sys

import tau.ai

UTILITIES = [
    "IncrementalJsonParser",
    "parse_streaming_json",
    "validate_tool_call",
    "validate_tool_arguments",
    "ToolValidationError",
    "transform_messages",
    "MistralIdNormalizer",
    "normalize_id_anthropic",
    "normalize_id_openai_completions",
    "normalize_id_responses",
    "is_context_overflow",
    "overflow_patterns",
    "sanitize_surrogates",
    "short_hash",
    "context_chars",
]


def test_utilities_are_exported() -> None:
    for name in UTILITIES:
        assert name in tau.ai.__all__
        assert getattr(tau.ai, name) is not None


def test_validation_libraries_load_only_when_validating() -> None:
    code = (
        "import sys, tau.ai\n"
        "assert 'pydantic' not in sys.modules and 'jsonschema_rs' not in sys.modules\n"
        "t = tau.ai.Tool('t', '', {'type': 'object', 'properties': {'a': {'type': 'integer'}}})\n"
        "assert tau.ai.validate_tool_call([t], tau.ai.ToolCall('1', 't', {'a': '2'})) == {'a': 2}\n"
        "assert 'jsonschema_rs' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
