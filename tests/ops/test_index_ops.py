"""Side by side with torch: ``index_copy``, ``index_fill``, ``masked_select`` (torch's own nodes
``IndexCopyBackward0``, ``IndexFillBackward0``/``1``, ``MaskedSelectBackward0``) where the op
table cannot express them: gradients at repeated indices, the in-place forms, the value's
gradient dtype, torch's backward error for a negative index, double backward; index_add's and
index_reduce's checks and in-place forms."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradsum

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

from diff_helpers import (  # noqa: E402
    both_or_error,
    same_error_type,
)
from diff_helpers import same_tensor as _same  # noqa: E402

_X = np.arange(12.0).reshape(3, 4) / 7 - 0.5


_G = np.arange(12.0).reshape(3, 4) + 1


def _lib(tag: str) -> Any:
    return torch if tag == "t" else gradsum


def _grads(tag: str, fn: Any, arrays: list[Any], g: Any) -> tuple[Any, list[Any]]:
    lib = _lib(tag)
    ins = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]
    y = fn(lib, *ins)
    gs = lib.autograd.grad(y, ins, lib.tensor(g, dtype=lib.float64))
    return y, list(gs)


def _same_grads(fn: Any, arrays: list[Any], g: Any) -> None:
    yt, gt = _grads("t", fn, arrays, g)
    yg, gg = _grads("g", fn, arrays, g)
    assert yg.grad_fn.name() == yt.grad_fn.name()
    _same(yg, yt)
    for a, b in zip(gg, gt):
        _same(a, b)


# -- index_copy --------------------------------------------------------------------------------
@pytest.mark.parametrize("index", [[1, 1], [3, 0], [2, 2]])
def test_index_copy_gradients_match_torch(index: list[int]) -> None:
    # a repeated index: the last slice wins forward, every copy gets g backward (torch's)
    src = np.arange(6.0).reshape(3, 2) - 2
    _same_grads(lambda L, x, s: x.index_copy(1, L.tensor(index), s), [_X, src], _G)


def test_index_copy_scalar_forms_match_torch() -> None:
    _same_grads(lambda L, x, s: x.index_copy(0, L.tensor([2]), s), [np.zeros(4), np.array(5.0)],
                np.arange(4.0))
    _same_grads(lambda L, x, s: x.index_copy(0, L.tensor(0), s), [np.array(1.0), np.ones(1)],
                np.array(3.0))


def test_index_copy_inplace_names_and_grads_match_torch() -> None:
    out = {}
    for tag in ("t", "g"):
        L = _lib(tag)
        x = L.tensor(_X, dtype=L.float64, requires_grad=True)
        s = L.tensor(np.ones((2, 4)), dtype=L.float64, requires_grad=True)
        y = x * 2
        y.index_copy_(0, L.tensor([2, 0]), s)
        y.backward(L.tensor(_G, dtype=L.float64))
        out[tag] = (y.grad_fn.name(), y._version, x.grad, s.grad)
    assert out["g"][:2] == out["t"][:2]
    _same(out["g"][2], out["t"][2])
    _same(out["g"][3], out["t"][3])


def test_index_copy_double_backward() -> None:
    x = gradsum.tensor(_X, dtype=gradsum.float64, requires_grad=True)
    s = gradsum.tensor(np.ones((3, 2)), dtype=gradsum.float64, requires_grad=True)
    idx = gradsum.tensor([3, 1])
    assert gradsum.autograd.gradcheck(lambda a, b: a.index_copy(1, idx, b) ** 2, (x, s))
    assert gradsum.autograd.gradgradcheck(lambda a, b: a.index_copy(1, idx, b) ** 2, (x, s))


# -- index_fill --------------------------------------------------------------------------------
@pytest.mark.parametrize("index", [[0, 2, 0], [3], [1, 1, 1]])
def test_index_fill_tensor_value_gets_the_sum_over_filled_slices(index: list[int]) -> None:
    # each filled slice counted once, however often its index repeats (torch's _unique)
    _same_grads(lambda L, x, v: x.index_fill(1, L.tensor(index), v), [_X, np.array(2.5)], _G)


def test_index_fill_number_value_matches_torch() -> None:
    _same_grads(lambda L, x: x.index_fill(0, L.tensor([-1, 0]), -3.0), [_X], _G)


def test_index_fill_value_gradient_keeps_the_value_dtype() -> None:
    for tag in ("t", "g"):
        L = _lib(tag)
        x = L.tensor(_X, dtype=L.float64, requires_grad=True)
        v = L.tensor(1.5, dtype=L.float32, requires_grad=True)
        (gv,) = L.autograd.grad(x.index_fill(1, L.tensor([0, 3]), v).sum(), [v])
        assert str(gv.dtype).endswith("float32")
        assert gv.item() == pytest.approx(6.0)


def test_index_fill_negative_index_with_tensor_value_raises_in_backward_as_torch() -> None:
    errs = []
    for tag in ("t", "g"):
        L = _lib(tag)
        x = L.tensor(_X[0], dtype=L.float64, requires_grad=True)
        v = L.tensor(1.5, dtype=L.float64, requires_grad=True)
        y = x.index_fill(0, L.tensor([-1]), v)  # the forward wraps it
        assert y[3].item() == 1.5
        with pytest.raises(IndexError) as e:
            y.sum().backward()
        errs.append(e.value)
    assert "index out of range in self" in str(errs[1])


def test_index_fill_inplace_names_match_torch() -> None:
    for scalar in (True, False):
        names = []
        for tag in ("t", "g"):
            L = _lib(tag)
            x = L.tensor(_X, dtype=L.float64, requires_grad=True)
            v = 2.0 if scalar else L.tensor(2.0, dtype=L.float64, requires_grad=True)
            y = x.clone()
            y.index_fill_(1, L.tensor([1]), v)
            names.append(y.grad_fn.name())
        assert names[0] == names[1]


def test_index_fill_double_backward() -> None:
    x = gradsum.tensor(_X, dtype=gradsum.float64, requires_grad=True)
    v = gradsum.tensor(0.3, dtype=gradsum.float64, requires_grad=True)
    idx = gradsum.tensor([2, 0, 2])
    assert gradsum.autograd.gradgradcheck(lambda a, b: a.index_fill(1, idx, b) ** 2, (x, v))


# -- masked_select -----------------------------------------------------------------------------
@pytest.mark.parametrize(("xshape", "mshape"), [((3, 4), (3, 4)), ((3, 4), (4,)),
                                                ((4,), (2, 3, 4)), ((2, 1), (3,)), ((), (3,))])
def test_masked_select_broadcast_gradients_match_torch(xshape: Any, mshape: Any) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(xshape)
    m = rng.random(mshape) > 0.4
    n = int(np.broadcast_to(m, np.broadcast_shapes(xshape, mshape)).sum())
    _same_grads(lambda L, a: a.masked_select(L.tensor(m)), [x], np.arange(n, dtype=float) + 1)


def test_masked_select_double_backward_and_saved_mask() -> None:
    m = gradsum.tensor(np.array([[True, False, True, True]]))
    x = gradsum.tensor(_X, dtype=gradsum.float64, requires_grad=True)
    assert gradsum.autograd.gradgradcheck(lambda a: gradsum.masked_select(a, m) ** 3, (x,))
    y = x.masked_select(m).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


# -- index_add_ / index_select on an empty tensor ----------------------------------------------
@pytest.mark.parametrize(("shape", "dim", "index", "src"), [
    ((1, 0, 4), 1, [0], (1, 1, 4)), ((0, 3), 0, [7], (1, 3)), ((2, 0), 0, [5], (1, 0)),
    ((1, 0, 4), 0, [3], (1, 0, 4)), ((2, 3), 0, [5], (1, 3)), ((0,), 0, [0], (1,))])
def test_index_add_checks_no_index_against_an_empty_self_as_torch(
        shape: Any, dim: int, index: list[int], src: Any) -> None:
    # fuzzer seed 11497: torch's index_add_ writes nothing into an empty >= 2-d self and
    # checks no index against it (gradsum raised IndexError; a 1-d self is checked, seeds
    # 11849, 11979); the source's gradient then goes through index_select, which refuses the
    # index (RuntimeError for an empty >= 2-d self)
    def run(lib: Any) -> list[Any]:
        log: list[Any] = []
        x = lib.zeros(*shape, dtype=lib.float64, requires_grad=True).clone()
        s = lib.ones(*src, dtype=lib.float64, requires_grad=True)
        idx = lib.tensor(index)
        for fn in (lambda: x.index_add_(dim, idx, s), lambda: x.sum().backward(),
                   lambda: x.detach().index_select(dim, idx)):
            try:
                r = fn()
                log.append(("ok", None if r is None else tuple(r.shape)))
            except Exception as e:
                log.append(type(e).__name__)
        log.append((tuple(x.shape), None if s.grad is None else s.grad.tolist()))
        return log

    assert run(gradsum) == run(torch)


_same_error = same_error_type


@pytest.mark.parametrize("call", [
    lambda L: L.index_add(L.tensor(1.0), 0, L.tensor([0, 0, 0]), L.tensor(1.0)),
    lambda L: L.index_add(L.ones(3), 0, L.tensor([0, 0, 1]), L.tensor(1.0)),
    lambda L: L.index_add(L.tensor(1.0), 0, L.tensor([1]), L.tensor(1.0)),
    lambda L: L.index_add(L.ones(3), 0, L.tensor([-1]), L.ones(1)),
    lambda L: L.index_add(L.ones(2, 2, 2), 1, L.tensor([5]), L.ones(2, 1, 2)),
    lambda L: L.index_add(L.ones(2, 2, 2), 2, L.tensor([5]), L.ones(2, 2, 1)),
    lambda L: L.index_add(L.ones(2, 2), 0, L.tensor([5]), L.ones(1, 2)),
])
def test_index_add_error_types(call: Callable[[Any], Any]) -> None:
    _same_error(call)


def test_index_reduce_inplace_and_int_mean() -> None:
    def fn(lib: Any) -> Any:
        x = lib.arange(6).reshape(3, 2)
        src = lib.tensor([[3, 4], [5, 7]])
        y = x.clone().index_reduce_(0, lib.tensor([0, 0]), src, "mean", include_self=False)
        return x.index_reduce(0, lib.tensor([0, 0]), src, "mean"), y

    g, t = both_or_error(fn, quiet=True)
    assert [a.tolist() for a in g] == [b.tolist() for b in t]


def test_index_reduce_inplace_grad_fn() -> None:
    def fn(lib: Any) -> Any:
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64, requires_grad=True)
        y = x * 1
        y.index_reduce_(0, lib.tensor([1]), lib.tensor([[2.0, 2.0]], dtype=lib.float64), "amax")
        y.sum().backward()
        return type(y.grad_fn).__name__ if lib is torch else y.grad_fn.name(), x.grad.tolist()

    g, t = both_or_error(fn, quiet=True)
    assert g == t
