"""The error function's kernels in float64: W. J. Cody's rational approximations.

NumPy has no ``erf``. These are the approximations of Cody's CALERF (Netlib SPECFUN; "Rational
Chebyshev approximations for the error function", Math. Comp. 23, 1969): ``x P(x^2)/Q(x^2)``
for ``|x| < 0.46875``, ``exp(-x^2) P(|x|)/Q(|x|)`` for erfc up to 4 and
``exp(-x^2)/|x| (1/sqrt(pi) + R(1/x^2))`` beyond, each evaluated with Horner's rule in
in-place NumPy passes. Against a 40-digit reference (mpmath) erf is within 3 units in the last
place of float64 and erfc within 6. A result to be rounded to float32 (or narrower) takes
shorter rules, fitted here for it (``_F32_*``, minimax on Chebyshev nodes against mpmath):
``x P5(x^2)`` below 0.5 (relative error 1.2e-11) and ``exp(-x^2) P5(|x|)/Q5(|x|)`` for erfc
on [0.5, 4] (4.1e-12), so the rounded result is correctly rounded except within 2e-4 units of
a tie, as from the float64 rules (half the passes). The small and middle rules both run
on every element (each on its argument clamped to its region) and the result is selected on
the bits: a mask's compress and scatter cost NumPy more than a rule; only the rare elements
beyond 4 (exact results) are picked by index for the large rule. Inputs of more than
:data:`BLOCK` elements go block by block, so the float64 temporaries stay in cache.

Example:
    >>> from gradsum._backend import xp
    >>> from gradsum.ops._erf import erf64, erfc64
    >>> [round(v, 12) for v in erf64(xp.array([0.0, 0.5, -2.0])).tolist()]
    [0.0, 0.520499877813, -0.995322265019]
    >>> f"{erfc64(xp.array([10.0]))[0]:.10g}"
    '2.088487584e-45'
"""

from __future__ import annotations

import math
import threading
from typing import Any

from gradsum._backend import cpu_features, xp

_A = (3.16112374387056560e00, 1.13864154151050156e02, 3.77485237685302021e02,
      3.20937758913846947e03, 1.85777706184603153e-1)
_B = (2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03,
      2.84423683343917062e03)
_C = (5.64188496988670089e-1, 8.88314979438837594e00, 6.61191906371416295e01,
      2.98635138197400131e02, 8.81952221241769090e02, 1.71204761263407058e03,
      2.05107837782607147e03, 1.23033935479799725e03, 2.15311535474403846e-8)
_D = (1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02,
      1.62138957456669019e03, 3.29079923573345963e03, 4.36261909014324716e03,
      3.43936767414372164e03, 1.23033935480374942e03)
_P = (3.05326634961232344e-1, 3.60344899949804439e-1, 1.25781726111229246e-1,
      1.60837851487422766e-2, 6.58749161529837803e-4, 1.63153871373020978e-2)
_Q = (2.56852019228982242e00, 1.87295284992346725e00, 5.27905102951428412e-1,
      6.05183413124413191e-2, 2.33520497626869185e-3)
_SQRPI = 5.6418958354775628695e-1  # 1 / sqrt(pi)
_SQRT1_2 = 0.70710678118654752440
#: the bounds of Cody's three regions
_SMALL, _BIG = 0.46875, 4.0
#: the rules for a float32 result: erf(x)/x in x^2 on [0, 0.5], erfc(x) exp(x^2) on [0.5, 4]
_F32_SMALL_BOUND = 0.5
_F32_S = (1.1283791670823047, -0.37612638521015324, 0.11283773849176124,
          -0.02686312394423244, 0.005200324716133157, -0.0007693093055705272)
_F32_P = (1.000000386883123, 1.143375700595592, 0.6401189265448549, 0.1881050287459174,
          0.024996869831699742, -2.534487306147707e-07)
_F32_Q = (1.0, 2.2717593751489615, 2.20350071721782, 1.1550625694793124, 0.3335977874469034,
          0.04429227507292279)


_SCRATCH = threading.local()
#: the most elements a kept scratch buffer holds (8 MB in float64; 12 slots are used)
_SCRATCH_MAX = 1 << 20


