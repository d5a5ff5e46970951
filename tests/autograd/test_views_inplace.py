"""Side by side with torch: in-place rules of views whose base was detached in place or written
without a record, no-grad views of bases that require grad, and a saved non-leaf detached in
place."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

pytest.importorskip("torch", reason="the side-by-side tests compare with torch")

import torch

import gradsum


def _norm(x: Any) -> Any:
    """A comparable form: tensors as (values, requires_grad), exceptions as their type."""
    if isinstance(x, (torch.Tensor, gradsum.Tensor)):
        return ("T", x.detach().tolist(), x.requires_grad)
    if isinstance(x, (list, tuple)):
        return type(x)(_norm(v) for v in x)
    return x


def _same(program: Any) -> None:
    out = []
    for lib in (torch, gradsum):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out.append(_norm(program(lib)))
        except Exception as e:  # (the type is what is compared)
            out.append(type(e))
    assert out[1] == out[0], out


@pytest.mark.parametrize("case", ["leaf", "nonleaf", "requires_grad_false"])
def test_inplace_on_a_view_of_a_base_detached_in_place_raises(case: str) -> None:
    # seed 10042 of the wider program sweep: torch asks whether the view requires grad and
    # whether its base is a leaf (now), not whether the base requires grad
    def program(m: Any) -> Any:
        x = m.ones(3, requires_grad=True)
        base = x * 1 if case == "nonleaf" else x
        v = base[:2]
        if case == "requires_grad_false":
            x.requires_grad_(False)
        else:
            base.detach_()
        v.mul_(2)
        return v

    _same(program)


@pytest.mark.parametrize("case", ["read", "inplace", "follows_requires_grad_"])
def test_a_no_grad_view_requires_grad_while_its_base_does(case: str) -> None:
    # seed 10104 of the wider program sweep
    def program(m: Any) -> Any:
        x = m.ones(3, requires_grad=True)
        with m.no_grad():
            v = x[:1]
        before = v.requires_grad
        if case == "follows_requires_grad_":
            x.requires_grad_(False)
            mid = v.requires_grad
            x.requires_grad_(True)
            return before, mid, v.requires_grad
        x.detach_()
        if case == "inplace":
            v.mul_(2)
        return before, v.requires_grad, v.is_leaf, x._version

    _same(program)


def test_seed_10042_agrees_with_torch() -> None:
    from test_program_fuzz import check_seed

    assert check_seed(10042, allow_known=False) is None


def test_saved_non_leaf_detached_in_place_refuses_backward() -> None:
    # torch: a non-leaf saved as an input and detached in place since cannot be used; the
    # refused backward writes no .grad. Saved outputs and leaves are unaffected.
    def prog(m: Any) -> Any:
        x = m.ones(3, requires_grad=True)
        w = m.ones(3, requires_grad=True)
        y = x * 2
        z = (w * y).sum()
        y.detach_()
        with pytest.raises(RuntimeError, match="saved tensor that has been detached in-place"):
            z.backward()
        assert w.grad is None and x.grad is None
        y2 = x * 2
        e = y2.exp()
        s = (e * 1).sum()
        e.detach_()
        s.backward()  # (exp saved its output: still fine, as in torch)
        return x.grad.tolist()

    assert prog(torch) == pytest.approx(prog(gradsum), rel=1e-6)


def test_view_gets_a_new_grad_fn_after_an_unrecorded_write_to_its_base() -> None:
    # torch regenerates a grad-mode view's grad_fn once its base was written in no_grad
    # mode: the view is then outside graphs built before (autograd.grad finds it unused)
    def prog(m: Any) -> Any:
        x = m.ones(4, 2, dtype=m.float64, requires_grad=True)
        v = x.T
        y = v.pow(3)
        s = y.split(1, -1)[0]
        g0 = v.grad_fn
        with m.no_grad():
            x.zero_()
        r = m.autograd.grad(s, [v, y], m.ones(2, 1, dtype=m.float64), allow_unused=True)
        (v * 2).sum().backward()  # the new grad_fn still leads to x
        return v.grad_fn is g0, r[0] is None, r[1].tolist(), x.grad.tolist()

    assert prog(torch) == prog(gradsum)
