"""The error-function family: ``erf``, ``erfc``, ``erfinv``, ``erfcx``, and the normal
distribution's ``ndtr``, ``ndtri``, ``log_ndtr``.

Example:
    >>> import gradsum
    >>> x = gradsum.tensor([0.0, 1.0], dtype=gradsum.float64)
    >>> [round(v, 6) for v in gradsum.erf(x).tolist()]
    [0.0, 0.842701]
"""

from __future__ import annotations

import math
from typing import Any

import gradsum.ops as F
from gradsum import _dtype as D
from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.autograd.grad_mode import _state
from gradsum.autograd.graph import Node
from gradsum.ops._core import (
    _make,
    needs_grad,
    record,
    register,
    require_tensor,
)
from gradsum.ops._erf import _C as _ERF_C
from gradsum.ops._erf import _D as _ERF_D
from gradsum.ops._erf import _F32_P as _ERF_F32_P
from gradsum.ops._erf import _F32_Q as _ERF_F32_Q
from gradsum.ops._erf import _F32_SMALL_BOUND as _ERF_F32_SMALL_BOUND
from gradsum.ops._erf import _P as _ERF_P
from gradsum.ops._erf import _Q as _ERF_Q
from gradsum.ops._erf import _SMALL as _ERF_SMALL
from gradsum.ops._erf import _ratio as _erf_ratio
from gradsum.ops._erf import _scratch, erf64, erfc64
from gradsum.ops._erf import _small as _erf_small
from gradsum.ops._erf import _small_f32 as _erf_small_f32
from gradsum.ops._scipy_special import kernel as _scipy_kernel
from gradsum.ops.arithmetic import _ERR, _unary, _unary_float
from gradsum.ops.pointwise import _F64, _PI, _back, _f64, _float_in

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


class ErfBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        if not _state.enabled:  # (nothing to record: the rule on arrays, the same values)
            (xa,) = self.saved_arrays()
            ga = g._array
            if ga.dtype is xa.dtype and xa.dtype.kind == "f" and xa.dtype.itemsize >= 4 and xa.ndim:
                return _make(_erf_grad(ga, xa))
        (a,) = self.saved()
        return F.mul(g, F.mul(F.exp(F.neg(F.mul(a, a))), _TWO_OVER_SQRT_PI))


def _erf_grad(ga: Any, xa: Any) -> Any:
    """``g * (exp(-(x * x)) * 2/sqrt(pi))`` in place (the recorded rule's operations)."""
    e = xa * xa
    xp.negative(e, out=e)
    xp.exp(e, out=e)
    e *= _TWO_OVER_SQRT_PI
    xp.multiply(ga, e, out=e)
    return e


def _erf_array(x: Any) -> Any:
    """erf in float64 (Cody's rational approximations, :mod:`gradsum.ops._erf`): to a few
    units of float64 for a float64 ``x``, with the shorter rules that suffice for a correctly
    rounded result for a narrower ``x``."""
    return erf64(x, exact=xp.asarray(x).dtype.itemsize >= 8)


@register("erf", method=True)
def erf(a: Tensor) -> Tensor:
    """The error function."""
    x = _unary_float(a)
    out = _erf_array(x).astype(x.dtype, copy=False)
    return _unary(a, out, ErfBackward0, "input")


# == float64 kernels ===========================================================================
def _erfc_array(x: Any) -> Any:
    """erfc in float64 (Cody's rational approximations, :mod:`gradsum.ops._erf`: within a
    few units of float64 for a float64 ``x``, the shorter rules that suffice for a correctly
    rounded result for a narrower ``x``), 2 at -inf, 0 at inf."""
    return erfc64(x, exact=xp.asarray(x).dtype.itemsize >= 8)


_ERFINV_STEPS = 1


