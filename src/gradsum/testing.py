"""``gradsum.testing``: torch.testing's :func:`assert_close` and :func:`make_tensor`.

``assert_close`` compares tensors, Python numbers and booleans, ``None``, and (possibly
nested) sequences and mappings of them with torch's default tolerances per dtype, torch's
error types and torch's message layout; ``make_tensor`` draws a tensor from gradsum's
generator with torch's value ranges and argument checks.

Example:
    >>> import gradsum
    >>> from gradsum.testing import assert_close, make_tensor
    >>> assert_close(gradsum.tensor([1.0, 2.0]), gradsum.tensor([1.0, 2.0 + 1e-7]))
    >>> try:
    ...     assert_close(gradsum.tensor([1.0, 2.5, 3.0]), gradsum.tensor([1.0, 2.0, 3.0]))
    ... except AssertionError as e:
    ...     print(e)
    Tensor-likes are not close!
    <BLANKLINE>
    Mismatched elements: 1 / 3 (33.3%)
    Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)
    Greatest relative difference: 0.25 at index (1,) (up to 1.3e-06 allowed)
    >>> make_tensor(2, 3, dtype=gradsum.int64, low=0, high=1).tolist()
    [[0, 0, 0], [0, 0, 0]]
"""

from __future__ import annotations

import cmath
import collections.abc
import contextlib
import math
import warnings
from collections.abc import Callable
from typing import Any, NoReturn

from gradsum import _device, _random
from gradsum import _dtype as D
from gradsum._backend import xp
from gradsum._tensor import Tensor

__all__ = ["assert_close", "make_tensor"]

