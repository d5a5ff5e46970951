"""``gradsum.random`` (torch.random): the default generator's functions and ``fork_rng``,
side by side with torch."""

from __future__ import annotations

from typing import Any

import pytest

import gradsum
from diff_helpers import both_or_error

torch = pytest.importorskip("torch", reason="torch (the test extra) is the reference")


def test_functions_are_the_top_level_ones() -> None:
    for name in ("manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state"):
        assert getattr(gradsum.random, name) is getattr(gradsum, name)
    assert gradsum.random.default_generator is gradsum.default_generator
    assert sorted(n for n in gradsum.random.__all__) == sorted(
        n for n in dir(torch.random) if not n.startswith("_")
        and n not in ("TYPE_CHECKING", "contextlib", "torch", "warnings",
                      "thread_safe_generator"))


def test_fork_rng_restores_the_stream() -> None:
    def run(lib: Any) -> Any:
        lib.manual_seed(3)
        with lib.random.fork_rng():
            inside = lib.rand(3).tolist()
        after = lib.rand(3).tolist()
        lib.manual_seed(3)
        fresh = lib.rand(3).tolist()
        return inside == after == fresh
    assert both_or_error(run) == (True, True)


def test_fork_rng_disabled_changes_the_stream() -> None:
    def run(lib: Any) -> Any:
        lib.manual_seed(3)
        with lib.random.fork_rng(enabled=False):
            inside = lib.rand(3).tolist()
        return inside == lib.rand(3).tolist()
    assert both_or_error(run) == (False, False)


def test_fork_rng_restores_after_an_exception() -> None:
    gradsum.manual_seed(5)
    first = gradsum.rand(2).tolist()
    gradsum.manual_seed(5)
    with pytest.raises(KeyError), gradsum.random.fork_rng():
        gradsum.rand(7)
        raise KeyError("inside")
    assert gradsum.rand(2).tolist() == first


@pytest.mark.parametrize("kw", [{"devices": [0]}, {"devices": [0], "device_type": "xpu"},
                                {"devices": [0], "device_type": "mps"}, {"devices": []},
                                {"device_type": "mps"}, {"device_type": "meta"}], ids=repr)
def test_fork_rng_devices_as_the_cpu_build(kw: dict[str, Any]) -> None:
    def run(lib: Any) -> Any:
        with lib.random.fork_rng(**kw):
            return "ok"
    g, t = both_or_error(run)
    assert g == t, kw