def _erfinv_array(y: Any) -> Any:
    """erfinv in float64: Giles' single-precision approximation, then Newton steps on erf
    (on erfc in the tails, where ``1 - |y|`` is exact): four with float64 erf/erfc for a
    float64 ``y``; for a narrower one (rounded to float32 or less) one, with the erf kernels'
    float32-result rules (a step squares the relative error of Giles' 4e-7, times at most x;
    the erf rules are good to 1e-11): 0.5002 units of float32 at most, as with four."""
    exact = xp.asarray(y).dtype.itemsize >= 8
    y = _f64(y)
    ay = xp.abs(y)
    with xp.errstate(**_ERR):
        w = -xp.log((1.0 - ay) * (1.0 + ay))
        c = w < 5.0
        wc = w - 2.5
        p1 = 2.81022636e-08
        for k in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                  -0.00125372503, -0.00417768164, 0.246640727, 1.50140941):
            p1 = k + p1 * wc
        wt = xp.sqrt(xp.maximum(w, 5.0)) - 3.0
        p2 = -0.000200214257
        for k in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                  -0.0076224613, 0.00943887047, 1.00167406, 2.83297682):
            p2 = k + p2 * wt
        x = xp.where(c, p1, p2) * ay
        fin = ay < 1.0
        x = xp.where(fin, x, 0.0)
        q = 1.0 - ay
        tail = ay > 0.5
        lq = xp.log(q)
        for _ in range(4 if exact else _ERFINV_STEPS):
            d = 2.0 / math.sqrt(_PI) * xp.exp(-x * x)
            ec = erfc64(x, exact)
            # tails: Newton on log(erfc(x)) = log(1 - |y|), nearly linear there
            step = xp.where(tail, (lq - xp.log(ec)) * ec / d, (erf64(x, exact) - ay) / d)
            x = xp.where(fin, x - step, x)
        x = xp.where(fin, x, xp.where(ay == 1.0, xp.inf, xp.nan))
        out = xp.copysign(x, y)
    return xp.where(xp.isnan(y), xp.nan, out)


#: Giles' coefficients: the centre (``w < 5``, in ``w - 2.5``) and the tails (in ``sqrt(w) - 3``)
_GILES_C = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
            -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_GILES_T = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
            -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)
_F32_F64 = (xp.dtype(xp.float32), _F64)


def _horner_into(p: Any, t: Any, coefs: tuple[float, ...]) -> Any:
    """``coefs[0] t^n + ... + coefs[n]`` by Horner's rule, in place in ``p``."""
    xp.multiply(t, coefs[0], out=p)
    for k in coefs[1:-1]:
        p += k
        p *= t
    p += coefs[-1]
    return p


#: erfinv(y) / y for a float32 result as a polynomial (degree 16, highest power first) in
#: ``u = w / 2.5 - 1``, ``w = -log(1 - y^2)`` on ``w < 5`` (``|y| < 0.9966``): a least-squares
#: fit on 800 Chebyshev nodes against mpmath, relative error 1.2e-13 (Giles' variable; his
#: degree-8 single-precision polynomial is good to 4e-7 there, hence the Newton step it needs)
_ERFINV_F32 = (-1.1294731145662777e-08, -3.360499916395455e-08, 2.057094743751644e-07,
               7.595346542346607e-08, -1.8589712300876266e-06, 2.9048210578461556e-06,
               8.655347349264356e-06, -4.14594298355105e-05, 2.0471592722030478e-05,
               0.00029219874252766405, -0.0008341354943202928, -0.00048789966325482473,
               0.008525400937140395, -0.019573560970095712, -0.026108235776897696,
               0.6166006918585678, 1.5014093511107884)


