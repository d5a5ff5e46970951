"""Op-speed sweep: every entry of the op table (tests/opdb.py), gradsum vs torch.

For each entry of ``OPINFOS`` (and a few nn.functional workloads that the table does not hold:
layer norm, cross-entropy, convolutions, ...), forward + backward (the backward of every
floating output that requires grad, seeded with ones; forward only for non-differentiable
entries), at three sizes (about 1K, 64K and 1M elements: the largest operand or output),
float32 by default, gradsum and torch in one process, interleaved, one thread, medians.

Sizing. The table's samples are small (shapes like (2, 3)). A generic scaler takes an entry's
samples in order and, for each of a few schemes (scale every dim of every array operand by an
integer factor; only the last dim; only the first dim; each with integer operands scaled or
kept; or only the first operand), builds scaled inputs by tiling the sample's values
(``np.resize``) with a multiplicative jitter of at most 1%, which keeps each generator's
domain (positive, away from 0, off the rounding grid, the same signs); index values are never
changed, and since dims only grow they stay valid. The first scheme under which both
libraries run forward and backward and give outputs of the same shapes is used. A small table
of explicit builders sizes the entries the scaler cannot (matrix products, convolutions, the
losses). An entry that no scheme scales to a size is timed at the largest size reached, and
the table says so; an entry that cannot run at all is listed with the reason.

Accuracy (float32 only): the max ULP error of each library's float32 forward against torch's
float64 forward on the same (float32-representable) inputs, in units of
``spacing(float32(reference))``, non-finite references ignored, at the 64K size (or the
largest size below it that the entry reached).

Run: ``python benchmarks/bench_ops.py [--sizes 1024,65536,1048576] [--dtype float64]
[--ops add,gelu] [--repeats N] [--quick] [--out FILE]``.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import _common  # noqa: F401 - sets single-thread env vars before numpy/torch load
import numpy as np
from _common import fmt, median, threads_info, time_interleaved

TESTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests")
if TESTS not in sys.path:
    sys.path.insert(0, TESTS)

import torch  # noqa: E402

import gradsum  # noqa: E402
from ops import opinfo as opdb  # noqa: E402
from ops.opinfo import Fixed, NoGrad, Sample, convert, flat_outputs  # noqa: E402

torch.set_num_threads(1)

#: the smallest time one timing (``inner`` calls) should take
MIN_TIMING = 2e-3
#: skip a size where one call is predicted (from the previous size) to take longer than this
MAX_CALL = 15.0
#: the timer: the process's CPU time by default (``--clock wall`` for wall time)
CLOCK: dict[str, Callable[[], float]] = {"now": time.process_time}
JITTER = 0.01


# -- entries -----------------------------------------------------------------------------------
@dataclass
class Entry:
    name: str
    op: Callable[..., Any]
    ref: Callable[..., Any]
    samples: Callable[[np.random.Generator], list[Sample]]
    differentiable: bool = True
    #: explicit builder: target elements -> sample (None: the generic scaler)
    build: Callable[[int], Sample] | None = None
    note: str = ""


def _rng(n: int = 0) -> np.random.Generator:
    return np.random.default_rng(1234 + n)


def _side(n: int, parts: int = 2) -> int:
    return max(2, round(n ** (1 / parts)))


def _rnd(*shape: int) -> np.ndarray:
    return _f32(_rng(sum(shape)).standard_normal(shape))


def _f32(a: np.ndarray) -> np.ndarray:
    """float64 values that float32 holds exactly (both dtypes then see the same numbers)."""
    return np.asarray(a, dtype=np.float64).astype(np.float32).astype(np.float64)


def _ints(hi: int, *shape: int) -> Fixed:
    return Fixed(_rng(hi + sum(shape)).integers(0, hi, shape).astype(np.int64))


def _b_mm(n: int) -> Sample:
    s = _side(n)
    return Sample((_rnd(s, s), _rnd(s, s)))


def _b_bmm(n: int) -> Sample:
    s = _side(n // 4)
    return Sample((_rnd(4, s, s), _rnd(4, s, s)))


def _b_mv(n: int) -> Sample:
    s = _side(n)
    return Sample((_rnd(s, s), _rnd(s)))


def _b_linear(n: int) -> Sample:
    s = _side(n)
    return Sample((_rnd(s, s), _rnd(s, s), _rnd(s)))


def _b_addmm(n: int) -> Sample:
    s = _side(n)
    return Sample((_rnd(s), _rnd(s, s), _rnd(s, s)))


def _b_addmv(n: int) -> Sample:
    s = _side(n)
    return Sample((_rnd(s), _rnd(s, s), _rnd(s)))


def _b_baddbmm(n: int) -> Sample:
    s = _side(n // 4)
    return Sample((_rnd(4, s, s), _rnd(4, s, s), _rnd(4, s, s)))


def _b_addbmm(n: int) -> Sample:
    s = _side(n // 4)
    return Sample((_rnd(s, s), _rnd(4, s, s), _rnd(4, s, s)))


def _b_rows(n: int) -> tuple[int, int]:
    d = _side(n)
    return max(1, n // d), d


def _b_softmax(n: int) -> Sample:
    return Sample((_rnd(*_b_rows(n)), -1))


def _b_layer_norm(n: int) -> Sample:
    r, d = _b_rows(n)
    return Sample((_rnd(r, d), (d,), _rnd(d), _rnd(d)))


def _b_cross_entropy(n: int) -> Sample:
    r, c = _b_rows(n)
    return Sample((_rnd(r, c), _ints(c, r)))


def _b_nll_loss(n: int) -> Sample:
    r, c = _b_rows(n)
    logp = _f32(np.log(_rng(r).dirichlet(np.ones(c), r)))
    return Sample((logp, _ints(c, r)))


def _b_bce_logits(n: int) -> Sample:
    r, c = _b_rows(n)
    return Sample((_rnd(r, c), NoGrad(_f32(_rng(3).random((r, c))))))


def _b_mse(n: int) -> Sample:
    r, c = _b_rows(n)
    return Sample((_rnd(r, c), NoGrad(_rnd(c, r).T.copy())))


def _b_embedding(n: int) -> Sample:
    d = _side(n)
    return Sample((_ints(d, n // d), _rnd(d, d)))


def _b_conv1d(n: int) -> Sample:
    c = {1024: 8}.get(n, max(4, _side(n, 3) // 2))
    b = max(1, c // 4)
    length = max(8, n // (b * c))
    return Sample((_rnd(b, c, length), _rnd(c, c, 3), _rnd(c)), {"padding": 1})


def _b_conv2d(n: int) -> Sample:
    c = max(4, _side(n, 4) * 2)
    b = max(1, c // 4)
    hw = max(4, _side(n // (b * c)))
    return Sample((_rnd(b, c, hw, hw), _rnd(c, c, 3, 3), _rnd(c)), {"padding": 1})


def _b_sdpa(n: int) -> Sample:
    d = 64
    length = max(8, _side(n // (4 * d), 1))
    return Sample((_rnd(2, 2, length, d), _rnd(2, 2, length, d), _rnd(2, 2, length, d)))


def _b_index_select(n: int) -> Sample:
    r, d = _b_rows(n)
    return Sample((_rnd(r, d), 0, _ints(r, r)))


def _b_gather(n: int) -> Sample:
    r, d = _b_rows(n)
    return Sample((_rnd(r, d), 1, _ints(d, r, d)))


def _b_scatter_add(n: int) -> Sample:
    r, d = _b_rows(n)
    return Sample((_rnd(r, d), 1, _ints(d, r, d), _rnd(r, d)))


def _b_index_add(n: int) -> Sample:
    r, d = _b_rows(n)
    return Sample((_rnd(r, d), 0, _ints(r, r), _rnd(r, d)))


def _b_one_hot(n: int) -> Sample:
    c = _side(n)
    return Sample((_ints(c, n // c), c))


def _b_transpose_contig(n: int) -> Sample:
    return Sample((_rnd(*_b_rows(n)),))


def _b_unary(n: int) -> Sample:
    return Sample((_rnd(*_b_rows(n)),))


def _b_cube(n: int) -> Sample:
    return Sample((_rnd(*_b_rows(n)), 3))


def _b_matrix_exp(n: int) -> Sample:
    s = _side(n)
    return Sample((_rnd(s, s) / s,))


def _spd(s: int) -> np.ndarray:
    return _f32(_make_spd(_rnd(s, s)))


def _b_tensorinv(n: int) -> Sample:
    s = 2 * max(1, _side(n) // 2)
    return Sample((_spd(s).reshape(s, 2, s // 2),), {"ind": 1})


def _b_tensorsolve(n: int) -> Sample:
    s = 2 * max(1, _side(n) // 2)
    return Sample((_spd(s).reshape(2, s // 2, s), _rnd(2, s // 2)))


def _b_cdist(n: int) -> Sample:
    s = _side(n)  # the output is s x s; 16 features
    return Sample((_rnd(s, 16), _rnd(s, 16)))


def _b_gelu_tanh(n: int) -> Sample:
    return Sample((_rnd(*_b_rows(n)),), {"approximate": "tanh"})


#: op-table entries that the generic scaler does not size well
BUILDERS: dict[str, Callable[[int], Sample]] = {
    "matmul": _b_mm, "mm": _b_mm, "linalg.matmul": _b_mm, "bmm": _b_bmm, "mv": _b_mv,
    "linear": _b_linear, "addmm": _b_addmm, "addmv": _b_addmv, "baddbmm": _b_baddbmm,
    "addbmm": _b_addbmm, "softmax": _b_softmax, "log_softmax": _b_softmax,
    "index_select": _b_index_select, "gather": _b_gather, "scatter_add": _b_scatter_add,
    "index_add": _b_index_add, "one_hot": _b_one_hot, "matrix_exp": _b_matrix_exp,
    "cdist": _b_cdist, "linalg.tensorinv": _b_tensorinv,
    "linalg.tensorsolve": _b_tensorsolve,
    "linalg.matrix_exp": _b_matrix_exp,
}


def _nn_entries() -> list[Entry]:
    """Workloads of real models that the op table (gradsum.ops.OPS) does not hold."""
    gf, tf = gradsum.nn.functional, torch.nn.functional
    none = lambda rng: []  # explicit builders only

    def pair(name: str, build: Callable[[int], Sample], g: Any = None, t: Any = None,
             diff: bool = True) -> Entry:
        fn = name.split(" ")[0]
        return Entry(name, g or getattr(gf, fn), t or getattr(tf, fn), none, diff, build,
                     "nn.functional (not in the op table)")

    return [
        pair("layer_norm", _b_layer_norm),
        pair("cross_entropy", _b_cross_entropy),
        pair("nll_loss", _b_nll_loss),
        pair("binary_cross_entropy_with_logits", _b_bce_logits),
        pair("mse_loss", _b_mse),
        pair("embedding", _b_embedding),
        pair("conv1d", _b_conv1d),
        pair("conv2d", _b_conv2d),
        pair("scaled_dot_product_attention", _b_sdpa),
        pair("elu", _b_unary),
        pair("hardswish", _b_unary),
        pair("gelu (approximate='tanh')", _b_gelu_tanh),
        Entry("x ** 3", lambda a, e: a ** e, lambda a, e: a ** e, none, True, _b_cube,
              "pow by a Python int (the issue's x ** 3)"),
        Entry("t().contiguous()", lambda a: a.t().contiguous(), lambda a: a.t().contiguous(),
              none, True, _b_transpose_contig, "a transposed copy"),
    ]


def all_entries() -> list[Entry]:
    out = []
    for info in opdb.OPINFOS:
        out.append(Entry(info.name, info.op, info.ref, info.samples, info.differentiable,
                         BUILDERS.get(info.name)))
    return out + _nn_entries()


# -- scaling -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Scheme:
    axes: str  # "all", "last" or "first"
    ints: bool  # scale integer/bool (Fixed) arrays too
    first_only: bool  # scale only the first array operand
    #: scale the size-like arguments too: "" none, "tuples" ints > 1 inside tuples of ints
    #: (shapes), "ints" those and bare int arguments > 1 (view's sizes, topk's k, ...)
    shape_args: str = ""
    #: square float operands made symmetric and diagonally dominant (for the linalg entries)
    spd: bool = False

    def __str__(self) -> str:
        s = {"all": "all dims", "last": "last dim", "first": "first dim"}[self.axes]
        if self.spd:
            s += ", square operands symmetric positive definite"
        if not self.ints:
            s += ", ints kept"
        if self.first_only:
            s += ", first operand only"
        if self.shape_args:
            s += {"tuples": ", shape tuples scaled", "ints": ", int arguments scaled"}[
                self.shape_args]
        return s


SCHEMES = [Scheme(a, i, f, sh) for sh in ("", "tuples", "ints") for f in (False, True)
           for a in ("all", "last", "first") for i in (True, False)]
#: tried first for the entries that factor or invert matrices (a tiled matrix is singular)
SPD_SCHEMES = [Scheme("all", i, f, sh, True) for sh in ("", "tuples") for f in (False, True)
               for i in (True, False)]
LINALG = {"det", "slogdet", "logdet", "inverse", "cholesky", "cholesky_solve",
          "cholesky_inverse", "triangular_solve", "pinverse", "svd", "matrix_power",
          "lu_unpack", "chain_matmul"}


def _schemes(name: str) -> list[Scheme]:
    if (name.startswith("linalg.") or name in LINALG) and name != "linalg.matrix_exp":
        return SPD_SCHEMES + SCHEMES
    return SCHEMES


def _make_spd(a: np.ndarray) -> np.ndarray:
    """A square (batch of) matrix made symmetric and strictly diagonally dominant."""
    sym = (a + np.swapaxes(a, -1, -2)) / 2
    n = a.shape[-1]
    return sym + np.eye(n) * (n * max(1.0, float(np.abs(a).max(initial=0.0))))


def _scale_int(v: Any, scheme: Scheme, k: int, bare: bool) -> Any:
    """A size-like argument scaled as the scheme says (ints > 1 times k)."""
    if isinstance(v, bool) or not scheme.shape_args:
        return v
    if isinstance(v, int):
        return v * k if (bare and scheme.shape_args == "ints" and v > 1) else v
    if isinstance(v, tuple) and v and all(isinstance(x, int) and not isinstance(x, bool)
                                         for x in v):
        return tuple(x * k if x > 1 else x for x in v)
    return v


def _arrays(value: Any) -> list[tuple[np.ndarray, bool]]:
    """(array, is_fixed) for every array in a sample value, in order."""
    if isinstance(value, np.ndarray):
        return [(value, False)]
    if isinstance(value, NoGrad):
        return [(np.asarray(value.array), False)]
    if isinstance(value, Fixed):
        return [(np.asarray(value.array), True)]
    if isinstance(value, (list, tuple)):
        return [a for v in value for a in _arrays(v)]
    return []


def _sample_arrays(sample: Sample) -> list[tuple[np.ndarray, bool]]:
    return _arrays(list(sample.args) + list(sample.kwargs.values()))


def _new_shape(shape: tuple[int, ...], scheme: Scheme, k: int) -> tuple[int, ...]:
    out = list(shape)
    axes = (range(len(shape)) if scheme.axes == "all"
            else [len(shape) - 1] if scheme.axes == "last" else [0])
    for ax in axes:
        if 0 <= ax < len(shape) and shape[ax] > 1:
            out[ax] = shape[ax] * k
    return tuple(out)


def _grow(a: np.ndarray, shape: tuple[int, ...], fixed: bool, rng: np.random.Generator
          ) -> np.ndarray:
    if tuple(a.shape) == shape:
        return a
    big = np.resize(a, shape) if a.size else np.zeros(shape, a.dtype)
    if a.dtype.kind == "f":
        big = big * (1 + JITTER * rng.uniform(-1, 1, shape))
        big = _f32(big).astype(a.dtype) if a.dtype == np.float64 else big.astype(a.dtype)
    return big


def _operand_shape(v: Any, scheme: Scheme, k: int, state: dict[str, bool]
                   ) -> tuple[np.ndarray, bool, tuple[int, ...]]:
    """An array operand's array, whether it is :class:`Fixed`, and its shape under the
    scheme (``state["first"]``: no operand seen yet, for ``first_only`` schemes)."""
    arr = np.asarray(v.array if isinstance(v, (NoGrad, Fixed)) else v)
    fixed = isinstance(v, Fixed)
    grow = ((not fixed or scheme.ints or arr.dtype.kind == "f")
            and (state["first"] or not scheme.first_only))
    state["first"] = False
    return arr, fixed, _new_shape(arr.shape, scheme, k) if grow else arr.shape


def scale_sample(sample: Sample, scheme: Scheme, k: int, seed: int = 0) -> Sample:
    """The sample with its array operands grown by ``k`` along the scheme's dims."""
    rng = np.random.default_rng(seed)
    state = {"first": True}

    def walk(v: Any) -> Any:
        if isinstance(v, (np.ndarray, NoGrad, Fixed)):
            arr, fixed, shape = _operand_shape(v, scheme, k, state)
            new = _grow(arr, shape, fixed, rng)
            if (scheme.spd and not fixed and new.ndim >= 2 and new.shape[-1] == new.shape[-2]
                    and new.shape[-1] > 1 and new.dtype.kind == "f"):
                new = _make_spd(new)
            if not fixed and new.dtype == np.float64:
                new = _f32(new)
            return Fixed(new) if fixed else NoGrad(new) if isinstance(v, NoGrad) else new
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, tuple) and any(isinstance(x, (np.ndarray, Fixed, NoGrad)) for x in v):
            return tuple(walk(x) for x in v)
        return _scale_int(v, scheme, k, True)

    args = tuple(walk(a) for a in sample.args)
    kwargs = {key: walk(v) for key, v in sample.kwargs.items()}
    return Sample(args, kwargs)