def _scratch(slot: int, shape: tuple[int, ...], dt: Any = xp.float64) -> Any:
    """A temporary of ``shape`` (float64 unless ``dt``), one per ``slot`` and thread: the
    same memory at each call (a fresh 512 KB temporary is page-faulted on every call where
    glibc returns freed memory to the system, which costs more than the pass that fills
    it)."""
    n = 1
    for d in shape:
        n *= d
    if n > _SCRATCH_MAX:  # (not kept: a large array's pass costs more than its page faults)
        return xp.empty(shape, dtype=dt)
    bufs = getattr(_SCRATCH, "bufs", None)
    if bufs is None:
        bufs = _SCRATCH.bufs = {}
    key = (slot, dt)
    buf = bufs.get(key)
    if buf is None or buf.size < n:
        buf = bufs[key] = xp.empty(max(n, 256), dtype=dt)
    return buf[:n].reshape(shape)


def _small_f32(z: Any, s: Any = None, num: Any = None) -> Any:
    """erf(z) for |z| < 0.5, to 1.2e-11 relative (odd: the sign of z kept); ``s`` and
    ``num``: buffers for ``z * z`` and the result."""
    s = xp.multiply(z, z, out=s)
    num = xp.multiply(s, _F32_S[5], out=num)
    for c in _F32_S[4:0:-1]:
        num += c
        num *= s
    num += _F32_S[0]
    num *= z
    return num


def _ratio_f32(y: Any, p: tuple[float, ...], q: tuple[float, ...], num: Any = None,
               den: Any = None) -> tuple[Any, Any]:
    """The float32 rules' rational function ``P(y) / Q(y)`` of degree 5 (``Q``'s constant
    term 1), in the buffers ``num`` (the result) and ``den``."""
    num = xp.multiply(y, p[5], out=num)
    den = xp.multiply(y, q[5], out=den)
    for i in range(4, 0, -1):
        num += p[i]
        num *= y
        den += q[i]
        den *= y
    num += p[0]
    den += 1.0
    num /= den
    return num, den


def _mid_f32(y: Any, num: Any = None, den: Any = None) -> Any:
    """erfc(y) for 0.5 <= y <= 4, to 4.1e-12 relative; ``num`` and ``den``: buffers (the
    result in ``num``)."""
    num, den = _ratio_f32(y, _F32_P, _F32_Q, num, den)
    xp.multiply(y, y, out=den)  # exp(-y*y), into den
    xp.negative(den, out=den)
    xp.exp(den, out=den)
    num *= den
    return num


def _small(z: Any) -> Any:
    """erf(z) for |z| < 0.46875 (odd: the sign of z kept)."""
    num = _ratio(z * z, _A, _B)
    num *= z
    return num


def _ratio(s: Any, p: tuple[float, ...], q: tuple[float, ...]) -> Any:
    """Cody's rational function of ``s`` (numerator ``p``, one coefficient more than the
    monic denominator's ``q``, lowest but one first, as his tables list them), in new arrays
    updated in place."""
    k = len(q) - 1
    num = s * p[k + 1]
    den = s.copy()
    for i in range(k):
        num += p[i]
        num *= s
        den += q[i]
        den *= s
    num += p[k]
    den += q[k]
    num /= den
    return num


def _exp_msq(y: Any, exact: bool) -> Any:
    """``exp(-y*y)``; ``exact``: without the rounding error of ``y*y`` (Cody's split
    ``y = h + l``, h a multiple of 1/16: ``exp(-h*h) exp(-(y-h)(y+h))``), which matters for
    a float64 erfc (relative error ``y**2 * eps`` otherwise, 1e-14 at 10)."""
    if not exact:
        e = y * y
        xp.negative(e, out=e)
        return xp.exp(e, out=e)
    h = y * 16.0
    xp.trunc(h, out=h)
    h *= 0.0625
    d = y - h
    d *= y + h
    xp.negative(d, out=d)
    xp.exp(d, out=d)
    h *= h
    xp.negative(h, out=h)
    xp.exp(h, out=h)
    h *= d
    return h


def _mid(y: Any, exact: bool) -> Any:
    """erfc(y) for 0.46875 <= y <= 4."""
    num = _ratio(y, _C, _D)
    num *= _exp_msq(y, exact)
    return num


