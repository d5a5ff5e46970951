"""The op test table: one :class:`OpInfo` per public op of :data:`gradsum.ops.OPS`.

An entry names the gradsum callable and the torch callable that it must match, the sample
inputs (a function of a NumPy ``Generator``), whether the op is differentiable, an optional
NumPy reference for the forward, the error cases (inputs on which torch raises), and any
deliberate difference from torch (recorded here, never silently skipped).

Samples are built from NumPy arrays so that both libraries see the same numbers:

- a ``float64`` array is a *floating operand*: it becomes a tensor of the dtype under test
  (float32 or float64) and requires grad when the op is differentiable;
- :class:`Fixed` wraps an array whose dtype is kept as is (int / bool / a float of another
  width for promotion cases) and which never requires grad;
- :class:`NoGrad` wraps a floating operand that must not require grad;
- Python numbers, strings, tuples of ints and None pass through unchanged; lists and tuples
  that contain arrays (``cat``'s tensors, an index key) are converted element-wise.

Domain restrictions live in the generators: ``pos`` for logs and roots, ``away`` keeps values
away from 0 (kinks of abs/relu/sign), ``distinct`` avoids ties (max/amax/argmax), ``off_grid``
keeps values away from the clamp bounds and integer points (floor/round/remainder).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import gradsum
import gradsum.ops as G

try:  # the oracle; the table itself imports without it (test_ops skips cleanly)
    import torch
    import torch.nn.functional as TF
except ImportError:  # pragma: no cover - exercised only without torch
    torch = None  # type: ignore[assignment]
    TF = None  # type: ignore[assignment]


# -- sample wrappers --------------------------------------------------------------------------
@dataclass(frozen=True)
class Fixed:
    """An operand whose dtype is kept (ints, bools, masks, indices); never requires grad."""

    array: Any


@dataclass(frozen=True)
class NoGrad:
    """A floating operand (converted to the dtype under test) that does not require grad."""

    array: Any


@dataclass(frozen=True)
class DT:
    """A dtype argument by name (``DT("float64")`` -> gradsum.float64 / torch.float64)."""

    name: str


@dataclass
class Sample:
    args: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)
    #: skip the numerical checks (gradcheck/gradgradcheck) for this sample, with the reason
    no_gradcheck: str | None = None
    #: compare the forward only (e.g. values of an op that ties on purpose)
    forward_only: bool = False

    def __repr__(self) -> str:
        def short(v: Any) -> str:
            if isinstance(v, np.ndarray):
                return f"{v.dtype}{list(v.shape)}"
            if isinstance(v, (Fixed, NoGrad)):
                return f"{type(v).__name__}({short(v.array)})"
            if isinstance(v, (list, tuple)):
                return "[" + ", ".join(short(x) for x in v) + "]"
            return repr(v)

        parts = [short(a) for a in self.args] + [f"{k}={short(v)}" for k, v in self.kwargs.items()]
        return "(" + ", ".join(parts) + ")"


@dataclass
class ErrorCase:
    """Inputs on which torch raises; gradsum must raise the same exception type and, when
    ``shapes`` is given, name every one of those shapes in its message."""

    args: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)
    shapes: tuple[tuple[int, ...], ...] = ()
    contains: tuple[str, ...] = ()


@dataclass
class OpInfo:
    name: str
    op: Callable[..., Any]
    ref: Callable[..., Any]
    samples: Callable[[np.random.Generator], list[Sample]]
    aliases: tuple[str, ...] = ()
    differentiable: bool = True
    np_ref: Callable[..., Any] | None = None
    errors: Callable[[np.random.Generator], list[ErrorCase]] | None = None
    #: gradsum's grad_fn name where it deliberately differs from torch's, and why
    grad_fn: str | None = None
    #: torch's grad_fn name -> gradsum's, where they deliberately differ (see grad_fn_note)
    grad_fn_map: dict[str, str] = field(default_factory=dict)
    grad_fn_note: str = ""
    #: compare grad_fn names at all (False for ops whose torch result is a plain view etc.)
    check_grad_fn: bool = True
    #: tolerances for float32 parity
    rtol32: float = 2e-5
    atol32: float = 1e-5
    #: gradgradcheck is skipped (with the reason) for ops whose first derivative is
    #: piecewise constant (the second derivative is zero almost everywhere and central
    #: differences near kinks are noise)
    no_gradgrad: str | None = None
    notes: str = ""


# -- generators -------------------------------------------------------------------------------
def rnd(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return np.asarray(rng.standard_normal(shape))


def pos(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return np.asarray(rng.uniform(0.5, 2.0, shape))


def away(rng: np.random.Generator, *shape: int) -> np.ndarray:
    """Values with |x| in [0.2, 1.5]: no kink of abs/relu/sign within gradcheck's step."""
    return np.asarray(rng.uniform(0.2, 1.5, shape) * rng.choice([-1.0, 1.0], shape))


def distinct(rng: np.random.Generator, *shape: int) -> np.ndarray:
    """Pairwise distinct values (gaps of at least 0.2): no ties for max/amax/argmax."""
    n = math.prod(shape)
    v = (rng.permutation(n) - n / 2) * 0.3 + rng.uniform(-0.05, 0.05, n)
    return v.reshape(shape)


def off_grid(rng: np.random.Generator, *shape: int) -> np.ndarray:
    """Values at least 0.1 away from every multiple of 0.5 (clamp bounds, rounding points)."""
    base = rng.integers(-4, 4, shape) * 0.5
    return np.asarray(base + rng.uniform(0.1, 0.4, shape))


def ints(rng: np.random.Generator, *shape: int, lo: int = -5, hi: int = 6) -> Fixed:
    return Fixed(rng.integers(lo, hi, shape).astype(np.int64))


def mask(rng: np.random.Generator, *shape: int) -> Fixed:
    return Fixed(rng.random(shape) < 0.5)


def idx(*values: int) -> Fixed:
    return Fixed(np.array(values, dtype=np.int64))


BROADCAST_PAIRS: list[tuple[tuple[int, ...], tuple[int, ...]]] = [
    ((2, 3), (2, 3)),
    ((2, 1), (3,)),
    ((), (2, 3)),
    ((2, 3), ()),
    ((1, 3, 1), (2, 1, 2)),
    ((0, 3), (3,)),
]


def _binary_samples(gen: Callable[..., np.ndarray], gen_b: Callable[..., np.ndarray] | None = None
                    ) -> Callable[[np.random.Generator], list[Sample]]:
    gb = gen_b or gen

    def samples(rng: np.random.Generator) -> list[Sample]:
        return [Sample((gen(rng, *sa), gb(rng, *sb))) for sa, sb in BROADCAST_PAIRS]

    return samples


def _unary_samples(gen: Callable[..., np.ndarray], **kwargs: Any
                   ) -> Callable[[np.random.Generator], list[Sample]]:
    def samples(rng: np.random.Generator) -> list[Sample]:
        return [Sample((gen(rng, *s),), dict(kwargs)) for s in [(2, 3), (), (4,), (0, 2)]]

    return samples


def _broadcast_errors(rng: np.random.Generator) -> list[ErrorCase]:
    return [ErrorCase((rnd(rng, 2, 3), rnd(rng, 4)), shapes=((2, 3), (4,))),
            ErrorCase((rnd(rng, 2, 3), rnd(rng, 3, 3)), shapes=((2, 3), (3, 3)))]


# -- conversion to either library -------------------------------------------------------------
def to_lib(value: Any, lib: str, dtype: Any, requires_grad: bool) -> Any:
    """Convert a sample value to gradsum (lib='g') or torch (lib='t') objects."""
    if isinstance(value, Fixed):
        arr = np.array(value.array)
        return gradsum.tensor(arr) if lib == "g" else torch.from_numpy(arr)
    if isinstance(value, NoGrad):
        return to_lib(value.array, lib, dtype, False)
    if isinstance(value, DT):
        return getattr(gradsum if lib == "g" else torch, value.name)
    if isinstance(value, np.ndarray):
        if lib == "g":
            gdt = gradsum.float32 if dtype == "float32" else gradsum.float64
            return gradsum.tensor(value, dtype=gdt, requires_grad=requires_grad)
        tdt = torch.float32 if dtype == "float32" else torch.float64
        return torch.tensor(value, dtype=tdt, requires_grad=requires_grad)
    if isinstance(value, list):
        return [to_lib(v, lib, dtype, requires_grad) for v in value]
    if isinstance(value, tuple) and any(isinstance(v, (np.ndarray, Fixed, NoGrad))
                                        for v in value):
        return tuple(to_lib(v, lib, dtype, requires_grad) for v in value)
    return value


def convert(sample: Sample | ErrorCase, lib: str, dtype: str, requires_grad: bool
            ) -> tuple[tuple[Any, ...], dict[str, Any]]:
    args = tuple(to_lib(a, lib, dtype, requires_grad) for a in sample.args)
    kwargs = {k: to_lib(v, lib, dtype, requires_grad) for k, v in sample.kwargs.items()}
    return args, kwargs


def flat_outputs(out: Any) -> list[Any]:
    """Outputs as a flat list (tuples, named tuples and lists flattened)."""
    if isinstance(out, (tuple, list)):
        res: list[Any] = []
        for o in out:
            res.extend(flat_outputs(o))
        return res
    return [out]


# -- small wrappers where the two signatures differ -------------------------------------------
def _method(name: str) -> Callable[..., Any]:
    """``torch.Tensor.<name>`` looked up lazily (so the table imports without torch)."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(torch.Tensor, name)(*args, **kwargs)

    call.__name__ = name
    return call


def _t(name: str) -> Callable[..., Any]:
    """``torch.<name>`` looked up lazily."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(torch, name)(*args, **kwargs)

    call.__name__ = name
    return call


def _tf(name: str) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(TF, name)(*args, **kwargs)

    call.__name__ = name
    return call


def _inplace(lib_fn: Callable[..., Any]) -> Callable[..., Any]:
    """Apply an in-place op to a non-leaf copy of the first operand (a leaf would raise)."""

    def call(a: Any, *args: Any, **kwargs: Any) -> Any:
        return lib_fn(a.clone(), *args, **kwargs)

    return call


def _g_inplace(name: str) -> Callable[..., Any]:
    return _inplace(lambda *a, **k: G.OPS[name](*a, **k))


def _t_inplace(name: str) -> Callable[..., Any]:
    return _inplace(lambda *a, **k: getattr(torch.Tensor, name)(*a, **k))


def _t_index_put(a: Any, key: Any, value: Any) -> Any:
    key = key if isinstance(key, tuple) else (key,)
    return torch.index_put(a, key, value)


def _t_max(a: Any, *args: Any, **kwargs: Any) -> Any:
    return torch.max(a, *args, **kwargs)


def _t_min(a: Any, *args: Any, **kwargs: Any) -> Any:
    return torch.min(a, *args, **kwargs)


# -- the table --------------------------------------------------------------------------------
OPINFOS: list[OpInfo] = []


def op(name: str, ref: Callable[..., Any], samples: Callable[..., list[Sample]], **kw: Any
       ) -> OpInfo:
    info = OpInfo(name, G.OPS[name], ref, samples, **kw)
    OPINFOS.append(info)
    return info


# arithmetic -----------------------------------------------------------------------------------
def _add_samples(rng: np.random.Generator) -> list[Sample]:
    s = _binary_samples(rnd)(rng)
    return s + [
        Sample((rnd(rng, 2, 3), rnd(rng, 3)), {"alpha": 2.5}),
        Sample((rnd(rng, 2, 3), 1.5)),
        Sample((rnd(rng, 2, 3), 2), {"alpha": 3}),
        Sample((rnd(rng, 2, 3), ints(rng, 2, 3))),            # int tensor promotes
        Sample((rnd(rng, 2, 3), Fixed(rnd(rng, 3).astype(np.float32)))),
        Sample((Fixed(rnd(rng, 2).astype(np.float32)), rnd(rng, 2))),
        Sample((ints(rng, 2, 3), ints(rng, 3))),               # int + int stays int64
        Sample((ints(rng, 2, 3), 2.5)),                        # int + float -> float32
        Sample((Fixed(np.array([True, False])), Fixed(np.array([True, True])))),
        Sample((Fixed(np.array([1, 2], dtype=np.int32)), 3)),  # stays int32
        Sample((rnd(rng, 3), NoGrad(rnd(rng, 3)))),
    ]