def _input_size(sample: Sample) -> int:
    return max([a.size for a, _ in _sample_arrays(sample)] + [1])


def _out_size(outs: list[Any]) -> int:
    sizes = [int(o.numel()) for o in outs if isinstance(o, (gradsum.Tensor, torch.Tensor))]
    return max(sizes + [1])


def _usable(sample: Sample, differentiable: bool) -> bool:
    arrays = _sample_arrays(sample)
    if not arrays or any(a.size == 0 for a, _ in arrays):
        return False
    if max(a.size for a, _ in arrays) < 2:
        return False
    return not differentiable or any(not fixed and a.dtype.kind == "f" for a, fixed in arrays)


# -- running -----------------------------------------------------------------------------------
class Program:
    """One library's call of an entry on one sample: inputs made once, ``run`` times it."""

    def __init__(self, entry: Entry, sample: Sample, lib: str, dtype: str) -> None:
        self.lib = lib
        self.mod = gradsum if lib == "g" else torch
        self.tensor_type = gradsum.Tensor if lib == "g" else torch.Tensor
        self.fn = entry.op if lib == "g" else entry.ref
        self.args, self.kwargs = convert(sample, lib, dtype, entry.differentiable)
        self.leaves = opdb.grad_leaves(self.args, self.kwargs, self.tensor_type)
        self.seeds: list[Any] | None = None

    def outputs(self) -> list[Any]:
        return flat_outputs(self.fn(*self.args, **self.kwargs))

    def run(self) -> list[Any]:
        for leaf in self.leaves:
            leaf.grad = None
        outs = self.outputs()
        diff = [o for o in outs if isinstance(o, self.tensor_type) and o.requires_grad]
        if diff:
            if self.seeds is None:
                self.seeds = [self.mod.ones_like(o) for o in diff]
            self.mod.autograd.backward(diff, self.seeds)
        return outs


