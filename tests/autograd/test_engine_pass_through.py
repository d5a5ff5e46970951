"""A gradient a built-in node hands on unchanged (``CloneBackward0``, ``x + c``) stays as owned
as it arrived, so a leaf may take its buffer over, as torch's sink does (it counts the
tensor's other holders; a pass-through adds none). Where someone else can hold it (a seed,
several inputs, a user Function's backward, a node hook, an ``inputs=`` capture) the leaf
copies it. Each case runs the same program in torch and gradsum, then writes into every
tensor the caller can reach and runs a second backward: an alias would show as a changed
value."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradsum

torch = pytest.importorskip("torch", reason="the differential tests compare with torch")

_X = np.array([0.5, -1.5, 2.0, 0.0], dtype=np.float32)


def _run(lib: Any, prog: Callable[[Any, Any], list[Any]]) -> list[np.ndarray]:
    x = lib.tensor(_X.copy(), requires_grad=True)
    held = prog(lib, x)
    first = x.grad.detach().clone()
    for h in held:  # write into everything the caller holds
        with lib.no_grad():
            h.add_(100.0)
    prog(lib, x)
    return [first.numpy(), x.grad.detach().numpy()] + [h.detach().numpy() for h in held]


def _clone_sign(lib: Any, x: Any) -> list[Any]:
    x.clone().sign_().backward(lib.ones(4))
    return []


def _add_const_seed(lib: Any, x: Any) -> list[Any]:
    s = lib.full((4,), 3.0)
    (x + 1).backward(s)  # (the seed itself passes through)
    return [s]


def _two_clones(lib: Any, x: Any) -> list[Any]:
    w = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    ((x.clone() + w.clone()) * 2).sum().backward()
    return [w.grad]


#: where the user Function below keeps the gradient it returns
_KEPT: list[Any] = []


def _function_keeps(lib: Any, x: Any) -> list[Any]:
    class Same(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, a: Any) -> Any:
            return a * 1

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            _KEPT.append(g)
            return g

    _KEPT.clear()
    (Same.apply(x) * 3).sum().backward()
    return [_KEPT[-1]]


def _capture(lib: Any, x: Any) -> list[Any]:
    y = x.clone()
    y.retain_grad()
    (y * 2).sum().backward(inputs=[y, x])
    return [y.grad]


def _node_hook(lib: Any, x: Any) -> list[Any]:
    kept = []
    y = x.clone()
    y.grad_fn.register_hook(lambda gin, gout: kept.append(gout[0]))
    (y * 5).sum().backward()
    return [kept[-1]]


@pytest.mark.parametrize("prog", [_clone_sign, _add_const_seed, _two_clones, _function_keeps,
                                  _capture, _node_hook],
                         ids=lambda f: f.__name__.strip("_"))
def test_pass_through_ownership_matches_torch(prog: Callable[[Any, Any], list[Any]]) -> None:
    ours = _run(gradsum, prog)
    theirs = _run(torch, prog)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a, b)


def test_a_built_in_pass_through_is_taken_over() -> None:
    x = gradsum.tensor(_X.copy(), requires_grad=True)
    seen = []
    gradsum.autograd.graph.accumulate_observers.append(lambda var, g: seen.append(g))
    try:
        x.clone().sign_().backward(gradsum.ones(4))
    finally:
        gradsum.autograd.graph.accumulate_observers.pop()
    assert x.grad is seen[0]  # (sign_'s fresh zeros, through CloneBackward0: no copy)
