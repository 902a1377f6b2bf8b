"""The module paths tau.ai had before its subpackages still import, with a DeprecationWarning
that names the new module, and give the same objects as the new paths."""

from __future__ import annotations

import importlib
import subprocess
import sys
import warnings

import pytest

from tau.ai._moved import MOVED, new_place


def _fresh(name: str) -> None:
    for loaded in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[loaded]


@pytest.mark.parametrize("old", sorted(MOVED))
def test_each_old_path_imports_and_warns(old: str) -> None:
    _fresh(old)
    with pytest.warns(DeprecationWarning, match=f"^{old} is deprecated") as caught:
        module = importlib.import_module(old)
    targets = MOVED[old]
    if targets:
        # The first warning may be the moved parent package's (tau.ai.utils), imported first.
        ours = [w for w in caught if str(w.message).startswith(f"{old} is deprecated")]
        assert f"use {targets[0]}" in str(ours[0].message)
        new = importlib.import_module(targets[0])
        public = [n for n in vars(new) if not n.startswith("_")]
        assert public
        for name in public:
            assert getattr(module, name) is getattr(new, name), (old, name)


def test_the_warning_points_at_the_importing_line() -> None:
    _fresh("tau.ai.sse")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from tau.ai.sse import SSEDecoder  # noqa: F401
    assert caught and caught[0].filename == __file__


def test_a_submodule_of_a_moved_package_is_the_new_one() -> None:
    _fresh("tau.ai.http")
    with pytest.warns(DeprecationWarning):
        from tau.ai.http._pool import get_client
    from tau.ai.streaming.http._pool import get_client as new_get_client

    assert get_client is new_get_client
    assert new_place("tau.ai.http._pool") == ("tau.ai.streaming.http._pool",)
    assert new_place("tau.ai.core.types") is None
    assert new_place("tau.ai.structured.run") is None


def test_a_name_or_module_that_never_existed_still_fails() -> None:
    _fresh("tau.ai.types")
    _fresh("tau.ai.utils")
    with pytest.warns(DeprecationWarning):
        module = importlib.import_module("tau.ai.types")
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = module.Nope
    with pytest.raises(ModuleNotFoundError), pytest.warns(DeprecationWarning):
        importlib.import_module("tau.ai.utils.nope")
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("tau.ai.nope")


def test_an_old_import_in_a_script_warns_once_by_default() -> None:
    # The user's view: a script run with default warning filters sees the warning on its line.
    result = subprocess.run(
        [sys.executable, "-W", "default", "-c", "from tau.ai.catalog import get_model"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "tau.ai.catalog is deprecated; use tau.ai.lookup.catalog" in result.stderr


def test_the_split_builder_finds_each_part_in_its_own_module() -> None:
    _fresh("tau.ai.builder")
    with pytest.warns(DeprecationWarning, match="use tau.ai.streaming.builder"):
        from tau.ai.builder import MessageBuilder, launch_stream, output_cap
    from tau.ai.streaming.builder import MessageBuilder as Builder
    from tau.ai.streaming.launch import launch_stream as launch
    from tau.ai.streaming.output_cap import output_cap as cap

    assert (MessageBuilder, launch_stream, output_cap) == (Builder, launch, cap)
