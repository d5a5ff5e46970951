"""Side by side with torch: autograd.grad(is_grads_batched=True) and extra grad_outputs."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("torch", reason="the side-by-side tests compare with torch")


from autograd_helpers import same_exact


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

    same_exact(program)


@pytest.mark.parametrize("fn", ["backward", "grad"])
def test_extra_gradients_are_ignored_as_torchs_zip_does(fn: str) -> None:
    def program(m: Any) -> Any:
        x = m.ones(2, requires_grad=True)
        if fn == "grad":
            return m.autograd.grad(x.sum(), x, grad_outputs=[m.ones(()), m.ones(())])
        m.autograd.backward(x.sum(), grad_tensors=[m.ones(()), m.ones(())])
        return x.grad

    same_exact(program)
