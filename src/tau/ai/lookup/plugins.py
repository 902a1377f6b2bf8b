"""Provider records, loaded on demand by the modules below the registry.

The registry installs how records are found: every third-party provider (the
``tau.providers`` entry points), which the catalog asks for when tau's own data cannot answer a
lookup; and the records that may declare a provider's key variables, which the key lookup asks
for. A module of its own so that neither of those imports the registry (nor the registry them
at ``import tau.ai``).
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["load_key_records", "load_plugins", "set_key_record_loader", "set_plugin_loader"]

_loader: Callable[[], None] | None = None
_key_records: Callable[[str, str | None], None] | None = None


def set_plugin_loader(loader: Callable[[], None]) -> None:
    """``loader()`` registers every third-party provider (run at most once)."""
    global _loader
    _loader = loader


def set_key_record_loader(loader: Callable[[str, str | None], None]) -> None:
    """``loader(provider, api)`` loads the records that may declare ``provider``'s keys."""
    global _key_records
    _key_records = loader


def load_key_records(provider: str, api: str | None) -> None:
    """Load the records that may declare ``provider``'s key variables (``api``'s first)."""
    if _key_records is not None:
        _key_records(provider, api)


def load_plugins() -> None:
    """Register the third-party providers, the first time only."""
    global _loader
    loader, _loader = _loader, None
    if loader is not None:
        loader()