def _large(y: Any, exact: bool) -> Any:
    """erfc(y) for y > 4 (0 at inf)."""
    with xp.errstate(divide="ignore", over="ignore", invalid="ignore", under="ignore"):
        s = y * y
        xp.reciprocal(s, out=s)
        num = _ratio(s, _P, _Q)
        num *= s
        xp.subtract(_SQRPI, num, out=num)
        num /= y
        num *= _exp_msq(y, exact)
        if exact:  # (the split gives inf - inf at inf)
            xp.copyto(num, 0.0, where=xp.isinf(y))
    return num


def _with_tail(y: Any, r: Any, exact: bool) -> Any:
    """``r`` (erfc of ``y`` clamped to 4) with Cody's large rule where ``y > 4`` (rare in
    practice: its elements are picked by index)."""
    idx = xp.flatnonzero(y > _BIG)
    if idx.size:
        r.flat[idx] = _large(y.flat[idx], exact)
    return r


def _parts(z: Any, exact: bool, tail: bool) -> tuple[Any, Any, Any]:
    """``(y, small, r)`` for a float64 array ``z``: ``y = |z|``, ``small`` the small rule's
    erf of ``z`` clamped to its region, ``r`` erfc of ``y`` clamped to the middle region
    (``tail``: with the large rule beyond it). Both rules run on every element and the caller
    selects (``where``): a boolean mask's compress and scatter cost NumPy more than a rule.
    Not ``exact``: in the thread's scratch buffers 1 to 5 (``z`` may be buffer 0)."""
    if exact:
        y = xp.abs(z)
        small = _small(xp.clip(z, -_SMALL, _SMALL))
        r = _mid(xp.clip(y, _SMALL, _BIG), True)
    else:
        shape = z.shape
        b = _F32_SMALL_BOUND
        y = xp.abs(z, out=_scratch(1, shape))
        zs = xp.clip(z, -b, b, out=_scratch(2, shape))
        small = _small_f32(zs, _scratch(3, shape), _scratch(4, shape))
        yc = xp.clip(y, b, _BIG, out=zs)
        r = _mid_f32(yc, _scratch(5, shape), _scratch(3, shape))
    if tail:
        r = _with_tail(y, r, exact)
    return y, small, r


def _as_z(x: Any, exact: bool, scale: float = 1.0) -> Any:
    """``x * scale`` as a float64 array of at least one dimension (in scratch buffer 0 when
    not ``exact``)."""
    x = xp.atleast_1d(xp.asarray(x))
    if exact:
        z = xp.asarray(x, dtype=xp.float64)
        return z * scale if scale != 1.0 else z
    z = _scratch(0, x.shape)
    if scale == 1.0:  # (a widening copy: 3x faster than a multiply that casts)
        xp.copyto(z, x)
        return z
    return xp.multiply(x, scale, out=z, dtype=xp.float64)


def _negative_part(z: Any, exact: bool) -> tuple[Any, Any]:
    """``(z < 0)`` as 0.0 and 1.0, and a buffer of the same shape (scratch 2 and 3 when not
    ``exact``: free once :func:`_parts` has returned)."""
    if exact:
        return (z < 0).astype(xp.float64), xp.empty_like(z)
    neg = _scratch(2, z.shape)
    xp.less(z, 0, out=neg, casting="unsafe")
    return neg, _scratch(3, z.shape)


_I64 = xp.dtype(xp.int64)


def _where_below(y: Any, bound: float, a: Any, b: Any, out: Any = None) -> Any:
    """``where(y < bound, a, b)`` for float64 arrays of one shape, in ``out`` (a new array
    when None), chosen on the bits (``b ^ ((a ^ b) & mask)``): NumPy's where branches per
    element, twice as slow on a mixed mask."""
    m = xp.less(y, bound).view(xp.int8)
    xp.negative(m, out=m)  # (0 or -1)
    mask = _scratch(9, y.shape, _I64)
    xp.copyto(mask, m)  # (sign-extended: 0 or all ones)
    if out is None:
        out = xp.empty(y.shape, xp.float64)
    oi, bi = out.view(_I64), b.view(_I64)
    xp.bitwise_xor(a.view(_I64), bi, out=oi)
    oi &= mask
    oi ^= bi
    return out


#: elements per block of the float32-result kernels: a 1M-element input in blocks whose
#: float64 temporaries stay in cache (measured: twice as fast as whole-array passes from memory)
BLOCK = 1 << 16


