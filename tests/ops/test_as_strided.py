"""``as_strided`` side by side with torch: overlapping windows, views of views, storage
offsets, a transposed input, first and second order gradients and the bounds error."""

from __future__ import annotations

import numpy as np
import pytest

import gradsum
from gradsum.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch", reason="the reference results come from torch")


def _pair(values: np.ndarray, grad: bool = False) -> tuple[gradsum.Tensor, torch.Tensor]:
    return (gradsum.tensor(values, requires_grad=grad),
            torch.tensor(values, requires_grad=grad))


CASES = [
    ((8,), (4, 3), (1, 1), None),       # sliding windows (overlapping)
    ((8,), (3, 3), (2, 1), 1),           # overlapping, non-zero offset
    ((3, 4), (2, 3), (4, 1), 5),
    ((3, 4), (3, 2), (0, 1), 2),         # a stride of 0
    ((6,), (), (), 4),                   # a scalar
    ((6,), (0, 3), (1, 1), None),        # empty
]


@pytest.mark.parametrize("shape,size,stride,offset", CASES)
def test_forward_and_grad(shape, size, stride, offset):
    vals = np.arange(float(np.prod(shape))).reshape(shape) * 0.5 + 1.0
    g, t = _pair(vals, grad=True)
    gy, ty = g.as_strided(size, stride, offset), t.as_strided(size, stride, offset)
    np.testing.assert_allclose(gy.detach().numpy(), ty.detach().numpy())
    assert gy.shape == tuple(ty.shape) and gy.stride() == ty.stride()
    assert gy.storage_offset() == ty.storage_offset()
    assert gy.grad_fn.name() == ty.grad_fn.name() == "AsStridedBackward0"
    w = np.random.default_rng(0).normal(size=tuple(ty.shape))
    (gy * gradsum.tensor(w)).sum().backward()
    (ty * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy())


def test_view_semantics():
    g, t = _pair(np.zeros(6))
    gv, tv = gradsum.as_strided(g, (2, 2), (2, 1), 1), torch.as_strided(t, (2, 2), (2, 1), 1)
    assert gv._base is g and tv._base is t
    gv.add_(1.0)
    tv.add_(1.0)
    np.testing.assert_allclose(g.numpy(), t.numpy())
    assert g._version == t._version == 1


def test_views_of_views_and_offsets():
    vals = np.arange(12.0)
    g, t = _pair(vals, grad=True)
    gs, ts = g[3:], t[3:]
    assert gs.as_strided((2,), (2,)).storage_offset() == ts.as_strided((2,), (2,)).storage_offset()
    gv = gs.as_strided((3, 2), (2, 1)).as_strided((2, 2), (1, 3), 4)
    tv = ts.as_strided((3, 2), (2, 1)).as_strided((2, 2), (1, 3), 4)
    np.testing.assert_allclose(gv.detach().numpy(), tv.detach().numpy())
    assert gv._base is g and tv._base is t
    gv.sum().backward()
    tv.sum().backward()
    np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy())


def test_transposed_and_expanded_input():
    vals = np.arange(12.0).reshape(3, 4)
    g, t = _pair(vals, grad=True)
    gy = g.t().as_strided((3, 3), (1, 2), 1)
    ty = t.t().as_strided((3, 3), (1, 2), 1)
    np.testing.assert_allclose(gy.detach().numpy(), ty.detach().numpy())
    (gy * gy).sum().backward()
    (ty * ty).sum().backward()
    np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy())
    # an input whose elements share memory: the gradient is divided among them
    g, t = _pair(np.arange(1.0, 7.0), grad=True)
    g[:2].expand(3, 2).as_strided((2, 2), (1, 1), 0).sum().backward()
    t[:2].expand(3, 2).as_strided((2, 2), (1, 1), 0).sum().backward()
    np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy())


def test_gradcheck_and_gradgradcheck():
    x = gradsum.tensor(np.random.default_rng(1).normal(size=7), dtype=gradsum.float64,
                       requires_grad=True)

    def f(a):
        return (a.as_strided((4, 3), (1, 1)) ** 2)

    assert gradcheck(f, (x,))
    assert gradgradcheck(f, (x,))
    y = gradsum.tensor(np.random.default_rng(2).normal(size=(3, 4)), dtype=gradsum.float64,
                       requires_grad=True)

    def h(a):
        return a.t().as_strided((2, 3), (2, 1), 3) * a.as_strided((2, 3), (1, 1))

    assert gradcheck(h, (y,))
    assert gradgradcheck(h, (y,))


@pytest.mark.parametrize("args", [
    ((3, 2), (2, 1), 1), ((2, 2), (1,), None), ((2,), (1,), -1), ((2, 2), (-1, 1), None),
    ((-1, 2), (1, 1), None),
])
def test_errors(args):
    g, t = _pair(np.arange(6.0, dtype=np.float32))
    with pytest.raises(RuntimeError) as te:
        t.as_strided(*args)
    with pytest.raises(RuntimeError) as ge:
        g.as_strided(*args)
    assert str(ge.value) == str(te.value)
    with pytest.raises(TypeError):
        g.as_strided(2, 2)