op("add", _t("add"), _add_samples, np_ref=lambda a, b, alpha=1: a + alpha * b,
   errors=_broadcast_errors)
op("sub", _t("sub"), lambda rng: [s for s in _add_samples(rng)
                                  if not (isinstance(s.args[0], Fixed)
                                          and s.args[0].array.dtype == bool)],
   np_ref=lambda a, b, alpha=1: a - alpha * b,
   errors=lambda rng: _broadcast_errors(rng) + [
       ErrorCase((Fixed(np.array([True])), Fixed(np.array([False])))),
       ErrorCase((rnd(rng, 2), True)), ErrorCase((Fixed(np.array([True])), 1)),
       ErrorCase((ints(rng, 2), Fixed(np.array([True, False]))))])
op("mul", _t("mul"), lambda rng: _binary_samples(rnd)(rng) + [
    Sample((rnd(rng, 2, 3), 2.5)), Sample((rnd(rng, 3), 3)),
    Sample((rnd(rng, 2, 3), NoGrad(rnd(rng, 2, 3)))),
    Sample((NoGrad(rnd(rng, 2, 1)), rnd(rng, 3))),
    Sample((ints(rng, 3), rnd(rng, 3))),
    Sample((ints(rng, 3), ints(rng, 3))),
    Sample((Fixed(np.array([True, False])), 2.5)),
], aliases=("multiply",), np_ref=np.multiply, errors=_broadcast_errors)
op("div", _t("div"), lambda rng: _binary_samples(rnd, away)(rng) + [
    Sample((rnd(rng, 2, 3), 2.5)), Sample((rnd(rng, 3), 4)),
    Sample((rnd(rng, 3), NoGrad(away(rng, 3)))),
    Sample((NoGrad(rnd(rng, 3)), away(rng, 3))),
    Sample((ints(rng, 3), Fixed(np.array([2, 3, 4])))),   # int / int -> float32
    Sample((ints(rng, 3), 2)),
    Sample((off_grid(rng, 2, 3), away(rng, 3)), {"rounding_mode": "floor"}, forward_only=True),
    Sample((off_grid(rng, 2, 3), away(rng, 3)), {"rounding_mode": "trunc"}, forward_only=True),
    Sample((ints(rng, 4), Fixed(np.array([2, -3, 4, -5]))), {"rounding_mode": "floor"}),
    Sample((ints(rng, 4), Fixed(np.array([2, -3, 4, -5]))), {"rounding_mode": "trunc"}),
], aliases=("true_divide", "divide"), np_ref=None, errors=lambda rng: _broadcast_errors(rng) + [
    ErrorCase((rnd(rng, 2), rnd(rng, 2)), {"rounding_mode": "round"}),
    ErrorCase((ints(rng, 2), Fixed(np.array([0, 1]))), {"rounding_mode": "floor"}),
    ErrorCase((ints(rng, 2), 0), {"rounding_mode": "trunc"}),
    ErrorCase((Fixed(np.array([True])), Fixed(np.array([True]))), {"rounding_mode": "floor"}),
])


def _pow_samples(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((pos(rng, 2, 3), 2.0)), Sample((rnd(rng, 2, 3), 3)), Sample((pos(rng, 4), 0.5)),
        Sample((rnd(rng, 3), 0)), Sample((pos(rng, 3), -1.5)), Sample((rnd(rng, 0), 2)),
        Sample((pos(rng, 2, 3), rnd(rng, 3))), Sample((pos(rng, 2, 1), rnd(rng, 1, 2))),
        Sample((pos(rng, 3), NoGrad(rnd(rng, 3)))), Sample((NoGrad(pos(rng, 3)), rnd(rng, 3))),
        Sample((2.0, rnd(rng, 3))), Sample((0.5, rnd(rng, 2, 2))),
        Sample((ints(rng, 3, lo=0, hi=4), 2)),
        Sample((ints(rng, 3, lo=1, hi=4), 0.5)),
        Sample((ints(rng, 3, lo=1, hi=4), ints(rng, 3, lo=0, hi=3))),
    ]


op("pow", _t("pow"), _pow_samples, np_ref=None, errors=lambda rng: [
    ErrorCase((pos(rng, 2, 3), pos(rng, 4)), shapes=((2, 3), (4,))),
    ErrorCase((ints(rng, 3, lo=1, hi=3), -1)),
    ErrorCase((Fixed(np.array([True])), Fixed(np.array([False])))),
])
op("maximum", _t("maximum"), _binary_samples(distinct), np_ref=np.maximum,
   errors=lambda rng: _broadcast_errors(rng) + [ErrorCase((rnd(rng, 2), 1.0))])
op("minimum", _t("minimum"), _binary_samples(distinct), np_ref=np.minimum,
   errors=lambda rng: _broadcast_errors(rng) + [ErrorCase((1.0, rnd(rng, 2)))])
op("remainder", _t("remainder"), lambda rng: [
    Sample((off_grid(rng, 2, 3), 0.5)), Sample((off_grid(rng, 2, 3), -0.5)),
    Sample((ints(rng, 5), 3)), Sample((ints(rng, 4), Fixed(np.array([2, -3, 4, -5])))),
    Sample((off_grid(rng, 2, 3) * 3, NoGrad(np.full(3, 0.5)))),
], no_gradgrad="piecewise linear", errors=lambda rng: _broadcast_errors(rng) + [
    ErrorCase((ints(rng, 3), Fixed(np.array([1, 0, 2])))), ErrorCase((ints(rng, 3), 0)),
    ErrorCase((Fixed(np.array([True])), Fixed(np.array([True])))),
])
op("floor_divide", _t("floor_divide"), lambda rng: [
    Sample((off_grid(rng, 2, 3), 0.5)), Sample((ints(rng, 5), 3)),
    Sample((ints(rng, 4), Fixed(np.array([2, -3, 4, -5])))),
    Sample((off_grid(rng, 2, 3), away(rng, 3))),
], differentiable=False, np_ref=np.floor_divide, errors=lambda rng: _broadcast_errors(rng) + [
    ErrorCase((ints(rng, 3), 0)), ErrorCase((ints(rng, 2), Fixed(np.array([0, 3])))),
    ErrorCase((Fixed(np.array([True])), Fixed(np.array([True])))),
])
op("where", _t("where"), lambda rng: [
    Sample((mask(rng, 2, 3), rnd(rng, 2, 3), rnd(rng, 2, 3))),
    Sample((mask(rng, 2, 3), rnd(rng, 3), rnd(rng, 2, 1))),
    Sample((mask(rng, 3), rnd(rng, 2, 3), 0.5)),
    Sample((mask(rng, 2, 3), rnd(rng, ), NoGrad(rnd(rng, 3)))),
    Sample((mask(rng, 1, 3), ints(rng, 2, 3), ints(rng, 3))),
], np_ref=np.where, errors=lambda rng: [
    ErrorCase((mask(rng, 2, 3), rnd(rng, 4), rnd(rng, 2, 3)), shapes=((4,),)),
    ErrorCase((ints(rng, 3), rnd(rng, 3), rnd(rng, 3))),
])

# unary ----------------------------------------------------------------------------------------
_INT_SAMPLE = [Sample((Fixed(np.array([1, 2, 3])),))]


def _unary(name: str, gen: Callable[..., np.ndarray], np_ref: Any = None, ints_ok: bool = True,
           **kw: Any) -> OpInfo:
    base = _unary_samples(gen)
    extra = _INT_SAMPLE if ints_ok else []
    return op(name, _t(name), lambda rng: base(rng) + extra, np_ref=np_ref, **kw)


_unary("neg", rnd, np.negative, aliases=("negative",),
       errors=lambda rng: [ErrorCase((Fixed(np.array([True])),))])
_unary("exp", rnd, np.exp)
_unary("log", pos, np.log)
_unary("log1p", pos, np.log1p)
_unary("sqrt", pos, np.sqrt)
_unary("rsqrt", pos, lambda a: 1 / np.sqrt(a))
_unary("reciprocal", away, np.reciprocal, ints_ok=False)
_BOOL_ERROR = {"errors": lambda rng: [ErrorCase((Fixed(np.array([True, False])),))]}
_unary("abs", away, np.abs, aliases=("absolute",), **_BOOL_ERROR)
_unary("sin", rnd, np.sin)
_unary("cos", rnd, np.cos)
_unary("tanh", rnd, np.tanh)
_unary("sigmoid", rnd, lambda a: 1 / (1 + np.exp(-a)))
_unary("erf", rnd, None)
_unary("sign", away, np.sign, no_gradgrad="zero derivative")
_unary("floor", off_grid, np.floor, no_gradgrad="zero derivative", **_BOOL_ERROR)
_unary("ceil", off_grid, np.ceil, no_gradgrad="zero derivative", **_BOOL_ERROR)
_unary("round", off_grid, np.round, no_gradgrad="zero derivative", **_BOOL_ERROR)
_unary("trunc", off_grid, np.trunc, no_gradgrad="zero derivative", **_BOOL_ERROR)
_unary("relu", away, lambda a: np.maximum(a, 0), no_gradgrad="piecewise linear",
       **_BOOL_ERROR)
op("gelu", _tf("gelu"), lambda rng: _unary_samples(rnd)(rng) + [
    Sample((rnd(rng, 2, 3),), {"approximate": "tanh"}),
    Sample((rnd(rng, 5) * 4,), {"approximate": "none"}),
], errors=lambda rng: [ErrorCase((rnd(rng, 2),), {"approximate": "fast"}),
                       ErrorCase((ints(rng, 3),)), ErrorCase((mask(rng, 3),))])
# torch's activation kernels are floating only (NotImplementedError for integers and bools)
_INT_ERRORS = {"errors": lambda rng: [ErrorCase((ints(rng, 3),)), ErrorCase((mask(rng, 3),))]}
op("silu", _tf("silu"), _unary_samples(rnd), **_INT_ERRORS)
op("leaky_relu", _tf("leaky_relu"), lambda rng: _unary_samples(away)(rng) + [
    Sample((away(rng, 2, 3), 0.2)), Sample((away(rng, 2, 3),), {"negative_slope": 0.5}),
], no_gradgrad="piecewise linear", **_INT_ERRORS)
op("softplus", _tf("softplus"), lambda rng: _unary_samples(rnd)(rng) + [
    Sample((rnd(rng, 2, 3) * 3,), {"beta": 2.0}),
    Sample((off_grid(rng, 2, 3) * 4,), {"beta": 2.0, "threshold": 3.0}),
], **_INT_ERRORS)


def _clamp_samples(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((off_grid(rng, 2, 3), -0.5, 0.5)),
        Sample((off_grid(rng, 2, 3),), {"min": 0.0}),
        Sample((off_grid(rng, 2, 3),), {"max": 0.0}),
        Sample((off_grid(rng,), -1.0, 1.0)),
        Sample((off_grid(rng, 0, 2), -1.0, 1.0)),
        Sample((distinct(rng, 2, 3), NoGrad(distinct(rng, 3) - 5.0), NoGrad(distinct(rng, 2, 1)))),
        Sample((distinct(rng, 2, 3) * 0.5, distinct(rng, 3) * 0.5 + 0.07)),
        Sample((ints(rng, 5), -2, 2)),
        Sample((ints(rng, 5), -1.5, 2.5)),
    ]


op("clamp", _t("clamp"), _clamp_samples, aliases=("clip",), no_gradgrad="piecewise linear",
   errors=lambda rng: [ErrorCase((rnd(rng, 2),)),
                       ErrorCase((rnd(rng, 3), NoGrad(rnd(rng, 3)), 0.5))])
op("clone", _t("clone"), _unary_samples(rnd))
op("contiguous", _method("contiguous"), lambda rng: [
    Sample((rnd(rng, 2, 3),)),
], check_grad_fn=False, notes="on a contiguous tensor both return the input itself")

