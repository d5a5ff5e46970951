"""Type-promotion sweep against torch: every binary (and a few ternary) elementwise op, in its
function and operator forms, over the product of operand kinds.

An operand kind is a dimensioned tensor or a 0-d tensor of each dtype, a Python bool, int or
float (including out-of-range ints such as 300 and 2**40) or a NumPy scalar. Each combination
runs in both libraries; the outcome compared is the exception type, or the result's dtype,
shape and values (exact for integers and bools, close for floats, nan where nan) and, for
floating results with inputs that require grad, each input's gradient dtype and values (or the
exception type of the backward). The in-place forms (``add_`` ... ``clamp_`` and the augmented
operators) compare the same, plus whether the result is the tensor itself and, after an error,
that the tensor is unchanged. The whole sweep runs again with the default dtype float64.

Each test function covers one op over all its combinations and reports every mismatch.
"""

from __future__ import annotations

import itertools
import math
import operator
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import gradsum

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64")

# values of the left and right tensor operands (cast with NumPy: -3 is 253 in uint8)
_VALUES = {
    ("L", "int"): [-3, 0, 2, 5], ("R", "int"): [2, -1, 3, 1],
    ("L", "float"): [-3.5, 0.0, 2.25, math.nan], ("R", "float"): [2.0, -1.5, 0.0, 3.0],
    ("L", "bool"): [True, False, True, True], ("R", "bool"): [True, True, False, True],
    ("L0", "int"): -3, ("R0", "int"): 2, ("L0", "float"): -3.5, ("R0", "float"): -1.5,
    ("L0", "bool"): True, ("R0", "bool"): False,
}

# Python and NumPy scalars (the same object for both libraries)
SCALARS: dict[str, Any] = {
    "True": True, "2": 2, "-3": -3, "0": 0, "300": 300, "2**40": 2**40, "2.5": 2.5,
    "0.0": 0.0, "1e300": 1e300,
    "np.bool_": np.bool_(True), "np.int64": np.int64(2), "np.int32": np.int32(-3),
    "np.uint8": np.uint8(3), "np.float16": np.float16(1.5), "np.float32": np.float32(2.5),
    "np.float64": np.float64(2.5),
}
TENSOR_KINDS = tuple(f"{d}[]" for d in DTYPES) + tuple(f"{d}()" for d in DTYPES) + (
    "int64[0]", "int32[0]")  # (the last two hold a zero: integer division by zero)
KINDS = TENSOR_KINDS + tuple(SCALARS)


def _family(dtype: str) -> str:
    return "bool" if dtype == "bool" else "float" if dtype.startswith("float") else "int"


def _dt(lib: Any, name: str) -> Any:
    return lib.bool_ if lib is gradsum and name == "bool" else getattr(lib, name)


def make(lib: Any, kind: str, side: str, rg: bool = False) -> Any:
    """The operand ``kind`` on ``side`` ("L" or "R"); float tensors require grad if ``rg``."""
    if kind in SCALARS:
        return SCALARS[kind]
    dtype, shape = kind[:kind.index("[") if "[" in kind else kind.index("(")], kind[-3:]
    fam = _family(dtype)
    if shape.endswith("()"):
        vals = np.asarray(_VALUES[(side + "0", fam)])
    elif shape == "[0]":
        vals = np.asarray([2, 0, 3, 1])
    else:
        vals = np.asarray(_VALUES[(side, fam)])
    vals = vals.astype(dtype).tolist()
    return lib.tensor(vals, dtype=_dt(lib, dtype), requires_grad=rg and fam == "float")


def _norm(x: Any) -> Any:
    if isinstance(x, (torch.dtype, gradsum.dtype)):
        return str(x).split(".")[-1].replace("bool_", "bool")
    return x


def _values(t: Any) -> tuple[str, Any]:
    return _norm(t.dtype), np.asarray(t.detach().tolist())


def _same_values(dtype: str, g: Any, t: Any) -> bool:
    if g.shape != t.shape:
        return False
    if not dtype.startswith("float"):
        return bool(np.array_equal(g, t))
    rtol = 2e-3 if dtype == "float16" else 1e-5
    return bool(np.allclose(g.astype(float), t.astype(float), rtol=rtol, atol=1e-6,
                            equal_nan=True))


