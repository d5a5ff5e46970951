"""Side by side with torch: the grad-mode decorators (without parentheses, on generators)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradsum

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)


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


@pytest.mark.parametrize("mode", ["no_grad", "enable_grad", "set_grad_enabled"])
def test_grad_mode_decorators_on_generators_hold_while_the_body_runs(mode: str) -> None:
    def program(m: Any) -> Any:
        deco = {"no_grad": m.no_grad, "enable_grad": m.enable_grad,
                "set_grad_enabled": lambda: m.set_grad_enabled(False)}[mode]()
        outer = mode == "enable_grad"

        @deco
        def gen() -> Any:
            got = yield m.is_grad_enabled()
            yield (got, m.is_grad_enabled())
            return "done"

        seen = []
        with m.set_grad_enabled(not outer):
            g = gen()
        with m.set_grad_enabled(not outer):
            seen.append(next(g))
            seen.append(m.is_grad_enabled())
            seen.append(g.send(7))
            try:
                next(g)
            except StopIteration as e:
                seen.append(e.value)
        return seen

    _same(program)


def _summary(x: Any) -> Any:
    """What is compared: tensors as (shape, dtype name, values, requires_grad)."""
    if isinstance(x, (torch.Tensor, gradsum.Tensor)):
        return (tuple(x.shape), str(x.dtype).split(".")[-1],
                np.asarray(x.detach().tolist(), dtype=float).round(5).tolist(), x.requires_grad)
    if isinstance(x, (tuple, list)):
        return tuple(_summary(v) for v in x)
    if isinstance(x, str):
        return x.replace("torch::autograd::", "").replace("torch.", "").replace("gradsum.", "")
    return x


def _outcome(fn: Callable[[Any], Any], m: Any) -> Any:
    try:
        return "ok", _summary(fn(m))
    except Exception as e:  # the exception's type is part of the contract
        return "raises", type(e).__name__


def same(fn: Callable[[Any], Any]) -> Any:
    """Run ``fn(torch)`` and ``fn(gradsum)``; assert the outcomes match; return gradsum's."""
    want, got = _outcome(fn, torch), _outcome(fn, gradsum)
    assert got == want, f"gradsum: {got}\ntorch:   {want}"
    return got


def leaf(m: Any, data: Any) -> Any:
    return m.tensor(data, requires_grad=True)


# -- grad modes ---------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["no_grad", "enable_grad", "inference_mode"])
def test_grad_modes_decorate_without_parentheses(mode):
    def f(m):
        @getattr(m, mode)
        def g(t):
            return t * 2, m.is_grad_enabled()

        with m.no_grad() if mode == "enable_grad" else m.enable_grad():
            y, enabled = g(leaf(m, [1.0]))
        return y.requires_grad, enabled, m.is_grad_enabled()

    same(f)
