"""Side by side with torch: autograd.Variable and utils.hooks.RemovableHandle."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

torch = pytest.importorskip("torch", reason="the side-by-side tests compare with torch")

import gradsum  # noqa: E402


def _norm(x: Any) -> Any:
    if isinstance(x, (torch.Tensor, gradsum.Tensor)):
        return ("T", [round(v, 5) for v in x.detach().reshape(-1).tolist()], x.requires_grad)
    if isinstance(x, (list, tuple)):
        return type(x)(_norm(v) for v in x)
    if isinstance(x, dict):
        return {k: _norm(v) for k, v in x.items()}
    return x


def _run(lib: Any, program: Callable[[Any], Any]) -> Any:
    try:
        return _norm(program(lib))
    except Exception as e:  # (compared by type and first words)
        return (type(e).__name__, str(e)[:40])


def _same(program: Callable[[Any], Any]) -> Any:
    a, b = _run(gradsum, program), _run(torch, program)
    assert a == b, (a, b)
    return a


# -- Variable, RemovableHandle ----------------------------------------------------------------
def test_variable() -> None:
    """autograd.Variable as torch's: a Tensor constructor keeping requires_grad, the leaf flags,
    Variable() empty, its errors."""
    def prog(lib: Any) -> Any:
        V = lib.autograd.Variable
        t = lib.ones(2)
        v = V(t, requires_grad=True)
        w = V(t)
        y = V(v * 2, requires_grad=True)
        v2 = V(t)
        v2.add_(1)
        return (type(v).__name__, v.requires_grad, v.is_leaf, w is t, w.requires_grad,
                y.is_leaf, y.grad_fn is None, isinstance(t, V), V().shape == (0,), t)

    _same(prog)

    def bad(lib: Any) -> Any:
        lib.autograd.Variable(3)

    _same(bad)


def test_removable_handle_alias() -> None:
    import torch.utils.hooks

    import gradsum.utils.hooks

    h = gradsum.ones(1, requires_grad=True).register_hook(lambda g: None)
    th = torch.ones(1, requires_grad=True).register_hook(lambda g: None)
    assert isinstance(h, gradsum.utils.hooks.RemovableHandle)
    assert isinstance(th, torch.utils.hooks.RemovableHandle)
    mh = gradsum.autograd.graph.register_multi_grad_hook(
        (gradsum.ones(1, requires_grad=True),), print)
    assert isinstance(mh, gradsum.utils.hooks.RemovableHandle)
