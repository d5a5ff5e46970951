"""logit's backward on arrays (no graph recorded) against its composed rule (under
``create_graph``) and torch: the same bits, with and without ``eps``, inside and outside
[0, 1], at nan and inf. (With ``eps``, torch's vectorised kernel gives 0 at a nan input whose
gradient is inf or nan, where both gradsum rules give nan: not compared there.)"""

from __future__ import annotations

import numpy as np
import pytest

import gradsum

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]")

_POINTS = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, 0.5, 1e-3, 1 - 1e-3, -0.2, 1.5]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("eps", [None, 1e-3, 0.2, -1.0])
def test_logit_backward_array_path_matches_composed_rule_and_torch(dtype: str,
                                                                   eps: float | None) -> None:
    rng = np.random.default_rng(7)
    x = np.concatenate([np.array(_POINTS), rng.random(3000) * 1.2 - 0.1]).astype(dtype)
    g = rng.standard_normal(x.size).astype(dtype)
    g[:4] = [np.inf, np.nan, -np.inf, 0.0]
    grads = []
    for create_graph in (False, True):
        a = gradsum.tensor(x, requires_grad=True)
        (d,) = gradsum.autograd.grad(gradsum.logit(a, eps), a, gradsum.tensor(g),
                                     create_graph=create_graph)
        grads.append(d.detach().numpy())
    t = torch.tensor(x, requires_grad=True)
    (ref,) = torch.autograd.grad(torch.logit(t, eps), t, torch.tensor(g))
    bits = np.int32 if dtype == "float32" else np.int64
    np.testing.assert_array_equal(grads[0].view(bits), grads[1].view(bits))
    keep = ~(np.isnan(x) & ~np.isfinite(g)) if eps is not None and eps >= 0 else slice(None)
    np.testing.assert_array_equal(grads[0].view(bits)[keep], ref.numpy().view(bits)[keep])
