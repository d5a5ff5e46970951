"""The engine's walk under ``inputs=`` (autograd.grad, backward(inputs=)): its inlined common
node (one gradient in, no hooks) against the general ``_apply`` path a node hook forces, bit
for bit, and both against torch; and Module attribute reads through the three stores."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the side-by-side tests compare with torch")

import gradsum  # noqa: E402


def _graph(lib: Any, hook: bool) -> tuple[list[Any], list[Any]]:
    """A small MLP loss with a tied weight, a split (a node with two outputs), a branch that
    reaches no input, and (``hook``) a no-op pre-hook on every node, which sends each node
    through the engine's general ``_apply``."""
    rng = np.random.default_rng(3)
    w = lib.tensor(rng.standard_normal((5, 4)), requires_grad=True)
    b = lib.tensor(rng.standard_normal(5), requires_grad=True)
    x = lib.tensor(rng.standard_normal((3, 4)))
    h = lib.tanh(x @ w.t() + b)
    u, v = h.split([2, 3], dim=1)
    y = (u.sum(1) * v.mean(1)).sum() + (h @ w).pow(2).sum() + (x * 2).sum()
    if hook:
        seen, stack = set(), [y.grad_fn]
        while stack:
            n = stack.pop()
            if n is None or n in seen:
                continue
            seen.add(n)
            n.register_prehook(lambda grads: None)
            stack.extend(c for c, _ in n.next_functions)
    return [y], [w, b]


def _bits(ts: Any) -> list[bytes]:
    return [t.detach().numpy().tobytes() for t in ts]


@pytest.mark.parametrize("create_graph", [False, True])
def test_grad_inlined_node_same_bits_as_general_path(create_graph: bool) -> None:
    outs = {}
    for hook in (False, True):
        (y,), ins = _graph(gradsum, hook)
        gs = gradsum.autograd.grad(y, ins, create_graph=create_graph)
        if create_graph:  # the gradient's own graph walked again (double backward)
            gs = gradsum.autograd.grad(sum(g.sum() for g in gs), ins)
        outs[hook] = _bits(gs)
    assert outs[False] == outs[True]
    (y,), ins = _graph(torch, False)
    ts = torch.autograd.grad(y, ins, create_graph=create_graph)
    if create_graph:
        ts = torch.autograd.grad(sum(g.sum() for g in ts), ins)
    (y,), gins = _graph(gradsum, False)
    gs = gradsum.autograd.grad(y, gins, create_graph=create_graph)
    if create_graph:
        gs = gradsum.autograd.grad(sum(g.sum() for g in gs), gins)
    for g, t in zip(gs, ts, strict=True):
        np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(), rtol=1e-12)


def test_backward_inputs_inlined_node_same_bits_as_general_path() -> None:
    outs = {}
    for hook in (False, True):
        (y,), (w, b) = _graph(gradsum, hook)
        y.backward(inputs=[w])
        assert b.grad is None
        outs[hook] = _bits([w.grad])
    assert outs[False] == outs[True]
    (y,), (w, b) = _graph(torch, False)
    y.backward(inputs=[w])
    assert b.grad is None
    (y,), (gw, _) = _graph(gradsum, False)
    y.backward(inputs=[gw])
    np.testing.assert_allclose(gw.grad.numpy(), w.grad.numpy(), rtol=1e-12)


def test_grad_of_a_gradient_passed_through() -> None:
    # a view's node hands its gradient on unchanged (the engine marks it shared); as torch,
    # autograd.grad returns the caller's grad_outputs buffer itself for it
    got = []
    for lib in (gradsum, torch):
        x = lib.ones(3, requires_grad=True)
        go = lib.full((3,), 2.0)
        (g,) = lib.autograd.grad(x.view(3), x, grad_outputs=go)
        go.add_(1.0)
        got.append(g.tolist())
    assert got[0] == got[1]


def test_module_attribute_reads() -> None:
    for nn in (gradsum.nn, torch.nn):
        m = nn.Linear(2, 3)
        m.register_buffer("stat", m.weight.detach().sum(0))
        m.sub = nn.ReLU()
        assert m.weight is m._parameters["weight"]
        assert m.stat is m._buffers["stat"]
        assert m.sub is m._modules["sub"]
        with pytest.raises(AttributeError, match="'Linear' object has no attribute 'nope'"):
            m.nope
        half = nn.Linear.__new__(nn.Linear)  # (no stores yet: __init__ never ran)
        with pytest.raises(AttributeError, match="'Linear' object has no attribute 'weight'"):
            half.weight
