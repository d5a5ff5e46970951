"""Side by side with torch: autograd.Variable and utils.hooks.RemovableHandle."""

from __future__ import annotations

from typing import Any

import pytest

torch = pytest.importorskip("torch", reason="the side-by-side tests compare with torch")

from autograd_helpers import same_rounded  # noqa: E402


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

    same_rounded(prog)

    def bad(lib: Any) -> Any:
        lib.autograd.Variable(3)

    same_rounded(bad)


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