# comparisons and logic (not differentiable) -----------------------------------------------------
for _name, _np in [("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                   ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal)]:
    op(_name, _t(_name), lambda rng: [
        Sample((ints(rng, 2, 3, lo=0, hi=3), ints(rng, 3, lo=0, hi=3))),
        Sample((rnd(rng, 2, 3).round(), 0.0)), Sample((ints(rng, 4), 1)),
        Sample((rnd(rng, 2, 1).round(), rnd(rng, 3).round())),
    ], differentiable=False, np_ref=_np, errors=_broadcast_errors)
for _name, _np in [("logical_and", np.logical_and), ("logical_or", np.logical_or),
                   ("logical_xor", np.logical_xor)]:
    op(_name, _t(_name), lambda rng: [
        Sample((mask(rng, 2, 3), mask(rng, 3))), Sample((ints(rng, 4, lo=0, hi=2), mask(rng, 4))),
        Sample((rnd(rng, 3).round(), ints(rng, 3, lo=0, hi=2))),
    ], differentiable=False, np_ref=_np, errors=_broadcast_errors)
for _name, _np in [("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or),
                   ("bitwise_xor", np.bitwise_xor)]:
    op(_name, _t(_name), lambda rng: [
        Sample((mask(rng, 2, 3), mask(rng, 3))), Sample((ints(rng, 4), ints(rng, 4))),
        Sample((mask(rng, 4), ints(rng, 4))), Sample((ints(rng, 2, 3), 6)),
        Sample((mask(rng, 3), True)), Sample((Fixed(np.array([1, 2], np.uint8)), -3)),
    ], differentiable=False, np_ref=None, errors=lambda rng: [
        ErrorCase((mask(rng, 2, 3), mask(rng, 4)), shapes=((2, 3), (4,))),
        ErrorCase((rnd(rng, 3), ints(rng, 3)), contains=("not implemented for 'Float'",)),
        ErrorCase((ints(rng, 3), 1.5)),
    ])
op("bitwise_not", _t("bitwise_not"), lambda rng: [
    Sample((mask(rng, 2, 3),)), Sample((ints(rng, 4),)),
    Sample((Fixed(np.array([0, 3], np.uint8)),)),
], differentiable=False, np_ref=np.invert, errors=lambda rng: [ErrorCase((rnd(rng, 3),))])
op("logical_not", _t("logical_not"), lambda rng: [
    Sample((mask(rng, 2, 3),)), Sample((ints(rng, 4, lo=0, hi=2),)),
    Sample((rnd(rng, 3).round(),)),
], differentiable=False, np_ref=np.logical_not)
_SPECIAL = np.array([0.0, 1.5, np.inf, -np.inf, np.nan])
for _name, _np in [("isnan", np.isnan), ("isinf", np.isinf), ("isfinite", np.isfinite)]:
    op(_name, _t(_name), lambda rng: [Sample((NoGrad(_SPECIAL),)), Sample((ints(rng, 3),))],
       differentiable=False, np_ref=_np)
op("equal", _t("equal"), lambda rng: [
    Sample((NoGrad(np.ones((2, 3))), NoGrad(np.ones((2, 3))))),
    Sample((NoGrad(np.ones((2, 3))), NoGrad(np.ones(3)))),
    Sample((NoGrad(np.ones(3)), NoGrad(np.array([1.0, 2.0, 1.0])))),
], differentiable=False)
op("allclose", _t("allclose"), lambda rng: [
    Sample((NoGrad(np.ones(3)), NoGrad(np.ones(3) + 1e-9))),
    Sample((NoGrad(np.ones(3)), NoGrad(np.ones(3) + 1e-3))),
    Sample((NoGrad(np.ones(3)), NoGrad(np.ones(3) + 1e-3)), {"atol": 1e-2}),
], differentiable=False)
op("isclose", _t("isclose"), lambda rng: [
    Sample((NoGrad(np.ones(3)), NoGrad(np.array([1.0, 1.1, 1 + 1e-9])))),
    Sample((NoGrad(np.ones((2, 3))), NoGrad(np.ones(3)))),
], differentiable=False)


# reductions -----------------------------------------------------------------------------------
def _reduce_samples(gen: Callable[..., np.ndarray], dims: bool = True, dtype_kw: bool = False
                    ) -> Callable[[np.random.Generator], list[Sample]]:
    def samples(rng: np.random.Generator) -> list[Sample]:
        s = [Sample((gen(rng, 2, 3),)), Sample((gen(rng),)), Sample((gen(rng, 4),))]
        if dims:
            s += [
                Sample((gen(rng, 2, 3), 1)), Sample((gen(rng, 2, 3), -1, True)),
                Sample((gen(rng, 2, 3, 2),), {"dim": (0, 2)}),
                Sample((gen(rng, 2, 3, 2),), {"dim": (-1, 0), "keepdim": True}),
                Sample((gen(rng, 2, 3), 0), {"keepdim": False}),
                Sample((gen(rng), 0)),
            ]
        return s

    return samples


op("sum", _t("sum"), lambda rng: _reduce_samples(rnd)(rng) + [
    Sample((rnd(rng, 0, 3),)), Sample((rnd(rng, 0, 3), 1)), Sample((rnd(rng, 2, 0), 1)),
    Sample((ints(rng, 2, 3),)), Sample((Fixed(np.array([True, True, False])),)),
    Sample((Fixed(np.array([1, 2], dtype=np.int32)), 0)),
    Sample((rnd(rng, 2, 3),), {"dtype": DT("float64")}),
    Sample((rnd(rng, 2, 3), ())), Sample((rnd(rng, 2, 3), [], True)),  # () / []: all dims
], np_ref=None, errors=lambda rng: [
    ErrorCase((rnd(rng, 2, 3), 2)), ErrorCase((rnd(rng, 2, 3), (0, 0))),
    ErrorCase((rnd(rng), 1)), ErrorCase((rnd(rng), (0, -1)))])  # a 0-d tensor's dims
op("mean", _t("mean"), lambda rng: _reduce_samples(rnd)(rng) + [
    Sample((rnd(rng, 2, 0), 0)),
    Sample((ints(rng, 2, 3),), {"dtype": DT("float32")}, forward_only=True),
], errors=lambda rng: [ErrorCase((ints(rng, 2, 3),)), ErrorCase((rnd(rng, 2, 3), -3))])


def _var_samples(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((rnd(rng, 2, 3),)), Sample((rnd(rng, 2, 3), 1)),
        Sample((rnd(rng, 2, 3), -1), {"keepdim": True}),
        Sample((rnd(rng, 2, 3),), {"dim": 0, "correction": 0}),
        Sample((rnd(rng, 3, 4),), {"dim": (0, 1), "correction": 2}),
        Sample((rnd(rng, 2, 3), 1, False)),          # unbiased=False
        Sample((rnd(rng, 4),), {"unbiased": True}),
        Sample((rnd(rng, 1),), forward_only=True),   # n - correction = 0: nan/inf
    ]


op("var", _t("var"), _var_samples, errors=lambda rng: [ErrorCase((ints(rng, 3),))])
op("std", _t("std"), _var_samples, errors=lambda rng: [ErrorCase((ints(rng, 3),))])


def _ext_samples(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((distinct(rng, 2, 3),)), Sample((distinct(rng, 2, 3), 1)),
        Sample((distinct(rng, 2, 3), -1, True)), Sample((distinct(rng, 2, 3, 2), (0, 2))),
        Sample((distinct(rng),)), Sample((ints(rng, 2, 3), 0)),
        Sample((NoGrad(np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.5]])), 1), forward_only=True),
    ]


op("amax", _t("amax"), lambda rng: _ext_samples(rng) + [Sample((rnd(rng, 2, 0), 0))],
   errors=lambda rng: [
       ErrorCase((rnd(rng, 0, 3),)), ErrorCase((rnd(rng, 2, 3), 5)),
       ErrorCase((rnd(rng, 2, 0), 1)), ErrorCase((rnd(rng), 1))])
op("amin", _t("amin"), lambda rng: _ext_samples(rng) + [Sample((rnd(rng, 0, 3), 1))],
   errors=lambda rng: [ErrorCase((rnd(rng, 0, 3),)), ErrorCase((rnd(rng, 0, 3), -2))])


def _max_samples(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((distinct(rng, 2, 3),)), Sample((distinct(rng, 2, 3), 1)),
        Sample((distinct(rng, 2, 3), -1, True)), Sample((distinct(rng, 2, 3),), {"dim": 0}),
        Sample((distinct(rng), 0)), Sample((distinct(rng, 2, 3), distinct(rng, 3))),
        Sample((ints(rng, 2, 3), 1)), Sample((ints(rng, 2, 3),)),
    ]


op("max", _t_max, _max_samples, errors=lambda rng: [
    ErrorCase((rnd(rng, 0, 3),)), ErrorCase((rnd(rng, 0, 3), 0)), ErrorCase((rnd(rng, 2), 1))])
op("min", _t_min, _max_samples, errors=lambda rng: [ErrorCase((rnd(rng, 0, 3),))])
for _name in ("argmax", "argmin"):
    op(_name, _t(_name), lambda rng: [
        Sample((distinct(rng, 2, 3),)), Sample((distinct(rng, 2, 3), 1)),
        Sample((distinct(rng, 2, 3), -1, True)), Sample((distinct(rng, 2, 3),), {"keepdim": True}),
        Sample((distinct(rng),)), Sample((ints(rng, 2, 4), 0)),
        Sample((NoGrad(np.array([1.0, 3.0, 3.0])),)),   # ties: first index
        Sample((distinct(rng), 0)), Sample((distinct(rng), -1, True)),  # 0-d with a dim
    ], differentiable=False, errors=lambda rng: [
        ErrorCase((rnd(rng, 2, 3), 2)), ErrorCase((rnd(rng, 0),)),
        ErrorCase((rnd(rng, 2, 0), 1)), ErrorCase((mask(rng, 3),))])
op("logsumexp", _t("logsumexp"), lambda rng: [
    Sample((rnd(rng, 2, 3), 1)), Sample((rnd(rng, 2, 3), -1, True)),
    Sample((rnd(rng, 2, 3, 2), (0, 2))), Sample((rnd(rng), 0)),
    Sample((rnd(rng, 3) * 100, 0)),
    Sample((rnd(rng, 2, 0), 1)), Sample((rnd(rng, 2, 3), ()), {"keepdim": True}),
], errors=lambda rng: [ErrorCase((rnd(rng, 2, 3), 3)), ErrorCase((rnd(rng), 1))])
op("prod", _t("prod"), lambda rng: [
    Sample((away(rng, 2, 3),)), Sample((away(rng, 2, 3), 1)), Sample((away(rng, 2, 3), -1, True)),
    Sample((away(rng),)), Sample((ints(rng, 2, 3),)), Sample((ints(rng, 2, 3), 0)),
    Sample((NoGrad(np.array([[1.0, 0.0, 3.0], [2.0, 0.0, 0.0]])), 1), forward_only=True),
    Sample((np.array([[1.5, 0.0, 3.0], [2.0, -1.0, 0.5]]), 1), no_gradcheck="zeros (first "
           "order checked by parity)"),
], errors=lambda rng: [ErrorCase((rnd(rng, 2, 3), (0,))), ErrorCase((rnd(rng), 1))])


def _norm_samples(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((away(rng, 2, 3),)), Sample((away(rng, 2, 3), 2, 1)),
        Sample((away(rng, 2, 3),), {"p": 1, "dim": -1, "keepdim": True}),
        Sample((distinct(rng, 2, 3),), {"p": math.inf, "dim": 1}),
        Sample((distinct(rng, 2, 3),), {"p": -math.inf}),
        Sample((away(rng, 2, 3),), {"p": 3, "dim": 0}),
        Sample((away(rng, 4),), {"p": 0.5}),
        Sample((away(rng, 2, 3),), {"p": "fro"}),
        Sample((away(rng, 2, 3),), {"p": 0}, forward_only=True),
        Sample((NoGrad(np.zeros((2, 3))),), {"dim": 1}, forward_only=True),
    ]


op("norm", _t("norm"), lambda rng: _norm_samples(rng) + [
    Sample((rnd(rng, 2, 0),), {"p": math.inf, "dim": 0}),
    Sample((away(rng, 2, 3),), {"dim": ()}),
], errors=lambda rng: [
    ErrorCase((ints(rng, 3),)), ErrorCase((rnd(rng, 2, 0),), {"p": math.inf, "dim": 1}),
    ErrorCase((rnd(rng, 2, 0),), {"p": -math.inf})])
for _name in ("all", "any"):
    op(_name, _t(_name), lambda rng: [
        Sample((mask(rng, 2, 3),)), Sample((mask(rng, 2, 3), 1)),
        Sample((mask(rng, 2, 3), 0, True)), Sample((ints(rng, 2, 3, lo=0, hi=2), 1)),
        Sample((Fixed(np.zeros((0, 2), dtype=bool)),)),
        Sample((mask(rng), 0)), Sample((mask(rng), -1, True)),  # a 0-d tensor's dim
    ], differentiable=False)
