"""Fused multiply-add, correctly rounded, on NumPy: the arithmetic of torch's vectorised CPU
kernels.

torch's AVX2 and AVX-512 kernels (the ones every x86-64 CPU of the last decade runs; NEON
on ARM is fused too) compute ``x.add_(y, alpha=a)`` as ``fma(a, y, x)``: the exact value of
``x + a * y`` rounded once. NumPy has no fused multiply-add, and ``x + a * y`` rounds twice
(the product, then the sum), which differs from torch in the last bit of about one element
in five, and by more where the sum cancels. These functions give the once-rounded result,
bit for bit, without hardware FMA:

- **float32** (and float16, which torch computes in float32): the product of two float32
  numbers is exact in float64, so ``s = x + a * y`` in float64 is the exact value rounded
  once to 53 bits. Rounding ``s`` to 24 bits gives the fused result except when ``s`` lands
  exactly on a float32 rounding boundary (a tie): only there can the first rounding have
  decided the second. Those elements (about one in 2**28 of random data) are redone with
  *round to odd* (the sum's exact error, from TwoSum, moves ``s`` off the tie towards the
  exact value), which makes the double rounding exact (Boldo and Melquiond, "Emulation of
  FMA and correctly rounded sums: proved algorithms using rounding to odd", 2008).
- **float64**: Dekker's exact product (Veltkamp splitting) and TwoSum give the exact value as
  ``th + tl + pl``; ``z = th + RO(tl + pl)``, the low parts added with round to odd, is the
  correctly rounded result (the same paper's emulated FMA). The round to odd is needed only
  where ``th + RN(tl + pl)`` lands on a midpoint, which a test of the low bits of
  ``RN(tl + pl)`` finds (see ``_fma64``): about 20 NumPy passes, into reused scratch arrays.

Limits, stated where the docs promise bits: float64 elements whose product underflows
(``|a * y| < 2**-969``) may be off by one unit in the last place; non-finite results are
NumPy's (``inf``, ``nan``) as torch's are.

Example:
    >>> from gradsum._backend import silenced, xp
    >>> from gradsum._fma import fma
    >>> x = xp.array([1.0, 2.0], dtype=xp.float32)
    >>> fma(0.5, xp.array([2.0, 4.0], dtype=xp.float32), x).tolist()
    [2.0, 4.0]
"""

from __future__ import annotations

import functools
import math
import threading
from typing import Any

from gradsum._backend import silenced, xp

_f16, _f32, _f64 = xp.dtype("float16"), xp.dtype("float32"), xp.dtype("float64")
_i64, _u64 = xp.dtype("int64"), xp.dtype("uint64")
_ndarray = xp.ndarray

#: the low 29 bits of a float64 below a float32's last place, and their value at a float32
#: tie (exactly half a float32 ulp): the only float64 sums whose rounding to float32 can
#: differ from the exact value's (normal float32 range)
_LOW29 = (1 << 29) - 1
_TIE = 1 << 28
#: float32 results below 2**-126 in magnitude are subnormal, where ties sit on other bits:
#: every such element but zero takes the exact path. The bound on ``(bits << 1) - 2`` as
#: unsigned 32-bit integers (the smallest normal float32's bits, doubled)
_u32 = xp.dtype("uint32")
_TINY_BITS = xp.uint32((0x00800000 << 1) - 2)
#: Veltkamp's splitting constant for float64 (2**27 + 1)
_SPLIT = 134217729.0


class _Scratch(threading.local):
    """The kernels' temporaries, per thread: reused from call to call (a fresh multi-megabyte
    temporary page-faults on every call, which made a 131072-element float64 update 100 times
    slower than its arithmetic)."""

    def __init__(self) -> None:
        self.bufs: dict[tuple[int, Any], Any] = {}


_SCRATCH = _Scratch()


#: elements below which a kernel's temporaries are fresh arrays (as cheap as reused ones)
_SCRATCH_MIN = 1 << 15


