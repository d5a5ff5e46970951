"""Side by side with torch: cdist's first-order gradient (zero distances included) and its double
backward where torch's own node has none."""

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
