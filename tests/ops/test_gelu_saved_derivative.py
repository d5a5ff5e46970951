"""Exact float32 GELU keeps its forward's derivative for the first backward: the same bits
as the derivative recomputed from the saved input, and torch's values."""

import numpy as np
import pytest

import gradsum
from gradsum.ops.activation import _gelu_grad

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]")


def _x(n: int = 5000) -> np.ndarray:
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(n) * 4).astype(np.float32)
    x[:6] = [0.0, -0.0, 1e-45, -1e-45, 14.0, -14.0]
    return x


def test_saved_derivative_is_the_recomputed_one() -> None:
    x = _x()
    g = np.random.default_rng(1).standard_normal(x.shape).astype(np.float32)
    xt = gradsum.tensor(x, requires_grad=True)
    out = gradsum.nn.functional.gelu(xt)
    assert out.grad_fn.deriv is not None
    out.backward(gradsum.tensor(g), retain_graph=True)
    first = xt.grad.numpy().copy()
    assert out.grad_fn.deriv is None  # (dropped after use)
    np.testing.assert_array_equal(first, _gelu_grad(g, x, "none"))
    xt.grad = None
    out.backward(gradsum.tensor(g))  # (retained graph: recomputed, the same bits)
    np.testing.assert_array_equal(xt.grad.numpy(), first)
    ref = torch.tensor(x, requires_grad=True)
    torch.nn.functional.gelu(ref).backward(torch.tensor(g))
    np.testing.assert_allclose(first, ref.grad.numpy(), rtol=2e-6, atol=1e-6)


def test_no_saved_derivative_without_grad_or_under_hooks() -> None:
    x = _x(100)
    assert gradsum.nn.functional.gelu(gradsum.tensor(x)).grad_fn is None
    xt = gradsum.tensor(x, requires_grad=True)
    with gradsum.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        out = gradsum.nn.functional.gelu(xt)
        assert out.grad_fn.deriv is None
    out.sum().backward()
    np.testing.assert_array_equal(xt.grad.numpy(), _gelu_grad(np.ones_like(x), x, "none"))


def test_modified_input_still_raises() -> None:
    xt = gradsum.tensor(_x(100), requires_grad=True)
    y = xt * 1.0
    out = gradsum.nn.functional.gelu(y)
    with gradsum.no_grad():
        y.add_(1.0)
    with pytest.raises(RuntimeError):
        out.sum().backward()


def test_double_backward_through_the_rule() -> None:
    x = _x(200)
    xt = gradsum.tensor(x, requires_grad=True)
    (gx,) = gradsum.autograd.grad(gradsum.nn.functional.gelu(xt).sum(), xt, create_graph=True)
    gx.sum().backward()
    ref = torch.tensor(x, requires_grad=True)
    (rx,) = torch.autograd.grad(torch.nn.functional.gelu(ref).sum(), ref, create_graph=True)
    rx.sum().backward()
    np.testing.assert_allclose(gx.detach().numpy(), rx.detach().numpy(), rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(xt.grad.numpy(), ref.grad.numpy(), rtol=2e-5, atol=1e-5)


def test_blocks_give_the_whole_arrays_bits(monkeypatch) -> None:
    from gradsum.ops import _erf

    x = _x(6000).reshape(60, 100)
    whole = _erf.gelu_f32(x, True)
    monkeypatch.setattr(_erf, "GELU_BLOCK", 128)
    blocked = _erf.gelu_f32(x, True)
    for w, b in zip(whole, blocked):
        assert b.shape == x.shape
        np.testing.assert_array_equal(b.view(np.int32), w.view(np.int32))
    out = gradsum.nn.functional.gelu(gradsum.tensor(x, requires_grad=True))
    np.testing.assert_array_equal(out.detach().numpy().view(np.int32), whole[0].view(np.int32))
    np.testing.assert_array_equal(out.grad_fn.deriv.view(np.int32), whole[1].view(np.int32))
    t = x.T  # (not C-contiguous: whole-array passes)
    np.testing.assert_array_equal(_erf.gelu_f32(t, False)[0], whole[0].T)