def _scratch(slot: int, shape: tuple[int, ...], n: int, dt: Any = _f64) -> Any:
    """A temporary array of ``shape`` (``n`` elements) and dtype ``dt``, one per ``slot``: the
    same memory at each call, overwritten freely (the kernels finish with it before they
    return). None below :data:`_SCRATCH_MIN` elements: ``out=None``, a fresh array."""
    if n < _SCRATCH_MIN:
        return None
    bufs = _SCRATCH.bufs
    key = (slot, dt)
    buf = bufs.get(key)
    if buf is None or buf.size < n:
        buf = bufs[key] = xp.empty(max(n, 256), dtype=dt)
    return buf[:n].reshape(shape)


def _round_to_odd(s: Any, err: Any) -> Any:
    """``s`` (float64, the rounded sum) moved one unit towards the exact value where it is
    inexact (``err != 0``) and its last bit is even: the sum rounded to odd."""
    bits = s.view(_i64)
    fix = (err != 0) & ((bits & 1) == 0)
    if fix.any():
        towards = xp.where((err > 0) == (s > 0), 1, -1)
        bits = bits + xp.where(fix, towards, 0)
    return bits.view(_f64)


def _two_sum_err(p: Any, c: Any, s: Any) -> Any:
    """The exact error of ``s = p + c`` (Knuth's TwoSum): ``p + c == s + err`` exactly."""
    bb = s - p
    return (p - (s - bb)) + (c - bb)


#: ``(bits << 35)`` of a float64 whose low 29 bits are a float32 tie: the least int64
_TIE_SHIFTED = xp.int64(-(1 << 63))
#: the smallest normal float32, 2**-126
_TINY = xp.float32(2.0**-126)
#: the minimum of an array, all axes: the ufunc's own reduce (``ndarray.min`` adds a Python
#: wrapper)
_MIN = functools.partial(xp.minimum.reduce, axis=None)


@silenced  # (torch warns of no overflow or nan)
def _fma32(a: Any, x: Any, y: Any, out: Any = None) -> Any:
    """``RN32(a * x + y)`` for float32 operands (``a`` a scalar or an array), as a float32
    array of the broadcast shape: ``out`` (a float32 array of that shape, written and
    returned) or a fresh one."""
    # (x has the result's shape. Each operand is cast to float64 on its own first: NumPy's
    # mixed-dtype loops, multiply(x, a, dtype=float64), take twice as long.)
    shape = x.shape
    n = x.size
    s = _scratch(0, shape, n)
    if s is None:  # (small: each NumPy call costs more than its pass, so fewer calls)
        s = x.astype(_f64)
        s *= a.astype(_f64) if a.ndim else float(a)  # exact: 24 + 24 bits fit in 53
        s += y if y.ndim else float(y)  # rounded once, to 53 bits (y cast exactly)
    else:  # (large: NumPy's mixed-dtype loops are buffered, twice as slow as two passes)
        s[...] = x
        s *= a.astype(_f64) if a.ndim else float(a)
        if y.ndim:
            t = _scratch(1, shape, n)
            t[...] = y
            s += t
        else:
            s += float(y)
    if out is None:
        out = s.astype(_f32)
    else:
        xp.copyto(out, s, casting="same_kind")
    if not n:
        return out
    # The subnormal float32 results, 0 < |out| < 2**-126: first the smallest magnitude (a
    # zero or a nan result fails this test too), then the bits without the sign, where 0
    # wraps past the bound.
    twice = None
    if not _MIN(xp.abs(out, out=_scratch(3, shape, n, _f32))) >= _TINY:
        twice = xp.left_shift(out.view(_u32), 1, out=_scratch(3, shape, n, _u32))
        twice -= 2
    tiny = twice is not None and _MIN(twice) < _TINY_BITS
    if not a.ndim and abs(math.frexp(float(a))[0]) in (0.5, 0.0):
        # a power of two (or zero): a * x is a float32 number (24 bits; a subnormal result is
        # tested above), and the double rounding of the sum of two such numbers through
        # float64 (53 >= 2 * 24 + 2 bits) is the correct rounding (Figueroa, "When is double
        # rounding innocuous?", 1995): no tie to redo
        shifted = None
        suspicious = tiny
    else:
        # the float64 sums on a float32 tie: their low 29 bits are 2**28, shifted to the top
        # the least int64 (so the minimum says whether there is one)
        shifted = xp.left_shift(s.view(_i64), 35, out=_scratch(2, shape, n, _i64)).reshape(-1)
        suspicious = tiny or _MIN(shifted) == _TIE_SHIFTED
    if suspicious:
        suspect = shifted == _TIE_SHIFTED if shifted is not None else None
        if tiny:
            low = (twice < _TINY_BITS).reshape(-1)
            suspect = low if suspect is None else suspect | low
        idx = xp.nonzero(suspect)
        p = xp.multiply(xp.broadcast_to(x, shape).reshape(-1)[idx],
                        xp.broadcast_to(a, shape).reshape(-1)[idx], dtype=_f64)
        c = xp.broadcast_to(y, shape).reshape(-1)[idx].astype(_f64)
        ss = p + c
        flat = out.reshape(-1)
        flat[idx] = _round_to_odd(ss, _two_sum_err(p, c, ss)).astype(_f32)
        out = flat.reshape(shape)
    return out


