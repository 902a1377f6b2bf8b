"""What the pages must say, checked against the code they describe."""

from __future__ import annotations

from tests.docs.blocks import DOCS, REPO


def test_the_rpc_page_documents_every_command() -> None:
    from tau.cli import rpc  # noqa: F401  (declares the commands)
    from tau.cli.registry import RPC_COMMANDS

    page = (DOCS / "cli" / "rpc.md").read_text(encoding="utf-8")
    for command in RPC_COMMANDS:
        assert f"\n### {command.name}\n" in page, command.name
        for arg in command.args:
            assert f'"{arg.name}"' in page, (command.name, arg.name)
        for alias in command.aliases:
            assert f"`{alias}`" in page, alias


def test_the_performance_plot_is_the_benchmarks_one() -> None:
    # run_peers.py writes the plot into benchmarks/; the site shows a copy.
    plot = "results_cpu_per_event.png"
    assert (DOCS / "assets" / plot).read_bytes() == (REPO / "benchmarks" / plot).read_bytes()


def test_every_wire_api_has_a_provider_page() -> None:
    from tau.ai.adapters import get_api_providers

    titles = "\n".join(
        p.read_text(encoding="utf-8").splitlines()[0]
        for p in (DOCS / "guides" / "providers").glob("*.md")
    )
    for api in get_api_providers():
        assert f"(`{api}`)" in titles, api