def _erfinv_narrow(y: Any) -> Any:
    """erfinv of a float32 (or narrower) array, returned in its dtype: ``y P(w)`` in float64
    (``_ERFINV_F32``, no Newton step) in scratch buffers, rounded once into the result; the
    tails past ``w = 5`` (``|y| > 0.9966``, and ``|y| >= 1``, nan) on their elements only,
    by :func:`_erfinv_array` (Giles' guess and a Newton step on ``log erfc``). Max error
    against mpmath 0.5 units of float32 (as that path's everywhere)."""
    sh = xp.shape(y)
    if xp.size(y) > 1 << 17:  # (in blocks: the scratch buffers stay in cache; the same values)
        flat = xp.ravel(y)
        res = xp.empty(flat.shape, dtype=flat.dtype)
        for i in range(0, flat.size, 1 << 15):
            res[i:i + (1 << 15)] = _erfinv_narrow(flat[i:i + (1 << 15)])
        return res.reshape(sh)
    y1 = xp.atleast_1d(y)
    s1 = y1.shape
    ay = xp.abs(y1, out=_scratch(60, s1), dtype=_F64)
    with xp.errstate(**_ERR):
        q = xp.subtract(1.0, ay, out=_scratch(61, s1))
        w = xp.add(ay, 1.0, out=_scratch(62, s1))
        w *= q
        xp.log(w, out=w)
        xp.negative(w, out=w)
        far = xp.flatnonzero(~(w < 5.0))  # (the tails, |y| >= 1 and nan: rare)
        w *= 0.4
        w -= 1.0
        x = _horner_into(_scratch(63, s1), w, _ERFINV_F32)
        x *= ay
        out = xp.copysign(x, y1, out=xp.empty(s1, dtype=y1.dtype), casting="same_kind")
        if far.size:
            out.flat[far] = _erfinv_array(y1.flat[far]).astype(y1.dtype)
    return out.reshape(sh)


class ErfcBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        if not _state.enabled:  # (nothing to record: the rule on arrays, the same values)
            (xa,) = self.saved_arrays()
            ga = g._array
            if ga.dtype is xa.dtype and xa.dtype.kind == "f" and xa.dtype.itemsize >= 4 and xa.ndim:
                e = xa * xa
                xp.negative(e, out=e)
                xp.exp(e, out=e)
                e *= -2.0 / math.sqrt(_PI)
                return _make(xp.multiply(ga, e, out=e))
        (a,) = self.saved()
        return F.mul(g, F.mul(F.exp(F.neg(F.mul(a, a))), -2.0 / math.sqrt(_PI)))


@register("erfc", method=True, inplace="erfc_")
def erfc(input: Tensor) -> Tensor:
    """The complementary error function ``1 - erf(x)``, accurate in the tails.

    Example:
        >>> import gradsum
        >>> x = gradsum.tensor([0.0, 10.0], dtype=gradsum.float64)
        >>> [f"{v:.10g}" for v in gradsum.erfc(x).tolist()]
        ['1', '2.088487584e-45']
    """
    x = _float_in(input)
    return _unary(input, _back(_erfc_array(x), x), ErfcBackward0, "input")


class ErfinvBackward0(Node):
    #: ``res``: a copy of the forward's result (erfinv of the saved input, not recomputed
    #: when no graph is recorded)
    __slots__ = ("res",)

    def backward(self, g: Tensor) -> Tensor:
        if not _state.enabled:  # (nothing to record: the same products on arrays)
            (aa,) = self.saved_arrays()
            ga = g._array
            if aa.dtype == ga.dtype and aa.shape == ga.shape and aa.dtype in _F32_F64:
                res = getattr(self, "res", None)
                with xp.errstate(**_ERR):
                    e = xp.asarray(res * res) if res is not None else (
                        _erfinv_narrow(aa) if aa.dtype.itemsize < 8 else _erfinv_array(aa))
                    if res is None:
                        e *= e
                    xp.exp(e, out=e)
                    t = xp.multiply(ga, 0.5 * math.sqrt(_PI))
                    t *= e
                return _make(xp.asarray(t))
        (a,) = self.saved()
        e = erfinv(a)
        return F.mul(F.mul(g, 0.5 * math.sqrt(_PI)), F.exp(F.mul(e, e)))


@register("erfinv", method=True, inplace="erfinv_")
def erfinv(input: Tensor) -> Tensor:
    """The inverse error function on ``[-1, 1]`` (+-inf at +-1, nan outside).

    Example:
        >>> import gradsum
        >>> [round(v, 12) for v in gradsum.erfinv(gradsum.tensor([0.0, 0.5],
        ...                                                      dtype=gradsum.float64)).tolist()]
        [0.0, 0.476936276204]
    """
    x = _float_in(input)
    out = _erfinv_narrow(x) if x.dtype.itemsize < 8 else _back(_erfinv_array(x), x)
    t = _unary(input, out, ErfinvBackward0, "input")
    node = t._grad_fn
    if node.__class__ is ErfinvBackward0:
        node.res = xp.array(out)  # (a copy: the result may be changed in place)
    return t

