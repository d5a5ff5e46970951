"""Side by side with torch: nn.utils' gradient clipping (clip_grad_norm_ of empty, infinite and
generator inputs, get_total_norm, clip_grads_with_norm_, the deprecated clip_grad_norm)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from diff_helpers import same_error  # noqa: E402
from nn_helpers import floats  # noqa: E402

Program = Callable[[Any], Any]  # fn(lib) -> a plain Python result


def warning_categories(fn: Program, lib: Any) -> list[type[Warning]]:
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        fn(lib)
    return [w.category for w in rec]


# -- gradient clipping -------------------------------------------------------------------------
def _params(lib: Any, grads: list[list[float]]) -> list[Any]:
    ps = []
    for g in grads:
        p = lib.nn.Parameter(lib.zeros(len(g)))
        p.grad = lib.tensor(g)
        ps.append(p)
    return ps


@pytest.mark.parametrize("norm_type", [2.0, "inf", 1.0])
def test_clip_grad_norm_of_an_infinite_gradient_is_silent(norm_type: Any) -> None:
    got = []
    for lib in (gradsum, torch):
        ps = _params(lib, [[math.inf, 1.0], [2.0]])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            total = lib.nn.utils.clip_grad_norm_(ps, 1.0, norm_type=norm_type)
        got.append((total.item(), [floats(p.grad).tolist() for p in ps]))
    assert str(got[0]) == str(got[1])  # (nan-aware)


def test_clip_grad_norm_warns_for_an_empty_generator() -> None:
    def prog(lib: Any) -> Any:
        return lib.nn.utils.clip_grad_norm_((p for p in []), 1.0)

    assert warning_categories(prog, gradsum) == warning_categories(prog, torch) == [UserWarning]
    assert warning_categories(lambda lib: lib.nn.utils.clip_grad_norm_([], 1.0), gradsum) == []


def test_get_total_norm_and_clip_grads_with_norm() -> None:
    got = []
    for lib in (gradsum, torch):
        u = lib.nn.utils
        ts = [lib.tensor([3.0, -4.0]), lib.tensor([[1.0]], dtype=lib.float64)]
        norms = [u.get_total_norm(ts, norm_type=nt) for nt in (2, 3.0, "inf", 1)]
        norms.append(u.get_total_norm(lib.tensor([3.0, 4.0])))
        norms.append(u.get_total_norm([]))
        ps = _params(lib, [[3.0, 4.0], [12.0]])
        assert u.clip_grads_with_norm_(ps, 2.0, lib.tensor(13.0)) is None
        got.append(([(n.item(), str(n.dtype)[-7:]) for n in norms],
                    [floats(p.grad).tolist() for p in ps]))
    assert [d for _, d in got[0][0]] == [d for _, d in got[1][0]]
    assert [v for v, _ in got[0][0]] == pytest.approx([v for v, _ in got[1][0]])
    np.testing.assert_allclose(got[0][1][0], got[1][1][0], rtol=1e-6)
    np.testing.assert_allclose(got[0][1][1], got[1][1][1], rtol=1e-6)
    assert same_error(lambda lib: lib.nn.utils.get_total_norm(
        lib.tensor([1.0, math.nan]), error_if_nonfinite=True)) is RuntimeError


def test_clip_grad_norm_is_deprecated() -> None:
    def prog(lib: Any) -> Any:
        ps = _params(lib, [[3.0, 4.0]])
        return lib.nn.utils.clip_grad_norm(ps, 1.0).item(), ps[0].grad.tolist()

    with pytest.warns(FutureWarning):
        got = prog(gradsum)
    with pytest.warns(FutureWarning):
        want = prog(torch)
    assert got[0] == pytest.approx(want[0]) and got[1] == pytest.approx(want[1])
