"""Side-by-side checks of ``ops/selection.py`` that the op table cannot express: torch's tie
rules for median/nanmedian/kthvalue/mode on many random rows, the named-tuple return types,
the non-differentiable outputs whose backward raises (unique, bincount with weights), and
gradients through ties and multi-output nodes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from diff_helpers import pair64 as _pair  # noqa: E402
from diff_helpers import same_tensor as _same  # noqa: E402


# -- tie rules: torch's CPU indices, row by row -----------------------------------------------
@pytest.mark.parametrize("seed", range(4))
def test_tie_indices_match_torch_on_random_rows(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for n in (1, 2, 3, 7, 16, 17, 33, 64, 129):
        arr = rng.integers(0, 4, (6, n)).astype(np.float64)
        if seed % 2:
            arr[rng.random(arr.shape) < 0.15] = np.nan
        g, t = gradsum.tensor(arr), torch.tensor(arr)
        calls = [("median", (1,)), ("nanmedian", (1,)), ("kthvalue", (max(1, n // 3), 1))]
        if not seed % 2:
            calls.append(("mode", (1,)))
        for name, args in calls:
            gv, gi = getattr(gradsum, name)(g, *args)
            tv, ti = getattr(torch, name)(t, *args)
            _same(gv, tv)
            np.testing.assert_array_equal(gi.numpy(), ti.numpy(), err_msg=f"{name} n={n}")


def test_return_types_have_torch_names_and_fields() -> None:
    g, t = _pair([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]], requires_grad=False)
    for name, args in [("median", (1,)), ("nanmedian", (1,)), ("kthvalue", (2,)), ("mode", ())]:
        gr, tr = getattr(gradsum, name)(g, *args), getattr(torch, name)(t, *args)
        assert type(gr).__name__ == type(tr).__name__ == name
        assert gr._fields == ("values", "indices")
        _same(gr.values, tr.values)
        _same(gr.indices, tr.indices)
    gr, tr = gradsum.aminmax(g, dim=0), torch.aminmax(t, dim=0)
    assert type(gr).__name__ == type(tr).__name__ == "aminmax"
    _same(gr.min, tr.min)
    _same(gr.max, tr.max)
    gs, ts = gradsum.std_mean(g), torch.std_mean(t)
    assert type(gs) is tuple and type(ts) is tuple


def test_methods_and_inplace_scatter_reduce() -> None:
    g, t = _pair([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]])
    _same(g.median(), t.median())
    _same(g.quantile(0.3, dim=1), t.quantile(0.3, dim=1))
    _same(g.take(gradsum.tensor([0, 4])), t.take(torch.tensor([0, 4])))
    gi, ti = gradsum.tensor([[0, 0, 1]]), torch.tensor([[0, 0, 1]])
    gy, ty = g * 1, t * 1
    gs, ts = _pair([[1.0, 7.0, -1.0]])
    gy.scatter_reduce_(0, gi, gs, "amax", include_self=False)
    ty.scatter_reduce_(0, ti, ts, "amax", include_self=False)
    assert gy.grad_fn.name() == type(ty.grad_fn).__name__ == "ScatterReduceBackward0"
    _same(gy, ty)
    up = np.arange(6.0).reshape(2, 3)
    gy.backward(gradsum.tensor(up))
    ty.backward(torch.tensor(up))
    _same(g.grad, t.grad)
    _same(gs.grad, ts.grad)


# -- gradients at ties and through two-output nodes --------------------------------------------
def test_median_without_dim_shares_the_gradient_among_ties() -> None:
    g, t = _pair([3.0, 1.0, 2.0, 1.0, 3.0, 2.0])
    gradsum.median(g).backward()
    torch.median(t).backward()
    _same(g.grad, t.grad)
    g2, t2 = _pair([1.0, float("nan"), 2.0, float("nan")])
    gradsum.median(g2).backward()
    torch.median(t2).backward()
    _same(g2.grad, t2.grad)


@pytest.mark.parametrize("name", ["median", "kthvalue", "mode"])
def test_dim_reductions_send_the_gradient_to_the_chosen_index(name: str) -> None:
    vals = np.array([[2.0, 1.0, 2.0, 1.0, 2.0], [0.0, 0.0, 3.0, 3.0, 1.0]])
    g, t = _pair(vals)
    args = (3, 1) if name == "kthvalue" else (1,)
    gv, gi = getattr(gradsum, name)(g, *args)
    tv, ti = getattr(torch, name)(t, *args)
    np.testing.assert_array_equal(gi.numpy(), ti.numpy())
    gv.sum().backward()
    tv.sum().backward()
    _same(g.grad, t.grad)


@pytest.mark.parametrize("fn", ["std_mean", "var_mean", "aminmax"])
def test_two_output_nodes_with_one_output_used(fn: str) -> None:
    arr = np.array([[1.0, 4.0, 4.0], [2.0, -1.0, 0.5]])
    for k in (0, 1):
        g, t = _pair(arr)
        kw: dict[str, Any] = {"dim": 1}
        gout, tout = getattr(gradsum, fn)(g, **kw), getattr(torch, fn)(t, **kw)
        gout[k].sum().backward()
        tout[k].sum().backward()
        _same(g.grad, t.grad)


# -- non-differentiable outputs ------------------------------------------------------------------
def test_unique_records_a_node_whose_backward_raises_like_torch() -> None:
    g, t = _pair([2.0, 1.0, 2.0])
    gu, tu = gradsum.unique(g), torch.unique(t)
    assert gu.requires_grad and tu.requires_grad
    assert gu.grad_fn.name() == type(tu.grad_fn).__name__ == "Unique2Backward0"
    with pytest.raises(NotImplementedError) as te:
        tu.sum().backward()
    with pytest.raises(NotImplementedError) as ge:
        gu.sum().backward()
    assert str(ge.value) == str(te.value)
    gc = gradsum.unique_consecutive(g)
    assert gc.grad_fn.name() == type(torch.unique_consecutive(t).grad_fn).__name__


def test_bincount_with_weights_that_require_grad() -> None:
    gw, tw = _pair([0.5, 1.5, 2.0])
    gb = gradsum.bincount(gradsum.tensor([0, 2, 2]), weights=gw)
    tb = torch.bincount(torch.tensor([0, 2, 2]), weights=tw)
    _same(gb, tb)
    assert gb.grad_fn.name() == type(tb.grad_fn).__name__ == "NotImplemented"
    with pytest.raises(RuntimeError) as te:
        tb.sum().backward()
    with pytest.raises(RuntimeError) as ge:
        gb.sum().backward()
    assert str(ge.value) == str(te.value)


def test_histc_and_searchsorted_outputs_do_not_require_grad() -> None:
    g, t = _pair([0.1, 0.5, 0.5, 0.9])
    gh, th = gradsum.histc(g, bins=4, min=0, max=1), torch.histc(t, bins=4, min=0, max=1)
    _same(gh, th)
    assert not gh.requires_grad and not th.requires_grad


def test_meshgrid_outputs_are_views_and_warns_without_indexing() -> None:
    g, t = _pair([1.0, 2.0])
    g2, t2 = _pair([3.0, 4.0, 5.0])
    with pytest.warns(UserWarning, match="indexing"):
        ga, gb = gradsum.meshgrid(g, g2)
    ta, tb = torch.meshgrid(t, t2, indexing="ij")
    _same(ga, ta)
    _same(gb, tb)
    assert ga._base is not None and ta._base is not None
    assert ga.grad_fn.name() == type(ta.grad_fn).__name__ == "ExpandBackward0"


def test_scatter_reduce_with_src_larger_than_index_differs_from_torch() -> None:
    """torch 2.13's backward fails its own shape check when src is larger than index (its
    gradient for src has index's shape); gradsum returns src's shape, zeros outside."""
    g, t = _pair(np.zeros((2, 3)))
    gs, ts = _pair(np.ones((2, 3)))
    idx = [[0, 1], [2, 2]]
    gy = gradsum.scatter_reduce(g, 1, gradsum.tensor(idx), gs, "sum")
    ty = torch.scatter_reduce(t, 1, torch.tensor(idx), ts, "sum")
    _same(gy, ty)
    with pytest.raises(RuntimeError, match="invalid gradient"):
        ty.sum().backward()
    gy.sum().backward()
    assert gs.grad.tolist() == [[1.0, 1.0, 0.0], [1.0, 1.0, 0.0]]


@pytest.mark.parametrize(("call", "exc"), [
    (lambda m: m.kthvalue(m.zeros(3), 4), RuntimeError),
    (lambda m: m.median(m.zeros(0, 3), 0), IndexError),
    (lambda m: m.quantile(m.zeros(3), 2.0), RuntimeError),
    (lambda m: m.take(m.zeros(3), m.tensor([3])), IndexError),
    (lambda m: m.bincount(m.tensor([-1])), RuntimeError),
    (lambda m: m.searchsorted(m.tensor([1.0]), m.tensor([1.0]), side="up"), RuntimeError),
    (lambda m: m.scatter_reduce(m.zeros(3), 0, m.tensor([0]), m.ones(1), "add"), RuntimeError),
    (lambda m: m.scatter_reduce(m.zeros(3, requires_grad=True), 0, m.tensor([0]), m.ones(1),
                                "max").sum().backward(), RuntimeError),
])
def test_errors_match_torch(call: Any, exc: type[Exception]) -> None:
    with pytest.raises(exc):
        call(torch)
    with pytest.raises(exc) as e:
        call(gradsum)
    assert len(str(e.value)) > 20
