"""Side by side with torch: views share storage and version counters, in-place writes through a
diagonal view propagate gradients (and an output saved by an in-place op on a view unpacks
through CopySlices), views follow an in-place op on their base."""

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