def _split(v: Any) -> tuple[Any, Any]:
    """Veltkamp's split of float64 ``v`` into a 26-bit high part and the rest (exact)."""
    t = v * _SPLIT
    hi = t - (t - v)
    return hi, v - hi


#: the bits of a float64 below its four leading significant ones
_LOW48 = (1 << 48) - 1


@silenced
def _fma64(a: Any, x: Any, y: Any) -> Any:
    """``RN64(a * x + y)`` for float64 operands, as a float64 array of the broadcast shape.

    The exact value is ``th + tl + pl`` (``ph + pl == a * x`` by Dekker's product, ``th + tl ==
    y + ph`` by TwoSum, ``|tl + pl| <= 1.5 ulp(th)``), and ``z = th + RO(tl + pl)`` its correct
    rounding (Boldo and Melquiond). ``th + RN(tl + pl)`` is the same number unless it lands
    exactly on a midpoint of the doubles near ``th`` (rounding to nearest and to odd keep the
    sum on the same side of every midpoint, which is a double offset from ``th``): then
    ``v = RN(tl + pl)`` is such an offset, a power of two times 1, 1.5 (or another number of
    at most four significant bits), which a test of ``v``'s low bits finds. Only those elements
    are redone with round to odd."""
    # (x has the result's shape)
    shape = x.shape
    n = x.size
    ph = xp.multiply(a, x, out=_scratch(4, shape, n))
    ah, al = _split(float(a) if a.ndim == 0 else a)  # (a number: the same arithmetic)
    w0, w1 = _scratch(0, shape, n), _scratch(1, shape, n)
    t = xp.multiply(x, _SPLIT, out=w0)  # Veltkamp's split of x: xh, xl (exact)
    xh = xp.subtract(t, xp.subtract(t, x, out=w1), out=w1)
    xl = xp.subtract(x, xh, out=w0)
    # pl = ((ah * xh - ph) + ah * xl + al * xh) + al * xl: ph + pl == a * x exactly
    pl = xp.multiply(ah, xh, out=_scratch(2, shape, n))
    pl -= ph
    w3 = _scratch(3, shape, n)
    pl += xp.multiply(ah, xl, out=w3)
    pl += xp.multiply(al, xh, out=w3)
    pl += xp.multiply(al, xl, out=w3)
    th = xp.add(y, ph, out=w0)
    # tl = the error of th (TwoSum): (ph - (th - bb)) + (y - bb), bb = th - ph
    bb = xp.subtract(th, ph, out=w1)
    tl = xp.subtract(ph, xp.subtract(th, bb, out=w3), out=w3)
    tl += xp.subtract(y, bb, out=w1)
    v = xp.add(tl, pl, out=w1)
    z = th + v
    low = xp.left_shift(v.view(_u64), 16, out=_scratch(5, shape, n, _u64))
    if n and low.min() == 0:  # (v has at most four significant bits somewhere: zero or a tie)
        idx = xp.nonzero(((low == 0) & (v != 0)).reshape(-1))
        if idx[0].size:
            pl_s, tl_s = pl.reshape(-1)[idx], tl.reshape(-1)[idx]
            v_s = tl_s + pl_s
            v_s = _round_to_odd(v_s, _two_sum_err(pl_s, tl_s, v_s))
            z.reshape(-1)[idx] = th.reshape(-1)[idx] + v_s
    if not xp.isfinite(z.sum()):
        bad = ~xp.isfinite(z)
        if bad.any():  # (overflow in the split or the product: NumPy's inf/nan, as torch's)
            z = xp.where(bad, a * x + y, z)
    return xp.asarray(z, dtype=_f64)