op("count_nonzero", _t("count_nonzero"), lambda rng: [
    Sample((ints(rng, 2, 3, lo=0, hi=2),)), Sample((ints(rng, 2, 3, lo=0, hi=2), 1)),
    Sample((mask(rng, 2, 3),), {"dim": (0, 1)}),
    Sample((mask(rng, 2, 3),), {"dim": ()}), Sample((ints(rng), -1)),  # (): all dims
], differentiable=False, np_ref=None)
op("cumsum", _t("cumsum"), lambda rng: [
    Sample((rnd(rng, 2, 3), 1)), Sample((rnd(rng, 2, 3), 0)), Sample((rnd(rng, 4), -1)),
    Sample((rnd(rng), 0)), Sample((ints(rng, 2, 3), 1)), Sample((mask(rng, 4), 0)),
], np_ref=None, errors=lambda rng: [ErrorCase((rnd(rng, 2, 3), 2))])


# shape ----------------------------------------------------------------------------------------
op("expand", _method("expand"), lambda rng: [
    Sample((rnd(rng, 3, 1), 3, 4)), Sample((rnd(rng, 3), (2, 3))), Sample((rnd(rng, 1), 2, -1)),
    Sample((rnd(rng), (2, 2))), Sample((rnd(rng, 3, 1), -1, 2)),
], aliases=("broadcast_to",), errors=lambda rng: [
    ErrorCase((rnd(rng, 3, 2), 3, 4), shapes=((3, 2), (3, 4))), ErrorCase((rnd(rng, 2, 3), 3))])
op("reshape", _t("reshape"), lambda rng: [
    Sample((rnd(rng, 2, 3), (3, 2))), Sample((rnd(rng, 2, 3), (-1,))),
    Sample((rnd(rng, 2, 3, 2), (2, -1))), Sample((rnd(rng), (1, 1))),
    Sample((rnd(rng, 0, 3), (3, 0))),
], errors=lambda rng: [ErrorCase((rnd(rng, 2, 3), (4,)), contains=("6",)),
                       ErrorCase((rnd(rng, 2, 3), (-1, -1)))])
op("view", _method("view"), lambda rng: [
    Sample((rnd(rng, 2, 3), 3, 2)), Sample((rnd(rng, 2, 3), -1)), Sample((rnd(rng, 2, 3), (6, 1))),
], errors=lambda rng: [ErrorCase((rnd(rng, 2, 3), 4))])
op("flatten", _t("flatten"), lambda rng: [
    Sample((rnd(rng, 2, 3, 2),)), Sample((rnd(rng, 2, 3, 2), 1)), Sample((rnd(rng, 2, 3, 2), 0, 1)),
    Sample((rnd(rng),)),
], check_grad_fn=True)
op("unflatten", _t("unflatten"), lambda rng: [
    Sample((rnd(rng, 2, 6), 1, (2, 3))), Sample((rnd(rng, 6), -1, (3, 2))),
])
op("squeeze", _t("squeeze"), lambda rng: [
    Sample((rnd(rng, 2, 1, 3, 1),)), Sample((rnd(rng, 2, 1, 3), 1)), Sample((rnd(rng, 2, 1, 3), 0)),
    Sample((rnd(rng, 1, 3, 1), (0, -1))), Sample((rnd(rng),)),
], check_grad_fn=False, notes="torch names squeeze() SqueezeBackward0, squeeze(dim) "
   "SqueezeBackward1 and squeeze(dims) SqueezeBackward2; gradsum has one SqueezeBackward0")
op("unsqueeze", _t("unsqueeze"), lambda rng: [
    Sample((rnd(rng, 2, 3), 0)), Sample((rnd(rng, 2, 3), -1)), Sample((rnd(rng), 0)),
], errors=lambda rng: [ErrorCase((rnd(rng, 2, 3), 3))])
op("permute", _t("permute"), lambda rng: [
    Sample((rnd(rng, 2, 3, 4), (2, 0, 1))), Sample((rnd(rng, 2, 3), (-1, 0))),
], errors=lambda rng: [ErrorCase((rnd(rng, 2, 3), (0,))), ErrorCase((rnd(rng, 2, 3), (0, 0)))])
op("transpose", _t("transpose"), lambda rng: [
    Sample((rnd(rng, 2, 3), 0, 1)), Sample((rnd(rng, 2, 3, 4), -1, 0)),
], aliases=("swapaxes",), errors=lambda rng: [ErrorCase((rnd(rng, 2, 3), 0, 2))])
op("t", _t("t"), lambda rng: [Sample((rnd(rng, 2, 3),)), Sample((rnd(rng, 3),))],
   check_grad_fn=False, notes="t() of a 1-D tensor returns it unchanged in gradsum; torch "
   "makes a TBackward0 view", errors=lambda rng: [ErrorCase((rnd(rng, 2, 2, 2),))])
op("index_select", _t("index_select"), lambda rng: [
    Sample((rnd(rng, 3, 4), 0, idx(0, 2, 2))), Sample((rnd(rng, 3, 4), -1, idx(3, 0, 3, 1))),
    Sample((rnd(rng, 3, 4), 1, idx())), Sample((rnd(rng), 0, idx(0))),
], errors=lambda rng: [ErrorCase((rnd(rng, 3, 4), 0, idx(3))),
                       ErrorCase((rnd(rng), 0, idx(0, 0))),
                       ErrorCase((rnd(rng, 3, 4), 0, idx(-1))),  # no wrapping (IndexError)
                       ErrorCase((rnd(rng, 3, 4), 1, idx(-1))),  # dim 1: RuntimeError
                       ErrorCase((rnd(rng, 2, 3, 4), 1, idx(5))),
                       ErrorCase((rnd(rng, 2, 3, 4), 2, idx(-2))),
                       ErrorCase((rnd(rng, 3, 4), 0, Fixed(np.array([0.0]))))])
op("index_add", _t("index_add"), lambda rng: [
    Sample((rnd(rng, 3, 4), 0, idx(0, 2, 0), rnd(rng, 3, 4))),
    Sample((rnd(rng, 3, 4), 1, idx(1, 1), rnd(rng, 3, 2)), {"alpha": 2.0}),
    Sample((rnd(rng, 3, 4), 0, idx(2), NoGrad(rnd(rng, 1, 4)))),
    Sample((NoGrad(rnd(rng, 3, 4)), 0, idx(2), rnd(rng, 1, 4))),
    Sample((rnd(rng), -1, idx(0), rnd(rng))),  # 0-d: one dim of size 1
], errors=lambda rng: [ErrorCase((rnd(rng, 3, 4), 0, idx(0, 1), rnd(rng, 3, 4)))])
op("gather", _t("gather"), lambda rng: [
    Sample((rnd(rng, 3, 4), 0, Fixed(np.array([[0, 2, 2, 1], [1, 1, 0, 0]])))),
    Sample((rnd(rng, 3, 4), 1, Fixed(np.array([[3, 3], [0, 1], [2, 2]])))),
    Sample((rnd(rng, 3, 4), -1, Fixed(np.array([[0], [1]])))),
], errors=lambda rng: [ErrorCase((rnd(rng, 3, 4), 0, Fixed(np.array([[5, 0]])))),
                       ErrorCase((rnd(rng, 3, 4), 1, Fixed(np.array([[-1], [0]])))),
                       ErrorCase((rnd(rng, 3, 4), 0, Fixed(np.array([0]))))])
op("scatter_add", _t("scatter_add"), lambda rng: [
    Sample((rnd(rng, 3, 4), 0, Fixed(np.array([[0, 2, 2, 1], [0, 1, 0, 0]])), rnd(rng, 2, 4))),
    Sample((rnd(rng, 3, 4), 1, Fixed(np.array([[3, 3], [0, 1], [2, 2]])), rnd(rng, 3, 2))),
    Sample((NoGrad(rnd(rng, 3, 4)), 1, Fixed(np.array([[3], [0]])), rnd(rng, 2, 1))),
], notes="a src larger than index gets zeros outside the index region in gradsum; torch "
   "refuses that backward ('invalid gradient'), so it is not sampled here",
   errors=lambda rng: [ErrorCase((rnd(rng, 3, 4), 0, Fixed(np.array([[3, 0]])), rnd(rng, 1, 2))),
                       ErrorCase((rnd(rng, 3, 4), 1, Fixed(np.array([[-1]])), rnd(rng, 1, 1))),
                       ErrorCase((rnd(rng, 3, 4), 0, Fixed(np.array([[0, 0]])), rnd(rng, 1, 1)))])
op("cat", _t("cat"), lambda rng: [
    Sample(([rnd(rng, 2, 3), rnd(rng, 1, 3)],)), Sample(([rnd(rng, 2, 3), rnd(rng, 2, 2)], 1)),
    Sample(([rnd(rng, 2, 3), rnd(rng, 2, 1), rnd(rng, 2, 2)], -1)),
    Sample(([rnd(rng, 2, 3), NoGrad(rnd(rng, 2, 3))],)),
    Sample(([rnd(rng, 2, 3), rnd(rng, 0)],)),
    Sample(([rnd(rng, 2, 3), ints(rng, 2, 3)],)),
    Sample(((rnd(rng, 3), rnd(rng, 2)),)),
], aliases=("concat", "concatenate"), errors=lambda rng: [
    ErrorCase(([rnd(rng, 2, 3), rnd(rng, 2, 2)],), shapes=()),
    ErrorCase(([],)), ErrorCase(([rnd(rng, 2), rnd(rng, 3)], 1)),
])
op("stack", _t("stack"), lambda rng: [
    Sample(([rnd(rng, 2, 3), rnd(rng, 2, 3)],)), Sample(([rnd(rng, 2, 3), rnd(rng, 2, 3)], -1)),
    Sample(([rnd(rng), rnd(rng), rnd(rng)],)),
], errors=lambda rng: [
    ErrorCase(([rnd(rng, 2, 3), rnd(rng, 3, 2)],))])
op("narrow", _t("narrow"), lambda rng: [
    Sample((rnd(rng, 3, 4), 0, 1, 2)), Sample((rnd(rng, 3, 4), -1, 0, 3)),
    Sample((rnd(rng, 3, 4), 1, -3, 2)),  # a negative start counts from the end
], check_grad_fn=False, notes="torch: SliceBackward0 as gradsum", errors=lambda rng: [
    ErrorCase((rnd(rng, 3, 4), 0, 1, 3)), ErrorCase((rnd(rng, 3, 4), 0, -4, 1)),
    ErrorCase((rnd(rng, 3, 4), 0, 0, -1)), ErrorCase((rnd(rng), 0, 0, 1))])
op("select", _t("select"), lambda rng: [
    Sample((rnd(rng, 3, 4), 0, 1)), Sample((rnd(rng, 3, 4), -1, -2)),
], errors=lambda rng: [ErrorCase((rnd(rng, 3, 4), 0, 3))])
op("split", _t("split"), lambda rng: [
    Sample((rnd(rng, 5, 2), 2)), Sample((rnd(rng, 5, 2), [1, 4])), Sample((rnd(rng, 2, 5), 3, 1)),
    Sample((rnd(rng, 2, 5),), {"split_size_or_sections": 2, "dim": -1}),
], notes="one SplitBackward0 / SplitWithSizesBackward0 node for all pieces, as torch's",
   errors=lambda rng: [ErrorCase((rnd(rng, 5, 2), [1, 2]))])
op("chunk", _t("chunk"), lambda rng: [
    Sample((rnd(rng, 5, 2), 2)), Sample((rnd(rng, 2, 6), 3, 1)), Sample((rnd(rng, 2, 6), 4, -1)),
], notes="as split")
op("unbind", _t("unbind"), lambda rng: [Sample((rnd(rng, 3, 2),)), Sample((rnd(rng, 3, 2), 1))],
   notes="one UnbindBackward0 node for all slices, as torch's")