def _shapes(outs: list[Any]) -> list[tuple[int, ...] | str]:
    return [tuple(o.shape) if isinstance(o, (gradsum.Tensor, torch.Tensor)) else type(o).__name__
            for o in outs]


@dataclass
class Trial:
    sample: Sample
    scheme: str
    size: int
    g: Program
    t: Program
    t_g: float
    t_t: float


class CallTimeout(BaseException):
    """A probe call ran past :data:`MAX_CALL` (raised by SIGALRM between bytecodes)."""


@contextlib.contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    def alarm(signum: int, frame: Any) -> None:
        raise CallTimeout(f"a call ran past {seconds:.0f} s")

    if not hasattr(signal, "setitimer"):
        yield
        return
    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def try_sample(entry: Entry, sample: Sample, dtype: str, scheme: str) -> Trial:
    """Run both libraries once (forward + backward); raise if either fails or they disagree
    on the output shapes, :class:`CallTimeout` if they take more than ``2 * MAX_CALL``."""
    g, t = Program(entry, sample, "g", dtype), Program(entry, sample, "t", dtype)
    clock = CLOCK["now"]
    with _deadline(2 * MAX_CALL):
        t0 = clock()
        tout = t.run()
        t1 = clock()
        gout = g.run()
        t2 = clock()
    if _shapes(gout) != _shapes(tout):
        raise ValueError(f"output shapes differ: {_shapes(gout)} vs {_shapes(tout)}")
    size = max(_input_size(sample), _out_size(tout))
    return Trial(sample, scheme, size, g, t, t2 - t1, t1 - t0)


