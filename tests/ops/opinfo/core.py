"""The op table's machinery: :class:`OpInfo` and the sample wrappers, the domain-restricted
generators, the conversion of a sample to gradsum or torch, and :data:`OPINFOS` (the table
itself, filled by the family modules of this package).
"""

from __future__ import annotations

import math
import warnings
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
    TF = None


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

# unary ----------------------------------------------------------------------------------------
_INT_SAMPLE = [Sample((Fixed(np.array([1, 2, 3])),))]


def _unary(name: str, gen: Callable[..., np.ndarray], np_ref: Any = None, ints_ok: bool = True,
           **kw: Any) -> OpInfo:
    base = _unary_samples(gen)
    extra = _INT_SAMPLE if ints_ok else []
    return op(name, _t(name), lambda rng: base(rng) + extra, np_ref=np_ref, **kw)
_BOOL_ERROR = {"errors": lambda rng: [ErrorCase((Fixed(np.array([True, False])),))]}


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


def _quiet(fn: Any) -> Any:
    """``fn`` with its (deprecation / beta) warnings silenced."""

    def call(*a: Any, **k: Any) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*a, **k)

    return call

_bool = Fixed(np.array([True, False]))

_ = DT


def _ties(rng: np.random.Generator, *shape: int, hi: int = 4) -> Fixed:
    return Fixed(rng.integers(0, hi, shape).astype(np.int64))


def _t_aminmax(a: Any, *args: Any, **kw: Any) -> Any:
    import torch

    return torch.aminmax(a, *args, **kw)


def _unary_sp(name: str, gen: Any, ints_ok: bool = True, **kw: Any) -> OpInfo:
    base = _unary_samples(gen)
    return op(name, _t(name), lambda rng: base(rng) + (_INT_SAMPLE if ints_ok else []), **kw)


def _ts(name: str) -> Callable[..., Any]:
    """``torch.special.<name>`` looked up lazily."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(torch.special, name)(*args, **kwargs)

    call.__name__ = name
    return call


_INF = float("inf")
_NAN = float("nan")
