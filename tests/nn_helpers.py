"""Shared helpers for the nn/optim tests: build the same values in gradsum and torch, run a
function on both, compare outputs and gradients."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import gradsum


def g_of(a: np.ndarray, requires_grad: bool = False) -> gradsum.Tensor:
    return gradsum.tensor(np.array(a), requires_grad=requires_grad)


def t_of(torch: Any, a: np.ndarray, requires_grad: bool = False) -> Any:
    return torch.tensor(np.array(a), requires_grad=requires_grad)


def to_np(t: Any) -> np.ndarray:
    if isinstance(t, gradsum.Tensor):
        return np.array(t.detach().numpy())
    return t.detach().numpy()


def compare(
    torch: Any,
    fn_g: Callable[..., Any],
    fn_t: Callable[..., Any],
    arrays: Sequence[np.ndarray],
    diff: Sequence[bool] | None = None,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    seed: int = 0,
) -> None:
    """Run ``fn_g`` on gradsum tensors and ``fn_t`` on torch tensors made from ``arrays``;
    check outputs and the gradients of ``sum(out * r)`` for a random ``r``."""
    diff = [a.dtype.kind == "f" for a in arrays] if diff is None else list(diff)
    gs = [g_of(a, d) for a, d in zip(arrays, diff)]
    ts = [t_of(torch, a, d) for a, d in zip(arrays, diff)]
    out_g, out_t = fn_g(*gs), fn_t(*ts)
    np.testing.assert_allclose(to_np(out_g), to_np(out_t), rtol=rtol, atol=atol)
    if not any(diff) or not out_t.requires_grad:
        return
    r = np.random.default_rng(seed).standard_normal(tuple(out_t.shape)).astype(
        to_np(out_t).dtype)
    (out_g * g_of(r)).sum().backward()
    (out_t * t_of(torch, r)).sum().backward()
    for g, t, d in zip(gs, ts, diff):
        if d:
            assert g.grad is not None, "gradsum produced no gradient where torch did"
            np.testing.assert_allclose(to_np(g.grad), to_np(t.grad), rtol=rtol, atol=atol)