def _forward_size(entry: Entry, sample: Sample, dtype: str) -> int:
    """Largest output of a gradsum forward (no grad): cheap probes for sizing."""
    with gradsum.no_grad():
        args, kwargs = convert(sample, "g", dtype, False)
        outs = flat_outputs(entry.op(*args, **kwargs))
    return _out_size(outs)


class Scaler:
    """Finds, for each target size, a scaled sample on which both libraries run."""

    def __init__(self, entry: Entry, dtype: str) -> None:
        self.entry, self.dtype = entry, dtype
        self.reason = ""
        self.base: Sample | None = None
        self.base_trial: Trial | None = None
        self.fits: dict[Scheme, list[tuple[int, int]]] = {}
        self.dead: set[Scheme] = set()
        if entry.build is not None:
            return
        errors = []
        samples = entry.samples(_rng())
        usable = [s for s in samples if _usable(s, entry.differentiable)]
        for sample in usable or samples:  # (none usable: time one as sampled)
            try:
                self.base_trial = try_sample(entry, sample, dtype, "as sampled")
                self.base = sample
                break
            except Exception as e:  # the next sample is tried
                errors.append(f"{type(e).__name__}: {e}")
        if self.base is None:
            self.reason = ("no usable sample" if not errors
                           else "every sample failed; first: " + errors[0][:120])

    def _k_for(self, scheme: Scheme, target: int) -> int | None:
        """Integer factor whose (estimated) size is nearest the target."""
        assert self.base is not None
        pts = self.fits.get(scheme)
        if pts is None:
            try:
                pts = [(k, _forward_size(self.entry, scale_sample(self.base, scheme, k),
                                         self.dtype)) for k in (1, 2)]
            except Exception:
                self.dead.add(scheme)
                return None
            self.fits[scheme] = pts
        (k1, s1), (k2, s2) = pts[-2], pts[-1]
        p = math.log(max(s2, 1) / max(s1, 1)) / math.log(k2 / k1) if k2 != k1 else 1.0
        p = max(p, 0.0)  # (the largest output's growth; the inputs' is exact)
        grows = (_input_size(scale_sample_shapes(self.base, scheme, 2))
                 > _input_size(self.base))
        if p < 0.5 and not grows:
            return None  # the scheme does not grow the work
        def est(k: int) -> float:
            inp = _input_size(scale_sample_shapes(self.base, scheme, k))
            return max(inp, s2 * (k / k2) ** p)

        lo, hi = 1, 2  # est(lo) < target <= est(hi), found by doubling then bisection
        while est(hi) < target:
            lo, hi = hi, hi * 2
            if hi > 1 << 40:
                return None
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if est(mid) < target else (lo, mid)
        return min((lo, hi), key=lambda k: abs(math.log(est(k) / target)))

    def at(self, target: int) -> Trial | None:
        """A trial at about ``target`` elements (within a factor 2), or None."""
        if self.entry.build is not None:
            try:
                return try_sample(self.entry, self.entry.build(target), self.dtype,
                                  "explicit builder")
            except CallTimeout as e:
                self.reason = f"not timed at this size: {e} (one forward + backward, both)"
                return None
            except Exception as e:
                self.reason = f"builder failed: {type(e).__name__}: {str(e)[:120]}"
                return None
        if self.base is None:
            return None
        errors = []
        for scheme in _schemes(self.entry.name):
            if scheme in self.dead or (scheme.shape_args and not _int_args(
                    self.base, scheme.shape_args)):
                continue
            try:
                k = self._k_for(scheme, target)
                if k is None or k < 2:
                    continue
                sample = scale_sample(self.base, scheme, k)
                out = _forward_size(self.entry, sample, self.dtype)
                self.fits[scheme].append((k, out))
                size = max(out, _input_size(sample))
                if not target / 2.5 <= size <= target * 2.5:
                    k2 = self._k_for(scheme, target)
                    if k2 is None or k2 < 2 or k2 == k:
                        continue
                    sample = scale_sample(self.base, scheme, k2)
                trial = try_sample(self.entry, sample, self.dtype, str(scheme))
                if target / 2.5 <= trial.size <= target * 2.5:
                    return trial
            except CallTimeout as e:
                self.reason = f"not timed at this size: {e} (one forward + backward, both)"
                return None
            except Exception as e:  # the next scheme is tried
                errors.append(f"{scheme}: {type(e).__name__}: {str(e)[:80]}")
                self.dead.add(scheme)
        self.reason = ("no scheme reaches the size" + (f"; first error: {errors[0]}"
                                                       if errors else ""))
        return None