def _fma_kernel(dt: Any) -> Any:
    """The elementwise kernel for floating dtype ``dt``, or None (not a float32/64/16)."""
    if dt == _f32:
        return _fma32
    if dt == _f64:
        return _fma64
    if dt == _f16:
        return lambda a, x, y: _fma32(a, x, y).astype(_f16)
    return None


#: elements per chunk of a large fused update: the float64 temporaries of one chunk stay in
#: the CPU's cache and their memory is reused (a fresh multi-megabyte temporary page-faults)
CHUNK = 1 << 16


def fma(a: Any, x: Any, y: Any) -> Any:
    """``a * x + y`` rounded once, elementwise, in the dtype of ``y`` (a floating array):
    the bits of torch's ``y + alpha * x`` (``add``/``sub`` with ``alpha``, ``addcmul``,
    ``lerp``) on its AVX2/AVX-512 kernels. ``a`` is a number (taken in ``y``'s dtype, as torch
    converts ``alpha``) or an array; ``x`` an array of ``y``'s dtype. Other dtypes (integers,
    complex) get NumPy's ``a * x + y``.

    Example:
        >>> from gradsum._backend import silenced, xp
        >>> x = xp.float32(1 + 2**-23)  # the product's low bits survive only when fused
        >>> y = xp.array([-(1 + 2**-22)], dtype=xp.float32)
        >>> float(fma(x, xp.array([x]), y)[0]) == 2.0**-46
        True
    """
    if (a.__class__ is float and x.__class__ is y.__class__ is _ndarray and x.dtype == _f32
            and y.dtype == _f32 and x.shape == y.shape and x.size <= 2 * CHUNK):
        return _fma32(_f32.type(a), x, y)  # (the common call, a float32 update: at once)
    y = xp.asarray(y)
    dt = y.dtype
    kernel = _fma_kernel(dt)
    if kernel is None:
        return xp.asarray(a * x + y).astype(dt, copy=False)
    op = _f64 if dt == _f64 else _f32  # (torch computes float16 in float32)
    # (a number is first taken in y's dtype, as torch converts alpha)
    a = a.astype(op, copy=False) if hasattr(a, "astype") else op.type(dt.type(a))
    x = xp.asarray(x, dtype=op)
    if x.shape == y.shape and not a.ndim:
        shape, size = x.shape, x.size
    else:
        shape = xp.broadcast_shapes(a.shape, x.shape, y.shape)
        size = 1
        for n in shape:
            size *= n
    if size <= 2 * CHUNK:
        if x.shape != shape:  # (the kernels write into an array of the product's shape)
            x = xp.broadcast_to(x, shape)
        return xp.asarray(kernel(a, x, y.astype(op, copy=False)), dtype=dt)
    out = xp.empty(shape, dtype=dt)
    if (x.shape == y.shape == shape and x.flags.c_contiguous and y.flags.c_contiguous
            and (not a.ndim or (a.shape == shape and a.flags.c_contiguous))):
        # (the common case, flat slices: NumPy's buffered iterator takes several times longer;
        # float32 chunks rounded straight into the result's slices)
        fo, fx, fy = out.reshape(-1), x.reshape(-1), y.reshape(-1)
        fa = a.reshape(-1) if a.ndim else a
        direct = kernel is _fma32
        for i in range(0, size, CHUNK):
            j = i + CHUNK
            ca, cy = fa[i:j] if a.ndim else a, fy[i:j].astype(op, copy=False)
            if direct:
                kernel(ca, fx[i:j], cy, fo[i:j])
            else:
                fo[i:j] = kernel(ca, fx[i:j], cy)
        return out
    it = xp.nditer([a, x, y, out], flags=["external_loop", "buffered", "zerosize_ok"],
                   op_flags=[["readonly"]] * 3 + [["writeonly"]],
                   op_dtypes=[op, op, op, dt], buffersize=CHUNK, casting="same_kind")
    with it:
        for ca, cx, cy, co in it:
            co[...] = kernel(ca, cx, cy)
    return out