def _run(lib: Any, fn: Callable[..., Any], kinds: tuple[str, ...], grad: bool
         ) -> tuple[Any, ...]:
    """The outcome of ``fn(lib, *operands)``: ("err", type) or ("ok", dtype, values,
    requires_grad, gradients)."""
    sides = ("L", "R", "L")
    ops = [make(lib, k, sides[i], grad) for i, k in enumerate(kinds)]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(lib, *ops)
    except Exception as e:  # (the type is what is compared)
        return ("err", type(e).__name__)
    if not hasattr(out, "dtype"):
        return ("ok", type(out).__name__, np.asarray(out), False, ())
    dtype, vals = _values(out)
    grads: tuple[Any, ...] = ()
    if out.requires_grad:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out.sum().backward()
            grads = tuple(None if getattr(o, "grad", None) is None else _values(o.grad)
                          for o in ops)
        except Exception as e:  # (the backward's error type is compared)
            grads = ("err", type(e).__name__)
    return ("ok", dtype, vals, out.requires_grad, grads)


def _same(g: tuple[Any, ...], t: tuple[Any, ...]) -> bool:
    if g[0] != t[0] or g[0] == "err":
        return g == t
    if g[1] != t[1] or g[3] != t[3] or not _same_values(str(t[1]), g[2], t[2]):
        return False
    if len(g[4]) != len(t[4]) or (t[4] and t[4][0] == "err"):
        return g[4] == t[4]
    for a, b in zip(g[4], t[4]):
        if (a is None) != (b is None):
            return False
        if a is not None and (a[0] != b[0] or not _same_values(b[0], a[1], b[1])):
            return False
    return True


def compare(fn: Callable[..., Any], combos: Iterator[tuple[str, ...]], grad: bool = True
            ) -> tuple[int, list[str]]:
    """Run ``fn`` on every combination; (count, mismatches as readable lines)."""
    n, bad = 0, []
    for kinds in combos:
        n += 1
        t = _run(torch, fn, kinds, grad)
        g = _run(gradsum, fn, kinds, grad)
        if not _same(g, t):
            bad.append(f"{kinds}: torch {t} gradsum {g}")
    return n, bad


def _any_tensor(*kinds: str) -> bool:
    return any(k not in SCALARS for k in kinds)


def pairs(left: tuple[str, ...] = KINDS, right: tuple[str, ...] = KINDS
          ) -> Iterator[tuple[str, str]]:
    """Every (left, right) pair with at least one tensor."""
    return (p for p in itertools.product(left, right) if _any_tensor(*p))


# -- the ops: fn(lib, left, right) ------------------------------------------------------------
def _div(mode: str | None) -> Callable[..., Any]:
    return lambda L, a, b: L.div(a, b, rounding_mode=mode)


def _fn(name: str, **kw: Any) -> Callable[..., Any]:
    return lambda L, a, b: getattr(L, name)(a, b, **kw)


BINARY: dict[str, Callable[..., Any]] = {
    "add": _fn("add"), "add_alpha2": _fn("add", alpha=2), "add_alpha2.5": _fn("add", alpha=2.5),
    "sub": _fn("sub"), "mul": _fn("mul"),
    "div": _div(None), "div_trunc": _div("trunc"), "div_floor": _div("floor"),
    "floor_divide": _fn("floor_divide"), "remainder": _fn("remainder"), "pow": _fn("pow"),
    "maximum": _fn("maximum"), "minimum": _fn("minimum"), "atan2": _fn("atan2"),
    # (the six comparisons, the three bitwise and the three logical ops share one code path
    # each: one or two of each family here, all of them in the operator forms)
    "eq": _fn("eq"), "lt": _fn("lt"), "bitwise_and": _fn("bitwise_and"),
    "bitwise_xor": _fn("bitwise_xor"), "logical_and": _fn("logical_and"),
    "where": lambda L, a, b: L.where(L.tensor([True, False, True, False]), a, b),
    "clamp_min": lambda L, a, b: L.clamp(a, min=b),
    "clamp_max": lambda L, a, b: L.clamp(a, max=b),
    "clamp_both": lambda L, a, b: L.clamp(a, min=b, max=b),
    "lerp_0.25": lambda L, a, b: L.lerp(a, b, 0.25),
    "lerp_tensor": lambda L, a, b: L.lerp(a, b, b),
}
OPERATORS: dict[str, Callable[..., Any]] = {
    name: (lambda f: lambda L, a, b: f(a, b))(getattr(operator, name))
    for name in ("add", "sub", "mul", "truediv", "pow", "floordiv", "mod", "and_", "or_",
                 "xor", "eq", "ne", "lt", "le", "gt", "ge")
}
TERNARY: dict[str, Callable[..., Any]] = {
    "addcmul": lambda L, a, b, c: L.addcmul(a, b, c),
    "addcmul_v2.5": lambda L, a, b, c: L.addcmul(a, b, c, value=2.5),
    "addcdiv": lambda L, a, b, c: L.addcdiv(a, b, c),
    "addcdiv_v2": lambda L, a, b, c: L.addcdiv(a, b, c, value=2),
}


