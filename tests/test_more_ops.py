"""Side-by-side checks of the ops in ``ops/more.py`` that the op table cannot express: view
semantics (shared storage and version counters, in-place writes through a diagonal), torch's
first-order cdist gradient (its own node has no double backward), gradients at zeros and ties,
Tensor-method spellings and in-place variants, and error messages."""

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


# -- views ------------------------------------------------------------------------------------
@pytest.mark.parametrize(("name", "args"), [
    ("diagonal", ()), ("diagonal", (1,)), ("diagonal", (-1, 1, 0)), ("movedim", (0, 1)),
    ("moveaxis", ((0, 1), (1, 0))),
])
def test_views_share_storage_and_version(name: str, args: tuple[Any, ...]) -> None:
    g, t = gradsum.zeros(3, 4), torch.zeros(3, 4)
    gv, tv = getattr(g, name)(*args), getattr(t, name)(*args)
    assert tv._base is t and gv._base is g
    gv.add_(1.0)
    tv.add_(1.0)
    assert g._version == t._version == gv._version == tv._version == 1
    _same(g, t)
    g.mul_(3.0)
    t.mul_(3.0)
    _same(gv, tv)  # the view sees the base's write
    assert gv._version == tv._version == 2


def test_inplace_through_diagonal_view_propagates_gradients() -> None:
    gx, tx = _pair(np.arange(12.0).reshape(3, 4) / 7)
    gw, tw = _pair([1.5, -2.0, 0.5])
    gy, ty = gx * 2, tx * 2
    gd, td = gy.diagonal(), ty.diagonal()
    gd.mul_(gw)
    td.mul_(tw)
    assert gy.grad_fn.name() == type(ty.grad_fn).__name__ == "CopySlices"
    assert gy._version == ty._version == gd._version == td._version == 1
    _same(gy, ty)
    up = np.arange(12.0).reshape(3, 4) + 1
    (gy * gradsum.tensor(up)).sum().backward(retain_graph=True)
    (ty * torch.tensor(up)).sum().backward(retain_graph=True)
    _same(gx.grad, tx.grad)
    _same(gw.grad, tw.grad)
    gd.sum().backward()  # the view's gradient after the in-place op, through the new history
    td.sum().backward()
    _same(gx.grad, tx.grad)
    _same(gw.grad, tw.grad)


@pytest.mark.parametrize("hooks", [False, True])
def test_output_saved_by_inplace_op_on_view_unpacks_through_copyslices(hooks: bool) -> None:
    """An in-place op on a view saves its output; differentiating through the unpacked output
    (double backward) must go through the base's CopySlices, as the forward did. Reaching the
    wrapped node directly found its saved tensors already released with CopySlices's."""
    res = {}
    for lib in (gradsum, torch):
        a = lib.tensor([[0.4], [-0.9], [1.2]], dtype=lib.float64, requires_grad=True)
        ctx = (lib.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t)
               if hooks else None)
        if ctx is not None:
            ctx.__enter__()
        b = a.clone()
        v = b[None, :, :]
        v.exp_()
        if ctx is not None:
            ctx.__exit__(None, None, None)
        loss = (b * lib.tensor([[-0.26], [0.79], [1.0]], dtype=lib.float64)).sum()
        gs = lib.autograd.grad(loss, [b, a, v], create_graph=True, retain_graph=True,
                               allow_unused=True)
        assert [g is None for g in gs] == [False, False, True]
        total = loss + (gs[1] * gs[1]).sum()
        total.backward()  # (gradsum raised "already released" here)
        res[lib.__name__] = a.grad
    _same(res["gradsum"], res["torch"])


def test_view_follows_inplace_on_base() -> None:
    gx, tx = _pair(np.arange(6.0).reshape(2, 3))
    gy, ty = gx * 1, tx * 1
    gd, td = gy.diagonal(1), ty.diagonal(1)
    gm, tm = gy.movedim(0, 1), ty.movedim(0, 1)
    gy.mul_(3)
    ty.mul_(3)
    _same(gd, td)
    (gd.sum() + (gm * gm).sum()).backward()
    (td.sum() + (tm * tm).sum()).backward()
    _same(gx.grad, tx.grad)


def test_diagonal_setitem_and_fill() -> None:
    gx, tx = _pair(np.zeros((3, 3)))
    gy, ty = gx + 1, tx + 1
    gy.diagonal()[1:] = 5.0
    ty.diagonal()[1:] = 5.0
    _same(gy, ty)
    gy.sum().backward()
    ty.sum().backward()
    _same(gx.grad, tx.grad)


