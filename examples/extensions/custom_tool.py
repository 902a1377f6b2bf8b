"""Give the model a tool of its own: `count_words`, from a typed function."""

from tau.agent import tool_from_function
from tau.cli.extensions import ExtensionAPI


def count_words(text: str) -> str:
    """Count the words, lines and characters of a text.

    Args:
        text: the text to count.
    """
    return f"{len(text.split())} words, {len(text.splitlines())} lines, {len(text)} characters"


def setup(tau: ExtensionAPI) -> None:
    tau.register_tool(tool_from_function(count_words))