def fma_(a: Any, x: Any, y: Any) -> None:
    """``y[...] = fma(a, x, y)``: in place, into ``y``'s buffer."""
    y[...] = fma(a, x, y)


def lerp(start: Any, end: Any, weight: Any, where: Any = None) -> Any:
    """torch's ``start.lerp(end, weight)`` on its vectorised CPU kernels: from the nearer end,
    fused, ``fma(w, end - start, start)`` where ``|w| < 0.5`` and ``fma(w - 1, end - start,
    end)`` elsewhere (so ``weight == 1`` gives ``end`` exactly). ``weight``: a number or an
    array, in ``start``'s dtype. For an array weight each element's operands are picked
    first, then one fused pass: ``where(cond, a, b)`` picks them (NumPy's by default; the ops
    layer passes its select on the bits, the same values in fewer cycles).

    Example:
        >>> from gradsum._backend import silenced, xp
        >>> lerp(xp.array([0.0, 10.0]), xp.array([10.0, 20.0]), 0.25).tolist()
        [2.5, 12.5]
    """
    start = xp.asarray(start)
    dt = start.dtype
    w = weight.astype(dt) if hasattr(weight, "astype") else dt.type(weight)
    diff = xp.subtract(end, start, dtype=dt)
    if xp.ndim(w) == 0:
        return fma(w, diff, start) if abs(w) < 0.5 else fma(w - 1, diff, end)
    shape = xp.broadcast_shapes(start.shape, xp.shape(end), w.shape)
    low = xp.broadcast_to(xp.abs(w) < 0.5, shape)
    pick = xp.where if where is None else where
    # (the fused step is elementwise: one pass on the picked operands gives each element the
    # value of its own branch)
    a = pick(low, xp.broadcast_to(w, shape), xp.broadcast_to(w - 1, shape))
    base = pick(low, xp.broadcast_to(start, shape), xp.broadcast_to(end, shape).astype(dt))
    return xp.asarray(fma(a, xp.broadcast_to(diff, shape), base)).astype(dt, copy=False)


def addcmul(input: Any, value: Any, t1: Any, t2: Any) -> Any:
    """torch's ``input.addcmul(t1, t2, value=value)`` on its vectorised CPU kernels:
    ``fma(value * t1, t2, input)`` (the scaled factor rounded, then one fused step), in
    the operands' result dtype (a floating one).

    Example:
        >>> from gradsum._backend import silenced, xp
        >>> addcmul(xp.ones(2), 0.5, xp.array([2.0, 3.0]), xp.array([4.0, 5.0])).tolist()
        [5.0, 8.5]
    """
    dt = xp.result_type(input, t1, t2)
    scaled = xp.multiply(t1, dt.type(value), dtype=dt)
    return fma(scaled, xp.asarray(t2, dtype=dt), xp.asarray(input, dtype=dt))


__all__ = ["addcmul", "fma", "fma_", "lerp"]
