"""Side by side with torch: the grad-mode decorators (without parentheses, on generators)."""

from __future__ import annotations

from typing import Any

import pytest

from autograd_helpers import same_exact
from diff_helpers import leaf, same_summary

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)


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

    same_exact(program)


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

    same_summary(f)
