"""Side by side with torch: ``torch.poisson`` (dtypes, shapes, the ``PoissonBackward0`` node
and its zero gradient, zero/huge/infinite rates, errors). The samples come from gradsum's
own generator, so their values are checked against the distribution (fixed seeds: the
checks are deterministic), not against torch's numbers."""

from __future__ import annotations

import numpy as np
import pytest

import gradsum

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)


def _outcome(m, call):
    try:
        y = eval(call, {"m": m})
    except Exception as e:
        return type(e).__name__, str(e)[:40]
    return (tuple(y.shape), str(y.dtype).split(".")[-1], y.requires_grad,
            None if y.grad_fn is None else type(y.grad_fn).__name__)


@pytest.mark.parametrize("call", [
    "m.poisson(m.tensor([1.0, 2.0]))", "m.poisson(m.tensor([[1.0], [2.0]], dtype=m.float64))",
    "m.poisson(m.tensor(3.0))", "m.poisson(m.tensor([1.5], dtype=m.float16))",
    "m.poisson(m.tensor([1.0, 2.0], requires_grad=True))", "m.poisson(m.tensor([1, 2]))",
    "m.poisson(m.tensor([True]))", "m.poisson(m.tensor([-1.0, 2.0]))",
    "m.poisson(m.tensor([float('nan')]))", "m.poisson(m.zeros(0))",
    "m.poisson(m.tensor([1.0]), generator=m.Generator())",
])
def test_behaviour(call):
    assert _outcome(gradsum, call) == _outcome(torch, call)


def test_zero_gradient_and_degenerate_rates():
    def run(m):
        rate = m.tensor([0.0, 1e10, float("inf"), 1e20], dtype=m.float64, requires_grad=True)
        y = m.poisson(rate)
        (g,) = m.autograd.grad((y * 3).sum(), rate)
        v = y.detach().tolist()
        return g.tolist(), v[0], v[2], v[3], abs(v[1] - 1e10) < 1e6

    assert run(gradsum) == run(torch)


@pytest.mark.parametrize("rate", [0.3, 4.0, 250.0])
def test_samples_follow_the_distribution(rate):
    gradsum.manual_seed(11)
    y = gradsum.poisson(gradsum.full((20000,), rate, dtype=gradsum.float64)).numpy()
    assert (y >= 0).all() and (y == np.round(y)).all()
    sd = np.sqrt(rate / y.size)
    assert abs(y.mean() - rate) < 5 * sd
    assert abs(y.var() / rate - 1) < 0.1
    g = gradsum.Generator().manual_seed(3)
    a = gradsum.poisson(gradsum.full((5,), rate), generator=g)
    g.manual_seed(3)
    assert gradsum.poisson(gradsum.full((5,), rate), generator=g).tolist() == a.tolist()
