"""The optimizers' batched update (gradsum.optim.optimizer._batches: a group's small parameters
concatenated per role and updated with one set of NumPy calls) side by side with torch, bit
for bit: parameters whose step counts differ (some skip steps), more small parameters than one
batch holds, a parameter listed twice (the one-by-one path), and the batched update against
the one-by-one one."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

from test_optimizer_regressions import (  # noqa: E402
    _LARGE_CASES,
    _LARGE_IDS,
    _assert_all_torch_bits,
    _torchs_sqrt_where_needed,
)

import gradsum  # noqa: E402
from gradsum.optim import optimizer  # noqa: E402

#: a small MLP's shapes, then more 100x100 weights than one batch (BLOCK elements) holds, a
#: 0-d and a large one (updated block by block, not batched)
_SHAPES = ([(40, 1), (40,), (40, 40), (40,), (1, 40), (1,)] + [(100, 100)] * 14
           + [(5,), (), (200, 100)])


def _run(lib: Any, name: str, kw: dict[str, Any], dtype: str, steps: int = 5,
         twice: bool = False) -> list[Any]:
    """``steps`` steps; parameter ``i`` has no gradient at step ``k`` when ``(i + k) % 4 ==
    1`` (its step count falls behind). ``twice``: the first parameter is listed twice."""
    rng = np.random.default_rng(3)
    params = [lib.nn.Parameter(lib.tensor(rng.standard_normal(s).astype(dtype)))
              for s in _SHAPES]
    listed = [*params, params[0]] if twice else params
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (duplicate parameters: both libraries warn)
        opt = getattr(lib.optim, name)(listed, **kw)
    for k in range(steps):
        for i, p in enumerate(params):
            g = lib.tensor(rng.standard_normal(tuple(p.shape)).astype(dtype))
            p.grad = None if (i + k) % 4 == 1 else g
        opt.step()
    return [(f"param {i}", p.detach().clone()) for i, p in enumerate(params)] + [
        (f"state {i} {key}", t.detach().clone()) for i, p in enumerate(params)
        for key, t in opt.state[p].items() if isinstance(t, lib.Tensor)]


@pytest.mark.bitwise
@pytest.mark.parametrize(("name", "kw"), _LARGE_CASES, ids=_LARGE_IDS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_batched_update_is_torchs(name: str, kw: dict[str, Any], dtype: str,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Many small parameters at different step counts, in several batches: torch's bits (on
    its AVX2/AVX-512 kernels; _NORMWISE_TOL under the default one), and bitwise the
    one-by-one update's."""
    _torchs_sqrt_where_needed(name, monkeypatch)
    got = _run(gradsum, name, kw, dtype)
    ref = _run(torch, name, kw, dtype)
    _assert_all_torch_bits(got, ref, dtype, f"{name} {kw} {dtype}")
    monkeypatch.setattr(optimizer, "_batchable", lambda entries, writes: False)
    alone = _run(gradsum, name, kw, dtype)
    for (k, b), (_, a) in zip(got, alone, strict=True):
        assert np.array_equal(b.numpy(), a.numpy(), equal_nan=True), k


@pytest.mark.bitwise
@pytest.mark.parametrize(("name", "kw"), [
    ("SGD", {"lr": 0.01, "momentum": 0.9}),
    ("Adam", {"lr": 0.01}),
    ("AdamW", {"lr": 0.01, "amsgrad": True}),
], ids=["SGD", "Adam", "AdamW"])
def test_a_parameter_listed_twice_is_updated_twice_as_torchs(
        name: str, kw: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """torch updates a duplicated parameter once per listing (with one state): the batched
    path refuses the group, and the one-by-one update gives torch's bits."""
    _torchs_sqrt_where_needed(name, monkeypatch)
    got = _run(gradsum, name, kw, "float32", steps=3, twice=True)
    ref = _run(torch, name, kw, "float32", steps=3, twice=True)
    _assert_all_torch_bits(got, ref, "float32", f"{name} {kw} twice")


def test_batchable_refuses_aliased_or_mismatched_arrays() -> None:
    a, b = np.zeros(4, np.float32), np.zeros(4, np.float32)
    g = np.ones(4, np.float32)
    assert optimizer._batchable([(0, (a, g)), (0, (b, g))], (0,))  # (a grad read twice: fine)
    assert not optimizer._batchable([(0, (a, g)), (0, (a, g))], (0,))  # (written twice)
    assert not optimizer._batchable([(0, (a[:2], g[:2])), (0, (a[2:], g[2:]))], (0,))
    assert not optimizer._batchable([(0, (a, a))], (0,))  # (the gradient is the parameter)
    assert not optimizer._batchable([(0, (a, g.reshape(2, 2)))], (0,))
    assert not optimizer._batchable([(0, (a, g.astype(np.float64)))], (0,))
    assert not optimizer._batchable([(0, (a.astype(np.int32), g.astype(np.int32)))], (0,))