def _int_args(sample: Sample, kind: str) -> bool:
    """Whether the sample has size-like arguments that a scheme of ``kind`` would scale."""
    probe = Scheme("all", True, False, kind)
    values = list(sample.args) + list(sample.kwargs.values())
    return any(not isinstance(v, (np.ndarray, Fixed, NoGrad, list))
               and _scale_int(v, probe, 2, True) != v for v in values)


def scale_sample_shapes(sample: Sample, scheme: Scheme, k: int) -> Sample:
    """Like :func:`scale_sample` for the shapes only (zeros; for sizing)."""
    state = {"first": True}

    def walk(v: Any) -> Any:
        if isinstance(v, (np.ndarray, NoGrad, Fixed)):
            arr, _, shape = _operand_shape(v, scheme, k, state)
            return np.broadcast_to(np.zeros((), arr.dtype), shape)
        if isinstance(v, (list, tuple)):
            return [walk(x) for x in v]
        return v

    return Sample(tuple(walk(a) for a in sample.args),
                  {key: walk(v) for key, v in sample.kwargs.items()})


# -- accuracy ----------------------------------------------------------------------------------
def ulp_error(out32: list[Any], ref64: list[Any]) -> float | None:
    """Max |out - ref| / spacing(float32(ref)) over the float32 outputs, finite refs only."""
    worst: float | None = None
    for o, r in zip(out32, ref64):
        if not isinstance(o, (gradsum.Tensor, torch.Tensor)) or not isinstance(r, torch.Tensor):
            continue
        a = o.detach().numpy() if isinstance(o, torch.Tensor) else np.asarray(o.detach().numpy())
        if a.dtype != np.float32 or r.dtype != torch.float64:
            continue
        ref = r.detach().numpy()
        if a.shape != ref.shape:
            continue
        ref32 = ref.astype(np.float32)
        ok = np.isfinite(ref) & np.isfinite(ref32)
        if not ok.any():
            continue
        unit = np.spacing(np.abs(ref32[ok])).astype(np.float64)
        err = np.abs(a[ok].astype(np.float64) - ref[ok]) / unit
        e = float(np.max(err)) if err.size else 0.0
        if not np.isfinite(a[ok]).all():
            e = math.inf
        worst = e if worst is None else max(worst, e)
    return worst


