"""Layouts of new tensors made like another, against torch: ``clone()`` and the ``*_like``
factories keep a dense input's strides (torch's ``preserve_format``), lay out a non-dense
one densely in its memory order (torch's ``infer_dense_strides``), and follow an explicit
``memory_format=``; ``contiguous()`` is row-major. The values and the gradient are those of
torch either way; only strides (and so ``view``'s answers and speed) depend on the layout.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradsum

torch = pytest.importorskip("torch", reason="the layouts are compared with torch's")

# inputs made the same way in both libraries (no dimension of size 1: NumPy and torch
# disagree about the strides of those, which address nothing)
INPUTS: dict[str, Callable[[Any], Any]] = {
    "t": lambda m: m.zeros(3, 4).t(),
    "permute": lambda m: m.zeros(2, 3, 4).permute(2, 0, 1),
    "sliced": lambda m: m.zeros(2, 6)[:, ::2],
    "expand": lambda m: m.zeros(4).expand(3, 4),
    "expand_col": lambda m: m.zeros(4, 2).expand(3, 4, 2),
    "permute_sliced": lambda m: m.zeros(2, 3, 4).permute(2, 0, 1)[:, :, ::2],
    "nhwc": lambda m: m.zeros(2, 3, 4, 5)[:, :, ::2].permute(0, 2, 3, 1),
    "transpose_step": lambda m: m.zeros(3, 4, 5).transpose(0, 1)[::2],
    "t_of_sliced": lambda m: m.zeros(6, 4)[::2, ::2].t(),
    "contiguous": lambda m: m.zeros(2, 3),
}

LIKE: dict[str, Callable[[Any, Any], Any]] = {
    "clone": lambda m, x: x.clone(),
    "torch.clone": lambda m, x: m.clone(x),
    "empty_like": lambda m, x: m.empty_like(x),
    "zeros_like": lambda m, x: m.zeros_like(x),
    "ones_like": lambda m, x: m.ones_like(x),
    "full_like": lambda m, x: m.full_like(x, 2.5),
    "rand_like": lambda m, x: m.rand_like(x),
    "randn_like": lambda m, x: m.randn_like(x),
    "randint_like": lambda m, x: m.randint_like(x, 5),
    "ones_like(contiguous_format)": lambda m, x: m.ones_like(
        x, memory_format=m.contiguous_format),
    "zeros_like(preserve_format)": lambda m, x: m.zeros_like(
        x, memory_format=m.preserve_format),
    "contiguous()": lambda m, x: x.contiguous(),
}


@pytest.mark.parametrize("make", list(LIKE), ids=list(LIKE))
@pytest.mark.parametrize("inp", list(INPUTS), ids=list(INPUTS))
def test_strides_match_torch(inp: str, make: str) -> None:
    g = LIKE[make](gradsum, INPUTS[inp](gradsum))
    t = LIKE[make](torch, INPUTS[inp](torch))
    assert tuple(g.shape) == tuple(t.shape)
    assert g.stride() == t.stride(), (inp, make)
    assert g.is_contiguous() == t.is_contiguous()


def test_channels_last_like_matches_torch() -> None:
    for fmt in ("channels_last", "contiguous_format"):
        g = gradsum.empty_like(gradsum.zeros(2, 3, 4, 5), memory_format=getattr(gradsum, fmt))
        t = torch.empty_like(torch.zeros(2, 3, 4, 5), memory_format=getattr(torch, fmt))
        assert g.stride() == t.stride()


def test_clone_of_a_transposed_view_keeps_values_and_gradient() -> None:
    a = np.arange(12.0).reshape(3, 4)
    xs = [m.tensor(a, requires_grad=True) for m in (gradsum, torch)]
    outs = [x.t().clone() for x in xs]
    for y in outs:
        (y * y).sum().backward()
    assert outs[0].stride() == outs[1].stride() == (1, 4)
    np.testing.assert_array_equal(outs[0].detach().numpy(), outs[1].detach().numpy())
    np.testing.assert_array_equal(xs[0].grad.numpy(), xs[1].grad.numpy())
    assert type(outs[0].grad_fn).__name__ == outs[1].grad_fn.name() == "CloneBackward0"


def test_view_of_a_transposed_clone_raises_like_torch() -> None:
    errors = []
    for m in (gradsum, torch):
        try:
            m.zeros(3, 4).t().clone().view(12)
        except Exception as e:
            errors.append(type(e))
        else:
            errors.append(None)
    assert errors[0] is errors[1] is RuntimeError


def test_random_like_draws_in_memory_order() -> None:
    """A transposed ``rand_like`` holds the values a contiguous one would, in memory order:
    the same seed gives the same bytes in storage."""
    gradsum.manual_seed(0)
    a = gradsum.rand_like(gradsum.zeros(3, 4).t())
    gradsum.manual_seed(0)
    b = gradsum.rand_like(gradsum.zeros(3, 4))
    np.testing.assert_array_equal(a.numpy().T, b.numpy())
