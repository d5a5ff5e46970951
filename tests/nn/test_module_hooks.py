"""Side-by-side tests of nn.Module backward hooks (register_full_backward_hook,
register_full_backward_pre_hook) and the global module hooks, against torch 2.13: the same
program on both libraries, the logs of what the hooks saw (and in what order) compared."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402

Program = Callable[[Any], Any]


def _v(t: Any) -> Any:
    """A hook argument as plain Python (tensors as lists, tuples kept)."""
    if t is None:
        return None
    if isinstance(t, tuple):
        return tuple(_v(x) for x in t)
    return t.tolist()


def _mm(lib: Any) -> Any:
    """The module holding the global module hooks."""
    return lib.nn.modules.module


def _run(fn: Program, lib: Any) -> Any:
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            out = fn(lib)
        except Exception as e:
            # (torch's phrase: gradsum adds the values and the fix after it)
            out = (type(e).__name__, str(e).split(" (")[0].split(".")[0].split(":")[0])
    msgs = [str(x.message).split(".")[0] for x in w
            if "reference cycle" not in str(x.message)]
    return out, msgs


def same(fn: Program) -> Any:
    got, want = _run(fn, gradsum), _run(fn, torch)
    assert got == want
    return want


def _two_out(lib: Any) -> Any:
    class M(lib.nn.Module):
        def forward(self, x: Any, y: Any, k: int = 3) -> Any:
            return x * y, x + y

    return M()


def test_two_outputs_one_input_without_grad() -> None:
    def prog(lib: Any) -> Any:
        log: list[Any] = []
        m = _two_out(lib)
        m.register_full_backward_pre_hook(lambda mod, go: log.append(("pre", _v(go))))
        m.register_full_backward_hook(lambda mod, gi, go: log.append(("full", _v(gi), _v(go))))
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.tensor([3.0, 4.0])
        a, b = m(x, y)
        names = (a.grad_fn.name(), b.grad_fn.name(),
                 [n.name() for n, _ in a.grad_fn.next_functions])
        (a.sum() * 2 + b.sum() * 3).backward()
        a, b = m(x, y)
        a.sum().backward()  # b unused: None in grad_output
        return names, log, x.grad.tolist()

    want = same(prog)
    assert want[0][1] == [("pre", ([2.0, 2.0], [3.0, 3.0])),
                          ("full", ([9.0, 11.0], [0.0, 0.0]), ([2.0, 2.0], [3.0, 3.0])),
                          ("pre", ([1.0, 1.0], None)),
                          ("full", ([3.0, 4.0], [0.0, 0.0]), ([1.0, 1.0], None))]


def test_non_tensor_arguments_kwargs_and_outputs() -> None:
    def prog(lib: Any) -> Any:
        log: list[Any] = []

        class K(lib.nn.Module):
            def forward(self, x: Any, n: int, z: Any = None) -> Any:
                return x * n, 5, x * 3 + z

        k = K()
        k.register_full_backward_hook(lambda mod, gi, go: log.append((_v(gi), _v(go))))
        k.register_full_backward_pre_hook(lambda mod, go: log.append(_v(go)))
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        z = lib.ones(2, requires_grad=True)
        r = k(x, 3, z=z)
        (r[0].sum() + r[2].sum()).backward()
        return type(r).__name__, r[1], log, x.grad.tolist(), z.grad.tolist()

    same(prog)


def test_no_input_requires_grad_fires_at_the_outputs() -> None:
    def prog(lib: Any, ret: Any) -> Any:
        log: list[Any] = []

        class L(lib.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.w = lib.nn.Parameter(lib.tensor([2.0, 3.0]))

            def forward(self, x: Any) -> Any:
                return x * self.w

        m = L()
        m.register_full_backward_pre_hook(lambda mod, go: log.append(("pre", _v(go))))
        m.register_full_backward_hook(
            lambda mod, gi, go: (log.append(("full", _v(gi), _v(go))), ret(lib))[1])
        out = m(lib.tensor([1.0, 1.0]))
        name = out.grad_fn.name()
        out.sum().backward()
        return name, log, m.w.grad.tolist()

    same(lambda lib: prog(lib, lambda lib: None))
    same(lambda lib: prog(lib, lambda lib: (None,)))
    want = same(lambda lib: prog(lib, lambda lib: (lib.ones(2),)))
    assert want[0][0] == "RuntimeError"


@pytest.mark.parametrize("case", ["full_scale", "full_none", "full_len2", "full_tensor",
                                  "full_shape", "pre_scale", "pre_none", "pre_len2",
                                  "pre_shape"])
def test_hook_return_values(case: str) -> None:
    def prog(lib: Any) -> Any:
        class L(lib.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.w = lib.nn.Parameter(lib.tensor([2.0, 3.0]))

            def forward(self, x: Any) -> Any:
                return x * self.w

        m = L()
        rets = {
            "full_scale": lambda gi: (gi[0] * 10,), "full_none": lambda gi: (None,),
            "full_len2": lambda gi: (gi[0], gi[0]), "full_tensor": lambda gi: gi[0],
            "full_shape": lambda gi: (lib.ones(3),),
            "pre_scale": lambda go: (go[0] * 100,), "pre_none": lambda go: (None,),
            "pre_len2": lambda go: (go[0], go[0]), "pre_shape": lambda go: (lib.ones(3),),
        }
        f = rets[case]
        if case.startswith("full"):
            m.register_full_backward_hook(lambda mod, gi, go: f(gi))
        else:
            m.register_full_backward_pre_hook(lambda mod, go: f(go))
        x = lib.tensor([1.0, 1.0], requires_grad=True)
        m(x).sum().backward()
        return _v(x.grad), m.w.grad.tolist()

    same(prog)


def test_order_global_prepend_removal_and_snapshot() -> None:
    def prog(lib: Any) -> Any:
        log: list[Any] = []
        mm = _mm(lib)

        class L(lib.nn.Module):
            def forward(self, x: Any) -> Any:
                return x * 2

        m = L()
        m.register_full_backward_hook(lambda *a: log.append("m1"))
        m.register_full_backward_hook(lambda *a: log.append("m0"), prepend=True)
        m.register_full_backward_pre_hook(lambda *a: log.append("p1"))
        m.register_full_backward_pre_hook(lambda *a: log.append("p0"), prepend=True)
        handles = [mm.register_module_full_backward_hook(lambda *a: log.append("g")),
                   mm.register_module_full_backward_pre_hook(lambda *a: log.append("gp")),
                   mm.register_module_forward_hook(lambda *a: log.append("gf")),
                   mm.register_module_forward_pre_hook(lambda *a: log.append("gfp"))]
        m.register_forward_hook(lambda *a: log.append("f"))
        m.register_forward_pre_hook(lambda *a: log.append("fp"))
        x = lib.ones(2, requires_grad=True)
        try:
            m(x).sum().backward()
        finally:
            for h in handles:
                h.remove()
        log.append("|")
        o = m(x)
        o.sum().backward(retain_graph=True)
        o.sum().backward()
        log.append("|")
        log.append(_v(lib.autograd.grad(m(x).sum(), x)))
        log.append("|")
        m2 = L()
        o = m2(x)
        h = m2.register_full_backward_hook(lambda *a: log.append("late"))
        o.sum().backward()  # registered after forward: does not fire
        o = m2(x)
        h.remove()
        o.sum().backward()  # removed after forward: fires
        return log

    want = same(prog)
    assert want[0][:10] == ["gfp", "fp", "gf", "f", "gp", "p0", "p1", "g", "m0", "m1"]


def test_nested_modules_and_linear_layers() -> None:
    def prog(lib: Any) -> Any:
        log: list[Any] = []
        lib.manual_seed(0)
        net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2))
        net.double()
        with lib.no_grad():
            for i, p in enumerate(net.parameters()):
                vals = lib.linspace(-1, 1, p.numel(), dtype=lib.float64).reshape(p.shape)
                p.copy_(vals * (i + 1) / 3)
        for n, mod in net.named_modules():
            mod.register_full_backward_hook(
                lambda mod, gi, go, n=n: log.append(("B" + n, _v(gi), _v(go))))
            mod.register_full_backward_pre_hook(
                lambda mod, go, n=n: log.append(("P" + n, _v(go))))
        x = lib.linspace(-1, 1, 6, dtype=lib.float64).reshape(2, 3).requires_grad_()
        net(x).pow(2).sum().backward()
        rounded = [(e[0], *[_round(v) for v in e[1:]]) for e in log]
        return rounded, _round(x.grad.tolist()), [_round(p.grad.tolist())
                                                  for p in net.parameters()]

    same(prog)


def _round(v: Any) -> Any:
    if isinstance(v, (list, tuple)):
        return type(v)(_round(x) for x in v)
    return None if v is None else round(v, 10)


def test_no_grad_output_without_grad_and_dict_output() -> None:
    def prog(lib: Any) -> Any:
        log: list[Any] = []

        class N(lib.nn.Module):
            def forward(self, x: Any) -> Any:
                return x.detach() * 2

        class D(lib.nn.Module):
            def forward(self, x: Any) -> Any:
                return {"a": x * 2}

        x = lib.ones(2, requires_grad=True)
        n = N()
        n.register_full_backward_hook(lambda *a: log.append("N"))
        r = n(x)
        with lib.no_grad():
            r2 = n(x * 3)
        d = D()
        d.register_full_backward_hook(lambda *a: log.append("D"))
        out = d(x)["a"]
        name = out.grad_fn.name()
        out.sum().backward()
        return r.requires_grad, r2.grad_fn, name, log, x.grad.tolist()

    want = same(prog)
    assert want[1] == ["For backward hooks to be called, module output should be a Tensor or a "
                       "tuple of Tensors but received <class 'dict'>"]


def test_in_place_on_hooked_inputs_and_outputs() -> None:
    def prog(lib: Any, where: str) -> Any:
        class IP(lib.nn.Module):
            def forward(self, x: Any, y: Any) -> Any:
                if where == "input":
                    x.mul_(2)
                if where == "other":
                    y.add_(1)  # (y does not require grad: allowed)
                return x * y

        m = IP()
        m.register_full_backward_hook(lambda *a: None)
        x = lib.tensor([1.0, 2.0], requires_grad=True) * 1
        y = lib.tensor([3.0, 4.0])
        out = m(x, y)
        if where == "output":
            out.add_(1)
        out.sum().backward()
        return y.tolist()

    for where in ("input", "output"):
        want = same(lambda lib, w=where: prog(lib, w))
        assert want[0] == ("RuntimeError", "Output 0 of BackwardHookFunction is a view and is "
                                           "being modified inplace")
    same(lambda lib: prog(lib, "other"))


def test_double_backward_fires_once() -> None:
    def prog(lib: Any) -> Any:
        log: list[Any] = []

        class Sq(lib.nn.Module):
            def forward(self, x: Any) -> Any:
                return x ** 3

        sq = Sq()
        sq.register_full_backward_hook(lambda m, gi, go: log.append((_v(gi), _v(go))))
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        (g,) = lib.autograd.grad(sq(x).sum(), x, create_graph=True)
        g.sum().backward()
        return log, x.grad.tolist(), g.tolist()

    same(prog)


def test_function_post_hook_and_undefined_gradients() -> None:
    """The two engine details the hooks rely on: a Function node's post hooks see the
    gradient returned for an input that needs none; a Function's backward runs (on
    materialized zeros, or None with set_materialize_grads(False)) when no gradient came."""

    def prog(lib: Any, mat: bool) -> Any:
        log: list[Any] = []

        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx: Any, a: Any, b: Any) -> Any:
                ctx.set_materialize_grads(mat)
                return a * b

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                log.append(("F", _v(g)))
                return (None, None) if g is None else (g * 2, g * 3)

        class G(lib.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any) -> Any:
                return x * 1

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                return None

        a = lib.tensor([1.0, 2.0], requires_grad=True)
        o = F.apply(a, lib.tensor([3.0, 4.0]))
        o.grad_fn.register_hook(lambda gi, go: log.append(("post", _v(gi), _v(go))))
        o.sum().backward()
        o = F.apply(a, lib.tensor([3.0, 4.0]))
        (G.apply(o) + a).sum().backward()
        return log, a.grad.tolist()

    same(lambda lib: prog(lib, True))
    same(lambda lib: prog(lib, False))


def test_hot_path_flag_follows_registration() -> None:
    m = gradsum.nn.Linear(2, 2)
    x = gradsum.ones(1, 2, requires_grad=True)
    assert m(x).grad_fn.name() == "AddmmBackward0"
    h1 = m.register_full_backward_hook(lambda *a: None)
    h2 = m.register_forward_hook(lambda *a: None)
    assert m._hooked and m(x).grad_fn.name() == "BackwardHookFunctionBackward"
    h1.remove()
    assert m._hooked
    h2.remove()
    assert not m._hooked and m(x).grad_fn.name() == "AddmmBackward0"
    g = gradsum.nn.modules.module.register_module_full_backward_pre_hook(lambda *a: None)
    assert m(x).grad_fn.name() == "BackwardHookFunctionBackward"
    g.remove()
    assert m(x).grad_fn.name() == "AddmmBackward0"