op("masked_fill", _t("masked_fill"), lambda rng: [
    Sample((rnd(rng, 2, 3), mask(rng, 2, 3), 0.5)), Sample((rnd(rng, 2, 3), mask(rng, 3), -1.0)),
    Sample((rnd(rng, 2, 3), mask(rng, 2, 3), rnd(rng))),
    Sample((ints(rng, 2, 3), mask(rng, 2, 3), 7)),
    Sample((rnd(rng, 1, 3), mask(rng, 2, 3), rnd(rng))),  # the mask broadcasts the input
], errors=lambda rng: [ErrorCase((rnd(rng, 2, 3), mask(rng, 4), 0.0), shapes=((4,),)),
                       ErrorCase((rnd(rng, 2, 3), ints(rng, 2, 3), 0.0))])
op("one_hot", _tf("one_hot"), lambda rng: [
    Sample((idx(0, 2, 1),)),
    Sample((idx(0, 2, 1), 4)), Sample((Fixed(np.array([[1, 0], [2, 2]])),)),
], differentiable=False, errors=lambda rng: [ErrorCase((idx(0, 3), 2)),
                                              ErrorCase((idx(-1, 0),))])
op("flip", _t("flip"), lambda rng: [
    Sample((rnd(rng, 2, 3), (0,))), Sample((rnd(rng, 2, 3), (0, -1))), Sample((rnd(rng, 4), [0])),
])
op("tril", _t("tril"), lambda rng: [
    Sample((rnd(rng, 3, 3),)), Sample((rnd(rng, 3, 4), 1)), Sample((rnd(rng, 2, 3, 3), -1)),
])
op("triu", _t("triu"), lambda rng: [
    Sample((rnd(rng, 3, 3),)), Sample((rnd(rng, 3, 4), 1)), Sample((rnd(rng, 2, 3, 3), -1)),
])
op("repeat", _method("repeat"), lambda rng: [
    Sample((rnd(rng, 2, 3), 2, 1)),
    Sample((rnd(rng, 3), (2, 2))), Sample((rnd(rng, 2, 1), 1, 3, 2)),
], errors=lambda rng: [ErrorCase((rnd(rng, 2, 3), 2))])


# linalg ---------------------------------------------------------------------------------------
def _matmul_samples(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((rnd(rng, 2, 3), rnd(rng, 3, 4))), Sample((rnd(rng, 3), rnd(rng, 3))),
        Sample((rnd(rng, 2, 3), rnd(rng, 3))), Sample((rnd(rng, 3), rnd(rng, 3, 2))),
        Sample((rnd(rng, 2, 2, 3), rnd(rng, 3, 2))),
        Sample((rnd(rng, 2, 1, 2, 3), rnd(rng, 3, 3, 1))),
        Sample((rnd(rng, 2, 2, 3), rnd(rng, 3))),
        Sample((rnd(rng, 2, 3), NoGrad(rnd(rng, 3, 2)))),
        Sample((NoGrad(rnd(rng, 2, 3)), rnd(rng, 3))),
        Sample((rnd(rng, 0, 3), rnd(rng, 3, 2))), Sample((rnd(rng, 2, 0), rnd(rng, 0, 2))),
        Sample((ints(rng, 2, 3), ints(rng, 3, 2))),
    ]


op("matmul", _t("matmul"), _matmul_samples, np_ref=np.matmul,
   notes="other ranks than 1/1, 2/1, 2/2 are composed as torch's (tests/test_grad_fn_names.py)",
   errors=lambda rng: [
       ErrorCase((rnd(rng, 2, 3), rnd(rng, 4, 2)), shapes=((2, 3), (4, 2))),
       ErrorCase((rnd(rng, 3), rnd(rng, 4))),
       ErrorCase((rnd(rng, 2, 2, 3), rnd(rng, 3, 3, 2)), shapes=((2, 2, 3), (3, 3, 2))),
       ErrorCase((rnd(rng), rnd(rng, 2))),
       ErrorCase((rnd(rng, 2, 3), Fixed(rnd(rng, 3, 2)))),  # float32 @ float64
       ErrorCase((mask(rng, 2, 3), mask(rng, 3, 2))),
       # a shape error before the bool dtype's NotImplementedError, as in torch
       ErrorCase((mask(rng, 2, 3), mask(rng, 2, 3)), contains=("cannot be multiplied",)),
       ErrorCase((mask(rng, 3), mask(rng, 4))),
       ErrorCase((mask(rng, 2, 2, 3), mask(rng, 3, 3, 2))),
       ErrorCase((mask(rng, 3), mask(rng, 2, 3, 2)), contains=('"bmm"',)),
       ErrorCase((mask(rng, 2, 3), mask(rng, 3)), contains=('"addmv_impl_cpu"',)),
       ErrorCase((mask(rng, 3), mask(rng, 3)), contains=('"dot"',)),
   ])
# mm/bmm/mv/dot: matmul restricted to one pair of ranks each, with torch's argument checks
op("mm", _t("mm"), lambda rng: [
    Sample((rnd(rng, 2, 3), rnd(rng, 3, 4))), Sample((rnd(rng, 2, 3), NoGrad(rnd(rng, 3, 2)))),
    Sample((rnd(rng, 0, 3), rnd(rng, 3, 2))), Sample((ints(rng, 2, 3), ints(rng, 3, 2))),
], np_ref=np.matmul, errors=lambda rng: [
    ErrorCase((rnd(rng, 3), rnd(rng, 3, 2)), contains=("self must be a matrix",)),
    ErrorCase((rnd(rng, 2, 3), rnd(rng, 3)), contains=("mat2 must be a matrix",)),
    ErrorCase((rnd(rng, 2, 2, 3), rnd(rng, 3, 2))), ErrorCase((rnd(rng), rnd(rng, 2, 2))),
    ErrorCase((rnd(rng, 2, 3), rnd(rng, 4, 2)), shapes=((2, 3), (4, 2))),
    ErrorCase((rnd(rng, 2, 3), Fixed(rnd(rng, 3, 2)))),
    ErrorCase((mask(rng, 2, 3), mask(rng, 3, 2))), ErrorCase((mask(rng, 2, 3), mask(rng, 2, 3))),
    ErrorCase((rnd(rng, 2, 3), [[1.0]] * 3)),
])
op("bmm", _t("bmm"), lambda rng: [
    Sample((rnd(rng, 2, 2, 3), rnd(rng, 2, 3, 4))),
    Sample((NoGrad(rnd(rng, 3, 2, 3)), rnd(rng, 3, 3, 1))),
    Sample((rnd(rng, 0, 2, 3), rnd(rng, 0, 3, 2))),
    Sample((ints(rng, 2, 2, 3), ints(rng, 2, 3, 2))),
], np_ref=np.matmul, errors=lambda rng: [
    ErrorCase((rnd(rng, 2, 3), rnd(rng, 2, 3, 2)), contains=("batch1 must be a 3D tensor",)),
    ErrorCase((rnd(rng, 2, 2, 3), rnd(rng, 3, 2)), contains=("batch2 must be a 3D tensor",)),
    ErrorCase((rnd(rng, 1, 2, 2, 3), rnd(rng, 1, 2, 3, 2))),
    ErrorCase((rnd(rng, 1, 2, 3), rnd(rng, 3, 3, 2)), contains=("[1, 3] but got: [3, 3]",)),
    ErrorCase((rnd(rng, 2, 2, 3), rnd(rng, 2, 4, 2))),
    ErrorCase((rnd(rng, 2, 2, 3), Fixed(rnd(rng, 2, 3, 2)))),
    ErrorCase((mask(rng, 2, 2, 3), mask(rng, 2, 3, 2)), contains=('"bmm"',)),
    ErrorCase((mask(rng, 2, 2, 3), mask(rng, 2, 4, 2))),
])
op("mv", _t("mv"), lambda rng: [
    Sample((rnd(rng, 2, 3), rnd(rng, 3))), Sample((NoGrad(rnd(rng, 2, 3)), rnd(rng, 3))),
    Sample((rnd(rng, 2, 0), rnd(rng, 0))), Sample((ints(rng, 2, 3), ints(rng, 3))),
], np_ref=np.matmul, errors=lambda rng: [
    ErrorCase((rnd(rng, 3), rnd(rng, 3))), ErrorCase((rnd(rng, 2, 3), rnd(rng, 3, 1))),
    ErrorCase((rnd(rng, 2, 2, 3), rnd(rng, 3))), ErrorCase((rnd(rng, 2, 3), rnd(rng))),
    ErrorCase((rnd(rng), rnd(rng, 3))),  # IndexError in torch
    ErrorCase((rnd(rng, 2, 3), rnd(rng, 4)), contains=("size mismatch",)),
    ErrorCase((rnd(rng, 2, 3), Fixed(rnd(rng, 3)))),
    ErrorCase((mask(rng, 2, 3), mask(rng, 3)), contains=('"addmv_impl_cpu"',)),
    ErrorCase((mask(rng, 2, 3), mask(rng, 4))),
])
op("dot", _t("dot"), lambda rng: [
    Sample((rnd(rng, 3), rnd(rng, 3))), Sample((rnd(rng, 3), NoGrad(rnd(rng, 3)))),
    Sample((rnd(rng, 0), rnd(rng, 0))), Sample((ints(rng, 4), ints(rng, 4))),
], np_ref=np.dot, errors=lambda rng: [
    ErrorCase((rnd(rng, 2, 3), rnd(rng, 3, 2)), contains=("1D tensors expected",)),
    ErrorCase((rnd(rng, 3), rnd(rng, 3, 1))), ErrorCase((rnd(rng), rnd(rng))),
    ErrorCase((rnd(rng, 3), rnd(rng, 4)), contains=("inconsistent tensor size",)),
    ErrorCase((rnd(rng, 3), Fixed(rnd(rng, 3)))), ErrorCase((rnd(rng, 3), ints(rng, 3))),
    ErrorCase((mask(rng, 3), mask(rng, 3)), contains=('"dot"',)),
    ErrorCase((mask(rng, 3), mask(rng, 4))),
])
op("linear", _tf("linear"), lambda rng: [
    Sample((rnd(rng, 4, 3), rnd(rng, 2, 3), rnd(rng, 2))),
    Sample((rnd(rng, 4, 3), rnd(rng, 2, 3))),
    Sample((rnd(rng, 2, 4, 3), rnd(rng, 2, 3), rnd(rng, 2))),
    Sample((rnd(rng, 3), rnd(rng, 2, 3), rnd(rng, 2))),
    Sample((NoGrad(rnd(rng, 4, 3)), rnd(rng, 2, 3), rnd(rng, 2))),
    Sample((rnd(rng, 4, 3), NoGrad(rnd(rng, 2, 3)), rnd(rng, 2))),
    Sample((rnd(rng, 0, 3), rnd(rng, 2, 3), rnd(rng, 2))),
    Sample((rnd(rng, 1), rnd(rng, 0, 1), rnd(rng, 0))),      # no output features
], grad_fn_map={"ViewBackward0": "LinearBackward0", "SqueezeBackward4": "AddBackward0"},
   grad_fn_note="torch reshapes N-D inputs around addmm (the output shows a view node); "
   "gradsum records one LinearBackward0; a 1-D input goes through matmul + add",
   errors=lambda rng: [
       ErrorCase((rnd(rng, 4, 3), rnd(rng, 2, 4), rnd(rng, 2)), shapes=((2, 4),)),
   ])
op("outer", _t("outer"), lambda rng: [
    Sample((rnd(rng, 3), rnd(rng, 2))), Sample((rnd(rng, 3), NoGrad(rnd(rng, 0)))),
], aliases=("ger",), check_grad_fn=True)
op("softmax", _t("softmax"), lambda rng: [
    Sample((rnd(rng, 2, 3), 1)), Sample((rnd(rng, 2, 3), 0)), Sample((rnd(rng, 2, 3, 2), -1)),
    Sample((rnd(rng), 0)), Sample((rnd(rng, 3) * 50, 0)),
    Sample((rnd(rng, 2, 3), 1), {"dtype": DT("float64")}),
    Sample((rnd(rng, 2, 0), 1)), Sample((rnd(rng, 0, 3), 0)),
], errors=lambda rng: [ErrorCase((rnd(rng, 2, 3), 2)), ErrorCase((ints(rng, 3), 0)),
                       ErrorCase((ints(rng, 2, 3), 0))])
op("log_softmax", _t("log_softmax"), lambda rng: [
    Sample((rnd(rng, 2, 3), 1)), Sample((rnd(rng, 2, 3), 0)), Sample((rnd(rng, 2, 3, 2), -1)),
    Sample((rnd(rng), 0)), Sample((rnd(rng, 3) * 50, 0)), Sample((rnd(rng, 2, 0), -1)),
], errors=lambda rng: [ErrorCase((rnd(rng, 2, 3), -3)), ErrorCase((ints(rng, 3), 0))])


