"""Side by side with torch: gradsum.autograd.Function (keyword arguments of apply, inputs
returned as is, mark_dirty on views, dirty tensors not returned, needs_input_grad)."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("torch", reason="the side-by-side tests compare with torch")


from autograd_helpers import same_exact


def _fn(m: Any, fwd: Any, bwd: Any, setup: Any = None) -> Any:
    d = {"forward": staticmethod(fwd), "backward": staticmethod(bwd)}
    if setup is not None:
        d["setup_context"] = staticmethod(setup)
    return type("MyF", (m.autograd.Function,), d)


def _fwd3(c: Any, x: Any, y: Any, k: int = 1) -> Any:
    return x * 2 * k + y


def _fwd3_split(x: Any, y: Any, k: int = 1) -> Any:
    return x * 2 * k + y


def _fwd_kwonly(x: Any, *, k: int = 1) -> Any:
    return x * k


@pytest.mark.parametrize("call", ["y_x", "x_k_y", "unexpected", "twice", "ctx_name",
                                  "missing", "split", "split_kw", "split_kwonly"])
def test_function_apply_binds_keyword_arguments_by_name(call: str) -> None:
    def program(m: Any) -> Any:
        x = m.tensor([1.0], requires_grad=True)
        y = m.tensor([5.0])
        seen = []

        def bwd(c: Any, g: Any) -> Any:
            seen.append(c.needs_input_grad)
            return g, g * 10, None

        def setup(c: Any, inputs: Any, output: Any) -> None:
            seen.append(len(inputs))

        if call.startswith("split"):
            f = _fn(m, _fwd_kwonly if call == "split_kwonly" else _fwd3_split,
                    (lambda c, g: g) if call == "split_kwonly" else bwd, setup)
        else:
            f = _fn(m, _fwd3, bwd)
        z = {"y_x": lambda: f.apply(y=y, x=x), "x_k_y": lambda: f.apply(x, k=2, y=y),
             "unexpected": lambda: f.apply(x, y, zz=3), "twice": lambda: f.apply(x, y, x=x),
             "ctx_name": lambda: f.apply(c=x, x=x, y=y), "missing": lambda: f.apply(x, k=2),
             "split": lambda: f.apply(x, y=y), "split_kw": lambda: f.apply(x, y, k=3),
             "split_kwonly": lambda: f.apply(x, k=2)}[call]()
        z.sum().backward()
        return z, x.grad, seen

    same_exact(program)


def test_needs_input_grad_is_the_inputs_requires_grad_in_no_grad_mode_too() -> None:
    def program(m: Any) -> Any:
        seen = []

        def fwd(c: Any, x: Any, y: Any, k: int) -> Any:
            seen.append(c.needs_input_grad)
            return x * y

        f = _fn(m, fwd, lambda c, g: (g, g, None))
        x = m.tensor([1.0, 2.0], requires_grad=True)
        with m.no_grad():
            f.apply(x, m.ones(2), 3)
        return seen

    same_exact(program)


@pytest.mark.parametrize("case", ["base", "inplace_leaf", "inplace_nonleaf", "plain",
                                  "no_grad", "view_of_input"])
def test_an_input_returned_as_is_is_a_view_of_it(case: str) -> None:
    def program(m: Any) -> Any:
        x = m.tensor([1.0, 2.0], requires_grad=case != "plain")
        src = x * 1 if case == "inplace_nonleaf" else x
        body = (lambda c, t: t[:1]) if case == "view_of_input" else (lambda c, t: t)
        f = _fn(m, body, lambda c, g: g * 2)
        if case == "no_grad":
            with m.no_grad():
                y = f.apply(src)
        else:
            y = f.apply(src)
        if case.startswith("inplace") or case == "view_of_input":
            y.mul_(2)
        return y._base is src, y is src, y.requires_grad, y.is_leaf

    same_exact(program)


def test_mark_dirty_on_a_view_rewrites_the_bases_history() -> None:
    def program(m: Any) -> Any:
        def fwd(c: Any, t: Any) -> Any:
            t.add_(1)
            c.mark_dirty(t)
            return t

        f = _fn(m, fwd, lambda c, g: g * 3)
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 1
        v = y[:2]
        z = f.apply(v)
        (y * m.tensor([1.0, 2.0, 4.0])).sum().backward()
        return z is v, v._version, y, x.grad

    same_exact(program)


@pytest.mark.parametrize("case", ["not_returned", "not_returned_no_grad", "view_two_outputs",
                                  "leaf_in_no_grad"])
def test_mark_dirty_misuse(case: str) -> None:
    def program(m: Any) -> Any:
        def fwd(c: Any, t: Any) -> Any:
            t.add_(1)
            c.mark_dirty(t)
            if case.startswith("not_returned"):
                return t * 2
            return (t, t * 2) if case == "view_two_outputs" else t

        f = _fn(m, fwd, lambda c, *g: g[0])
        x = m.tensor([1.0, 2.0], requires_grad=case != "not_returned_no_grad")
        if case == "leaf_in_no_grad":
            with m.no_grad():
                z = f.apply(x)
            return z is x, z.requires_grad, x.requires_grad
        if case == "view_two_outputs":
            x = (x * 1)[:1]
        return f.apply(x)

    same_exact(program)
