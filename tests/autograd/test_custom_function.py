"""Side by side with torch: custom autograd Functions' contract (a backward returning a
non-tensor, gradients for non-tensor arguments and outputs, save_for_backward of non-tensors,
mark_dirty's version bump, the setup_context style, calling an instance)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from diff_helpers import leaf, same_summary

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)


# -- autograd.Function --------------------------------------------------------------------------
def _fn(m: Any, backward: Callable[..., Any], forward: Any = None) -> Any:
    class Fn(m.autograd.Function):
        @staticmethod
        def forward(ctx, a, k):
            return a * k if forward is None else forward(ctx, a, k)

    Fn.backward = staticmethod(backward)
    return Fn


@pytest.mark.parametrize("bad", [[1.0], 3.0])
def test_function_backward_returning_a_non_tensor_raises_runtime_error(bad):
    def f(m):
        x = leaf(m, [1.0, 2.0])
        _fn(m, lambda ctx, g: (bad, None)).apply(x, 2.0).sum().backward()

    assert same_summary(f) == ("raises", "RuntimeError")


def test_function_gradient_for_a_non_tensor_argument_raises():
    def f(m):
        x = leaf(m, [1.0, 2.0])
        _fn(m, lambda ctx, g: (g * 2, g)).apply(x, 2.0).sum().backward()

    assert same_summary(f) == ("raises", "RuntimeError")


def test_function_non_tensor_output_gets_none_gradient():
    def f(m):
        seen = []

        class Fn(m.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a.clone(), 3

            @staticmethod
            def backward(ctx, g, g2):
                seen.append(g2)
                return g

        x = leaf(m, [1.0, 2.0])
        y, k = Fn.apply(x)
        y.sum().backward()
        return seen, k, x.grad

    same_summary(f)


def test_function_save_for_backward_refuses_non_tensors():
    def f(m):
        def forward(ctx, a, k):
            ctx.save_for_backward(a, None, 3)
            return a * k

        _fn(m, lambda ctx, g: (g, None), forward).apply(leaf(m, [1.0]), 2.0)

    assert same_summary(f) == ("raises", "TypeError")


def test_function_mark_dirty_bumps_the_version():
    def f(m):
        def forward(ctx, a, k):
            a.mul_(k)
            ctx.mark_dirty(a)
            return a

        x = leaf(m, [1.0, 2.0])
        h = x * 1
        y = _fn(m, lambda ctx, g: (g * 2, None), forward).apply(h, 2.0)
        v = h._version
        y.sum().backward()
        return y is h, v, x.grad

    same_summary(f)


def test_function_setup_context_style():
    def f(m):
        class Fn(m.autograd.Function):
            @staticmethod
            def forward(a, k):
                return a * k

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.k = inputs[1]

            @staticmethod
            def backward(ctx, g):
                return g * ctx.k, None

        x = leaf(m, [1.0, 2.0])
        Fn.apply(x, 3.0).sum().backward()
        return x.grad

    same_summary(f)


@pytest.mark.filterwarnings("ignore:.*should not be instantiated")
def test_function_instance_call_raises():
    same_summary(lambda m: _fn(m, lambda ctx, g: g)()(m.ones(2), 2.0))
