"""Side-by-side tests of gradsum.autograd.functional (vjp, jvp, jacobian, hessian, vhp, hvp)
against torch.autograd.functional 2.13: values (float64, to 1e-10), the nesting of the
results, requires_grad under create_graph, strict-mode errors and zeros for unrelated inputs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402

Program = Callable[[Any], Any]


def _struct(r: Any) -> Any:
    """A result as (kind, shape, requires_grad, values) leaves in the same nesting."""
    if isinstance(r, tuple):
        return tuple(_struct(x) for x in r)
    if isinstance(r, list):
        return [_struct(x) for x in r]
    if r is None or isinstance(r, (bool, int, float, str)):
        return r
    return ("T", tuple(r.shape), r.requires_grad, np.asarray(r.detach().tolist(), float))


def _leaf_equal(a: Any, b: Any) -> bool:
    if isinstance(a, tuple) and len(a) == 4 and a[0] == "T":
        return (isinstance(b, tuple) and len(b) == 4 and b[0] == "T" and a[1:3] == b[1:3]
                and np.allclose(a[3], b[3], rtol=1e-10, atol=1e-10))
    if isinstance(a, (tuple, list)):
        return (type(a) is type(b) and len(a) == len(b)
                and all(_leaf_equal(x, y) for x, y in zip(a, b)))
    return bool(a == b)


def _run(fn: Program, lib: Any) -> Any:
    try:
        return _struct(fn(lib))
    except Exception as e:  # type and torch's phrase (before any size repr)
        return ("error", type(e).__name__, str(e).split(": should")[0].split("torch")[0]
                .split("gradsum")[0])


def same(fn: Program) -> Any:
    got, want = _run(fn, gradsum), _run(fn, torch)
    assert _leaf_equal(got, want), (got, want)
    return want


def F(lib: Any) -> Any:
    return lib.autograd.functional


def t(lib: Any, *vals: Any) -> Any:
    return lib.tensor(list(vals) if len(vals) > 1 else vals[0], dtype=lib.float64)


def f_elem(x: Any) -> Any:
    return x.exp() * x.sin()


def f_tuple(x: Any, y: Any) -> Any:
    return (x * y.sum(), (x ** 2).sum() + y.prod())


def f_scalar(x: Any, y: Any) -> Any:
    return (x.sin() * y[:2].sum()).sum() + (y ** 3).sum() * x[0]


# -- vjp / jvp --------------------------------------------------------------------------------
@pytest.mark.parametrize("create_graph", [False, True])
def test_vjp_and_jvp_values_and_nesting(create_graph: bool) -> None:
    for fname in ("vjp", "jvp"):
        def prog(lib: Any, fname: str = fname) -> Any:
            fn = getattr(F(lib), fname)
            x = t(lib, 0.5, -1.0, 2.0).requires_grad_(create_graph)
            y = t(lib, 1.5, 0.25, 3.0)
            single = fn(f_elem, x, t(lib, 1.0, 2.0, 3.0), create_graph=create_graph)
            v_out = (t(lib, 1.0, -1.0, 0.5), t(lib, 2.0)) if fname == "vjp" else (
                t(lib, 1.0, -1.0, 0.5), t(lib, 0.1, 0.2, 0.3))
            tup = fn(f_tuple, (x, y), v_out, create_graph=create_graph)
            scalar = fn(lambda a: (a ** 3).sum(), t(lib, [2.0])) if fname == "vjp" else (
                fn(lambda a: a ** 3, t(lib, [2.0])))
            return single, tup, scalar

        same(prog)


def test_vjp_create_graph_is_differentiable() -> None:
    def prog(lib: Any) -> Any:
        x = t(lib, 0.5, -1.0, 2.0).requires_grad_()
        _, g = F(lib).vjp(f_elem, x, t(lib, 1.0, 1.0, 1.0), create_graph=True)
        (h,) = lib.autograd.grad(g.sum(), x)
        _, jv = F(lib).jvp(f_elem, x, t(lib, 1.0, 1.0, 1.0), create_graph=True)
        (h2,) = lib.autograd.grad(jv.sum(), x)
        return g, h, jv, h2, g.grad_fn is not None

    same(prog)


def test_unrelated_inputs_zeros_or_strict_errors() -> None:
    def f(x: Any, y: Any) -> Any:
        return x * 2

    for fname in ("vjp", "jvp", "vhp", "hvp"):
        for strict in (False, True):
            def prog(lib: Any, fname: str = fname, strict: bool = strict) -> Any:
                fn = getattr(F(lib), fname)
                x, y = t(lib, 1.0, 2.0), t(lib, 3.0, 4.0)
                if fname in ("vhp", "hvp"):
                    return fn(lambda a, b: (a ** 2).sum(), (x, y), (x, y), strict=strict)
                v = (t(lib, 1.0, 1.0),) if fname == "vjp" else (x, y)
                return fn(f, (x, y), v, strict=strict)

            want = same(prog)
            if not strict:
                assert fname == "jvp" or want[1][1][3].tolist() == [0.0, 0.0]
            else:
                assert want[0] == "error"


def test_strict_output_independent_of_the_inputs() -> None:
    for fname in ("vjp", "jvp", "jacobian"):
        def prog(lib: Any, fname: str = fname) -> Any:
            fn = getattr(F(lib), fname)
            x = t(lib, 1.0, 2.0)
            args = (x,) if fname == "jacobian" else (x, t(lib, 1.0, 1.0))
            return fn(lambda a: lib.ones(2, dtype=lib.float64), *args, strict=True)

        same(prog)
        same(lambda lib, fname=fname: getattr(F(lib), fname)(
            lambda a: lib.ones(2, dtype=lib.float64), t(lib, 1.0, 2.0),
            *(() if fname == "jacobian" else (t(lib, 1.0, 1.0),))))


@pytest.mark.parametrize("case", ["non_tensor", "non_tensor_in_tuple", "v_none", "v_len",
                                  "v_size", "v_size_tuple", "out_non_tensor"])
def test_argument_errors(case: str) -> None:
    for fname in ("vjp", "jvp", "vhp", "hvp"):
        def prog(lib: Any, fname: str = fname) -> Any:
            fn = getattr(F(lib), fname)
            x = t(lib, 1.0, 2.0)
            g = (lambda a, *r: (a ** 2).sum()) if fname in ("vhp", "hvp") else (
                lambda a, *r: a * 2)
            if case == "non_tensor":
                return fn(g, [1.0, 2.0], x)
            if case == "non_tensor_in_tuple":
                return fn(g, (x, 3.0), x)
            if case == "v_none":
                return fn(g, x)
            if case == "v_len":
                return fn(g, (x, x), (x,))
            if case == "v_size":
                return fn(g, x, t(lib, 1.0, 2.0, 3.0))
            if case == "v_size_tuple":
                return fn(g, (x, x), (x, t(lib, 1.0)))
            return fn(lambda a: 3.0, x, x)

        want = same(prog)
        assert want[0] == "error" or (case == "v_len" and fname == "vjp")


# -- jacobian ---------------------------------------------------------------------------------
@pytest.mark.parametrize("vectorize", [False, True])
@pytest.mark.parametrize("create_graph", [False, True])
def test_jacobian_nesting_and_values(vectorize: bool, create_graph: bool) -> None:
    def prog(lib: Any) -> Any:
        J = F(lib).jacobian
        kw = {"vectorize": vectorize, "create_graph": create_graph}
        x = t(lib, [[0.5, -1.0], [2.0, 0.3]]).requires_grad_(create_graph)
        y = t(lib, 1.5, 0.25, 3.0)
        return (J(f_elem, x, **kw),                                # tensor -> tensor
                J(f_tuple, (x.reshape(-1)[:3], y), **kw),          # tuple -> tuple
                J(lambda a: (a.sum(), a * 3), y, **kw),            # tensor -> tuple
                J(lambda a, b: (a * b).sum(), (y, y * 2), **kw),   # tuple -> tensor
                J(lambda a, b: a * 2, (y, y), **kw),               # unrelated input: zeros
                J(lambda a: a.sum(), t(lib, 2.0), **kw))           # 0-d

    same(prog)


def test_jacobian_create_graph_second_derivative() -> None:
    def prog(lib: Any) -> Any:
        x = t(lib, 0.5, -1.0, 2.0).requires_grad_()
        jac = F(lib).jacobian(f_elem, x, create_graph=True)
        (g,) = lib.autograd.grad(jac.sum(), x)
        return jac, g

    same(prog)


def test_jacobian_strict_and_strategy_errors() -> None:
    cases: list[Program] = [
        lambda lib: F(lib).jacobian(lambda a, b: a * 2, (t(lib, 1.0, 2.0),) * 2, strict=True),
        lambda lib: F(lib).jacobian(lambda a: a * 2, t(lib, 1.0, 2.0), strict=True,
                                    create_graph=True),
        lambda lib: F(lib).jacobian(lambda a: a ** 2, t(lib, 1.0, 2.0), strict=True,
                                    vectorize=True),
        lambda lib: F(lib).jacobian(lambda a: a, t(lib, 1.0), strategy="other"),
        lambda lib: F(lib).jacobian(lambda a: a, t(lib, 1.0), strategy="forward-mode"),
        lambda lib: F(lib).jacobian(lambda a: a, t(lib, 1.0), strategy="forward-mode",
                                    strict=True),
        lambda lib: F(lib).jacobian(lambda a: a, t(lib, 1.0), strategy="forward-mode",
                                    create_graph=True),
        lambda lib: F(lib).jacobian(lambda a: a, 1.0),
    ]
    for prog in cases:
        want = same(prog)
        assert want[0] == "error"
    # strict passes where every output depends on every input
    same(lambda lib: F(lib).jacobian(lambda a: a ** 2, t(lib, 1.0, 2.0), strict=True))


# -- hessian / vhp / hvp ----------------------------------------------------------------------
@pytest.mark.parametrize("create_graph", [False, True])
def test_hessian_values_and_nesting(create_graph: bool) -> None:
    def prog(lib: Any) -> Any:
        H = F(lib).hessian
        x = t(lib, 0.5, -1.0, 2.0).requires_grad_(create_graph)
        y = t(lib, 1.5, 0.25, 3.0)
        return (H(lambda a: (a.exp() * a.sin()).sum(), x, create_graph=create_graph),
                H(f_scalar, (x, y), create_graph=create_graph),
                H(lambda a, b: (a ** 3).sum(), (x, y), create_graph=create_graph),
                H(lambda a: (a ** 3).sum(), x, vectorize=True))

    same(prog)


def test_hessian_errors() -> None:
    cases: list[Program] = [
        lambda lib: F(lib).hessian(lambda a: a ** 2, t(lib, 1.0, 2.0)),
        lambda lib: F(lib).hessian(lambda a: (a.sum(),), t(lib, 1.0, 2.0)),
        lambda lib: F(lib).hessian(lambda a: (a * 2).sum(), t(lib, 1.0, 2.0), strict=True),
        lambda lib: F(lib).hessian(lambda a, b: (a ** 3).sum(), (t(lib, 1.0),) * 2,
                                   strict=True),
        lambda lib: F(lib).hessian(lambda a: a.sum(), [t(lib, 1.0)]),
        lambda lib: F(lib).hessian(lambda a: a.sum(), t(lib, 1.0),
                                   outer_jacobian_strategy="x"),
    ]
    for prog in cases:
        want = same(prog)
        assert want[0] == "error"
    same(lambda lib: F(lib).hessian(lambda a: (a ** 3).sum(), t(lib, 1.0, 2.0), strict=True))
    # (a constant hessian passes strict mode without create_graph, as in torch)
    same(lambda lib: F(lib).hessian(lambda a: (a ** 2).sum(), t(lib, 1.0, 2.0), strict=True))


@pytest.mark.parametrize("create_graph", [False, True])
def test_vhp_hvp_values(create_graph: bool) -> None:
    for fname in ("vhp", "hvp"):
        def prog(lib: Any, fname: str = fname) -> Any:
            fn = getattr(F(lib), fname)
            x = t(lib, 0.5, -1.0, 2.0).requires_grad_(create_graph)
            y = t(lib, 1.5, 0.25, 3.0)
            v = (t(lib, 1.0, -2.0, 0.5), t(lib, 0.3, 0.2, 0.1))
            return (fn(f_scalar, (x, y), v, create_graph=create_graph),
                    fn(lambda a: (a.exp() * a.sin()).sum(), x, v[0],
                       create_graph=create_graph),
                    fn(lambda a: (a ** 4).sum(), t(lib, [3.0])))

        same(prog)


def test_vhp_hvp_strict_errors() -> None:
    for fname in ("vhp", "hvp"):
        for f in (lambda a: (a * 2).sum(), lambda a: (a ** 2).sum(), lambda a: a * 2):
            def prog(lib: Any, fname: str = fname, f: Any = f) -> Any:
                return getattr(F(lib), fname)(f, t(lib, 1.0, 2.0), t(lib, 1.0, 1.0),
                                              strict=True, create_graph=True)

            same(prog)
