"""Side by side with torch: ``F.gumbel_softmax``. The noise comes from each library's own
generator (gradsum's stream is not torch's), so each library's samples are checked against
its own rules and the outcomes compared: a soft sample is a distribution along ``dim``; a
hard one is the one-hot of the soft sample drawn from the same seed, with the soft sample's
gradient (straight through); shapes, dtypes, grad_fn names, warnings and errors as torch's."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gradsum

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)


def _program(m, shape, dim, tau, dtype):
    rng = np.random.default_rng(3)
    logits_np = rng.standard_normal(shape)
    weight = m.tensor(rng.standard_normal(shape), dtype=getattr(m, dtype))
    logits = m.tensor(logits_np, dtype=getattr(m, dtype), requires_grad=True)
    F = m.nn.functional
    m.manual_seed(5)
    soft = F.gumbel_softmax(logits, tau=tau, dim=dim)
    (g_soft,) = m.autograd.grad((soft * weight).sum(), logits)
    m.manual_seed(5)
    hard = F.gumbel_softmax(logits, tau=tau, hard=True, dim=dim)
    (g_hard,) = m.autograd.grad((hard * weight).sum(), logits)
    s = soft.detach().numpy()
    h = hard.detach().numpy()
    one_hot = (np.arange(shape[dim]).reshape([-1 if d == dim % len(shape) else 1
                                              for d in range(len(shape))])
               == np.expand_dims(s.argmax(axis=dim), dim))
    tol = 1e-6 if dtype == "float32" else 1e-12
    return (tuple(soft.shape), str(soft.dtype).split(".")[-1], soft.requires_grad,
            type(soft.grad_fn).__name__, type(hard.grad_fn).__name__,
            bool(np.allclose(s.sum(axis=dim), 1, atol=tol)), bool((s >= 0).all()),
            bool(np.array_equal(h, one_hot.astype(h.dtype))),
            bool(np.allclose(g_hard.numpy(), g_soft.numpy(), atol=tol)))


@pytest.mark.parametrize("shape,dim", [((4, 5), -1), ((4, 5), 0), ((2, 3, 4), 1), ((6,), 0)])
@pytest.mark.parametrize("tau", [1.0, 0.5, 3.0])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_samples_follow_torch_s_rules(shape, dim, tau, dtype):
    got = [_program(m, shape, dim, tau, dtype) for m in (torch, gradsum)]
    assert got[1] == got[0]
    assert got[1][5:] == (True, True, True, True)  # (holds in torch too: the rules above)


def test_a_fixed_seed_repeats_within_gradsum():
    F = gradsum.nn.functional
    gradsum.manual_seed(1)
    a = F.gumbel_softmax(gradsum.zeros(3, 4))
    gradsum.manual_seed(1)
    b = F.gumbel_softmax(gradsum.zeros(3, 4))
    assert a.tolist() == b.tolist()


@pytest.mark.parametrize("kwargs", [{"eps": 1e-5}, {"eps": 1e-10}, {"dim": 2}, {"dim": -3}])
def test_warnings_and_errors(kwargs):
    def run(m):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                m.nn.functional.gumbel_softmax(m.zeros(2, 3), **kwargs)
                outcome = "ok"
            except Exception as e:
                outcome = type(e).__name__
        return [(w.category.__name__, str(w.message)) for w in caught], outcome

    assert run(gradsum) == run(torch)