# everyday composites ---------------------------------------------------------------------------
op("square", _t("square"), lambda rng: [Sample((rnd(rng, 2, 3),)), Sample((rnd(rng),))])
op("argsort", _t("argsort"), lambda rng: [
    Sample((distinct(rng, 2, 4),)), Sample((distinct(rng, 2, 4), 0)),
    Sample((distinct(rng, 5),), {"descending": True}), Sample((ints(rng, 6),), {"stable": True}),
], differentiable=False)
op("sort", _t("sort"), lambda rng: [
    Sample((distinct(rng, 2, 4),)), Sample((distinct(rng, 3, 2), 0)),
    Sample((distinct(rng, 5),), {"descending": True}),
])
op("topk", _t("topk"), lambda rng: [
    Sample((distinct(rng, 2, 5), 2)), Sample((distinct(rng, 4, 3), 2, 0)),
    Sample((distinct(rng, 6), 3), {"largest": False}),
], errors=lambda rng: [ErrorCase((rnd(rng, 3), 4))])
op("nonzero", _t("nonzero"), lambda rng: [
    Sample((mask(rng, 3, 4),)), Sample((ints(rng, 5),)), Sample((mask(rng, 2, 3),),
                                                                {"as_tuple": True}),
], differentiable=False)
op("masked_select", _t("masked_select"), lambda rng: [
    Sample((rnd(rng, 3, 4), mask(rng, 3, 4))), Sample((rnd(rng, 3, 4), mask(rng, 4))),
    Sample((rnd(rng, 4), mask(rng, 2, 3, 4))), Sample((rnd(rng, 2, 1), mask(rng, 3))),
    Sample((rnd(rng), mask(rng, 3))), Sample((ints(rng, 3, 2), mask(rng, 2))),
], errors=lambda rng: [
    ErrorCase((rnd(rng, 3), ints(rng, 3))), ErrorCase((rnd(rng, 3), mask(rng, 2))),
])


# more elementwise math (ops/extra.py) --------------------------------------------------------
def within(rng: np.random.Generator, *shape: int) -> np.ndarray:
    """Values in [-0.9, 0.9]: inside asin/acos's domain, away from tan's poles."""
    return np.asarray(rng.uniform(-0.9, 0.9, shape))


