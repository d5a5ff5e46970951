"""Shared helpers of the side-by-side tests of recorded nodes: run ``fn(lib, *tensors)`` in
gradsum and in torch, take first and second derivatives (create_graph) and compare values,
derivatives, ``requires_grad`` and the ``grad_fn`` names. torch is imported on first use (the
test modules skip themselves first when it is missing)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

import gradsum
from diff_helpers import _torch, as_np


def grad_fn_name(t: Any) -> str | None:
    """The name of ``t.grad_fn`` without torch's ``torch::autograd::`` prefix (None for no
    node)."""
    if t is None or t.grad_fn is None:
        return None
    return t.grad_fn.name().replace("torch::autograd::", "")


def close_nan(a: Any, b: Any, tol: float = 1e-10) -> None:
    """Values equal within ``tol`` (relative and absolute), nan where the other has nan."""
    np.testing.assert_allclose(as_np(a), as_np(b), rtol=tol, atol=tol, equal_nan=True)


def run_derivatives(lib: Any, fn: Callable[..., Any], arrays: list[Any],
                    grad_idx: tuple[int, ...], seed: int, second: bool = True) -> dict[str, Any]:
    """``fn(lib, *tensors)``; the first and second derivatives (create_graph) with respect to
    the tensors at ``grad_idx`` (float64), against fixed random output weights."""
    ts = [lib.tensor(a, requires_grad=i in grad_idx) if np.asarray(a).dtype.kind == "f"
          else lib.tensor(a) for i, a in enumerate(arrays)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = fn(lib, *ts)
    rng = np.random.default_rng(seed)
    w = lib.tensor(rng.standard_normal(tuple(y.shape)))
    ins = [ts[i] for i in grad_idx]
    gs = lib.autograd.grad((y * w).sum(), ins, create_graph=True)
    res: dict[str, Any] = {"y": y, "name": grad_fn_name(y), "g": gs,
                           "g_rg": [g.requires_grad for g in gs],
                           "g_names": [grad_fn_name(g) for g in gs]}
    live = [(g, i) for g, i in zip(gs, grad_idx) if g.requires_grad]
    if live and second:
        vs = [lib.tensor(rng.standard_normal(tuple(g.shape))) for g, _ in live]
        tot = sum((g * v).sum() for (g, _), v in zip(live, vs))
        res["gg"] = lib.autograd.grad(tot, ins, allow_unused=True)
    return res


def compare_derivatives(fn: Callable[..., Any], arrays: list[Any],
                        grad_idx: tuple[int, ...] = (0,), names: bool = True,
                        tol: float = 1e-10, second: bool = True) -> dict[str, Any]:
    """Values, first and (``second``) second derivatives, ``requires_grad`` of the first
    derivatives and (``names``) the ``grad_fn`` names of the output and of the first
    derivatives."""
    t = run_derivatives(_torch(), fn, arrays, grad_idx, 1, second)
    g = run_derivatives(gradsum, fn, arrays, grad_idx, 1, second)
    close_nan(g["y"], t["y"], tol)
    assert g["name"] == t["name"]
    for a, b in zip(g["g"], t["g"]):
        close_nan(a, b, tol)
    assert g["g_rg"] == t["g_rg"]
    if names:
        assert g["g_names"] == t["g_names"]
    assert ("gg" in g) == ("gg" in t)
    if "gg" in t:
        for a, b in zip(g["gg"], t["gg"]):
            if b is None:
                assert a is None or not as_np(a).any()
            else:
                assert a is not None
                close_nan(a, b, tol)
    return t


def normal_arrays(seed: int) -> Callable[..., Any]:
    """``arr(*shape)``: standard-normal float64 arrays from a generator of its own, seeded
    ``seed`` (one per test module, so each module draws the same values as before)."""
    rng = np.random.default_rng(seed)

    def arr(*shape: int) -> Any:
        return rng.standard_normal(shape)

    return arr