def test_diagonal_of_leaf_inplace_raises_like_torch() -> None:
    gx, tx = _pair(np.ones((2, 2)))
    with pytest.raises(RuntimeError):
        tx.diagonal().mul_(2)
    with pytest.raises(RuntimeError):
        gx.diagonal().mul_(2)
    assert gx.tolist() == [[1.0, 1.0], [1.0, 1.0]]


# -- cdist against torch's own node ------------------------------------------------------------
@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, float("inf"), 0.0, 0.5])
def test_cdist_first_gradient_matches_torch_including_zero_distance(p: float) -> None:
    a = np.array([[0.0, 1.0], [2.0, -1.0], [0.5, 0.5]])
    b = np.array([[0.0, 1.0], [1.0, 3.0]])  # row 0 of both: distance 0
    ga, ta = _pair(a)
    gb, tb = _pair(b)
    gd, td = gradsum.cdist(ga, gb, p=p), torch.cdist(ta, tb, p=p)
    _same(gd, td)
    assert gd.grad_fn.name() == td.grad_fn.name() == "CdistBackward0"
    up = np.arange(6.0).reshape(3, 2) - 2
    gd.backward(gradsum.tensor(up))
    td.backward(torch.tensor(up))
    _same(ga.grad, ta.grad)
    _same(gb.grad, tb.grad)


def test_cdist_double_backward_where_torch_has_none() -> None:
    gx, tx = _pair([[0.0, 1.0], [2.0, 0.5]])
    gy, ty = _pair([[1.0, 1.0]])
    (g1,) = gradsum.autograd.grad(gradsum.cdist(gx, gy).sum(), gx, create_graph=True)
    (t1,) = torch.autograd.grad(torch.cdist(tx, ty).sum(), tx, create_graph=True)
    _same(g1, t1)
    with pytest.raises(NotImplementedError):
        torch.autograd.grad(t1.sum(), tx)
    assert gradcheck_grad(lambda a: gradsum.cdist(a, gy.detach()), gx)


def gradcheck_grad(fn: Any, x: gradsum.Tensor) -> bool:
    from gradsum.autograd import gradgradcheck

    return gradgradcheck(fn, (x,), eps=1e-6, atol=1e-5, rtol=1e-4)


# -- cumprod at zeros, cummax/cummin ties and nans ---------------------------------------------
@pytest.mark.parametrize("values", [
    [2.0, 0.0, 3.0, 4.0], [0.0, 0.0, 2.0], [1.5, -2.0, 0.0], [0.0], [3.0, 0.0, 0.0, 0.0, 5.0],
])
def test_cumprod_gradient_with_zeros_first_and_second_order(values: list[float]) -> None:
    gx, tx = _pair(values)
    up = np.arange(len(values), dtype=np.float64) + 1
    gy, ty = gradsum.cumprod(gx, 0), torch.cumprod(tx, 0)
    (g1,) = gradsum.autograd.grad(gy, gx, gradsum.tensor(up), create_graph=True)
    (t1,) = torch.autograd.grad(ty, tx, torch.tensor(up), create_graph=True)
    _same(g1, t1)
    # the O(n) path (no graph) and the recorded O(n^2) path agree
    (g0,) = gradsum.autograd.grad(gradsum.cumprod(gx, 0), gx, gradsum.tensor(up))
    _same(g0, t1)
    if not t1.requires_grad:  # (one element: the gradient is the seed itself)
        assert not g1.requires_grad
        return
    w = np.linspace(-1, 1, len(values))
    (g2,) = gradsum.autograd.grad((g1 * gradsum.tensor(w)).sum(), gx, allow_unused=True)
    (t2,) = torch.autograd.grad((t1 * torch.tensor(w)).sum(), tx, allow_unused=True)
    if t2 is None:
        assert g2 is None or not g2.detach().numpy().any()
    else:
        _same(g2, t2)


def test_cumprod_zeros_along_inner_dim_of_a_batch() -> None:
    a = np.array([[[1.0, 0.0], [2.0, 3.0], [0.0, 4.0]], [[0.5, 1.0], [0.0, 0.0], [2.0, -1.0]]])
    for dim in (0, 1, 2, -1):
        gx, tx = _pair(a)
        gradsum.cumprod(gx, dim).sum().backward()
        torch.cumprod(tx, dim).sum().backward()
        _same(gx.grad, tx.grad)


