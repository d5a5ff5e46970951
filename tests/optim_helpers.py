"""Shared helpers of the optim side-by-side tests: the default dtype for a block, optimizer
snapshots (parameters and every state entry) and their comparison, state-dict layouts, a
save/load round trip, and the small programs of the hyperparameter tests (``outcome``,
``same_outcome``, ``param``, ``rounded``). torch is imported on first use (the test modules skip
themselves first when it is missing)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import gradsum
from diff_helpers import _torch

RTOL, ATOL = 1e-10, 1e-13  # assert_close's default tolerances (float64 trajectories)


# -- the default dtype ---------------------------------------------------------------------------
@contextmanager
def default_dtype(lib: Any, dtype: str) -> Iterator[None]:
    lib.set_default_dtype(getattr(lib, dtype))
    try:
        yield
    finally:
        lib.set_default_dtype(lib.float32)


@contextmanager
def default_float64(lib: Any) -> Iterator[None]:
    with default_dtype(lib, "float64"):
        yield


# -- snapshots -----------------------------------------------------------------------------------
def snapshot(opt: Any, params: list[Any], lists: bool = True
             ) -> tuple[list[np.ndarray], dict[Any, Any]]:
    """The parameters and every state entry, as NumPy arrays (with dtype names) or values; a
    list entry converted element by element (``lists``) or kept as it is."""
    def conv(v: Any) -> Any:
        if isinstance(v, (_torch().Tensor, gradsum.Tensor)):
            return ("tensor", str(v.dtype).split(".")[1], tuple(v.shape),
                    np.array(v.detach().tolist(), dtype=np.float64))
        if lists and isinstance(v, list):
            return [conv(e) for e in v]
        return v

    state = {i: {k: conv(v) for k, v in opt.state[p].items()}
             for i, p in enumerate(params) if p in opt.state}
    return [np.array(p.detach().tolist()) for p in params], state


def snapshot_keeping_lists(opt: Any, params: list[Any]) -> tuple[list[np.ndarray], dict[Any, Any]]:
    """``snapshot`` with list state entries kept as they are (test_adafactor_muon)."""
    return snapshot(opt, params, lists=False)


def assert_close(g: Any, t: Any, where: str, rtol: float = RTOL, atol: float = ATOL,
                 typed: bool = True) -> None:
    """``g`` equals ``t`` (snapshots): same kinds, dtypes, shapes, keys in the same order,
    numbers within ``rtol``/``atol``; other values (``typed``: floats within the tolerances and
    of the same type, the rest equal and of the same type; else equal)."""
    if isinstance(t, tuple) and t and t[0] == "tensor":
        assert isinstance(g, tuple) and g[:3] == t[:3], (where, g, t)
        np.testing.assert_allclose(g[3], t[3], rtol=rtol, atol=atol, err_msg=where)
    elif isinstance(t, np.ndarray):
        np.testing.assert_allclose(g, t, rtol=rtol, atol=atol, err_msg=where)
    elif isinstance(t, list):
        assert isinstance(g, list) and len(g) == len(t), (where, g, t)
        for i, (a, b) in enumerate(zip(g, t)):
            assert_close(a, b, f"{where}[{i}]", rtol, atol, typed)
    elif isinstance(t, dict):
        assert list(g) == list(t), (where, list(g), list(t))
        for k in t:
            assert_close(g[k], t[k], f"{where}.{k}", rtol, atol, typed)
    elif not typed:
        assert g == t, (where, g, t)
    elif isinstance(t, float):
        assert type(g) is float and g == pytest.approx(t, rel=rtol, abs=atol), (where, g, t)
    else:
        assert type(g) is type(t) and g == t, (where, g, t)


def assert_close_untyped(g: Any, t: Any, where: str, rtol: float, atol: float) -> None:
    """``assert_close`` with values other than tensors, arrays, lists and dicts only equal (no
    type check, floats exactly) (test_adafactor_muon)."""
    assert_close(g, t, where, rtol, atol, typed=False)


# -- state dicts ---------------------------------------------------------------------------------
def structure(sd: dict[str, Any]) -> Any:
    """A state dict's layout: state keys, entry kinds and dtypes; the group options."""
    def kind(v: Any) -> Any:
        if isinstance(v, (_torch().Tensor, gradsum.Tensor)):
            return ("tensor", str(v.dtype).split(".")[1], tuple(v.shape))
        return type(v).__name__

    def option(v: Any) -> Any:
        if isinstance(v, (_torch().Tensor, gradsum.Tensor)):
            return ("tensor", tuple(v.shape), v.tolist())
        return v

    state = {i: {k: kind(v) for k, v in s.items()} for i, s in sd["state"].items()}
    groups = [{k: option(v) for k, v in g.items()} for g in sd["param_groups"]]
    return list(sd), state, groups


def save_load(lib: Any, obj: Any, path: Path) -> Any:
    lib.save(obj, str(path))
    return lib.load(str(path)) if lib is gradsum else lib.load(str(path), weights_only=True)


# -- hyperparameter programs ---------------------------------------------------------------------
def outcome(fn: Callable[[Any], Any], lib: Any) -> tuple[str, Any]:
    """``('ok', value)`` or ``('err', exception type name)`` of ``fn(lib)``."""
    try:
        return "ok", fn(lib)
    except Exception as e:  # (any type: the type is what is compared)
        return "err", type(e).__name__


def same_outcome(fn: Callable[[Any], Any]) -> None:
    g, t = outcome(fn, gradsum), outcome(fn, _torch())
    assert g == t, (g, t)


def param(lib: Any, *values: float, dtype: Any = None) -> Any:
    return lib.nn.Parameter(lib.tensor(list(values) or [1.0, -2.0], dtype=dtype))


def rounded(t: Any, digits: int = 6) -> list[float]:
    return [round(v, digits) for v in t.detach().reshape(-1).tolist()]
