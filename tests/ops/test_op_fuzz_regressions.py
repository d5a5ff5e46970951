"""Side-by-side regression tests for the mismatches found by a randomized fuzz of every op in
gradsum.ops.OPS against torch (random broadcast shapes with 0-d, size-0 and size-1 dims,
non-contiguous inputs, random dim/keepdim arguments)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402


def _pair(arr: Any, requires_grad: bool = False) -> tuple[Any, Any]:
    a = np.asarray(arr)
    return (gradsum.tensor(a, requires_grad=requires_grad),
            torch.tensor(a, requires_grad=requires_grad))


def _same(g: Any, t: Any) -> None:
    assert tuple(g.shape) == tuple(t.shape)
    assert g.dtype.name == str(t.dtype).replace("torch.", "")
    np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(), rtol=1e-12, atol=1e-12)


def _raises_alike(gcall: Any, tcall: Any) -> None:
    with pytest.raises(Exception) as te:
        tcall()
    with pytest.raises(Exception) as ge:
        gcall()
    assert ge.type.__name__ == te.type.__name__, (ge.value, te.value)


def test_narrow_wraps_a_negative_start_and_checks_the_range() -> None:
    g, t = _pair(np.arange(4.0), requires_grad=True)
    for start, length in [(-3, 3), (-1, 1), (4, 0), (-4, 2)]:
        _same(gradsum.narrow(g, 0, start, length), torch.narrow(t, 0, start, length))
    gs, ts = gradsum.narrow(g, 0, -3, 2), torch.narrow(t, 0, -3, 2)
    gs.sum().backward()
    ts.sum().backward()
    _same(g.grad, t.grad)
    for args in [(0, -5, 1), (0, 5, 0), (0, 1, 4), (0, 2, -1)]:
        _raises_alike(lambda a=args: gradsum.narrow(g, *a), lambda a=args: torch.narrow(t, *a))
    g0, t0 = _pair(1.0)
    _raises_alike(lambda: gradsum.narrow(g0, 0, 0, 1), lambda: torch.narrow(t0, 0, 0, 1))


def test_masked_fill_broadcasts_the_input_with_a_larger_mask() -> None:
    m = np.array([[True, False], [False, True]])
    for value_grad in (False, True):
        g, t = _pair(np.array([1.5, -2.0]), requires_grad=True)
        gm, tm = _pair(m)
        gv, tv = _pair(0.25, requires_grad=value_grad)
        go, to = gradsum.masked_fill(g[:1], gm, gv), torch.masked_fill(t[:1], tm, tv)
        _same(go, to)
        up = np.array([[1.0, 2.0], [3.0, 4.0]])
        go.backward(gradsum.tensor(up))
        to.backward(torch.tensor(up))
        _same(g.grad, t.grad)
        if value_grad:
            _same(gv.grad, tv.grad)


@pytest.mark.parametrize("dim", [0, -1])
def test_all_any_count_nonzero_on_a_0d_tensor_with_a_dim(dim: int) -> None:
    g, t = _pair(2.0)
    for name in ("all", "any"):
        for keepdim in (False, True):
            _same(getattr(gradsum, name)(g, dim, keepdim), getattr(torch, name)(t, dim, keepdim))
    _same(gradsum.count_nonzero(g, dim), torch.count_nonzero(t, dim))
    _raises_alike(lambda: gradsum.count_nonzero(g, (0, -1)),
                  lambda: torch.count_nonzero(t, (0, -1)))


def test_count_nonzero_with_an_empty_dim_tuple_counts_everything() -> None:
    g, t = _pair(np.array([[0.0, 1.0, 2.0], [3.0, 0.0, 0.0]]))
    _same(gradsum.count_nonzero(g, dim=()), torch.count_nonzero(t, dim=()))
    _same(gradsum.all(g, dim=()), torch.all(t, dim=()))  # all/any: () reduces nothing


@pytest.mark.parametrize(("x_shape", "w_shape", "b_shape"), [
    ((4, 3, 2), (3, 2), ()), ((4, 2), (3, 2), (1,)), ((1,), (0, 1), (0,)), ((2, 2, 0), (3, 0), ()),
])
def test_linear_bias_gradient_keeps_the_bias_shape(x_shape: tuple[int, ...],
                                                   w_shape: tuple[int, ...],
                                                   b_shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(0)
    arrs = [rng.standard_normal(s) for s in (x_shape, w_shape, b_shape)]
    gs = [gradsum.tensor(a, requires_grad=True) for a in arrs]
    ts = [torch.tensor(a, requires_grad=True) for a in arrs]
    go, to = gradsum.nn.functional.linear(*gs), torch.nn.functional.linear(*ts)
    _same(go, to)
    up = rng.standard_normal(tuple(to.shape))
    go.backward(gradsum.tensor(up))
    to.backward(torch.tensor(up))
    for gl, tl in zip(gs, ts):
        _same(gl.grad, tl.grad)


def test_index_select_and_index_add_on_a_0d_tensor() -> None:
    g, t = _pair(1.5, requires_grad=True)
    gi, ti = _pair(np.array([0]))
    go, to = gradsum.index_select(g, 0, gi), torch.index_select(t, 0, ti)
    _same(go, to)
    go.backward(gradsum.tensor(2.0, dtype=gradsum.float64))
    to.backward(torch.tensor(2.0, dtype=torch.float64))
    _same(g.grad, t.grad)
    g3, t3 = _pair(np.array([0, 0, 0]))
    _raises_alike(lambda: gradsum.index_select(g, 0, g3), lambda: torch.index_select(t, 0, t3))
    gs, ts = _pair(0.5, requires_grad=True)
    go, to = gradsum.index_add(g, -1, gi, gs), torch.index_add(t, -1, ti, ts)
    _same(go, to)
    go.backward(gradsum.tensor(3.0, dtype=gradsum.float64))
    to.backward(torch.tensor(3.0, dtype=torch.float64))
    _same(gs.grad, ts.grad)


_NAN = float("nan")
LEFTOVER_CASES = {
    "argsort descending, nan first": lambda L: L.argsort(L.tensor([1.0, _NAN, 3.0, 3.0, _NAN]),
                                                         descending=True),
    "argsort descending along dim 0": lambda L: L.argsort(
        L.tensor([[1.0, _NAN], [_NAN, 2.0], [3.0, 1.0]]), dim=0, descending=True),
    "sort descending, nan first": lambda L: L.sort(L.tensor([1.0, _NAN, 3.0]),
                                                   descending=True)[0],
    "topk with nan": lambda L: L.topk(L.tensor([1.0, _NAN, 3.0]), 2)[0],
    "argsort descending at int64 min": lambda L: L.argsort(L.tensor([0, -(2**63), 5]),
                                                           descending=True),
    "argsort of a 0-d tensor, dim 2": lambda L: L.argsort(L.tensor(1.0), dim=2),
    "masked_select, shapes that do not broadcast": lambda L: L.masked_select(
        L.ones(3), L.ones(2, dtype=L.bool)),
    "repeat with no repeats": lambda L: L.ones(2).repeat(),
    "squeeze of a 0-d tensor, dim 2": lambda L: L.tensor(1.0).squeeze(2),
    "flip of a 0-d tensor, dim 1": lambda L: L.tensor(1.0).flip((1,)),
    "sub_ of a bool": lambda L: L.ones(2).sub_(False),
    "cumsum with dtype": lambda L: L.cumsum(L.tensor([1, 2]), 0, dtype=L.float64),
}


@pytest.mark.parametrize("case", list(LEFTOVER_CASES))
def test_sort_and_0d_dim_edges_like_torch(case):
    """Descending sorts put nan first (torch's nan is the largest value) and stay stable;
    0-d tensors accept only dim 0 or -1; a few argument errors take torch's type."""
    outcome = []
    for lib in (torch, gradsum):
        try:
            r = LEFTOVER_CASES[case](lib)
            outcome.append((r.tolist(), str(r.dtype).split(".")[-1]))
        except (RuntimeError, IndexError, TypeError) as e:
            outcome.append(type(e).__name__)
    assert repr(outcome[1]) == repr(outcome[0])
