"""Side by side with torch: the grad-mode decorators on generators."""

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