def accuracy(entry: Entry, sample: Sample) -> tuple[float | None, float | None]:
    """(gradsum's, torch's) float32 max ULP error against torch's float64 forward."""
    with torch.no_grad(), gradsum.no_grad():
        targs, tkw = convert(sample, "t", "float64", False)
        ref = flat_outputs(entry.ref(*targs, **tkw))
        gargs, gkw = convert(sample, "g", "float32", False)
        g = flat_outputs(entry.op(*gargs, **gkw))
        t32args, t32kw = convert(sample, "t", "float32", False)
        t = flat_outputs(entry.ref(*t32args, **t32kw))
    return ulp_error(g, ref), ulp_error(t, ref)


# -- the sweep ---------------------------------------------------------------------------------
@dataclass
class Row:
    name: str
    size: int = 0
    g: float | None = None
    t: float | None = None
    ulp: float | None = None
    ulp_t: float | None = None
    note: str = ""
    timed_here: bool = False

    @property
    def ratio(self) -> float | None:
        return None if self.g is None or self.t is None else self.g / self.t


@dataclass
class Settings:
    sizes: list[int]
    dtype: str = "float32"
    repeats: int | None = None
    quick: bool = False
    accuracy_size: int = 65536
    log: Callable[[str], None] = field(default=lambda s: None)


def _repeats(settings: Settings, size: int, per_call: float) -> tuple[int, int]:
    """(repeats, warmup) for one size: fewer at the large sizes and for slow calls."""
    if settings.repeats is not None:
        r = settings.repeats
    elif settings.quick:
        r = 3
    else:
        r = 7 if size <= 100_000 else 5
    if per_call > 0.2:  # slow calls: about 6 s of timing per entry and size at most
        r = max(1, min(r, 3, int(6.0 / (2 * per_call))))
    warmup = 0 if per_call > 0.02 else 1
    return max(1, r), warmup