_SQRT_PI = math.sqrt(math.pi)
_SQRT_2PI = math.sqrt(2.0 * math.pi)
_SQRT1_2 = math.sqrt(0.5)


def _back_quiet(out: Any, x: Any) -> Any:
    with xp.errstate(**_ERR):  # (a float64 result beyond float32's range rounds to inf)
        return xp.asarray(out).astype(x.dtype, copy=False)


#: the block (elements) a long series runs over at a time: its buffers stay in cache
_BLOCK = 1 << 14
#: the size from which a whole kernel runs in blocks (below it, one pass each is cheaper)
_BLOCK_MIN = 1 << 18


def _blocked(fn: Any, x: Any, coeffs: tuple[float, ...]) -> Any:
    """``fn(x, coeffs)`` over blocks of ``_BLOCK`` elements of a long ``x`` (each pass of a
    long series then runs in cache, not through memory), the same values."""
    flat = xp.ravel(x)
    first = fn(flat[:_BLOCK], coeffs)
    out = xp.empty(flat.shape, dtype=first.dtype)
    out[:_BLOCK] = first
    for i in range(_BLOCK, flat.size, _BLOCK):
        out[i:i + _BLOCK] = fn(flat[i:i + _BLOCK], coeffs)
    return out.reshape(xp.shape(x))


def _kernel_blocks(fn: Any, x: Any) -> Any:
    """``fn(x)``, an elementwise float64 kernel, over blocks of ``_BLOCK`` elements of a long
    ``x`` (its temporaries then stay in cache), the same values."""
    flat = xp.ravel(x)
    out = xp.empty(flat.shape, dtype=xp.float64)
    for i in range(0, flat.size, _BLOCK):
        out[i:i + _BLOCK] = fn(flat[i:i + _BLOCK])
    return out.reshape(xp.shape(x))


def _poly(x: Any, coeffs: tuple[float, ...]) -> Any:
    """Horner, highest power first (Cephes' ``polevl``)."""
    if xp.size(x) > 4 * _BLOCK:
        return _blocked(_poly, x, coeffs)
    acc = xp.asarray(xp.zeros_like(x) + coeffs[0])
    for c in coeffs[1:]:  # (in place: the same roundings as acc * x + c)
        acc *= x
        acc += c
    return acc
_NDTRI_P0 = (-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
             1.39312609387279679503E1, -1.23916583867381258016E0)
_NDTRI_Q0 = (1.0, 1.95448858338141759834E0, 4.67627912898881538453E0, 8.63602421390890590575E1,
             -2.25462687854119370527E2, 2.00260212380060660359E2, -8.20372256168333339912E1,
             1.59056225126211695515E1, -1.18331621121330003142E0)
_NDTRI_P1 = (4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
             4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
             -1.40256079171354495875E-1, -3.50424626827848203418E-2, -8.57456785154685413611E-4)
_NDTRI_Q1 = (1.0, 1.57799883256466749731E1, 4.53907635128879210584E1, 4.13172038254672030440E1,
             1.50425385692907503408E1, 2.50464946208309415979E0, -1.42182922854787788574E-1,
             -3.80806407691578277194E-2, -9.33259480895457427372E-4)
_NDTRI_P2 = (3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
             1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2,
             3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9)
_NDTRI_Q2 = (1.0, 6.02427039364742014255E0, 3.67983563856160859403E0, 1.37702099489081330271E0,
             2.16236993594496635890E-1, 1.34204006088543189037E-2, 3.28014464682127739104E-4,
             2.89247864745380683936E-6, 6.79019408009981274425E-9)


def _erfcx_ratio(y: Any, exact: bool) -> Any:
    """``exp(y^2) erfc(y)`` for ``y`` in the erf kernels' middle region (clamped to it by the
    caller): the rational function of their erfc rule, without its ``exp(-y^2)`` (Cody's for
    a float64 result, the float32-result rule otherwise), in place in a new array."""
    p, q = (_ERF_C, _ERF_D) if exact else (_ERF_F32_P, _ERF_F32_Q[1:])
    n = len(q)
    num = y * p[n]
    den = y.copy() if exact else y * q[n - 1]
    for i in range(n - 1):
        num += p[i] if exact else p[n - 1 - i]
        num *= y
        den += q[i] if exact else q[n - 2 - i]
        den *= y
    num += p[n - 1] if exact else p[0]
    den += q[n - 1] if exact else 1.0
    num /= den
    return num


