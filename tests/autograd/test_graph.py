"""Side by side with torch: autograd.graph's register_multi_grad_hook, GradientEdge /
get_gradient_edge and increment_version."""

from __future__ import annotations

from typing import Any

import pytest

torch = pytest.importorskip("torch", reason="the side-by-side tests compare with torch")

from autograd_helpers import same_rounded, tensor64  # noqa: E402


# -- multi-grad hooks, gradient edges, increment_version ------------------------------------
def test_multi_grad_hook_all() -> None:
    def prog(lib: Any) -> Any:
        a = tensor64(lib, [1.0, 2.0])
        b = tensor64(lib, [3.0, 4.0])
        c = a * b
        d = a * b
        calls: list[Any] = []
        h = lib.autograd.graph.register_multi_grad_hook(
            (a, b, c, d), lambda gs: calls.append([None if g is None else g.tolist()
                                                   for g in gs]))
        c.sum().backward(retain_graph=True)
        c.sum().backward(inputs=(a,), retain_graph=True)
        (c + d).sum().backward(inputs=(b,), retain_graph=True)
        try:  # (torch refuses a leaf's sink in autograd.grad)
            lib.autograd.grad((c + d).sum(), (b,), retain_graph=True)
        except RuntimeError as e:
            calls.append(str(e)[:60])
        h.remove()
        c.sum().backward()
        return calls

    out = same_rounded(prog)
    assert len(out) == 4


def test_multi_grad_hook_any_and_bad_mode() -> None:
    def prog(lib: Any) -> Any:
        a = tensor64(lib, [1.0, 2.0])
        b = tensor64(lib, [3.0, 4.0])
        calls: list[Any] = []
        lib.autograd.graph.register_multi_grad_hook(
            (a, b), lambda g: calls.append(g.tolist()), mode="any")
        (a * b).sum().backward()
        (a * 2).sum().backward()
        return calls

    same_rounded(prog)

    def bad(lib: Any) -> Any:
        lib.autograd.graph.register_multi_grad_hook((tensor64(lib, [1.0]),), print, mode="some")

    same_rounded(bad)


def test_gradient_edge() -> None:
    """get_gradient_edge as torch's: an edge as an input of autograd.grad and backward(inputs=), as
    an output with its gradient given, its node name and output_nr."""
    def prog(lib: Any) -> Any:
        x = tensor64(lib, [1.0, 2.0])
        h = x * 3
        y = (h * h).sum()
        G = lib.autograd.graph
        e = G.get_gradient_edge(h)
        (gh,) = lib.autograd.grad(y, e, retain_graph=True)
        (gx, gh2) = lib.autograd.grad(y, (G.get_gradient_edge(x), e), retain_graph=True)
        y.backward(inputs=G.get_gradient_edge(x), retain_graph=True)
        # an edge as an output, with its gradient given
        (gx2,) = lib.autograd.grad(e, x, grad_outputs=lib.ones(2, dtype=lib.float64))
        return (gh, gx, gh2, x.grad, gx2, e.node.name(), e.output_nr,
                G.get_gradient_edge(x).node.name().split("::")[-1])

    same_rounded(prog)

    def no_grad(lib: Any) -> Any:
        lib.autograd.graph.get_gradient_edge(lib.ones(2))

    same_rounded(no_grad)

    def materialize(lib: Any) -> Any:
        x = tensor64(lib, [1.0])
        z = tensor64(lib, [1.0])
        y = (x * 2).sum()
        lib.autograd.grad(y, (x, lib.autograd.graph.get_gradient_edge(z)),
                          materialize_grads=True)

    same_rounded(materialize)


def test_increment_version() -> None:
    """increment_version bumps the versions as torch's, so that a backward through a saved tensor
    raises torch's error."""
    def prog(lib: Any) -> Any:
        x = tensor64(lib, [1.0, 2.0])
        y = x * 1
        z = y * y
        v0 = y._version
        lib.autograd.graph.increment_version(y)
        lib.autograd.graph.increment_version([y, x])
        try:
            z.sum().backward()
        except RuntimeError as e:
            err = str(e)[:50]
        return v0, y._version, x._version, err

    same_rounded(prog)
