"""Side by side with torch: normalize, cosine_similarity and pairwise_distance, and their
modules."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from diff_helpers import as_np, check_grads, same_error, same_repr  # noqa: E402
from nn_helpers import wide_randn_arrays  # noqa: E402

Program = Callable[..., Any]


RS = np.random.RandomState(1234)
_arr = wide_randn_arrays(RS)


# -- normalize, cosine_similarity, pairwise_distance ------------------------------------------
@pytest.mark.parametrize(("fn", "shapes"), [
    (lambda lib, F, a: F.normalize(a), [(4, 5)]),
    (lambda lib, F, a: F.normalize(a, p=3, dim=0), [(4, 5)]),
    (lambda lib, F, a: F.normalize(a, p=1, dim=-1, eps=0.5), [(2, 3, 2)]),
    (lambda lib, F, a, b: F.cosine_similarity(a, b), [(4, 5), (4, 5)]),
    (lambda lib, F, a, b: F.cosine_similarity(a, b, dim=-1), [(4, 5), (1, 5)]),
    (lambda lib, F, a, b: F.cosine_similarity(a, b, 0, eps=10.0), [(3, 1), (3, 4)]),
    (lambda lib, F, a, b: F.pairwise_distance(a, b), [(4, 5), (4, 5)]),
    (lambda lib, F, a, b: F.pairwise_distance(a, b, p=3, keepdim=True), [(4, 5), (5,)]),
    (lambda lib, F, a, b: F.pairwise_distance(a, b, p=1, eps=0.1), [(2, 3, 4), (3, 4)]),
])
def test_distances(fn: Program, shapes: list[tuple[int, ...]]) -> None:
    """normalize / cosine_similarity / pairwise_distance: torch's values and first and second
    derivatives."""
    check_grads(fn, [_arr(*s) for s in shapes])


def test_cosine_similarity_zero_vector_first_order() -> None:
    # the clamped norm: a zero row gives 0 similarity and torch's (finite) gradient
    a = _arr(3, 4)
    a[1] = 0.0
    check_grads(lambda lib, F, x, y: F.cosine_similarity(x, y), [a, _arr(3, 4)], second=False)
    check_grads(lambda lib, F, x: F.normalize(x), [a], second=False)


def test_distance_modules() -> None:
    same_repr(lambda lib: lib.nn.CosineSimilarity(0, 1e-3))
    same_repr(lambda lib: lib.nn.PairwiseDistance(1.0, keepdim=True))
    a, b = _arr(3, 4), _arr(3, 4)
    for make in (lambda nn: nn.CosineSimilarity(), lambda nn: nn.PairwiseDistance(3.0)):
        t = make(torch.nn)(torch.tensor(a), torch.tensor(b))
        g = make(gradsum.nn)(gradsum.tensor(a), gradsum.tensor(b))
        np.testing.assert_allclose(as_np(g), as_np(t), rtol=1e-12)
    same_error(lambda lib: lib.nn.functional.cosine_similarity(lib.ones(2, dtype=lib.int64),
                                                               lib.ones(2, dtype=lib.int64),
                                                               dim=0))


F = gradsum.nn.functional