def _by_blocks(fn: Any, x: Any) -> Any:
    """``fn(x, False)`` (a float64 result of x's shape) block by block of :data:`BLOCK`
    elements: the same operations on each element, the same bits."""
    flat = xp.asarray(x).reshape(-1)
    out = xp.empty(flat.size, xp.float64)
    for s in range(0, flat.size, BLOCK):
        fn(flat[s:s + BLOCK], False, _out=out[s:s + BLOCK])
    return out.reshape(xp.shape(x))


def erf64(x: Any, exact: bool = True, _out: Any = None) -> Any:
    """erf of an array, computed and returned in float64 (nan stays nan). ``exact=False``
    for a result that is rounded to float32 (or narrower): the shorter rules, and beyond 4
    (where erf rounds to +-1) the middle rule with the argument clamped. ``_out``: a float64
    array of x's shape for the result (a block's slice of the whole result)."""
    if not exact and xp.size(x) > BLOCK:
        return _by_blocks(erf64, x)
    z = _as_z(x, exact)
    with xp.errstate(invalid="ignore"):
        y, small, r = _parts(z, exact, exact)
        xp.subtract(1.0, r, out=r)
        xp.copysign(r, z, out=r)
        return _where_below(y, _SMALL if exact else _F32_SMALL_BOUND, small, r,
                            _out).reshape(xp.shape(x))


def erfc64(x: Any, exact: bool = True, _out: Any = None) -> Any:
    """erfc of an array, computed and returned in float64 (2 at -inf, 0 at inf, nan at nan);
    ``_out`` as for :func:`erf64`."""
    if not exact and xp.size(x) > BLOCK:
        return _by_blocks(erfc64, x)
    z = _as_z(x, exact)
    with xp.errstate(invalid="ignore"):
        y, small, r = _parts(z, exact, True)
        xp.subtract(1.0, small, out=small)
        # 2 - r where z < 0 (a masked ufunc branches per element: as products of 0 and 1)
        neg, t = _negative_part(z, exact)
        xp.multiply(neg, -2.0, out=t)
        t += 1.0
        r *= t
        neg *= 2.0
        r += neg
        return _where_below(y, _SMALL if exact else _F32_SMALL_BOUND, small, r,
                            _out).reshape(xp.shape(x))


def gelu_cdf64(x: Any, exact: bool = True) -> Any:
    """The standard normal CDF ``0.5 erfc(-x / sqrt(2))`` of an array, in float64, accurate
    in the lower tail (no ``1 + erf`` cancellation)."""
    z = _as_z(x, exact, -_SQRT1_2)
    with xp.errstate(invalid="ignore"):
        y, small, r = _parts(z, exact, True)
        small *= -0.5
        small += 0.5
        # r / 2, and 1 - r / 2 where z < 0 (x > 0: the upper half), as products of 0 and 1
        # (exact scalings: the same roundings as the two formulas)
        neg, t = _negative_part(z, exact)
        xp.subtract(0.5, neg, out=t)
        r *= t
        r += neg
        return _where_below(y, _SMALL if exact else _F32_SMALL_BOUND, small, r).reshape(
            xp.shape(x))


#: erfc(y) exp(y^2) on [0, 10] as P5(y)/Q5(y) (relative error 2.1e-9; about 4e-7 evaluated in
#: float32), for the float32 normal CDF
_G32_P = (1.000000001995067, 1.1856046430355116, 0.6785889504698179, 0.20466912675838406,
          0.027875462023469848, -5.725544479013849e-08)
_G32_Q = (1.0, 2.3139840261415334, 2.2896365582820346, 1.2265417333127542, 0.3628500870078698,
          0.04940357435753479)
_F32 = xp.dtype(xp.float32)
#: whether NumPy's float64 ``exp`` runs vectorised on this CPU (its AVX-512 loop; elsewhere
#: it is the C library's, one element at a time, several times slower than float32's)
EXP64_VECTORISED = bool(cpu_features().get("AVX512F"))


