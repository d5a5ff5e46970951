"""Side by side with torch: einsum's error messages and its double backward through a diagonal
and a broadcast."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from diff_helpers import pair64 as _pair  # noqa: E402
from diff_helpers import same_tensor as _same  # noqa: E402


@pytest.mark.parametrize(("eq", "shapes", "phrase"), [
    ("ij,jk->ik", [(2, 3)], "fewer operands"),
    ("ij", [(2, 3), (3,)], "more operands"),
    ("ij,jk->ik", [(2, 3), (2, 3)], "does not broadcast"),
    ("ij->k", [(2, 3)], "does not appear"),
    ("ii->i", [(3, 4)], "sizes don't match"),
    ("i1->", [(3,)], "subscripts must be in [a-zA-Z]"),
])
def test_einsum_error_messages(eq: str, shapes: list[tuple[int, ...]], phrase: str) -> None:
    with pytest.raises(RuntimeError) as te:
        torch.einsum(eq, *[torch.zeros(s) for s in shapes])
    with pytest.raises(RuntimeError) as ge:
        gradsum.einsum(eq, *[gradsum.zeros(s) for s in shapes])
    assert phrase in str(te.value) and phrase in str(ge.value)
    assert str(ge.value).startswith("einsum():")


@pytest.mark.parametrize("eq", ["...ij->......", "...ij->...i.", "ij->i.j", "i.j->ij"])
def test_einsum_stray_dot_texts_are_torchs(eq: str) -> None:
    """torch picks the output's stray-'.' text by whether the output already had an ellipsis
    ("...ij->...i." is "an ellipsis (...) was already found", not "not part of any")."""
    with pytest.raises(RuntimeError) as te:
        torch.einsum(eq, torch.zeros(2, 2, 2))
    with pytest.raises(RuntimeError) as ge:
        gradsum.einsum(eq, gradsum.zeros(2, 2, 2))
    assert str(ge.value) == str(te.value)


def test_einsum_double_backward_through_diagonal_and_broadcast() -> None:
    ga, ta = _pair(np.arange(18.0).reshape(2, 3, 3) / 5)
    gb, tb = _pair(np.sin(np.arange(6.0)).reshape(1, 3, 2))
    gy = gradsum.einsum("bii,bij->bj", ga * ga, gb)
    ty = torch.einsum("bii,bij->bj", ta * ta, tb)
    _same(gy, ty)
    g1 = gradsum.autograd.grad(gy.sum(), (ga, gb), create_graph=True)
    t1 = torch.autograd.grad(ty.sum(), (ta, tb), create_graph=True)
    for g, t in zip(g1, t1):
        _same(g, t)
    g2 = gradsum.autograd.grad(g1[0].sum() + g1[1].sum(), (ga, gb))
    t2 = torch.autograd.grad(t1[0].sum() + t1[1].sum(), (ta, tb))
    for g, t in zip(g2, t2):
        _same(g, t)
