"""Side by side with torch: cumprod's gradient with zeros (first and second order, along an inner
dim of a batch) and cummax / cummin at ties and nan."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from diff_helpers import pair64 as _pair  # noqa: E402
from diff_helpers import same_tensor as _same  # noqa: E402


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
