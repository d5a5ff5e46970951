"""Side by side with torch: gradcheck on non-contiguous and overlapping inputs."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the side-by-side tests compare with torch")

import gradsum  # noqa: E402


def test_gradcheck_on_non_contiguous_and_overlapping_inputs() -> None:
    # a transposed leaf is perturbed in place element by element (no flat copy); an expanded
    # input (stride 0) is refused with torch's RuntimeError
    base = np.random.default_rng(0).standard_normal((3, 4))
    for m in (torch, gradsum):
        a = m.tensor(base).T.detach().requires_grad_()
        assert not a.is_contiguous()
        assert m.autograd.gradcheck(lambda t: (t * t).sum(0), (a,))
        assert m.autograd.gradgradcheck(lambda t: (t * t * t).sum(0), (a,))
        b = m.tensor([2.0], dtype=m.float64).expand(3).detach().requires_grad_()
        with pytest.raises(RuntimeError, match="has a dimension with stride 0"):
            m.autograd.gradcheck(lambda t: t * 2, (b,))