def _in_float(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A NumPy reference giving integer inputs float32 results (torch's default float),
    computed in float64 and rounded once (NumPy's float32 kernels are 1-2 ulp off)."""
    def ref(a: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            if a.dtype.kind in "biu":
                return fn(a.astype(np.float64)).astype(np.float32)
            return fn(a)

    return ref


_NONFINITE = np.array([np.nan, np.inf, -np.inf, 1.5, -0.0])
_unary("expm1", rnd, _in_float(np.expm1))
_unary("exp2", rnd, _in_float(np.exp2))
_unary("log2", pos, _in_float(np.log2))
_unary("log10", pos, _in_float(np.log10))
_unary("tan", within, _in_float(np.tan))
_unary("atan", rnd, _in_float(np.arctan), aliases=("arctan",))
_unary("sinh", rnd, _in_float(np.sinh))
_unary("cosh", rnd, _in_float(np.cosh))
for _name, _np, _alias in [("asin", np.arcsin, "arcsin"), ("acos", np.arccos, "arccos")]:
    op(_name, _t(_name), lambda rng: _unary_samples(within)(rng) + _INT_SAMPLE + [
        Sample((np.array([1.0, 0.3]),), no_gradcheck="infinite derivative at 1"),
        Sample((np.array(-1.0),), no_gradcheck="infinite derivative at -1"),
    ], aliases=(_alias,), np_ref=_in_float(_np))
op("atan2", _t("atan2"), lambda rng: _binary_samples(away)(rng) + [
    Sample((rnd(rng, 3), NoGrad(away(rng, 3)))), Sample((NoGrad(away(rng, 2, 1)), rnd(rng, 3))),
    Sample((ints(rng, 3), ints(rng, 3))), Sample((ints(rng, 3), rnd(rng, 3))),
    Sample((np.array([0.0, 0.0, 1.0, -1.0]), np.array([0.0, -2.0, 0.0, 0.0])),
           no_gradcheck="not differentiable at the origin; torch's gradient there is 0"),
], aliases=("arctan2",), np_ref=np.arctan2, errors=lambda rng: _broadcast_errors(rng) + [
    ErrorCase((rnd(rng, 2), 2.0)), ErrorCase((1.0, rnd(rng, 2))),
])
op("lerp", _t("lerp"), lambda rng: [
    Sample((rnd(rng, 2, 3), rnd(rng, 3), 0.3)), Sample((rnd(rng, 2, 1), rnd(rng, 3), 0.7)),
    Sample((rnd(rng, 3), rnd(rng, 3), 1.0)), Sample((rnd(rng), rnd(rng), -0.6)),
    Sample((rnd(rng, 2, 3), rnd(rng, 2, 3), rnd(rng, 2, 3))),
    Sample((rnd(rng, 2, 1), rnd(rng, 3), rnd(rng, 1, 3))),
    Sample((rnd(rng, 3), rnd(rng, 3), rnd(rng, 2, 3))),          # the weight enlarges
    Sample((rnd(rng, 3), NoGrad(rnd(rng, 3)), NoGrad(rnd(rng, 3)))),
    Sample((NoGrad(rnd(rng, 3)), rnd(rng, 3), 0.5)),
    Sample((rnd(rng), rnd(rng, 0, 2), rnd(rng))),
], np_ref=None, errors=lambda rng: [
    ErrorCase((rnd(rng, 2, 3), rnd(rng, 4), 0.5), shapes=((2, 3), (4,))),
    ErrorCase((rnd(rng, 3), rnd(rng, 3), rnd(rng, 2))),
    ErrorCase((ints(rng, 3), ints(rng, 3), 0.5)),
    ErrorCase((ints(rng, 3), ints(rng, 3), ints(rng, 3))),
    ErrorCase((rnd(rng, 3), Fixed(rnd(rng, 3)), 0.5)),
    ErrorCase((rnd(rng, 3), rnd(rng, 3), Fixed(rnd(rng, 3)))),
])


def _addc_samples(div: bool) -> Callable[[np.random.Generator], list[Sample]]:
    den = away if div else rnd

    def samples(rng: np.random.Generator) -> list[Sample]:
        return [
            Sample((rnd(rng, 2, 3), rnd(rng, 2, 3), den(rng, 2, 3))),
            Sample((rnd(rng, 3), rnd(rng, 2, 1), den(rng, 1, 3)), {"value": 0.5}),
            Sample((rnd(rng), rnd(rng, 2), den(rng)), {"value": -2}),
            Sample((rnd(rng, 2, 3), NoGrad(rnd(rng, 3)), NoGrad(den(rng, 3)))),
            Sample((NoGrad(rnd(rng, 3)), rnd(rng, 3), NoGrad(den(rng, 3)))),
            Sample((NoGrad(rnd(rng, 3)), NoGrad(rnd(rng, 3)), den(rng, 3))),
            Sample((rnd(rng, 0, 3), rnd(rng, 3), den(rng, 3))),
            Sample((ints(rng, 3), rnd(rng, 3), den(rng, 3))),
            Sample((ints(rng, 3), ints(rng, 3), Fixed(np.array([1.5, 2.0, -4.0]))),
                   {"value": 3}),
        ]

    return samples


_ADDC_BROADCAST = [
    lambda rng: ErrorCase((rnd(rng, 2, 3), rnd(rng, 4), rnd(rng, 3)), shapes=((4,),)),
    lambda rng: ErrorCase((rnd(rng, 3), rnd(rng, 3), away(rng, 2))),
]
op("addcmul", _t("addcmul"), lambda rng: _addc_samples(False)(rng) + [
    Sample((ints(rng, 3), ints(rng, 3), ints(rng, 3)), {"value": 2}),
], np_ref=lambda a, b, c, value=1: a + value * b * c,
   errors=lambda rng: [e(rng) for e in _ADDC_BROADCAST])
op("addcdiv", _t("addcdiv"), _addc_samples(True),
   np_ref=lambda a, b, c, value=1: a + value * (b / c),
   errors=lambda rng: [e(rng) for e in _ADDC_BROADCAST] + [
       ErrorCase((ints(rng, 3), ints(rng, 3), Fixed(np.array([1, 2, 3])))),
       ErrorCase((rnd(rng, 3), ints(rng, 3), Fixed(np.array([1, 2, 3])))),
   ])
op("nan_to_num", _t("nan_to_num"), lambda rng: _unary_samples(rnd)(rng) + _INT_SAMPLE + [
    Sample((_NONFINITE,)), Sample((_NONFINITE,), {"nan": 1.0, "posinf": 5.0, "neginf": -5.0}),
    Sample((_NONFINITE.reshape(5, 1), 2.0, None, -1.0)), Sample((np.array(np.nan),)),
    Sample((Fixed(np.array([True, False])),)),
], np_ref=None)



# tensor ops of ops/more.py -------------------------------------------------------------------
def _t_cdist(x1: Any, x2: Any, p: float = 2.0) -> Any:
    """torch.cdist's values and errors with a twice-differentiable gradient: torch's own
    CdistBackward0 has no double backward (tests/test_more_ops.py compares its first gradient,
    including at zero distance, and its grad_fn name)."""
    torch.cdist(x1.detach(), x2.detach(), p)  # (raises torch's errors)
    return torch.linalg.vector_norm(x1.unsqueeze(-2) - x2.unsqueeze(-3), ord=p, dim=-1)


def _idx_arr(rng: np.random.Generator, hi: int, *shape: int) -> Fixed:
    return Fixed(rng.integers(0, hi, shape).astype(np.int64))


_ZEROS_LINE = np.array([[1.5, 0.0, 2.0, -0.5], [0.0, 1.2, 0.0, 3.0], [0.7, -1.1, 0.9, 0.0]])
op("cumprod", _t("cumprod"), lambda rng: [
    Sample((rnd(rng, 2, 3), 1)), Sample((rnd(rng, 2, 3), -2)), Sample((rnd(rng, 4), 0)),
    Sample((rnd(rng), 0)), Sample((rnd(rng, 0, 3), 1)), Sample((rnd(rng, 3, 1), 1)),
    Sample((_ZEROS_LINE, 1)), Sample((_ZEROS_LINE, 0)), Sample((np.zeros((2, 3)), 1)),
    Sample((ints(rng, 2, 3), 1)), Sample((rnd(rng, 2, 3), 1), {"dtype": DT("float64")}),
], np_ref=lambda a, dim, dtype=None: np.cumprod(a, axis=dim),
   errors=lambda rng: [ErrorCase((rnd(rng, 2, 3), 2))])
op("logcumsumexp", _t("logcumsumexp"), lambda rng: [
    Sample((rnd(rng, 2, 3), 1)), Sample((rnd(rng, 2, 3), -2)), Sample((rnd(rng), 0)),
    Sample((rnd(rng, 0, 3), 0)), Sample((rnd(rng, 3, 4, 2), 1)),
    Sample((rnd(rng, 5) * 30, 0)),
], np_ref=lambda a, dim: np.logaddexp.accumulate(a, axis=dim) if a.ndim else a,
   errors=lambda rng: [ErrorCase((ints(rng, 3), 0)), ErrorCase((rnd(rng, 3), 1))])
for _name in ("cummax", "cummin"):
    op(_name, _t(_name), lambda rng: [
        Sample((distinct(rng, 2, 5), 1)), Sample((distinct(rng, 3, 4), 0)),
        Sample((distinct(rng, 6), -1)), Sample((distinct(rng), 0)), Sample((rnd(rng, 0, 3), 0)),
        Sample((ints(rng, 3, 6, lo=0, hi=3), 1)),
        Sample((np.array([1.0, np.nan, 0.5, np.nan, 2.0]), 0), forward_only=True),
    ], errors=lambda rng: [ErrorCase((rnd(rng, 2, 3), 2))])
op("roll", _t("roll"), lambda rng: [
    Sample((rnd(rng, 2, 3), 1, 1)), Sample((rnd(rng, 2, 3), (1, -2), (0, 1))),
    Sample((rnd(rng, 2, 3), 4)), Sample((rnd(rng, 3), -1, 0)), Sample((rnd(rng), 2)),
    Sample((rnd(rng, 0, 2), 1, 1)), Sample((rnd(rng, 2, 3, 4), 5, -1)),
    Sample((rnd(rng, 2, 3), (1, 1), (1, 1))),
], np_ref=lambda a, shifts, dims=None: np.roll(a, shifts, dims),
   errors=lambda rng: [ErrorCase((rnd(rng, 2, 3), (1, 2), (0,))),
                       ErrorCase((rnd(rng, 2, 3), 1, 2)), ErrorCase((rnd(rng), 1, 0))])
op("rot90", _t("rot90"), lambda rng: [
    Sample((rnd(rng, 2, 3),)), Sample((rnd(rng, 2, 3), 2)), Sample((rnd(rng, 2, 3), -1)),
    Sample((rnd(rng, 2, 3), 3, (1, 0))), Sample((rnd(rng, 2, 3, 4), 1, (0, -1))),
    Sample((rnd(rng, 2, 3), 0)), Sample((rnd(rng, 2, 3), 5)),
], errors=lambda rng: [ErrorCase((rnd(rng, 3),)), ErrorCase((rnd(rng, 2, 3), 1, (0, 0))),
                       ErrorCase((rnd(rng, 2, 3), 1, (0,)))])
op("fliplr", _t("fliplr"), lambda rng: [Sample((rnd(rng, 2, 3),)), Sample((rnd(rng, 2, 3, 4),))],
   np_ref=np.fliplr, errors=lambda rng: [ErrorCase((rnd(rng, 3),))])
op("flipud", _t("flipud"), lambda rng: [Sample((rnd(rng, 3),)), Sample((rnd(rng, 2, 3),))],
   np_ref=np.flipud, errors=lambda rng: [ErrorCase((rnd(rng),))])
op("diagonal", _t("diagonal"), lambda rng: [
    Sample((rnd(rng, 3, 4),)), Sample((rnd(rng, 3, 4), 1)), Sample((rnd(rng, 3, 4), -2)),
    Sample((rnd(rng, 2, 3, 4), 0, 1, 2)), Sample((rnd(rng, 2, 3, 4), 1, -1, 0)),
    Sample((rnd(rng, 3, 4), 5)), Sample((rnd(rng, 0, 3),)), Sample((ints(rng, 3, 3),)),
], np_ref=lambda a, offset=0, dim1=0, dim2=1: np.diagonal(a, offset, dim1, dim2),
   errors=lambda rng: [ErrorCase((rnd(rng, 3, 4), 0, 1, 1)), ErrorCase((rnd(rng, 3),))])
op("diag", _t("diag"), lambda rng: [
    Sample((rnd(rng, 3),)), Sample((rnd(rng, 3), 1)), Sample((rnd(rng, 3), -2)),
    Sample((rnd(rng, 3, 4),)), Sample((rnd(rng, 3, 4), 1)), Sample((rnd(rng, 3, 4), -1)),
    Sample((rnd(rng, 0),)), Sample((ints(rng, 3),)),
], np_ref=np.diag, errors=lambda rng: [ErrorCase((rnd(rng, 2, 3, 4),)), ErrorCase((rnd(rng),))])
op("diag_embed", _t("diag_embed"), lambda rng: [
    Sample((rnd(rng, 3),)), Sample((rnd(rng, 2, 3),)), Sample((rnd(rng, 2, 3), 1)),
    Sample((rnd(rng, 2, 3), -1, 0, 2)), Sample((rnd(rng, 2, 3), 0, 1, 0)),
    Sample((rnd(rng, 2, 0),)), Sample((ints(rng, 2, 2),)),
], errors=lambda rng: [ErrorCase((rnd(rng, 2, 3), 0, 1, 1)), ErrorCase((rnd(rng, 3), 0, 0, 3))])
op("trace", _t("trace"), lambda rng: [
    Sample((rnd(rng, 3, 3),)), Sample((rnd(rng, 2, 4),)), Sample((rnd(rng, 4, 2),)),
    Sample((rnd(rng, 0, 3),)), Sample((ints(rng, 3, 3),)),
], np_ref=np.trace, errors=lambda rng: [ErrorCase((rnd(rng, 3),)), ErrorCase((rnd(rng, 2, 2, 2),))])
op("movedim", _t("movedim"), lambda rng: [
    Sample((rnd(rng, 2, 3, 4), 0, 2)), Sample((rnd(rng, 2, 3, 4), (0, 1), (2, 0))),
    Sample((rnd(rng, 2, 3, 4), -1, 0)), Sample((rnd(rng, 2, 3), 1, 1)),
    Sample((rnd(rng, 2, 3, 4), [2, 0], [-3, -1])),
], aliases=("moveaxis",), np_ref=np.moveaxis, errors=lambda rng: [
    ErrorCase((rnd(rng, 2, 3, 4), (0, 0), (1, 2))), ErrorCase((rnd(rng, 2, 3, 4), (0, 1), (1,))),
    ErrorCase((rnd(rng, 2, 3), 2, 0)),
])
op("repeat_interleave", _t("repeat_interleave"), lambda rng: [
    Sample((rnd(rng, 2, 3), 2)), Sample((rnd(rng, 2, 3), 2, 0)), Sample((rnd(rng, 2, 3), 3, -1)),
    Sample((rnd(rng, 2, 3), idx(1, 0, 2), 1)), Sample((rnd(rng, 3), idx(2))),
    Sample((rnd(rng), 3)), Sample((rnd(rng, 2, 3), 0, 1)),
    Sample((rnd(rng, 3, 2), idx(2, 0, 1), 0), {"output_size": 3}),
    Sample((Fixed(np.array([1, 2, 0])),)), Sample((ints(rng, 2, 2), 2, 1)),
], errors=lambda rng: [
    ErrorCase((rnd(rng, 2, 3), -1)), ErrorCase((rnd(rng, 3, 2), idx(1, 2), 0)),
    ErrorCase((rnd(rng, 3, 2), idx(1, -2, 1), 0)),
    ErrorCase((rnd(rng, 3, 2), Fixed(np.array([1.0, 2.0, 1.0])), 0)),
    ErrorCase((rnd(rng, 3, 2), Fixed(np.ones((3, 1), dtype=np.int64)), 0)),
])
op("take_along_dim", _t("take_along_dim"), lambda rng: [
    Sample((rnd(rng, 3, 4), _idx_arr(rng, 4, 3, 1), 1)),
    Sample((rnd(rng, 3, 4), idx(0, 5, 11, 5))),
    Sample((rnd(rng, 3, 4), _idx_arr(rng, 3, 2, 1), 0)),
    Sample((rnd(rng, 3, 4), _idx_arr(rng, 4, 3, 6), -1)),
    Sample((rnd(rng, 3, 1), _idx_arr(rng, 3, 2, 4), 0)),
], errors=lambda rng: [
    ErrorCase((rnd(rng, 3, 4), idx(0, 1), 1)),
    ErrorCase((rnd(rng, 3, 4), Fixed(np.zeros((1, 1))), 1)),
    ErrorCase((rnd(rng, 3, 4), Fixed(np.zeros((2, 1), dtype=np.int64)), 1)),
])
op("einsum", _t("einsum"), lambda rng: [
    Sample(("ij,jk->ik", rnd(rng, 2, 3), rnd(rng, 3, 4))),
    Sample(("ij,jk", rnd(rng, 2, 3), rnd(rng, 3, 4))),
    Sample(("ii", rnd(rng, 3, 3))), Sample(("ii->i", rnd(rng, 3, 3))),
    Sample(("ij->ji", rnd(rng, 2, 3))), Sample(("ji", rnd(rng, 2, 3))),
    Sample(("ij->", rnd(rng, 2, 3))), Sample(("iij->j", rnd(rng, 3, 3, 2))),
    Sample(("bij,bjk->bik", rnd(rng, 2, 3, 4), rnd(rng, 2, 4, 2))),
    Sample(("...ij,...jk->...ik", rnd(rng, 2, 3, 4), rnd(rng, 4, 5))),
    Sample(("...ij,jk", rnd(rng, 2, 3, 4), rnd(rng, 4, 5))),
    Sample(("bij,bjk->bik", rnd(rng, 1, 3, 4), rnd(rng, 2, 4, 2))),
    Sample(("i,j->ij", rnd(rng, 3), rnd(rng, 4))), Sample(("i,i->", rnd(rng, 3), rnd(rng, 3))),
    Sample(("ij,kl->", rnd(rng, 2, 2), rnd(rng, 3, 1))),
    Sample(("ij,jk,kl->il", rnd(rng, 2, 3), rnd(rng, 3, 4), rnd(rng, 4, 2))),
    Sample(("i,i,i->i", rnd(rng, 3), rnd(rng, 3), rnd(rng, 3))),
    Sample(("ij,jk->ik", [rnd(rng, 2, 3), rnd(rng, 3, 4)])),
    Sample(("ij,jk->ik", rnd(rng, 2, 3), NoGrad(rnd(rng, 3, 4)))),
    Sample(("iji,j->", rnd(rng, 2, 3, 2), rnd(rng, 3))),
    Sample(("Ab,bA->A", rnd(rng, 2, 3), rnd(rng, 3, 2))), Sample(("...", rnd(rng, 2, 3))),
    Sample(("i j , j -> i", rnd(rng, 2, 3), rnd(rng, 3))),
    Sample(("ij->j", ints(rng, 2, 3))), Sample(("ij,jk->ik", rnd(rng, 0, 3), rnd(rng, 3, 2))),
], grad_fn="EinsumBackward0",
   grad_fn_note="torch's einsum is a composite (its grad_fn is its last step's: ViewBackward0, "
                "SumBackward1, MulBackward0, ...); gradsum's is one node",
   errors=lambda rng: [
       ErrorCase(("ij,jk->ik", rnd(rng, 2, 3))), ErrorCase(("ij", rnd(rng, 2, 3), rnd(rng, 3))),
       ErrorCase(("ijk->", rnd(rng, 2, 3))),
       ErrorCase(("ij,jk->ik", rnd(rng, 2, 3), rnd(rng, 2, 3))),
       ErrorCase(("ij->k", rnd(rng, 2, 3))), ErrorCase(("ij->ii", rnd(rng, 2, 3))),
       ErrorCase(("i1->", rnd(rng, 3))), ErrorCase(("ii->i", rnd(rng, 3, 4))),
       ErrorCase(("...i...->", rnd(rng, 3))), ErrorCase(("i,i->", rnd(rng, 3), ints(rng, 3))),
   ])
op("tensordot", _t("tensordot"), lambda rng: [
    Sample((rnd(rng, 2, 3, 4), rnd(rng, 3, 4, 5))), Sample((rnd(rng, 2, 3), rnd(rng, 3, 4), 1)),
    Sample((rnd(rng, 2, 3), rnd(rng, 4), 0)),
    Sample((rnd(rng, 2, 3, 4), rnd(rng, 4, 2, 3), ([1, 2], [2, 0]))),
    Sample((rnd(rng, 2, 3), rnd(rng, 3, 2), ([-1], [0]))),
    Sample((rnd(rng, 2, 3), NoGrad(rnd(rng, 2, 3)), 2)),
], errors=lambda rng: [
    ErrorCase((rnd(rng, 3, 4), rnd(rng, 3, 4), ([1], [0]))),
    ErrorCase((rnd(rng, 3, 4), rnd(rng, 3, 4), ([1], [0, 1]))),
    ErrorCase((rnd(rng, 3, 4), rnd(rng, 3, 4), -1)), ErrorCase((rnd(rng, 3, 4), rnd(rng, 3), 2)),
])
op("kron", _t("kron"), lambda rng: [
    Sample((rnd(rng, 2, 3), rnd(rng, 2, 2))), Sample((rnd(rng, 3), rnd(rng, 2, 2))),
    Sample((rnd(rng, 2, 1, 2), rnd(rng, 3, 2))), Sample((rnd(rng, 2, 3), NoGrad(rnd(rng, 2)))),
    Sample((ints(rng, 2), ints(rng, 2, 2))), Sample((rnd(rng, 0, 2), rnd(rng, 2))),
], np_ref=np.kron)
op("cross", _t("cross"), lambda rng: [
    Sample((rnd(rng, 4, 3), rnd(rng, 4, 3)), {"dim": 1}),
    Sample((rnd(rng, 3, 5), rnd(rng, 3, 5), 0)),
    Sample((rnd(rng, 1, 3), rnd(rng, 4, 3)), {"dim": -1}),
    Sample((rnd(rng, 3), rnd(rng, 3)), {"dim": 0}),
    Sample((rnd(rng, 2, 3), NoGrad(rnd(rng, 2, 3))), {"dim": 1}),
    Sample((ints(rng, 2, 3), ints(rng, 2, 3)), {"dim": 1}),
], errors=lambda rng: [
    ErrorCase((rnd(rng, 3, 4), rnd(rng, 3, 4)), {"dim": 1}),
    ErrorCase((rnd(rng, 2, 3), rnd(rng, 3, 3)), {"dim": 1}, shapes=()),
])
op("cdist", _t_cdist, lambda rng: [
    Sample((rnd(rng, 3, 4), rnd(rng, 2, 4))), Sample((rnd(rng, 3, 4), rnd(rng, 2, 4), 1.0)),
    Sample((rnd(rng, 3, 2), rnd(rng, 4, 2), 3.0)),
    Sample((distinct(rng, 3, 2), distinct(rng, 2, 2), float("inf"))),
    Sample((rnd(rng, 2, 3, 4), rnd(rng, 2, 2, 4))), Sample((rnd(rng, 1, 3, 2), rnd(rng, 2, 2, 2))),
    Sample((rnd(rng, 3, 2), NoGrad(rnd(rng, 2, 2)))), Sample((rnd(rng, 0, 2), rnd(rng, 2, 2))),
], grad_fn="CdistBackward0",
   grad_fn_note="the reference is a twice-differentiable composite (torch's CdistBackward0 "
                "has no double backward); test_more_ops.py checks the name against torch",
   errors=lambda rng: [
       ErrorCase((rnd(rng, 3), rnd(rng, 3))), ErrorCase((rnd(rng, 3, 4), rnd(rng, 2, 5))),
       ErrorCase((rnd(rng, 3, 2), rnd(rng, 3, 2), -1.0)),
       ErrorCase((ints(rng, 3, 2), ints(rng, 3, 2))),
   ])
op("addmm", _t("addmm"), lambda rng: [
    Sample((rnd(rng, 2, 4), rnd(rng, 2, 3), rnd(rng, 3, 4))),
    Sample((rnd(rng, 4), rnd(rng, 2, 3), rnd(rng, 3, 4)), {"beta": 0.5, "alpha": 2}),
    Sample((rnd(rng), rnd(rng, 2, 3), rnd(rng, 3, 4)), {"alpha": -1.5}),
    Sample((rnd(rng, 1, 4), rnd(rng, 2, 3), NoGrad(rnd(rng, 3, 4))), {"beta": 0}),
    Sample((NoGrad(rnd(rng, 2, 4)), rnd(rng, 2, 3), rnd(rng, 3, 4))),
    Sample((rnd(rng, 2, 4), NoGrad(rnd(rng, 2, 3)), NoGrad(rnd(rng, 3, 4))), {"beta": 3}),
    Sample((rnd(rng, 2, 4), rnd(rng, 2, 0), rnd(rng, 0, 4))),
], errors=lambda rng: [
    ErrorCase((rnd(rng, 3, 4), rnd(rng, 3, 4), rnd(rng, 3, 4))),
    ErrorCase((rnd(rng, 5), rnd(rng, 3, 4), rnd(rng, 4, 4))),
])
op("addmv", _t("addmv"), lambda rng: [
    Sample((rnd(rng, 2), rnd(rng, 2, 3), rnd(rng, 3))),
    Sample((rnd(rng), rnd(rng, 2, 3), rnd(rng, 3)), {"beta": 2, "alpha": 0.5}),
    Sample((rnd(rng, 1), NoGrad(rnd(rng, 2, 3)), rnd(rng, 3)), {"beta": 0}),
    Sample((NoGrad(rnd(rng, 2)), rnd(rng, 2, 3), NoGrad(rnd(rng, 3)))),
], errors=lambda rng: [ErrorCase((rnd(rng, 3), rnd(rng, 3, 4), rnd(rng, 5)))])
op("addbmm", _t("addbmm"), lambda rng: [
    Sample((rnd(rng, 2, 4), rnd(rng, 3, 2, 5), rnd(rng, 3, 5, 4))),
    Sample((rnd(rng, 4), rnd(rng, 3, 2, 5), rnd(rng, 3, 5, 4)), {"beta": -1, "alpha": 2.5}),
    Sample((rnd(rng, 2, 4), NoGrad(rnd(rng, 3, 2, 5)), rnd(rng, 3, 5, 4))),
    Sample((NoGrad(rnd(rng, 2, 4)), rnd(rng, 3, 2, 5), NoGrad(rnd(rng, 3, 5, 4))), {"beta": 0}),
], errors=lambda rng: [ErrorCase((rnd(rng, 3, 4), rnd(rng, 2, 3, 4), rnd(rng, 2, 3, 4)))])
op("baddbmm", _t("baddbmm"), lambda rng: [
    Sample((rnd(rng, 3, 2, 4), rnd(rng, 3, 2, 5), rnd(rng, 3, 5, 4))),
    Sample((rnd(rng, 2, 4), rnd(rng, 3, 2, 5), rnd(rng, 3, 5, 4)), {"beta": 0.5, "alpha": 3}),
    Sample((rnd(rng, 1, 1, 4), rnd(rng, 3, 2, 5), NoGrad(rnd(rng, 3, 5, 4))), {"beta": 0}),
], errors=lambda rng: [ErrorCase((rnd(rng, 2, 3, 4), rnd(rng, 2, 3, 4), rnd(rng, 2, 3, 4)))])
for _name in ("triu_indices", "tril_indices"):
    op(_name, _t(_name), lambda rng: [
        Sample((3, 3)), Sample((3, 4, 1)), Sample((4, 3, -1)), Sample((0, 0)),
        Sample((3, 5, -7)), Sample((3, 3), {"dtype": DT("int32")}),
    ], differentiable=False, errors=lambda rng: [ErrorCase((-1, 4)), ErrorCase((3, -2))])


# in-place (applied to a non-leaf clone of the first operand) ---------------------------------
def _inplace_op(name: str, samples: Callable[..., list[Sample]], **kw: Any) -> OpInfo:
    info = OpInfo(name, _g_inplace(name), _t_inplace(name), samples, **kw)
    OPINFOS.append(info)
    return info


def _inplace_binary(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((rnd(rng, 2, 3), rnd(rng, 2, 3))), Sample((rnd(rng, 2, 3), rnd(rng, 3))),
        Sample((rnd(rng, 2, 3), 1.5)), Sample((rnd(rng, 2, 3), NoGrad(away(rng, 1, 3)))),
        Sample((NoGrad(rnd(rng, 2, 3)), away(rng, 3))), Sample((rnd(rng, 2, 3), rnd(rng))),
    ]


_inplace_errors = lambda rng: [
    ErrorCase((rnd(rng, 3), rnd(rng, 2, 3)), shapes=((3,), (2, 3))),
    ErrorCase((ints(rng, 3), rnd(rng, 3))),
]
_inplace_op("add_", _inplace_binary, errors=_inplace_errors)
_inplace_op("sub_", _inplace_binary, errors=_inplace_errors)
_inplace_op("mul_", _inplace_binary, errors=_inplace_errors)
_inplace_op("div_", _inplace_binary, errors=_inplace_errors)
_inplace_op("zero_", lambda rng: [Sample((rnd(rng, 2, 3),))])
_inplace_op("fill_", lambda rng: [Sample((rnd(rng, 2, 3), 1.5)), Sample((rnd(rng, 2, 3), rnd(rng))),
                                  Sample((NoGrad(rnd(rng, 2, 3)), rnd(rng)))])
_inplace_op("copy_", lambda rng: [
    Sample((rnd(rng, 2, 3), rnd(rng, 2, 3))), Sample((rnd(rng, 2, 3), rnd(rng, 3))),
    Sample((NoGrad(rnd(rng, 2, 3)), rnd(rng, 1, 3))), Sample((rnd(rng, 2, 3), ints(rng, 3))),
], errors=lambda rng: [ErrorCase((rnd(rng, 2, 3), rnd(rng, 4)), shapes=((2, 3), (4,)))])
_inplace_op("clamp_", lambda rng: [
    Sample((off_grid(rng, 2, 3), -0.5, 0.5)), Sample((off_grid(rng, 2, 3),), {"min": 0.0}),
], aliases=("clip_",), no_gradgrad="piecewise linear")
_inplace_op("masked_fill_", lambda rng: [
    Sample((rnd(rng, 2, 3), mask(rng, 2, 3), 0.5)),
    Sample((rnd(rng, 2, 3), mask(rng, 3), rnd(rng))),
])
_inplace_unary = lambda rng: [Sample((away(rng, 2, 3),)), Sample((away(rng),))]
_inplace_positive = lambda rng: [Sample((pos(rng, 2, 3),)), Sample((pos(rng),))]
for _name in ("exp_", "sin_", "cos_", "tanh_", "sigmoid_", "neg_", "erf_"):
    _inplace_op(_name, _inplace_unary)
for _name in ("log_", "log1p_", "sqrt_", "rsqrt_", "reciprocal_"):
    _inplace_op(_name, _inplace_positive)
for _name in ("relu_", "abs_"):
    _inplace_op(_name, _inplace_unary, no_gradgrad="piecewise linear")
for _name in ("sign_", "floor_", "ceil_", "round_", "trunc_"):
    _inplace_op(_name, lambda rng: [Sample((off_grid(rng, 2, 3),))],
                no_gradgrad="piecewise constant")
_inplace_op("pow_", lambda rng: [Sample((pos(rng, 2, 3), 2.0)), Sample((pos(rng, 2, 3), 0.5)),
                                 Sample((pos(rng, 2, 3), pos(rng, 3)))],
            errors=lambda rng: [ErrorCase((ints(rng, 3), 0.5))])
OPINFOS.append(OpInfo("index_put", G.OPS["index_put"], _t_index_put, lambda rng: [
    Sample((rnd(rng, 3, 4), idx(0, 2), rnd(rng, 2, 4))),
    Sample((rnd(rng, 3, 4), mask(rng, 3, 4), NoGrad(np.array(1.5)))),
    Sample((rnd(rng, 3, 4), (idx(0, 2), idx(1, 3)), rnd(rng, 2))),
    Sample((rnd(rng, 3, 4), idx(1), rnd(rng, 4))),
], notes="gradsum's index_put takes a __getitem__ key; torch's takes a tuple of index tensors"))


def walk_tensors(value: Any, lib: type) -> list[Any]:
    """The tensors of type ``lib`` in ``value`` (nested lists and tuples), in order."""
    if isinstance(value, lib):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in walk_tensors(v, lib)]
    return []


def grad_leaves(args: tuple[Any, ...], kwargs: dict[str, Any], lib: type) -> list[Any]:
    """The tensors among a call's arguments that require grad."""
    return [t for t in walk_tensors(list(args) + list(kwargs.values()), lib) if t.requires_grad]


def has_float_operand(sample: Sample) -> bool:
    """Whether a sample has an operand that requires grad (a plain float64 array)."""

    def walk(v: Any) -> bool:
        if isinstance(v, np.ndarray):
            return True
        if isinstance(v, (list, tuple)):
            return any(walk(x) for x in v)
        return False

    return walk(list(sample.args) + list(sample.kwargs.values()))


def by_name() -> dict[str, OpInfo]:
    """Every OPS key (canonical names and aliases) -> its entry."""
    out: dict[str, OpInfo] = {}
    for info in OPINFOS:
        for n in (info.name, *info.aliases):
            out[n] = info
    return out


def missing_entries(ops: Sequence[str]) -> list[str]:
    table = by_name()
    return sorted(n for n in ops if n not in table)

import opdb_compose  # noqa: E402, F401  (ops/compose.py entries)
import opdb_linalg2  # noqa: E402,F401  (ops/linalg2.py entries: linalg solves, LU, index_reduce)
import opdb_methods  # noqa: E402, F401  (ops/methods.py entries)
import opdb_selection  # noqa: E402,F401  (ops/selection.py entries)
import opdb_special  # noqa: E402,F401  (ops/special.py and ops/decomp.py entries)
import opdb_special2  # noqa: E402,F401  (ops/special2.py entries: torch.special)