def _erfcx_large(y: Any) -> Any:
    """``exp(y^2) erfc(y)`` beyond the middle region (Cody's rule for erfc above 4 without its
    ``exp(-y^2)``; 0 at inf)."""
    s = y * y
    xp.reciprocal(s, out=s)
    num = _erf_ratio(s, _ERF_P, _ERF_Q)
    num *= s
    xp.subtract(1.0 / _SQRT_PI, num, out=num)
    num /= y
    return num


def _erfcx_array(x: Any) -> Any:
    """``exp(x^2) erfc(x)`` in float64: ``exp(x^2) (1 - erf(x))`` below the erf kernels'
    small bound, the rational functions of their erfc rules without the ``exp(-x^2)`` above
    (Cody's large rule beyond 4, on those elements only), ``2 exp(x^2) - erfcx(-x)`` for
    negative x (inf below -26.7); the float32-result rules for a narrower ``x``. The regions
    are blended with products of 0 and 1 (no select)."""
    exact = xp.asarray(x).dtype.itemsize >= 8
    shape = xp.shape(x)
    if xp.size(x) > _BLOCK_MIN:  # (in blocks, in cache; the same values)
        return _kernel_blocks(_erfcx_array, x)
    x = xp.atleast_1d(_f64(x))
    ax = xp.abs(x)
    with xp.errstate(**_ERR):
        bound = _ERF_SMALL if exact else _ERF_F32_SMALL_BOUND
        ys = xp.minimum(ax, bound)
        e = ys * ys
        xp.exp(e, out=e)
        small = _erf_small(ys) if exact else _erf_small_f32(ys)
        xp.subtract(1.0, small, out=small)
        small *= e
        xp.clip(ax, bound, 4.0, out=ys)
        pos = _erfcx_ratio(ys, exact)
        far = xp.flatnonzero(ax > 4.0)
        if far.size:
            pos.flat[far] = _erfcx_large(ax.flat[far])
        lo = xp.less(ax, bound, out=e, casting="unsafe")
        small *= lo
        xp.subtract(1.0, lo, out=lo)
        pos *= lo
        pos += small
        # x < 0: 2 exp(x^2) - erfcx(|x|) (exp(0) elsewhere: no inf times 0)
        xn = xp.minimum(x, 0.0, out=ys)
        xn *= xn
        xp.exp(xn, out=xn)
        xn *= 2.0
        xn -= pos
        neg = xp.less(x, 0.0, out=lo, casting="unsafe")
        xn *= neg
        xp.subtract(1.0, neg, out=neg)
        pos *= neg
        pos += xn
    return pos.reshape(shape)


@_scipy_kernel("ndtri")
def _ndtri_array(y0: Any) -> Any:
    """Cephes' ``ndtri``: a rational function of ``y - 1/2`` in the centre and of
    ``1 / sqrt(-2 log y)`` in the tails."""
    if xp.size(y0) > _BLOCK_MIN:  # (in blocks, in cache; the same values)
        return _kernel_blocks(_ndtri_array, y0)
    y0 = _f64(y0)
    with xp.errstate(**_ERR):
        hi = y0 > 1.0 - 0.13533528323661269189
        y = xp.where(hi, 1.0 - y0, y0)
        yc = y - 0.5
        y2 = yc * yc
        centre = (yc + yc * (y2 * _poly(y2, _NDTRI_P0) / _poly(y2, _NDTRI_Q0))) * _SQRT_2PI
        out = xp.atleast_1d(centre)
        # the tails on their elements only (picked by index; the same steps per element)
        idx = xp.flatnonzero(~(y > 0.13533528323661269189))
        if idx.size:
            yi, y0i = y.flat[idx], y0.flat[idx]
            yt = xp.clip(yi, 1e-300, 1.0)
            t = xp.sqrt(-2.0 * xp.log(yt))
            x0 = t - xp.log(t) / t
            z = 1.0 / t
            x1 = xp.where(t < 8.0, z * _poly(z, _NDTRI_P1) / _poly(z, _NDTRI_Q1),
                          z * _poly(z, _NDTRI_P2) / _poly(z, _NDTRI_Q2))
            tail = x0 - x1
            tail = xp.where(hi.flat[idx], tail, -tail)
            tail = xp.where(y0i == 0.0, -xp.inf, xp.where(y0i == 1.0, xp.inf, tail))
            out.flat[idx] = xp.where((y0i < 0) | (y0i > 1) | xp.isnan(y0i), xp.nan, tail)
        return out.reshape(xp.shape(y0))


