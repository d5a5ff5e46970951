"""Side by side with torch: gradsum.autograd.Function (keyword arguments of apply, inputs
returned as is, mark_dirty on views, dirty tensors not returned, needs_input_grad),
grad-mode decorators on generators, autograd.grad(is_grads_batched=True), extra
grad_outputs, and in-place rules of views whose base was detached in place."""

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

    _same(program)


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

    _same(program)


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

    _same(program)


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

    _same(program)


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

    _same(program)


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


@pytest.mark.parametrize("case", ["basic", "unused", "allow_unused", "materialize", "create",
                                  "shape", "none", "frees", "scalar", "too_many"])
def test_grad_is_grads_batched(case: str) -> None:
    def program(m: Any) -> Any:
        x = m.tensor([1.0, 2.0], requires_grad=True)
        u = m.ones(1, requires_grad=True)
        if case == "scalar":
            x = m.tensor(2.0, requires_grad=True)
            return m.autograd.grad(x * x, x, grad_outputs=m.ones(4), is_grads_batched=True)
        y = x * x
        go = {"shape": m.ones(3, 3), "none": None}.get(case, m.arange(6.0).reshape(3, 2))
        ins = [x, u] if case in ("unused", "allow_unused", "materialize") else [x]
        kw: dict[str, Any] = {"allow_unused": True} if case == "allow_unused" else {}
        if case == "materialize":
            kw = {"materialize_grads": True}
        if case == "create":
            kw = {"create_graph": True}
        if case == "too_many":
            go = [go, m.ones(3)]
        r = m.autograd.grad(y, ins, grad_outputs=go, is_grads_batched=True, **kw)
        if case == "frees":
            r = m.autograd.grad(y, ins, grad_outputs=go, is_grads_batched=True)
        return r

    _same(program)


@pytest.mark.parametrize("fn", ["backward", "grad"])
def test_extra_gradients_are_ignored_as_torchs_zip_does(fn: str) -> None:
    def program(m: Any) -> Any:
        x = m.ones(2, requires_grad=True)
        if fn == "grad":
            return m.autograd.grad(x.sum(), x, grad_outputs=[m.ones(()), m.ones(())])
        m.autograd.backward(x.sum(), grad_tensors=[m.ones(()), m.ones(())])
        return x.grad

    _same(program)


@pytest.mark.parametrize("case", ["leaf", "nonleaf", "requires_grad_false"])
def test_inplace_on_a_view_of_a_base_detached_in_place_raises(case: str) -> None:
    # seed 10042 of the wider program sweep: torch asks whether the view requires grad and
    # whether its base is a leaf (now), not whether the base requires grad
    def program(m: Any) -> Any:
        x = m.ones(3, requires_grad=True)
        base = x * 1 if case == "nonleaf" else x
        v = base[:2]
        if case == "requires_grad_false":
            x.requires_grad_(False)
        else:
            base.detach_()
        v.mul_(2)
        return v

    _same(program)


@pytest.mark.parametrize("case", ["read", "inplace", "follows_requires_grad_"])
def test_a_no_grad_view_requires_grad_while_its_base_does(case: str) -> None:
    # seed 10104 of the wider program sweep
    def program(m: Any) -> Any:
        x = m.ones(3, requires_grad=True)
        with m.no_grad():
            v = x[:1]
        before = v.requires_grad
        if case == "follows_requires_grad_":
            x.requires_grad_(False)
            mid = v.requires_grad
            x.requires_grad_(True)
            return before, mid, v.requires_grad
        x.detach_()
        if case == "inplace":
            v.mul_(2)
        return before, v.requires_grad, v.is_leaf, x._version

    _same(program)


def test_seed_10042_agrees_with_torch() -> None:
    from test_diff_programs import check_seed

    assert check_seed(10042, allow_known=False) is None


def test_saved_non_leaf_detached_in_place_refuses_backward() -> None:
    # torch: a non-leaf saved as an input and detached in place since cannot be used; the
    # refused backward writes no .grad. Saved outputs and leaves are unaffected.
    def prog(m: Any) -> Any:
        x = m.ones(3, requires_grad=True)
        w = m.ones(3, requires_grad=True)
        y = x * 2
        z = (w * y).sum()
        y.detach_()
        with pytest.raises(RuntimeError, match="saved tensor that has been detached in-place"):
            z.backward()
        assert w.grad is None and x.grad is None
        y2 = x * 2
        e = y2.exp()
        s = (e * 1).sum()
        e.detach_()
        s.backward()  # (exp saved its output: still fine, as in torch)
        return x.grad.tolist()

    assert prog(torch) == pytest.approx(prog(gradsum), rel=1e-6)


def test_view_gets_a_new_grad_fn_after_an_unrecorded_write_to_its_base() -> None:
    # torch regenerates a grad-mode view's grad_fn once its base was written in no_grad
    # mode: the view is then outside graphs built before (autograd.grad finds it unused)
    def prog(m: Any) -> Any:
        x = m.ones(4, 2, dtype=m.float64, requires_grad=True)
        v = x.T
        y = v.pow(3)
        s = y.split(1, -1)[0]
        g0 = v.grad_fn
        with m.no_grad():
            x.zero_()
        r = m.autograd.grad(s, [v, y], m.ones(2, 1, dtype=m.float64), allow_unused=True)
        (v * 2).sum().backward()  # the new grad_fn still leads to x
        return v.grad_fn is g0, r[0] is None, r[1].tolist(), x.grad.tolist()

    assert prog(torch) == prog(gradsum)