def time_trial(trial: Trial, settings: Settings, size: int) -> tuple[float, float]:
    per_call = max(trial.t_g, trial.t_t)
    fast = max(1e-7, min(trial.t_g, trial.t_t))
    inner = max(1, min(2000, math.ceil(MIN_TIMING / fast)))
    repeats, warmup = _repeats(settings, size, per_call)
    res = time_interleaved({"g": trial.g.run, "t": trial.t.run}, repeats, warmup, inner,
                           clock=CLOCK["now"])
    return median(res["g"]), median(res["t"])


def sweep_entry(entry: Entry, settings: Settings) -> dict[int, Row]:
    """Rows for one entry, one per target size."""
    rows = {s: Row(entry.name, note=entry.note) for s in settings.sizes}
    try:
        scaler = Scaler(entry, settings.dtype)
    except Exception as e:
        for r in rows.values():
            r.note = f"not timed: {type(e).__name__}: {str(e)[:100]}"
        return rows
    reached: Trial | None = None
    last_call: float | None = None  # the slower library's median at the last size timed
    acc_trial: Trial | None = None
    for target in settings.sizes:
        row = rows[target]
        if reached is not None and last_call is not None:
            cubic = entry.name in BUILDERS or _schemes(entry.name) is not SCHEMES
            per_call = last_call
            predicted = per_call * (target / reached.size) ** (1.5 if cubic else 1.0)
            if predicted > MAX_CALL:
                scaler.reason = (f"skipped: one call predicted to take {predicted:.0f} s "
                                 f"(from {per_call:.2f} s at {reached.size} elements)")
                row.note = _join(row.note, scaler.reason)
                break
        try:
            trial = scaler.at(target)
        except Exception as e:
            trial, scaler.reason = None, f"{type(e).__name__}: {str(e)[:100]}"
        if trial is None:
            row.note = _join(row.note, scaler.reason)
            continue
        reached = trial
        if trial.size <= settings.accuracy_size * 2.5:
            acc_trial = trial
        try:
            row.g, row.t = time_trial(trial, settings, target)
            row.size, row.timed_here = trial.size, True
            last_call = max(row.g, row.t)
            row.note = _join(row.note, "" if trial.scheme == "explicit builder"
                             else f"scaled: {trial.scheme}")
        except Exception as e:
            row.note = _join(row.note, f"timing failed: {type(e).__name__}: {str(e)[:100]}")
        del trial
    if reached is None and scaler.base_trial is not None:
        # no target reached: time the sample as it is, reported in the first size's row
        trial = acc_trial = scaler.base_trial
        row = rows[settings.sizes[0]]
        try:
            row.g, row.t = time_trial(trial, settings, trial.size)
            row.size = trial.size
            row.note = _join(entry.note, f"timed at {trial.size} elements only "
                             f"(as sampled; {scaler.reason})")
        except Exception as e:
            row.note = _join(row.note, f"timing failed: {type(e).__name__}: {str(e)[:100]}")
    elif reached is not None:
        for target in settings.sizes:
            row = rows[target]
            if not row.timed_here and target > reached.size:
                row.note = _join(entry.note, f"largest size reached: {reached.size} "
                                 f"(timed there; {scaler.reason})")
    if settings.dtype == "float32" and acc_trial is not None:
        try:
            u, ut = accuracy(entry, acc_trial.sample)
        except Exception:
            u = ut = None
        for row in rows.values():
            row.ulp, row.ulp_t = u, ut
    return rows


def _join(a: str, b: str) -> str:
    return "; ".join(x for x in (a, b) if x)


def _fmt_ulp(u: float | None) -> str:
    if u is None:
        return ""
    if math.isinf(u):
        return "inf"
    return f"{u:.0f}" if u >= 10 else f"{u:.1f}"


def _fmt_size(n: int) -> str:
    if n >= 900_000:
        return f"{n / (1 << 20):.2f}M"
    if n >= 1000:
        return f"{n / 1024:.1f}K"
    return str(n)


def geomean(ratios: list[float]) -> float:
    return math.exp(sum(math.log(r) for r in ratios) / len(ratios)) if ratios else math.nan