@_scipy_kernel("log_ndtr")
def _log_ndtr_array(x: Any) -> Any:
    if xp.size(x) > 4 * _BLOCK:  # (in blocks, in cache; the same values)
        return _kernel_blocks(_log_ndtr_array, x)
    x = _f64(x)
    with xp.errstate(**_ERR):
        t = xp.atleast_1d(x * _SQRT1_2)
        out = xp.log1p(-_erfc_array(t) / 2.0)
        # below -1 the erfcx form, on those elements only (picked by index)
        idx = xp.flatnonzero(x < -1.0)
        if idx.size:
            ti = t.flat[idx]
            out.flat[idx] = xp.log(_erfcx_array(-ti) / 2.0) - ti * ti
        return out.reshape(xp.shape(x))


def _alike_float(*arrays: Any) -> bool:
    """Whether the arrays share one float32 or float64 dtype and one shape: the case an
    array backward computes directly (others go through the recorded rule)."""
    first = arrays[0]
    return first.dtype in _F32_F64 and all(
        a.dtype == first.dtype and a.shape == first.shape for a in arrays[1:])


class _InputOutputBackward(Node):
    """The backward of a unary function that saves its input and its output: ``_arrays`` on
    the arrays when nothing is recorded and they are alike (:func:`_alike_float`; under
    ``errstate(_ERR)``), ``_graph`` on the tensors otherwise (both take ``(g, input,
    output)``)."""

    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        if not _state.enabled:  # (nothing to record: the same steps on arrays)
            aa, oa = self.saved_arrays()
            ga = g._array
            if _alike_float(aa, ga, oa):
                with xp.errstate(**_ERR):
                    r = self._arrays(ga, aa, oa)
                return _make(r)
        a, out = self.saved()
        return self._graph(g, a, out)

    @staticmethod
    def _arrays(ga: Any, aa: Any, oa: Any) -> Any:
        raise NotImplementedError

    @staticmethod
    def _graph(g: Tensor, a: Tensor, out: Tensor) -> Tensor:
        raise NotImplementedError


class SpecialErfcxBackward0(_InputOutputBackward):
    __slots__ = ()

    @staticmethod
    def _arrays(ga: Any, aa: Any, oa: Any) -> Any:
        t = xp.asarray(aa * oa)
        t *= 2.0
        t -= 2.0 / _SQRT_PI
        t *= ga
        return t

    @staticmethod
    def _graph(g: Tensor, a: Tensor, out: Tensor) -> Tensor:
        return F.mul(F.sub(F.mul(F.mul(a, out), 2.0), 2.0 / _SQRT_PI), g)


def _unary_saving_both(name: str, input: Tensor, kernel: Any, node_cls: type[Node]) -> Tensor:
    """``kernel`` of a float tensor (torch's texts call the op ``name``), recorded with a
    ``node_cls`` that saves the input and the output."""
    require_tensor(name, "input", 1, input)
    x = _unary_float(input)
    out = _back_quiet(kernel(x), x)
    node = node_cls()
    if not needs_grad(input):
        return _make(out)
    t = record(node, (input,), out)
    node.save(input, outputs=(t,))
    return t


