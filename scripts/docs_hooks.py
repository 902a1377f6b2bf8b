"""MkDocs hooks of the documentation site (``hooks:`` in mkdocs.yml).

tau's docstrings cross-reference with Sphinx roles (``:func:`stream```, ``:class:`~tau.ai.Model```),
which Markdown renders as the role's text followed by code. This turns each one into the code
alone, the way Sphinx shows it (``~`` keeps the last part of the name), and into a link when
the page documents the name.
"""

from __future__ import annotations

import re
from typing import Any

_ROLE = re.compile(r":(?:func|class|meth|attr|mod|data|exc|obj|const):<code>(~?)([^<]+)</code>")


def on_page_content(html: str, **kwargs: Any) -> str:
    """The page's HTML with its Sphinx roles rendered as code (linked where the page can)."""
    ids = set(re.findall(r'id="([^"]+)"', html))

    def render(match: re.Match[str]) -> str:
        short, name = match[1], match[2].lstrip(".")
        shown = name.rsplit(".", 1)[-1] if short else name
        code = f"<code>{shown}</code>"
        found = [i for i in ids if i == name or i.endswith("." + name)]
        # The name itself, else the one documented name it ends (never a guess among several).
        target = name if name in ids else found[0] if len(found) == 1 else None
        return f'<a href="#{target}">{code}</a>' if target else code

    return _ROLE.sub(render, html)