# torch's {dtype: (rtol, atol)}; every other dtype compares exactly
_DTYPE_PRECISIONS: dict[str, tuple[float, float]] = {
    "float16": (0.001, 1e-5),
    "bfloat16": (0.016, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex32": (0.001, 1e-5),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}
# torch's dtypes of the Python number types (for their tolerances)
_TYPE_TO_DTYPE = {int: "int64", float: "float64", complex: "complex128"}


class _ErrorMeta(Exception):
    """An error found while comparing: its type, message and the item's path."""

    def __init__(self, type: type[Exception], msg: str, *, id: tuple[Any, ...] = ()) -> None:
        super().__init__(msg)
        self.type = type
        self.msg = msg
        self.id = id

    def to_error(self, msg: str | Callable[[str], str] | None = None) -> Exception:
        if not isinstance(msg, str):
            generated = self.msg
            if self.id:
                generated += ("\n\nThe failure occurred for item "
                              + "".join(str([item]) for item in self.id))
            msg = msg(generated) if callable(msg) else generated
        return self.type(msg)


class _Unsupported(Exception):
    """This pair type cannot handle the inputs: try the next one."""


def _tolerances(*dtype_names: str, rtol: float | None, atol: float | None,
                id: tuple[Any, ...]) -> tuple[float, float]:
    if (rtol is None) ^ (atol is None):
        raise _ErrorMeta(
            ValueError,
            "Both 'rtol' and 'atol' must be either specified or omitted, but got no "
            f"{'rtol' if rtol is None else 'atol'}.", id=id,
        )
    if rtol is not None and atol is not None:
        return rtol, atol
    rtols, atols = zip(*[_DTYPE_PRECISIONS.get(n, (0.0, 0.0)) for n in dtype_names])
    return max(rtols), max(atols)


def _mismatch_msg(*, identifier: str, extra: str, abs_diff: Any, abs_idx: Any, atol: float,
                  rel_diff: Any, rel_idx: Any, rtol: float) -> str:
    equality = rtol == 0 and atol == 0

    def diff_line(kind: str, diff: Any, idx: Any, tol: float) -> str:
        line = (f"{kind.title()} difference: {diff}" if idx is None
                else f"Greatest {kind} difference: {diff} at index {idx}")
        if not equality:
            line += f" (up to {tol} allowed)"
        return line + "\n"

    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        msg += f"{extra.strip()}\n"
    msg += diff_line("absolute", abs_diff, abs_idx, atol)
    msg += diff_line("relative", rel_diff, rel_idx, rtol)
    return msg.strip()


def _scalar_mismatch_msg(actual: Any, expected: Any, *, rtol: float, atol: float) -> str:
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg(identifier="Scalars", extra=f"Expected {expected} but got {actual}.",
                         abs_diff=abs_diff, abs_idx=None, atol=atol, rel_diff=rel_diff,
                         rel_idx=None, rtol=rtol)


def _tensor_mismatch_msg(a: Any, e: Any, matches: Any, *, rtol: float, atol: float) -> str:
    """torch's message for arrays ``a`` (actual) and ``e`` (expected) of one dtype."""
    n = int(matches.size)
    bad = n - int(matches.sum())
    extra = f"Mismatched elements: {bad} / {n} ({bad / n:.1%})"
    af, ef, mf = a.reshape(-1), e.reshape(-1), matches.reshape(-1)
    if a.dtype.kind not in "fc":
        af, ef = af.astype(xp.int64), ef.astype(xp.int64)
    with xp.errstate(all="ignore"):
        abs_diff = xp.abs(af - ef)
        abs_diff[mf] = 0
        # (an integer quotient is torch's default float dtype)
        rel_diff = abs_diff / xp.abs(ef)
        if a.dtype.kind not in "fc":
            rel_diff = rel_diff.astype(D.get_default_dtype().np)
    rel_diff[mf] = 0

    def greatest(v: Any) -> tuple[Any, tuple[int, ...]]:
        if v.dtype.kind in "fV" and xp.isnan(v).any():
            i = int(xp.argmax(xp.isnan(v)))  # (torch.max propagates NaN)
        else:
            i = int(xp.argmax(v))
        return v[i].item(), tuple(int(k) for k in xp.unravel_index(i, matches.shape))

    abs_val, abs_idx = greatest(abs_diff)
    rel_val, rel_idx = greatest(rel_diff)
    return _mismatch_msg(identifier="Tensor-likes", extra=extra, abs_diff=abs_val,
                         abs_idx=abs_idx, atol=atol, rel_diff=rel_val, rel_idx=rel_idx,
                         rtol=rtol)


class _Pair:
    def __init__(self, actual: Any, expected: Any, id: tuple[Any, ...]) -> None:
        self.actual, self.expected, self.id = actual, expected, id

    def _fail(self, type: type[Exception], msg: str) -> NoReturn:
        raise _ErrorMeta(type, msg, id=self.id)

    def compare(self) -> None:
        raise NotImplementedError


class _NonePair(_Pair):
    def __init__(self, actual: Any, expected: Any, id: tuple[Any, ...],
                 **options: Any) -> None:
        if not (actual is None or expected is None):
            raise _Unsupported
        super().__init__(actual, expected, id)

    def compare(self) -> None:
        if not (self.actual is None and self.expected is None):
            self._fail(AssertionError, f"None mismatch: {self.actual} is not {self.expected}")


class _BooleanPair(_Pair):
    def __init__(self, actual: Any, expected: Any, id: tuple[Any, ...],
                 **options: Any) -> None:
        if not all(isinstance(v, (bool, xp.bool_)) for v in (actual, expected)):
            raise _Unsupported
        super().__init__(bool(actual), bool(expected), id)

    def compare(self) -> None:
        if self.actual is not self.expected:
            self._fail(AssertionError,
                       f"Booleans mismatch: {self.actual} is not {self.expected}")


class _NumberPair(_Pair):
    def __init__(self, actual: Any, expected: Any, id: tuple[Any, ...], *,
                 rtol: float | None, atol: float | None, equal_nan: bool, check_dtype: bool,
                 **options: Any) -> None:
        kinds = (int, float, complex, xp.number)
        if not all(isinstance(v, kinds) and not isinstance(v, bool)
                   for v in (actual, expected)):
            raise _Unsupported
        actual, expected = (v.item() if isinstance(v, xp.number) else v
                            for v in (actual, expected))
        super().__init__(actual, expected, id)
        self.rtol, self.atol = _tolerances(
            *[_TYPE_TO_DTYPE[type(v)] for v in (actual, expected)], rtol=rtol, atol=atol,
            id=id)
        self.equal_nan, self.check_dtype = equal_nan, check_dtype

    def compare(self) -> None:
        a, e = self.actual, self.expected
        if self.check_dtype and type(a) is not type(e):
            self._fail(AssertionError,
                       f"The (d)types do not match: {type(a)} != {type(e)}.")
        if a == e:
            return
        if self.equal_nan and cmath.isnan(a) and cmath.isnan(e):
            return
        abs_diff = abs(a - e)
        if cmath.isfinite(abs_diff) and abs_diff <= self.atol + self.rtol * abs(e):
            return
        self._fail(AssertionError, _scalar_mismatch_msg(a, e, rtol=self.rtol, atol=self.atol))


class _TensorLikePair(_Pair):
    def __init__(self, actual: Any, expected: Any, id: tuple[Any, ...], *,
                 allow_subclasses: bool, rtol: float | None, atol: float | None,
                 equal_nan: bool, check_device: bool, check_dtype: bool, check_layout: bool,
                 check_stride: bool, **options: Any) -> None:
        related = isinstance(actual, type(expected)) or isinstance(expected, type(actual))
        if not related or (not allow_subclasses and type(actual) is not type(expected)):
            raise _Unsupported
        actual, expected = self._to_tensor(actual), self._to_tensor(expected)
        super().__init__(actual, expected, id)
        self.rtol, self.atol = _tolerances(actual.dtype.name, expected.dtype.name, rtol=rtol,
                                           atol=atol, id=id)
        self.equal_nan = equal_nan
        self.check_device, self.check_dtype = check_device, check_dtype
        self.check_layout, self.check_stride = check_layout, check_stride

    @staticmethod
    def _to_tensor(value: Any) -> Tensor:
        if isinstance(value, Tensor):
            return value
        try:
            arr = xp.asarray(value)
            D.from_numpy_dtype(arr.dtype)  # (a dtype gradsum has, else not a tensor-like)
            return Tensor._make(arr)
        except Exception:
            raise _Unsupported from None

    def _mismatch(self, name: str, a: Any, e: Any) -> NoReturn:
        self._fail(AssertionError,
                   f"The values for attribute '{name}' do not match: {a} != {e}.")

    def compare(self) -> None:
        a, e = self.actual, self.expected
        if tuple(a.shape) != tuple(e.shape):
            self._mismatch("shape", tuple(a.shape), tuple(e.shape))
        if self.check_stride and a.stride() != e.stride():
            self._mismatch("stride()", a.stride(), e.stride())
        if self.check_device and a.device != e.device:
            self._mismatch("device", a.device, e.device)
        if self.check_dtype and a.dtype != e.dtype:
            self._mismatch("dtype", a.dtype, e.dtype)
        aa, ea = a.detach()._array, e.detach()._array
        if aa.dtype != ea.dtype:
            common = D.promote_types(a.dtype, e.dtype).np
            aa, ea = aa.astype(common), ea.astype(common)
        with xp.errstate(all="ignore"):
            if aa.dtype.kind in "fV":
                # torch's isclose, computed in the tensors' dtype: equal values match (also
                # infinities), else a finite |a - e| within atol + rtol * |e|
                diff = xp.abs(aa - ea)
                tol = self.atol + xp.abs(self.rtol * ea)
                matches = (aa == ea) | (xp.isfinite(diff) & (diff <= tol))
                if self.equal_nan:
                    matches |= xp.isnan(aa) & xp.isnan(ea)
            else:
                a64, e64 = aa.astype(xp.float64), ea.astype(xp.float64)
                matches = (aa == ea) | (xp.abs(a64 - e64) <= self.atol + self.rtol * xp.abs(e64))
        matches = xp.asarray(matches, dtype=bool)
        if matches.all():
            return
        if aa.ndim == 0:
            msg = _scalar_mismatch_msg(aa.item(), ea.item(), rtol=self.rtol, atol=self.atol)
        else:
            msg = _tensor_mismatch_msg(aa, ea, matches, rtol=self.rtol, atol=self.atol)
        self._fail(AssertionError, msg)


_PAIR_TYPES = (_NonePair, _BooleanPair, _NumberPair, _TensorLikePair)


def _originate_pairs(actual: Any, expected: Any, id: tuple[Any, ...],
                     options: dict[str, Any]) -> list[_Pair]:
    seq = collections.abc.Sequence
    if (isinstance(actual, seq) and not isinstance(actual, str)
            and isinstance(expected, seq) and not isinstance(expected, str)):
        if len(actual) != len(expected):
            raise _ErrorMeta(AssertionError, "The length of the sequences mismatch: "
                             f"{len(actual)} != {len(expected)}", id=id)
        pairs: list[_Pair] = []
        for i in range(len(actual)):
            pairs.extend(_originate_pairs(actual[i], expected[i], (*id, i), options))
        return pairs
    mapping = collections.abc.Mapping
    if isinstance(actual, mapping) and isinstance(expected, mapping):
        actual_keys, expected_keys = set(actual.keys()), set(expected.keys())
        if actual_keys != expected_keys:
            raise _ErrorMeta(
                AssertionError,
                "The keys of the mappings do not match:\n"
                f"Missing keys in the actual mapping: {sorted(expected_keys - actual_keys)}\n"
                f"Additional keys in the actual mapping: {sorted(actual_keys - expected_keys)}",
                id=id,
            )
        keys: Any = actual_keys
        with contextlib.suppress(Exception):
            keys = sorted(keys)
        pairs = []
        for key in keys:
            pairs.extend(_originate_pairs(actual[key], expected[key], (*id, key), options))
        return pairs
    for pair_type in _PAIR_TYPES:
        try:
            return [pair_type(actual, expected, id, **options)]
        except _Unsupported:
            continue
    raise _ErrorMeta(
        TypeError,
        f"No comparison pair was able to handle inputs of type {type(actual)} and "
        f"{type(expected)}.", id=id,
    )


def assert_close(actual: Any, expected: Any, *, allow_subclasses: bool = True,
                 rtol: float | None = None, atol: float | None = None,
                 equal_nan: bool = False, check_device: bool = True, check_dtype: bool = True,
                 check_layout: bool = True, check_stride: bool = False,
                 msg: str | Callable[[str], str] | None = None) -> None:
    """Assert that ``actual`` and ``expected`` are close (torch.testing.assert_close).

    Elements match when ``|actual - expected| <= atol + rtol * |expected|`` (non-finite
    values only when equal; NaNs when ``equal_nan``). Without ``rtol``/``atol`` (give both or
    neither) the loosest default of the two dtypes applies: float16 (1e-3, 1e-5), float32
    (1.3e-6, 1e-5), float64 (1e-7, 1e-7), exact for the others; Python ``int``/``float``/
    ``complex`` count as int64/float64/complex128. Shapes must match; dtypes too unless
    ``check_dtype=False`` (then both are promoted); strides when ``check_stride``.
    Sequences and mappings are compared item by item.

    Raises:
        AssertionError: the values or attributes differ (torch's message; ``msg`` replaces it,
            or a callable gets the generated message and returns the one to raise).
        ValueError: only one of ``rtol``/``atol`` given.
        TypeError: no comparison handles the two inputs (a tensor and a number, for example).

    Example:
        >>> import gradsum
        >>> from gradsum.testing import assert_close
        >>> assert_close({"a": [1, 2.0]}, {"a": [1, 2.0]})
        >>> try:
        ...     assert_close([gradsum.zeros(2)], [gradsum.ones(2)], msg=lambda m: m[:24])
        ... except AssertionError as e:
        ...     print(e)
        Tensor-likes are not clo
    """
    options = dict(allow_subclasses=allow_subclasses, rtol=rtol, atol=atol,
                   equal_nan=equal_nan, check_device=check_device, check_dtype=check_dtype,
                   check_layout=check_layout, check_stride=check_stride)
    try:
        pairs = _originate_pairs(actual, expected, (), options)
    except _ErrorMeta as meta:
        raise meta.to_error() from None
    for pair in pairs:
        try:
            pair.compare()
        except _ErrorMeta as meta:
            raise meta.to_error(msg) from None


# -- make_tensor ----------------------------------------------------------------------------------
def make_tensor(*shape: Any, dtype: D.dtype, device: Any = None, low: float | None = None,
                high: float | None = None, requires_grad: bool = False,
                noncontiguous: bool = False, exclude_zero: bool = False) -> Tensor:
    """A tensor of ``shape`` and ``dtype`` with values drawn uniformly from ``[low, high)``
    by gradsum's generator (torch.testing.make_tensor).

    Defaults (torch's): bool [0, 2), integers [-9, 10) (unsigned [0, 10)), floats [-9, 9).
    ``low``/``high`` are clamped to the dtype's range (and rounded up for integers).
    ``noncontiguous`` returns a strided view (of a tensor twice as long in the last
    dimension); ``exclude_zero`` replaces zeros by 1 (bool, integers) or the dtype's
    smallest normal number (floats).

    Raises:
        ValueError: ``requires_grad`` for a bool or integer dtype; ``low``/``high`` NaN,
            ``low >= high``, or an interval outside the dtype's range.
        TypeError: a dtype it cannot make.

    Example:
        >>> import gradsum
        >>> from gradsum.testing import make_tensor
        >>> t = make_tensor((2, 3), dtype=gradsum.float32, low=-1, high=1, requires_grad=True)
        >>> t.shape, t.requires_grad, bool(((t >= -1) & (t < 1)).all())
        ((2, 3), True, True)
        >>> make_tensor(4, dtype=gradsum.float64, noncontiguous=True).is_contiguous()
        False
    """
    _device.check_factory(device, "make_tensor")
    if not isinstance(dtype, D.dtype):
        raise TypeError(f"make_tensor(): dtype must be a gradsum.dtype, not "
                        f"{type(dtype).__name__}")
    np_dtype = dtype.np
    kind = np_dtype.kind  # b, u, i, f
    is_int = kind in "bui"

    def modify_low_high(low: Any, high: Any, lowest: Any, highest: Any, d_low: Any,
                        d_high: Any) -> tuple[Any, Any]:
        low = low if low is not None else d_low
        high = high if high is not None else d_high
        if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
            raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and "
                             f"high={high}")
        if low == high and not is_int:
            warnings.warn(
                "Passing `low==high` to `torch.testing.make_tensor` for floating or complex "
                "types is deprecated since 2.1 and will be removed in 2.3. Use "
                "`torch.full(...)` instead.", FutureWarning, stacklevel=3)
        elif low >= high:
            raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
        elif high < lowest or low >= highest:
            raise ValueError(
                f"The value interval specified by `low` and `high` is [{low}, {high}), but "
                f"{dtype} only supports [{lowest}, {highest})")
        low = min(max(low, lowest), highest)
        high = min(max(high, lowest), highest)
        if is_int:
            return math.ceil(low), math.ceil(high)
        return low, high

    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = tuple(shape[0])
    shape = tuple(int(s) for s in shape)
    if requires_grad and is_int:
        raise ValueError("`requires_grad=True` is not supported for boolean and integral "
                         f"dtypes, but got dtype={dtype}")
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:
        shape = (*shape[:-1], 2 * shape[-1])
    r = _random.rng(None)
    if kind == "b":
        low, high = modify_low_high(low, high, 0, 2, 0, 2)
        arr = r.integers(low, high, shape).astype(np_dtype)
    elif kind in "ui":
        info = xp.iinfo(np_dtype)
        low, high = modify_low_high(low, high, int(info.min),
                                    int(info.max) + (1 if np_dtype != xp.int64 else 0), -9, 10)
        arr = r.integers(low, high, shape, dtype=xp.int64).astype(np_dtype)
    elif kind in "fV":
        finfo = xp.finfo(np_dtype)
        low, high = modify_low_high(low, high, float(finfo.min), float(finfo.max), -9, 9)
        if high - low >= float(finfo.max):
            arr = (r.uniform(low / 2, high / 2, shape).astype(np_dtype) * 2).astype(np_dtype)
        else:
            arr = r.uniform(low, high, shape).astype(np_dtype)
    else:
        raise TypeError(
            f"The requested dtype '{dtype}' is not supported by torch.testing.make_tensor().")
    if noncontiguous:
        arr = arr[..., 1::2]
    if exclude_zero:
        arr[arr == 0] = 1 if is_int else xp.finfo(np_dtype).tiny
    result = Tensor._make(arr)
    if not is_int and requires_grad:
        result.requires_grad_(True)
    return result