def _inplace_method(name: str, **kw: Any) -> Callable[..., Any]:
    return lambda L, a, b: getattr(a, name)(b, **kw)


def _augmented(op: str) -> Callable[..., Any]:
    src = f"def f(L, a, b):\n    a {op}= b\n    return a\n"
    ns: dict[str, Any] = {}
    exec(src, ns)  # (the augmented assignment statement itself, as user code writes it)
    return ns["f"]


INPLACE: dict[str, Callable[..., Any]] = {
    "add_": _inplace_method("add_"), "add_alpha2": _inplace_method("add_", alpha=2),
    "sub_": _inplace_method("sub_"), "mul_": _inplace_method("mul_"),
    "div_": _inplace_method("div_"), "pow_": _inplace_method("pow_"),
    "clamp_min_": lambda L, a, b: a.clamp_(min=b), "clamp_max_": lambda L, a, b: a.clamp_(max=b),
    **{f"{op}=": _augmented(op) for op in ("+", "-", "*", "/", "//", "%", "**", "&", "|", "^")},
}


def _inplace_fn(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` on a non-leaf copy of the left tensor; the outcome also tells whether the result
    is the tensor itself and, after an error, whether its values survived."""

    def run(L: Any, a: Any, b: Any) -> Any:
        base = a
        a = a.clone() if a.requires_grad else a
        before = a.detach().clone()
        try:
            out = fn(L, a, b)
        except Exception:
            same = a.dtype == before.dtype and np.array_equal(
                np.asarray(a.detach().tolist(), dtype=float),
                np.asarray(before.tolist(), dtype=float), equal_nan=True)
            if not same and L is gradsum:  # (gradsum's contract: a failed call writes
                raise AssertionError("the tensor changed before the error") from None
            raise  # nothing; torch's integer // and % by zero write part, then raise)
        if out is not a:
            raise LookupError("a new tensor, not the tensor itself")
        if a.requires_grad and base is not a:  # the gradient reaches the leaf through it
            return L.mul(out, 1) if out.dtype.is_floating_point else out
        return out

    return run


# -- known differences, left for ops/inplace.py, _tensor.py and the float16 kernels ----------
#: augmented operators gradsum does not define (Python falls back to ``t = t // x``: a new
#: tensor, and a dtype torch refuses, e.g. ``uint8_t //= 2.5``)


def pending(name: str, kinds: tuple[str, ...]) -> bool:
    """Combinations with a known difference, not fixed yet."""
    left, right = kinds[0], kinds[-1]
    # float16 with a Python number: torch computes in float32 ("opmath"), so 0 * 2**40 is 0
    # (NumPy: 0 * float16(2**40) = 0 * inf = nan), and x * 0.1 rounds once
    return (name in {"mul", "operator.mul", "mul_", "*="} and "float16" in left + right
            and "2**40" in kinds)


def _without_pending(name: str, combos: Iterator[tuple[str, ...]]
                     ) -> Iterator[tuple[str, ...]]:
    return (c for c in combos if not pending(name, c))


@pytest.fixture(params=["float32", "float64"], ids=["default_float32", "default_float64"])
def default_dtype(request: Any) -> Iterator[str]:
    for lib in (torch, gradsum):
        lib.set_default_dtype(getattr(lib, request.param))
    try:
        yield request.param
    finally:
        for lib in (torch, gradsum):
            lib.set_default_dtype(lib.float32)


_FLOATISH = {"2.5", "0.0", "1e300", "np.bool_", "np.float16", "np.float32", "np.float64"}
_TO_FLOAT = {"div", "div_trunc", "atan2", "lerp_0.25", "lerp_tensor", "addcdiv", "addcdiv_v2",
             "operator.truediv", "div_", "/="}


def _default_matters(name: str, default: str) -> Callable[[tuple[str, ...]], bool]:
    """Under the float64 default only the combinations the default can change run: no
    floating tensor, and a floating number or an op that computes integers in floating."""
    if default == "float32":
        return lambda kinds: True
    return lambda kinds: not any(k.startswith("float") for k in kinds) and (
        name in _TO_FLOAT or any(k in _FLOATISH for k in kinds))


def _check(n: int, bad: list[str]) -> None:
    assert n > 0
    assert not bad, f"{len(bad)} of {n} combinations differ:\n" + "\n".join(bad[:40])


@pytest.mark.parametrize("name", sorted(BINARY))
def test_function_forms(name: str, default_dtype: str) -> None:
    combos = filter(_default_matters(name, default_dtype), _without_pending(name, pairs()))
    _check(*compare(BINARY[name], combos))


@pytest.mark.parametrize("name", sorted(OPERATORS))
def test_operators_both_sides(name: str, default_dtype: str) -> None:
    # (a tensor on the left calls the function form swept above: the reflected operators
    # here, and == / != with everything, which have their own entry points)
    left = KINDS if name in ("eq", "ne") else tuple(SCALARS)
    combos = _without_pending(f"operator.{name}", pairs(left))
    _check(*compare(OPERATORS[name], filter(_default_matters(f"operator.{name}", default_dtype),
                                            combos)))


@pytest.mark.parametrize("name", sorted(TERNARY))
def test_ternary(name: str, default_dtype: str) -> None:
    combos = itertools.product(TENSOR_KINDS[:18], TENSOR_KINDS[:18] + ("2", "2.5", "True"),
                               ("float32[]", "int64[]", "float64()", "bool[]"))
    _check(*compare(TERNARY[name], filter(_default_matters(name, default_dtype), combos)))


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace(name: str, default_dtype: str) -> None:
    combos = filter(_default_matters(name, default_dtype),
                    _without_pending(name, itertools.product(TENSOR_KINDS, KINDS)))
    _check(*compare(_inplace_fn(INPLACE[name]), combos))


@pytest.mark.xfail(reason="known difference (see pending()): float16 with a number is "
                   "computed in float16 (torch: in float32, 'opmath'); remove it from pending() "
                   "once it passes", strict=True)
def test_pending_differences() -> None:
    n, bad = 0, []
    for name, fn in INPLACE.items():
        combos = (c for c in itertools.product(TENSOR_KINDS, KINDS) if pending(name, c))
        k, b = compare(_inplace_fn(fn), combos)
        n, bad = n + k, bad + b
    k, b = compare(BINARY["mul"], (c for c in pairs() if pending("mul", c)))
    _check(n + k, bad + b)


@pytest.mark.parametrize("call", [
    lambda L: L.add(L.ones(2), L.full((2,), 2.0), alpha=L.tensor(3.0)),
    lambda L: L.sub(L.ones(2), L.full((2,), 2.0), alpha=L.tensor(3.0)),
    lambda L: L.ones(2).add_(L.full((2,), 2.0), alpha=L.tensor(3.0)),
    lambda L: L.ones(2).sub_(L.full((2,), 2.0), alpha=L.tensor(2.0)),
    lambda L: L.ones(2, dtype=L.int64).add_(L.ones(2, dtype=L.int64), alpha=L.tensor(3)),
])
def test_alpha_as_a_one_element_tensor(call: Any) -> None:
    g, t = call(gradsum), call(torch)
    assert g.tolist() == t.tolist() and str(g.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
