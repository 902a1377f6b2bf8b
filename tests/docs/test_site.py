"""The documentation site builds strictly, its links resolve, and its API reference covers every
public name of the library's faces, each with a docstring."""

from __future__ import annotations

import importlib
import re
import zlib
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

from tests.docs.blocks import REPO
from tests.docs.conftest import Site

# The faces the reference documents, each on its own page: these, and every package of tau
# (a new one, such as a web UI, gets its page; the `tau` command is documented by its pages).
_NAMED = [
    "tau.ai",
    "tau.ai.adapters",
    "tau.ai.structured",
    "tau.ai.oauth",
    "tau.agent",
    "tau.agent.mcp",
    "tau.proxy",
    "tau.batch",
    "tau.telemetry",
    "tau.durable",
]
_PACKAGES = sorted(
    f"tau.{path.parent.name}"
    for path in (REPO / "src" / "tau").glob("*/__init__.py")
    if path.parent.name != "cli"
)
FACES = _NAMED + [face for face in _PACKAGES if face not in _NAMED]


class _Page(HTMLParser):
    """The ids a page defines and the links it holds."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if values.get("id"):
            self.ids.add(values["id"] or "")
        for name in ("href", "src"):
            link = values.get(name)
            if link and (tag != "link" or values.get("rel") != "canonical"):
                self.links.append(link)


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def _target(site: Path, page: Path, link: str) -> Path:
    url = urlsplit(link)
    # The 404 page links from the site's root (it is served at any depth).
    base = site if url.path.startswith("/") else page.parent
    target = (base / unquote(url.path).lstrip("/")).resolve() if url.path else page
    if target.is_dir():
        target = target / "index.html"
    return target


def test_the_site_builds_without_a_warning(site: Site) -> None:
    # --strict already fails on a warning; this names what would have been one.
    assert "WARNING" not in site.log, site.log
    assert (site.root / "index.html").is_file()


def test_every_internal_link_resolves(site: Site) -> None:
    pages = {path: _parse(path) for path in site.root.rglob("*.html")}
    broken = []
    for path, page in pages.items():
        for link in page.links:
            url = urlsplit(link)
            if url.scheme or link.startswith(("//", "mailto:", "data:")):
                continue
            target = _target(site.root, path, link)
            where = f"{path.relative_to(site.root)} -> {link}"
            if not target.exists():
                broken.append(where)
            elif url.fragment and target.suffix == ".html":
                ids = (pages.get(target) or _parse(target)).ids
                if unquote(url.fragment) not in ids:
                    broken.append(where + " (no such anchor)")
    assert not broken, "\n".join(broken)


def _inventory(site: Site) -> set[str]:
    """The names the reference documents, from the objects.inv mkdocstrings writes."""
    data = (site.root / "objects.inv").read_bytes()
    header_end = 0
    for _ in range(4):  # four header lines, then the zlib stream
        header_end = data.index(b"\n", header_end) + 1
    lines = zlib.decompress(data[header_end:]).decode().splitlines()
    return {line.split(" ", 1)[0] for line in lines}


@pytest.mark.parametrize("face", FACES)
def test_every_public_name_is_in_the_api_reference(site: Site, face: str) -> None:
    documented = _inventory(site)
    module = importlib.import_module(face)
    missing = [
        name
        for name in module.__all__
        # A module on a face (tau.ai.faux) is documented under its own name.
        if f"{face}.{name}" not in documented
        and getattr(getattr(module, name), "__name__", None) not in documented
    ]
    assert not missing, f"{face}: not in the API reference: {missing}"


@pytest.fixture(scope="module")
def griffe_faces() -> dict[str, Any]:
    """The faces as mkdocstrings reads them (griffe's static analysis), loaded once."""
    griffe = pytest.importorskip("griffe", reason="the [docs] extra (griffe) is not installed")
    loader = griffe.GriffeLoader(search_paths=[str(REPO / "src")])
    faces = {face: loader.load(face) for face in FACES}
    loader.resolve_aliases(implicit=True, external=False)
    return faces


@pytest.mark.parametrize("face", FACES)
def test_every_public_name_has_a_docstring(griffe_faces: dict[str, Any], face: str) -> None:
    module = griffe_faces[face]
    undocumented = []
    for name in importlib.import_module(face).__all__:
        member = module.members.get(name)
        target = member.final_target if member is not None and member.is_alias else member
        if target is None or not (target.docstring and target.docstring.value.strip()):
            undocumented.append(name)
    assert not undocumented, f"{face}: no docstring in the reference: {undocumented}"


def test_the_reference_has_a_page_per_face() -> None:
    nav = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    for face in FACES:
        page = REPO / "docs" / "reference" / f"{face.removeprefix('tau.').replace('.', '-')}.md"
        assert page.is_file(), page
        assert f"::: {face}" in page.read_text(encoding="utf-8")
        assert re.search(rf"reference/{re.escape(page.name)}", nav), page.name