@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_cummax_cummin_ties_and_nan(name: str) -> None:
    for vals in ([1.0, 1.0, 0.5, 1.0, 2.0, 2.0], [1.0, float("nan"), 3.0, float("nan"), 0.0],
                 [3.0, 2.0, 2.0, 1.0, 1.0]):
        gx, tx = _pair(vals)
        gv, gi = getattr(gradsum, name)(gx, 0)
        tv, ti = getattr(torch, name)(tx, 0)
        _same(gv, tv)
        assert gi.tolist() == ti.tolist()
        assert gv.grad_fn.name() == type(tv.grad_fn).__name__
        assert not gi.requires_grad and ti.grad_fn is None
        gv.sum().backward()
        tv.sum().backward()
        _same(gx.grad, tx.grad)
    gi, ti = gradsum.tensor([[2, 2, 1], [0, 3, 3]]), torch.tensor([[2, 2, 1], [0, 3, 3]])
    for dim in (0, 1):
        g, t = getattr(gi, name)(dim), getattr(ti, name)(dim)
        assert g.values.tolist() == t.values.tolist() and g.indices.tolist() == t.indices.tolist()


# -- Tensor methods and in-place variants ------------------------------------------------------
METHOD_CALLS: list[tuple[str, Any]] = [
    ("cumprod", lambda x: x.cumprod(1)), ("roll", lambda x: x.roll(1, 0)),
    ("roll", lambda x: x.roll((1, 2), (0, 1))), ("diagonal", lambda x: x.diagonal(1)),
    ("diag", lambda x: x.diag()), ("diag_embed", lambda x: x.diag_embed()),
    ("trace", lambda x: x.trace()), ("movedim", lambda x: x.movedim(0, 1)),
    ("moveaxis", lambda x: x.moveaxis(1, 0)),
    ("repeat_interleave", lambda x: x.repeat_interleave(2, dim=1)),
    ("kron", lambda x: x.kron(x)), ("logcumsumexp", lambda x: x.logcumsumexp(0)),
    ("cummax", lambda x: x.cummax(1)[0]), ("cummin", lambda x: x.cummin(0)[0]),
    ("fliplr", lambda x: x.fliplr()), ("flipud", lambda x: x.flipud()),
    ("rot90", lambda x: x.rot90(1, (1, 0))),
    ("addmm", lambda x: x.addmm(x, x.t(), beta=0.5, alpha=2)),
    ("addmv", lambda x: x[0].addmv(x, x[1])),
    ("baddbmm", lambda x: x.unsqueeze(0).baddbmm(x.unsqueeze(0), x.t().unsqueeze(0))),
    ("addbmm", lambda x: x.addbmm(x.unsqueeze(0), x.t().unsqueeze(0), alpha=3)),
]


@pytest.mark.parametrize(("name", "call"), METHOD_CALLS,
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(METHOD_CALLS)])
def test_methods_match_torch(name: str, call: Any) -> None:
    vals = np.array([[0.3, -1.2, 0.8], [1.1, 0.4, -0.6], [0.9, 0.2, 1.7]])
    gx, tx = _pair(vals)
    gy, ty = call(gx), call(tx)
    _same(gy, ty)
    gy.sum().backward()
    ty.sum().backward()
    _same(gx.grad, tx.grad)


INPLACE_CALLS: list[tuple[str, Any, Any]] = [
    ("cumprod_", np.array([[0.5, -1.0], [2.0, 0.0]]), lambda x, o: x.cumprod_(1)),
    ("addmm_", np.array([[0.5, -1.0], [2.0, 0.25]]), lambda x, o: x.addmm_(o, o, beta=0.5)),
    ("addmv_", np.array([0.5, -1.0]), lambda x, o: x.addmv_(o, o[0], alpha=2)),
    ("baddbmm_", np.array([[[0.5, -1.0], [2.0, 0.25]]]),
     lambda x, o: x.baddbmm_(o[None], o[None])),
    ("addbmm_", np.array([[0.5, -1.0], [2.0, 0.25]]), lambda x, o: x.addbmm_(o[None], o[None])),
]


@pytest.mark.parametrize(("name", "x", "call"), INPLACE_CALLS,
                         ids=[n for n, _, _ in INPLACE_CALLS])
def test_inplace_variants(name: str, x: Any, call: Any) -> None:
    gx, tx = _pair(x)
    go, to = _pair(np.array([[1.5, 0.5], [-0.5, 1.0]]))
    gy, ty = gx * 1, tx * 1
    assert call(gy, go) is gy and call(ty, to) is ty
    _same(gy, ty)
    assert gy._version == ty._version == 1
    assert gy.grad_fn.name() == type(ty.grad_fn).__name__
    gy.sum().backward()
    ty.sum().backward()
    _same(gx.grad, tx.grad)
    if to.grad is not None:
        _same(go.grad, to.grad)