def gelu_parts_f32(x: Any) -> tuple[Any, Any]:
    """``(cdf(x), exp(-x*x/2))`` for a float32 array of at least one dimension, in float32
    (scratch buffers: use them before the next call). One rule for every x, no select: with
    ``y = |x| / sqrt(2)`` and ``q = exp(-x*x/2) erfcx(y) / 2``, the CDF is ``q`` below 0 and
    ``1 - q`` above (neither cancels). ``exp(-x*x/2)`` is computed in float64 where NumPy's
    float64 exp is vectorised (:data:`EXP64_VECTORISED`), else as ``exp(-h*h/2)
    exp(-(|x|-h)(|x|+h)/2)`` with h a multiple of 1/16 (h*h exact): either way the rounding of
    ``x*x`` does not grow with x. Max error of ``x * cdf(x)`` against a float64 reference on
    [-14, 10]: 7.5 units in the last place with the float64 exp, 9 with the split (in the
    lower tail: NumPy's float32 exp and the float32 rational), fewer elsewhere."""
    sh = x.shape
    a = xp.abs(x, out=_scratch(10, sh, _F32))
    lo, t = _scratch(12, sh, _F32), _scratch(13, sh, _F32)
    if EXP64_VECTORISED:
        # exp(-x*x/2) in float64: x*x exact there, NumPy's exp vectorised (half the passes
        # of the split below, and correctly rounded in float32 but for ties)
        w = _scratch(14, sh)
        xp.copyto(w, x)
        w *= w
        w *= -0.5
        with xp.errstate(under="ignore"):
            xp.exp(w, out=w)
        e = _scratch(11, sh, _F32)
        xp.copyto(e, w, casting="same_kind")
    else:
        xp.clip(a, -xp.inf, 20.0, out=a)  # (exp(-200) is 0 in float32; no inf - inf)
        # in units of 1/16 (exact scalings: the same roundings): k = 16 h, 16 |x| - k,
        # 16 |x| + k
        a16 = xp.multiply(a, 16.0, out=lo)
        h = xp.rint(a16, out=_scratch(11, sh, _F32))
        xp.add(a16, h, out=t)
        lo -= h
        lo *= t
        lo *= -0.5 / 256
        with xp.errstate(under="ignore"):
            xp.exp(lo, out=lo)
            h *= h
            h *= -0.5 / 256
            xp.exp(h, out=h)
            h *= lo
        e = h
    y = a
    y *= _SQRT1_2
    xp.clip(y, -xp.inf, 10.0, out=y)  # (minimum, or clip without a lower bound: 2x slower)
    num, den = _ratio_f32(y, _G32_P, _G32_Q, lo, t)
    num *= e
    num *= 0.5
    # cdf = q (2 neg - 1) + (1 - neg), neg = (x < 0) in 0 and 1: q below 0, 1 - q above
    neg = xp.less(x, 0, out=den, casting="unsafe")
    f = xp.multiply(neg, 2.0, out=y)
    f -= 1.0
    num *= f
    xp.subtract(1.0, neg, out=neg)
    num += neg
    return num, e


#: elements per block of :func:`gelu_f32` (measured at 1M: 12% faster than whole-array passes;
#: smaller blocks pay more in calls than they save in memory traffic)
GELU_BLOCK = 1 << 17
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def gelu_f32(x: Any, want_deriv: bool) -> tuple[Any, Any]:
    """``(x * cdf(x), gelu'(x) or None)`` for a float32 array of at least one dimension, with
    ``gelu'(x) = exp(-x*x/2) x / sqrt(2 pi) + cdf(x)`` from :func:`gelu_parts_f32`; a
    C-contiguous one of more than :data:`GELU_BLOCK` elements block by block (the same
    operations on each element: the same bits)."""
    if x.size <= GELU_BLOCK or not x.flags.c_contiguous:
        return _gelu_f32_into(x, None, want_deriv, None)
    flat = x.reshape(-1)
    out = xp.empty(flat.size, _F32)
    deriv = xp.empty(flat.size, _F32) if want_deriv else None
    for s in range(0, flat.size, GELU_BLOCK):
        _gelu_f32_into(flat[s:s + GELU_BLOCK], out[s:s + GELU_BLOCK], want_deriv,
                       None if deriv is None else deriv[s:s + GELU_BLOCK])
    return out.reshape(x.shape), None if deriv is None else deriv.reshape(x.shape)


def _gelu_f32_into(x: Any, out: Any, want_deriv: bool, deriv: Any) -> tuple[Any, Any]:
    """:func:`gelu_f32` on whole arrays, into ``out`` and ``deriv`` (new arrays when None)."""
    phi, e = gelu_parts_f32(x)
    out = xp.multiply(x, phi, out=out)
    if not want_deriv:
        return out, None
    d = xp.multiply(e, x, out=deriv)
    d *= _INV_SQRT_2PI
    d += phi
    return out, d