@register("special_erfcx")
def erfcx(input: Tensor) -> Tensor:
    """The scaled complementary error function ``exp(x**2) * erfc(x)``, without overflow.

    Example:
        >>> import gradsum
        >>> [f"{v:.12g}" for v in gradsum.special.erfcx(
        ...     gradsum.tensor([0.0, 30.0], dtype=gradsum.float64)).tolist()]
        ['1', '0.0187958888614']
    """
    return _unary_saving_both("special_erfcx", input, _erfcx_array, SpecialErfcxBackward0)


class SpecialNdtriBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        if not _state.enabled:  # (nothing to record: the same steps on arrays)
            (oa,) = self.saved_arrays()
            ga = g._array
            if oa.dtype == ga.dtype and oa.shape == ga.shape and oa.dtype in _F32_F64:
                with xp.errstate(**_ERR):
                    t = xp.asarray(oa * oa)
                    t /= 2
                    xp.exp(t, out=t)
                    r = xp.multiply(ga, _SQRT_2PI)
                    r *= t
                return _make(xp.asarray(r))
        (out,) = self.saved()
        return F.mul(F.mul(g, _SQRT_2PI), F.exp(F.div(F.mul(out, out), 2)))


@register("special_ndtri")
def ndtri(input: Tensor) -> Tensor:
    """The inverse of the standard normal CDF (``-inf`` at 0, ``inf`` at 1, nan outside)."""
    require_tensor("special_ndtri", "input", 1, input)
    x = _unary_float(input)
    return _unary(input, _back_quiet(_ndtri_array(x), x), SpecialNdtriBackward0, "output")


class SpecialLogNdtrBackward0(_InputOutputBackward):
    __slots__ = ()

    @staticmethod
    def _arrays(ga: Any, aa: Any, oa: Any) -> Any:
        t = xp.asarray(aa * aa)
        t /= 2
        t += oa
        xp.negative(t, out=t)
        xp.exp(t, out=t)
        r = xp.asarray(xp.divide(ga, _SQRT_2PI))
        r *= t
        return r

    @staticmethod
    def _graph(g: Tensor, a: Tensor, out: Tensor) -> Tensor:
        e = F.exp(F.neg(F.add(out, F.div(F.mul(a, a), 2))))
        return F.mul(F.div(g, _SQRT_2PI), e)


@register("special_log_ndtr")
def log_ndtr(input: Tensor) -> Tensor:
    """The log of the standard normal CDF, accurate far into the left tail.

    Example:
        >>> import gradsum
        >>> round(gradsum.special.log_ndtr(gradsum.tensor([-10.0],
        ...                                               dtype=gradsum.float64)).item(), 9)
        -53.231285151
    """
    return _unary_saving_both("special_log_ndtr", input, _log_ndtr_array, SpecialLogNdtrBackward0)


class MulBackward1(Node):
    """torch's node for ``tensor * scalar`` called from C++ (``ndtr`` is composed of these)."""

    __slots__ = ("value",)

    def backward(self, g: Tensor) -> Tensor:
        return F.mul(g, self.value)


class AddBackward1(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        return g


def _scalar_op(input: Tensor, value: float, mul: bool) -> Tensor:
    x = input._array
    v = x.dtype.type(value)
    out = xp.asarray(x * v if mul else x + v).astype(x.dtype, copy=False)
    if not needs_grad(input):
        return _make(out)
    if mul:
        node = MulBackward1()
        node.value = value
        return record(node, (input,), out)
    return record(AddBackward1(), (input,), out)


@register("special_ndtr")
def ndtr(input: Tensor) -> Tensor:
    """The standard normal CDF, composed as torch's: ``(1 + erf(x / sqrt(2))) * 0.5`` (so
    the far left tail rounds to 0, and the grad_fn is ``MulBackward1``).

    Example:
        >>> import gradsum
        >>> gradsum.special.ndtr(gradsum.tensor([0.0, 1.0], dtype=gradsum.float64)).tolist()
        [0.5, 0.841344746068543]
    """
    require_tensor("special_ndtr", "input", 1, input)
    if input._array.dtype.kind not in "fV":
        input = F.to_dtype(input, D.get_default_dtype())
    e = F.erf(_scalar_op(input, _SQRT1_2, True))
    return _scalar_op(_scalar_op(e, 1.0, False), 0.5, True)
