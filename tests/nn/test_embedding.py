"""Side by side with torch: Embedding's argument checks, ``from_pretrained`` and its
``max_norm`` / ``scale_grad_by_freq`` options."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from diff_helpers import (  # noqa: E402
    as_np,
    same_error,
    )
from nn_helpers import randn_arrays  # noqa: E402


def test_embedding_from_pretrained_asserts_2d() -> None:
    same_error(lambda lib: lib.nn.Embedding.from_pretrained(lib.ones(3)))


RS = np.random.RandomState(4321)
_arr = randn_arrays(RS)


def test_embedding_max_norm_and_scale_grad_by_freq() -> None:
    w0 = _arr(6, 3) * 2
    idx = np.array([[0, 2, 2], [5, 0, 2]])
    res = []
    for lib in (torch, gradsum):
        w = lib.tensor(w0, dtype=lib.float64, requires_grad=True)
        y = lib.nn.functional.embedding(lib.tensor(idx), w, max_norm=1.5,
                                        scale_grad_by_freq=True)
        (y * y).sum().backward()
        version = w._version
        res.append((as_np(y), as_np(w), as_np(w.grad), version))
        m = lib.nn.Embedding(6, 3, max_norm=1.0, norm_type=1.0)
        with lib.no_grad():
            m.weight.copy_(lib.tensor(w0))
        m(lib.tensor(idx))
        res.append((as_np(m.weight),))
    for a, b in zip(res[0][:3], res[2][:3]):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(res[3][0], res[1][0], rtol=1e-6, atol=1e-6)  # (float32)
    assert res[2][3] == res[0][3]
