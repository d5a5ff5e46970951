"""Side by side with torch: autograd.grad(is_grads_batched=True) and extra grad_outputs."""

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


@pytest.mark.parametrize("case", ["basic", "unused", "allow_unused", "materialize", "create",
                                  "shape", "none", "frees", "scalar", "too_many"])
def test_grad_is_grads_batched(case: str) -> None:
    def program(m: Any) -> Any:
        x = m.tensor([1.0, 2.0], requires_grad=True)
        u = m.ones(1, requires_grad=True)
        if case == "scalar":
            x = m.tensor(2.0, requires_grad=True)
            return m.autograd.grad(x * x, x, grad_outputs=m.ones(4), is_grads_batched=True)
        y = x * x
        go = {"shape": m.ones(3, 3), "none": None}.get(case, m.arange(6.0).reshape(3, 2))
        ins = [x, u] if case in ("unused", "allow_unused", "materialize") else [x]
        kw: dict[str, Any] = {"allow_unused": True} if case == "allow_unused" else {}
        if case == "materialize":
            kw = {"materialize_grads": True}
        if case == "create":
            kw = {"create_graph": True}
        if case == "too_many":
            go = [go, m.ones(3)]
        r = m.autograd.grad(y, ins, grad_outputs=go, is_grads_batched=True, **kw)
        if case == "frees":
            r = m.autograd.grad(y, ins, grad_outputs=go, is_grads_batched=True)
        return r

    _same(program)


@pytest.mark.parametrize("fn", ["backward", "grad"])
def test_extra_gradients_are_ignored_as_torchs_zip_does(fn: str) -> None:
    def program(m: Any) -> Any:
        x = m.ones(2, requires_grad=True)
        if fn == "grad":
            return m.autograd.grad(x.sum(), x, grad_outputs=[m.ones(()), m.ones(())])
        m.autograd.backward(x.sum(), grad_tensors=[m.ones(()), m.ones(())])
        return x.grad

    _same(program)