def size_table(rows: list[Row], target: int) -> str:
    timed = [r for r in rows if r.timed_here and r.ratio is not None]
    elsewhere = [r for r in rows if not r.timed_here and r.ratio is not None]
    untimed = [r for r in rows if r.ratio is None]
    timed.sort(key=lambda r: -r.ratio)  # type: ignore[operator]
    elsewhere.sort(key=lambda r: -r.ratio)  # type: ignore[operator]
    lines = [f"### about {_fmt_size(target)} elements",
             "",
             f"Geometric mean of gradsum/torch over the {len(timed)} entries timed at this size: "
             f"**{geomean([r.ratio for r in timed]):.2f}**"  # type: ignore[misc]
             + (f"; {len(elsewhere)} timed only at a smaller size (below, not in the mean)"
                if elsewhere else "")
             + (f"; {len(untimed)} not timed (reasons below)" if untimed else "") + ".",
             "",
             "| op | elements | gradsum (median) | torch (median) | gradsum/torch | ULP | "
             "torch ULP | note |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in timed + elsewhere + untimed:
        g = fmt(r.g) if r.g is not None else ""
        t = fmt(r.t) if r.t is not None else ""
        ratio = f"{r.ratio:.2f}" if r.ratio is not None else "-"
        size = _fmt_size(r.size) if r.size else ""
        lines.append(f"| {r.name} | {size} | {g} | {t} | {ratio} | {_fmt_ulp(r.ulp)} | "
                     f"{_fmt_ulp(r.ulp_t)} | {r.note.replace('|', '/')} |")
    return "\n".join(lines)


def select(entries: list[Entry], names: str | None) -> list[Entry]:
    if not names:
        return entries
    table = opdb.by_name()
    want = [n.strip() for n in names.split(",") if n.strip()]
    out = []
    for n in want:
        if n in table and table[n].name != n:
            n = table[n].name
        hits = [e for e in entries if e.name == n]
        if not hits:
            raise SystemExit(f"no entry named {n!r}")
        out.extend(h for h in hits if h not in out)
    return out


def _count(text: str) -> int:
    """An element count: ``65536``, ``64K`` or ``1M`` (K = 1024, M = 1024 * 1024)."""
    text = text.strip().upper()
    scale = {"K": 1024, "M": 1024 * 1024}.get(text[-1:], 1)
    return int(float(text[:-1] if scale > 1 else text) * scale)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1024,65536,1048576",
                        help="target element counts, comma-separated (default 1K,64K,1M)")
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    parser.add_argument("--ops", default=None, help="entry names, comma-separated (default all)")
    parser.add_argument("--repeats", type=int, default=None,
                        help="timed repeats per size (default 7, 5 at 1M, at most 3 for slow "
                             "calls)")
    parser.add_argument("--quick", action="store_true", help="1K only, 3 repeats")
    parser.add_argument("--out", default=None, help="also write the markdown here")
    parser.add_argument("--clock", default="cpu", choices=["cpu", "wall"],
                        help="cpu: the process's CPU time (default; steady on a busy machine, "
                             "the same as wall time on a quiet one for one thread); wall")
    parser.add_argument("-v", "--verbose", action="store_true", help="progress on stderr")
    ns = parser.parse_args(argv)
    CLOCK["now"] = time.process_time if ns.clock == "cpu" else time.perf_counter
    sizes = [1024] if ns.quick else sorted(_count(s) for s in ns.sizes.split(","))
    log = (lambda s: print(s, file=sys.stderr, flush=True)) if ns.verbose else (lambda s: None)
    settings = Settings(sizes, ns.dtype, ns.repeats, ns.quick,
                        accuracy_size=min(65536, max(sizes)), log=log)
    entries = select(all_entries(), ns.ops)
    t0 = time.perf_counter()
    per_size: dict[int, list[Row]] = {s: [] for s in sizes}
    for i, entry in enumerate(entries):
        t1 = time.perf_counter()
        try:
            rows = sweep_entry(entry, settings)
        except Exception as e:  # listed with the reason, never dropped
            traceback.print_exc()
            rows = {s: Row(entry.name, note=f"not timed: {type(e).__name__}: {e}")
                    for s in sizes}
        for s in sizes:
            per_size[s].append(rows[s])
        log(f"[{i + 1}/{len(entries)}] {entry.name}: "
            + ", ".join(f"{rows[s].ratio:.2f}" if rows[s].ratio else "-" for s in sizes)
            + f" ({time.perf_counter() - t1:.1f} s)")
    header = [
        f"## Op sweep: {len(entries)} entries, {ns.dtype}, forward + backward, gradsum/torch",
        "",
        f"One thread ({threads_info()}); torch {torch.__version__}, NumPy {np.__version__}; "
        f"{time.perf_counter() - t0:.0f} s in all. Medians of interleaved timings "
        f"({'process CPU time' if ns.clock == 'cpu' else 'wall time'}); ULP: max "
        "error of the float32 forward against torch's float64 forward (at about "
        f"{_fmt_size(settings.accuracy_size)} elements).",
    ]
    parts = ["\n".join(header)]
    for s in sizes:
        parts.append(size_table(per_size[s], s))
    summary = ["### geometric means", "", "| size | entries timed | geometric mean |",
               "| --- | --- | --- |"]
    for s in sizes:
        rs = [r.ratio for r in per_size[s] if r.timed_here and r.ratio is not None]
        summary.append(f"| about {_fmt_size(s)} | {len(rs)} | {geomean(rs):.2f} |")  # type: ignore[arg-type]
    parts.append("\n".join(summary))
    text = "\n\n".join(parts) + "\n"
    print(text)
    if ns.out:
        with open(ns.out, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