def test_linalg_cross_and_default_dim() -> None:
    ga, ta = _pair(np.arange(15.0).reshape(5, 3) / 4)
    gb, tb = _pair(np.cos(np.arange(15.0)).reshape(5, 3))
    _same(gradsum.linalg.cross(ga, gb), torch.linalg.cross(ta, tb))
    gc, tc = gradsum.linalg.cross(ga, gb), torch.linalg.cross(ta, tb)
    assert gc.grad_fn.name() == type(tc.grad_fn).__name__ == "LinalgCrossBackward0"
    gc.sum().backward()
    tc.sum().backward()
    _same(ga.grad, ta.grad)
    _same(gb.grad, tb.grad)
    import gradsum.linalg as glinalg

    assert glinalg.cross is gradsum.linalg.cross
    with pytest.raises(RuntimeError) as te:
        torch.linalg.cross(torch.zeros(3, 5), torch.zeros(3, 5))
    with pytest.raises(RuntimeError) as ge:
        gradsum.linalg.cross(gradsum.zeros(3, 5), gradsum.zeros(3, 5))
    assert str(te.value).split(".")[0] in str(ge.value)


def test_repeat_interleave_forms() -> None:
    r = [2, 0, 3]
    assert (gradsum.repeat_interleave(gradsum.tensor(r)).tolist()
            == torch.repeat_interleave(torch.tensor(r)).tolist())
    gx, tx = _pair(np.arange(6.0).reshape(3, 2))
    gy = gradsum.repeat_interleave(gx, gradsum.tensor(r), dim=0, output_size=5)
    ty = torch.repeat_interleave(tx, torch.tensor(r), dim=0, output_size=5)
    _same(gy, ty)
    assert gy.grad_fn.name() == type(ty.grad_fn).__name__
    gz, tz = gx.repeat_interleave(3), tx.repeat_interleave(3)
    assert gz.grad_fn.name() == type(tz.grad_fn).__name__ == "ViewBackward0"
    (gy.sum() + gz.sum()).backward()
    (ty.sum() + tz.sum()).backward()
    _same(gx.grad, tx.grad)


def test_triangle_indices_dtypes() -> None:
    for args, kw in (((3, 4, 1), {}), ((4, 4), {"dtype": "int32"})):
        kg = {k: getattr(gradsum, v) for k, v in kw.items()}
        kt = {k: getattr(torch, v) for k, v in kw.items()}
        for name in ("triu_indices", "tril_indices"):
            g, t = getattr(gradsum, name)(*args, **kg), getattr(torch, name)(*args, **kt)
            assert g.tolist() == t.tolist() and g.dtype.name == str(t.dtype)[6:]
            assert not g.requires_grad


@pytest.mark.parametrize(("eq", "shapes", "phrase"), [
    ("ij,jk->ik", [(2, 3)], "fewer operands"),
    ("ij", [(2, 3), (3,)], "more operands"),
    ("ij,jk->ik", [(2, 3), (2, 3)], "does not broadcast"),
    ("ij->k", [(2, 3)], "does not appear"),
    ("ii->i", [(3, 4)], "sizes don't match"),
    ("i1->", [(3,)], "subscripts must be in [a-zA-Z]"),
])
def test_einsum_error_messages(eq: str, shapes: list[tuple[int, ...]], phrase: str) -> None:
    with pytest.raises(RuntimeError) as te:
        torch.einsum(eq, *[torch.zeros(s) for s in shapes])
    with pytest.raises(RuntimeError) as ge:
        gradsum.einsum(eq, *[gradsum.zeros(s) for s in shapes])
    assert phrase in str(te.value) and phrase in str(ge.value)
    assert str(ge.value).startswith("einsum():")


def test_einsum_double_backward_through_diagonal_and_broadcast() -> None:
    ga, ta = _pair(np.arange(18.0).reshape(2, 3, 3) / 5)
    gb, tb = _pair(np.sin(np.arange(6.0)).reshape(1, 3, 2))
    gy = gradsum.einsum("bii,bij->bj", ga * ga, gb)
    ty = torch.einsum("bii,bij->bj", ta * ta, tb)
    _same(gy, ty)
    g1 = gradsum.autograd.grad(gy.sum(), (ga, gb), create_graph=True)
    t1 = torch.autograd.grad(ty.sum(), (ta, tb), create_graph=True)
    for g, t in zip(g1, t1):
        _same(g, t)
    g2 = gradsum.autograd.grad(g1[0].sum() + g1[1].sum(), (ga, gb))
    t2 = torch.autograd.grad(t1[0].sum() + t1[1].sum(), (ta, tb))
    for g, t in zip(g2, t2):
        _same(g, t)
