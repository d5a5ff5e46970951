"""The gamma family: ``lgamma``, ``digamma``, ``polygamma``, ``mvlgamma``, the incomplete gamma
functions ``igamma``/``igammac`` and Hurwitz ``zeta``.

Example:
    >>> import gradsum
    >>> [round(v, 6) for v in gradsum.lgamma(gradsum.tensor([1.0, 3.0])).tolist()]
    [0.0, 0.693147]
"""

from __future__ import annotations

import math
from typing import Any

import gradsum.ops as F
from gradsum import _dtype as D
from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.autograd.grad_mode import no_grad
from gradsum.autograd.graph import Node
from gradsum.ops import _messages
from gradsum.ops._core import (
    _make,
    needs_grad,
    record,
    register,
    require_tensor,
    scalar_value,
    tensor_method,
    twin,
)
from gradsum.ops._scipy_special import kernel as _scipy_kernel
from gradsum.ops.arithmetic import _ERR, _bcast, _unary, _unary_float
from gradsum.ops.pointwise import (
    _PI,
    _back,
    _f64,
    _float_in,
    _float_pair,
    _promoted_float,
    _record2,
)
from gradsum.ops.special.erf import _back_quiet


def _zeta_constants(kmax: int) -> list[float]:
    """zeta(k) for k = 0..kmax (Euler-Maclaurin from n = 50), for the lgamma series."""
    out = [0.0, 0.0]
    big = 50
    for k in range(2, kmax + 1):
        s = math.fsum([n ** -k for n in range(1, big)] + [
            big ** (1 - k) / (k - 1), 0.5 * big ** -k, k * big ** (-k - 1) / 12,
            -k * (k + 1) * (k + 2) * big ** (-k - 3) / 720,
            k * (k + 1) * (k + 2) * (k + 3) * (k + 4) * big ** (-k - 5) / 30240])
        out.append(s)
    return out


_ZETA = _zeta_constants(64)
_EULER = 0.57721566490153286061
_LOG_SQRT_2PI = 0.91893853320467274178
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156,
             -3617 / 122400)


def _lgamma1p_series(z: Any) -> Any:
    """lgamma(1 + z) for |z| <= 0.5: ``-gamma z + sum (-z)^k zeta(k) / k``."""
    acc = xp.zeros_like(z)
    for k in range(64, 1, -1):
        acc = acc * z + ((-1.0) ** k) * _ZETA[k] / k
    return z * (-_EULER + z * acc) + 0.0  # (+0.0: lgamma(1) is 0.0, not -0.0)


def _lgamma_pos(x: Any) -> Any:
    """lgamma for x >= 0.5 (finite)."""
    out = xp.empty_like(x)
    a = x < 1.5
    out[a] = _lgamma1p_series(x[a] - 1.0)
    b = (x >= 1.5) & (x < 2.5)
    z = x[b] - 2.0
    out[b] = xp.log1p(z) + _lgamma1p_series(z)
    c = x >= 2.5
    v = x[c]
    shift = xp.zeros_like(v)
    prod = xp.ones_like(v)
    m = xp.empty_like(v)
    f = xp.empty_like(v)
    one_m = xp.empty_like(v)
    while True:
        # (prod *= v and v += 1 where v < 12, as products of m in 0 and 1: v m + (1 - m) is
        # v or 1 exactly, the same values as a where, without its per-element branch)
        xp.less(v, 12.0, out=m, casting="unsafe")
        if not m.any():
            break
        xp.multiply(v, m, out=f)
        xp.subtract(1.0, m, out=one_m)
        f += one_m
        prod *= f
        if (prod > 1e250).any():
            mb = m != 0
            shift = shift + xp.where(mb, xp.log(prod), 0.0)
            prod = xp.where(mb, 1.0, prod)
        v += m
    shift = shift + xp.log(prod)
    with xp.errstate(**_ERR):
        inv = 1.0 / v
        inv2 = inv * inv
        ser = xp.zeros_like(v)
        for cst in reversed(_STIRLING):
            ser = ser * inv2 + cst
        st = (v - 0.5) * xp.log(v) - v + _LOG_SQRT_2PI + ser * inv
    out[c] = st - shift
    return out


def _sinpi(x: Any) -> Any:
    """sin(pi x) with exact argument reduction."""
    r = xp.fmod(x, 2.0)
    return xp.sin(_PI * r)


@_scipy_kernel("lgamma")
def _lgamma_array(x: Any) -> Any:
    x = _f64(x)
    out = xp.full(x.shape, xp.inf)
    with xp.errstate(**_ERR):
        fin = xp.isfinite(x)
        pos = fin & (x >= 0.5)
        out[pos] = _lgamma_pos(x[pos])
        mid = fin & (x > 0) & (x < 0.5)
        v = x[mid]
        out[mid] = _lgamma_pos(v + 1.0) - xp.log(v)
        neg = fin & (x <= 0) & (x != xp.floor(x))
        v = x[neg]
        out[neg] = math.log(_PI) - xp.log(xp.abs(_sinpi(v))) - _lgamma_pos(1.0 - v)
        out[xp.isnan(x)] = xp.nan
    return out


_PSI_10 = 2.25175258906672110764
_DIGAMMA_A = (8.33333333333333333333e-2, -2.10927960927960927961e-2,
              7.57575757575757575758e-3, -4.16666666666666666667e-3,
              3.96825396825396825397e-3, -8.33333333333333333333e-3,
              8.33333333333333333333e-2)


def _digamma_pos(x: Any) -> Any:
    """torch's calc_digamma for x > 0: recurrence up to 10, then the asymptotic series."""
    result = xp.zeros_like(x)
    x = x.copy()
    m = xp.empty_like(x)
    step = xp.empty_like(x)
    with xp.errstate(**_ERR):
        while True:
            # (result -= 1/x and x += 1 where x < 10, as products of m in 0 and 1: the
            # same values as a where, without its per-element branch)
            xp.less(x, 10, out=m, casting="unsafe")
            if not m.any():
                break
            xp.divide(m, x, out=step)
            result -= step
            x += m
    with xp.errstate(**_ERR):
        z = 1.0 / (x * x)
        p = xp.zeros_like(x) + _DIGAMMA_A[0]
        for c in _DIGAMMA_A[1:]:
            p = p * z + c
        y = xp.where(x < 1e17, z * p, 0.0)
        out = result + xp.log(x) - (0.5 / x) - y
    return xp.where(x == 10, result + _PSI_10, out)


@_scipy_kernel("digamma")
def _digamma_array(x: Any) -> Any:
    x = _f64(x)
    with xp.errstate(**_ERR):
        out = xp.empty_like(x)
        is_int = x == xp.trunc(x)
        neg = x < 0
        posm = ~neg & (x != 0) & ~xp.isnan(x)
        out[posm] = _digamma_pos(x[posm])
        nm = neg & ~is_int
        v = x[nm]
        r = xp.fmod(v, 1.0)
        out[nm] = _digamma_pos(1.0 - v) - _PI / xp.tan(_PI * r)
        out[neg & is_int] = xp.nan
        zero = x == 0
        out[zero] = xp.copysign(xp.inf, -x[zero])
        out[xp.isnan(x)] = xp.nan
    return out


def _trigamma_array(x: Any) -> Any:
    """torch's calc_trigamma, vectorised (its accuracy, so the values agree)."""
    x = _f64(x).copy()
    with xp.errstate(**_ERR):
        sign = xp.ones_like(x)
        result = xp.zeros_like(x)
        low = x < 0.5
        s = xp.sin(_PI * x)
        result = xp.where(low, result - (_PI * _PI) / (s * s), result)
        sign = xp.where(low, -1.0, sign)
        x = xp.where(low, 1.0 - x, x)
        for _ in range(6):
            result = result + 1.0 / (x * x)
            x = x + 1.0
        ixx = 1.0 / (x * x)
        result = result + (1.0 + 1.0 / (2.0 * x) + ixx * (1.0 / 6 - ixx * (
            1.0 / 30 - ixx * (1.0 / 42)))) / x
    return sign * result


_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
           7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
           -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18)


def _hurwitz_zeta(s: float, q: Any) -> Any:
    """Cephes' zeta(s, q) for an integer s >= 2, vectorised (direct sum while a <= 9, then
    Euler-Maclaurin with 12 terms)."""
    q = _f64(q)
    with xp.errstate(**_ERR):
        bad = ((q <= 0) & (q == xp.floor(q))) | xp.isnan(q)  # (Cephes returns early)
        total = xp.power(q, -s)
        a = q.copy()
        b = xp.zeros_like(q)
        i = 0
        while True:
            m = ((i < 9) | (a <= 9.0)) & ~bad
            if not m.any():
                break
            i += 1
            a = xp.where(m, a + 1.0, a)
            b = xp.where(m, xp.power(a, -s), b)
            total = xp.where(m, total + b, total)
        w = a
        total = total + b * w / (s - 1.0)
        total = total - 0.5 * b
        fa = 1.0
        k = 0.0
        for cst in _ZETA_A:
            fa *= s + k
            b = b / w
            total = total + fa * b / cst
            k += 1.0
            fa *= s + k
            b = b / w
            k += 1.0
        total = xp.where(bad & ~xp.isnan(q), xp.inf, total)
    return total


def _polygamma_array(n: int, x: Any) -> Any:
    if n == 0:
        return _digamma_array(x)
    if n == 1:
        return _trigamma_array(x)
    sign = 1.0 if n % 2 else -1.0
    with xp.errstate(**_ERR):
        return sign * math.exp(math.lgamma(n + 1.0)) * _hurwitz_zeta(n + 1.0, x)


class LgammaBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (a,) = self.saved()
        return F.mul(g, digamma(a))


@register("lgamma", method=True, inplace="lgamma_")
def lgamma(input: Tensor) -> Tensor:
    """``log|Gamma(x)|`` (inf at the poles 0, -1, -2, ...).

    Example:
        >>> import gradsum
        >>> x = gradsum.tensor([1.0, 5.0, -0.5], dtype=gradsum.float64)
        >>> [round(v, 12) for v in gradsum.lgamma(x).tolist()]
        [0.0, 3.178053830348, 1.265512123485]
    """
    x = _float_in(input)
    return _unary(input, _back(_lgamma_array(x), x), LgammaBackward0, "input")


class DigammaBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (a,) = self.saved()
        return F.mul(g, polygamma(1, a))


@register("digamma", method=True, inplace="digamma_")
def digamma(input: Tensor) -> Tensor:
    """The logarithmic derivative of Gamma (torch's values: -inf at +0, +inf at -0, nan at
    the negative integers).

    Example:
        >>> import gradsum
        >>> round(gradsum.digamma(gradsum.tensor([1.0], dtype=gradsum.float64)).item(), 12)
        -0.577215664902
    """
    x = _float_in(input)
    return _unary(input, _back(_digamma_array(x), x), DigammaBackward0, "input")


class PolygammaBackward0(Node):
    __slots__ = ("n",)

    def backward(self, g: Tensor) -> Tensor:
        (a,) = self.saved()
        return F.mul(g, polygamma(self.n + 1, a))


@register("polygamma")
def polygamma(n: int, input: Tensor) -> Tensor:
    """The ``n``-th derivative of digamma (``n >= 0``).

    Example:
        >>> import gradsum
        >>> round(gradsum.polygamma(2, gradsum.tensor([1.0], dtype=gradsum.float64)).item(), 12)
        -2.404113806319
    """
    if isinstance(n, Tensor) or not isinstance(n, (int, xp.integer)) or isinstance(n, bool):
        raise TypeError(_messages.polygamma_n_not_int(n))
    n = int(n)
    if n < 0:
        raise RuntimeError(_messages.polygamma_negative_n(n))
    require_tensor("polygamma", "input", 2, input)
    x = _float_in(input)
    out = _back(_polygamma_array(n, x), x)
    if not needs_grad(input):
        return _make(out)
    node = PolygammaBackward0()
    node.n = n
    t = record(node, (input,), out)
    node.save(input)
    return t


@tensor_method("polygamma", inplace="polygamma_")
def _polygamma_method(self: Tensor, n: int) -> Tensor:
    """``t.polygamma(n)``: :func:`polygamma` with the tensor first."""
    return polygamma(n, self)


def _zeta_array(x: Any, q: Any) -> Any:
    """Cephes' Hurwitz ``zeta(x, q)`` for arrays of both (direct sum while ``a <= 9``, then
    Euler-Maclaurin), with Cephes' early exits element by element."""
    x, q = xp.broadcast_arrays(_f64(x), _f64(q))
    x, q = x.copy(), q.copy()
    a_coef = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
              7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
              -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18)
    eps = 1.11022302462515654042E-16
    with xp.errstate(**_ERR):
        special = xp.full(x.shape, xp.nan)
        settled = (x == 1.0) | (x < 1.0) | xp.isnan(x) | xp.isnan(q)
        special = xp.where(x == 1.0, xp.inf, special)
        qpole = (q <= 0) & (q == xp.floor(q)) & ~settled
        special = xp.where(qpole, xp.inf, special)
        settled |= qpole
        bad = (q <= 0) & (x != xp.floor(x)) & ~settled
        settled |= bad
        done = settled.copy()
        s = xp.power(q, -x)
        a = q.copy()
        b = xp.zeros_like(q)
        i = 0
        while True:
            m = ~done & ((i < 9) | (a <= 9.0))
            if not m.any():
                break
            i += 1
            a = xp.where(m, a + 1.0, a)
            b = xp.where(m, xp.power(a, -x), b)
            s = xp.where(m, s + b, s)
            done |= m & (-eps * s < b) & (b < eps * s)
        w = a
        live = ~done
        s = xp.where(live, s + b * w / (x - 1.0) - 0.5 * b, s)
        fa = xp.ones_like(x)
        k = 0.0
        for c in a_coef:
            fa = fa * (x + k)
            b = b / w
            t = fa * b / c
            s = xp.where(live, s + t, s)
            live &= ~(xp.abs(t / s) < eps)
            k += 1.0
            fa = fa * (x + k)
            b = b / w
            k += 1.0
        return xp.where(settled, special, s)


def _igam_prefactor(a: Any, x: Any) -> Any:
    """``x^a e^-x / Gamma(a)`` through logs (0 where it underflows)."""
    return xp.exp(a * xp.log(x) - x - _lgamma_array(a))


def _igamma_pair(a: Any, x: Any) -> tuple[Any, Any]:
    """The regularized lower and upper incomplete gamma functions ``(P, Q)`` for finite
    ``a > 0, x > 0``: the series of P below ``a + 1``, the continued fraction of Q above."""
    with xp.errstate(**_ERR):
        pre = _igam_prefactor(a, x)
        use_series = x < a + 1.0
        # P = pre / a * sum x^n / ((a+1)...(a+n))
        # (each loop runs on its live elements only, dropping those that have converged: the
        # same steps per element as on the whole array)
        tot = xp.ones_like(a)
        idx = xp.flatnonzero(use_series)
        r, xs = a.flat[idx], x.flat[idx]
        c = xp.ones_like(r)
        ts = xp.ones_like(r)
        for _ in range(2000):
            if not idx.size:
                break
            r += 1.0  # (in place: the same roundings)
            c *= xs
            c /= r
            ts += c
            done = c <= 1.11e-16 * ts
            if done.any():
                tot.flat[idx[done]] = ts[done]
                keep = ~done
                idx, r, xs, c, ts = idx[keep], r[keep], xs[keep], c[keep], ts[keep]
        tot.flat[idx] = ts
        p_ser = tot * pre / a
        # Q = pre * 1 / (x + 1 - a - 1 (1 - a) / (x + 3 - a - ...)) (modified Lentz)
        tiny = 1e-300
        bq = x + 1.0 - a
        cq = xp.full(a.shape, 1.0 / tiny)
        dq = 1.0 / xp.where(bq == 0, tiny, bq)
        h = dq.copy()
        idx = xp.flatnonzero(~use_series)
        ai, bi, ci, di, hi = a.flat[idx], bq.flat[idx], cq.flat[idx], dq.flat[idx], h.flat[idx]
        for n in range(1, 2000):
            if not idx.size:
                break
            an = n - ai  # (in place: the same roundings)
            an *= -n
            bi += 2.0
            di *= an
            di += bi
            xp.copyto(di, tiny, where=xp.abs(di) < tiny)
            xp.divide(1.0, di, out=di)
            xp.divide(an, ci, out=ci)
            ci += bi
            xp.copyto(ci, tiny, where=xp.abs(ci) < tiny)
            delta = xp.multiply(ci, di, out=an)
            hi *= delta
            delta -= 1.0
            done = xp.abs(delta, out=delta) < 1.11e-16
            if done.any():
                h.flat[idx[done]] = hi[done]
                keep = ~done
                idx, ai, bi, ci, di, hi = (idx[keep], ai[keep], bi[keep], ci[keep], di[keep],
                                           hi[keep])
        h.flat[idx] = hi
        q_cf = pre * h
        p = xp.where(use_series, p_ser, 1.0 - q_cf)
        q = xp.where(use_series, 1.0 - p_ser, q_cf)
    return p, q


@_scipy_kernel("igamma")
def _igamma_array(a: Any, x: Any, upper: bool) -> Any:
    a, x = xp.broadcast_arrays(_f64(a), _f64(x))
    out = xp.full(a.shape, xp.nan)
    fin = (a > 0) & (x > 0) & xp.isfinite(a) & xp.isfinite(x)
    if fin.any():
        p, q = _igamma_pair(a[fin], x[fin])
        out[fin] = q if upper else p
    lo, hi = (1.0, 0.0) if upper else (0.0, 1.0)
    ok = (a >= 0) & (x >= 0)
    out = xp.where(ok & (a == 0) & (x > 0), hi, out)
    out = xp.where(ok & (a > 0) & (x == 0), lo, out)
    out = xp.where(ok & xp.isinf(a) & xp.isfinite(x) & (x > 0), lo, out)
    out = xp.where(ok & xp.isinf(a) & (x == 0), lo, out)
    out = xp.where(ok & (a > 0) & xp.isfinite(a) & xp.isinf(x), hi, out)
    return out


def _no_derivative(what: str) -> NotImplementedError:
    return NotImplementedError(_messages.derivative_for_not_implemented(what))


class SpecialZetaBackward0(Node):
    __slots__ = ("shapes",)

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        if self.needs(0):
            raise _no_derivative("zeta")
        a, b = self.saved()
        return None, F.sum_to(F.mul(g, F.mul(F.neg(a), zeta(F.add(a, 1.0), b))),
                             self.shapes[1])


class SpecialZetaBackward1(Node):
    """``zeta(number, tensor)``."""

    __slots__ = ("shapes", "value")

    def backward(self, g: Tensor) -> Tensor:
        (b,) = self.saved()
        return F.sum_to(F.mul(g, F.mul(zeta(self.value + 1.0, b), -self.value)), self.shapes[1])


class SpecialZetaBackward2(Node):
    """``zeta(tensor, number)``: torch has no derivative for the first argument."""

    __slots__ = ("shapes",)

    def backward(self, g: Tensor) -> Tensor:
        raise _no_derivative("zeta")


@register("special_zeta")
def zeta(input: Any, other: Any) -> Tensor:
    """The Hurwitz zeta function ``sum_k (k + other) ** -input`` (``input`` > 1; inf at 1,
    nan below); differentiable in ``other`` only, as torch.

    Example:
        >>> import gradsum
        >>> round(gradsum.special.zeta(gradsum.tensor([2.0], dtype=gradsum.float64),
        ...                            gradsum.tensor([1.0], dtype=gradsum.float64)).item(), 12)
        1.644934066848
    """
    if not isinstance(input, Tensor):
        require_tensor("special_zeta", "other", 2, other)
        rt = D.result_type(other, input).np
        if rt.kind not in "fV":
            rt = D.get_default_dtype().np
        q = other._array.astype(rt, copy=False)
        v = scalar_value(input)
        out = _back_quiet(_zeta_array(xp.asarray(v, dtype=rt), q), q)
        if not needs_grad(other):
            return _make(out)
        node1 = SpecialZetaBackward1()
        node1.shapes, node1.value = ((), q.shape), float(v)
        t = record(node1, (other,), out)
        node1.save(other)
        return t
    x, q, qt = _promoted_float("special_zeta", input, other)
    out = _bcast(_zeta_array(x, q), x, q)
    if not needs_grad(input, other):
        return _make(out)
    if qt:
        return _record2(SpecialZetaBackward0(), input, other, out, x, q, (input, other))
    node2 = SpecialZetaBackward2()
    node2.shapes = (x.shape, ())
    return record(node2, (input,), out)


class IgammaBackward0(Node):
    __slots__ = ("shapes",)
    sign = 1.0
    op = "igamma"

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        if self.needs(0):
            raise _no_derivative(f"{self.op}: input")
        a, x = self.saved()
        e = F.exp(F.sub(F.sub(F.mul(F.sub(a, 1), F.log(x)), x), F.lgamma(a)))
        return None, F.sum_to(F.mul(F.mul(g, self.sign), e), self.shapes[1])


class IgammacBackward0(IgammaBackward0):
    __slots__ = ()
    sign = -1.0
    op = "igammac"


def _igamma(name: str, input: Tensor, other: Tensor, upper: bool) -> Tensor:
    a, x = _float_pair(name, input, other)
    out = _bcast(_igamma_array(a, x, upper), a, x)
    if not needs_grad(input, other):
        return _make(out)
    node = IgammacBackward0() if upper else IgammaBackward0()
    return _record2(node, input, other, out, a, x, (input, other))


@register("igamma", "special_gammainc", method="igamma", inplace=twin("igamma_", cast=True))
def igamma(input: Tensor, other: Tensor) -> Tensor:
    """The regularized lower incomplete gamma function ``P(input, other)``
    (``torch.special.gammainc``); differentiable in ``other`` only, as torch.

    Example:
        >>> import gradsum
        >>> a = gradsum.tensor([1.0, 2.0], dtype=gradsum.float64)
        >>> x = gradsum.tensor([1.0, 1.0], dtype=gradsum.float64)
        >>> [round(v, 12) for v in gradsum.igamma(a, x).tolist()]
        [0.632120558829, 0.264241117657]
    """
    return _igamma("igamma", input, other, upper=False)


@register("igammac", "special_gammaincc", method="igammac", inplace=twin("igammac_", cast=True))
def igammac(input: Tensor, other: Tensor) -> Tensor:
    """The regularized upper incomplete gamma function ``Q(input, other) = 1 - P``
    (``torch.special.gammaincc``)."""
    return _igamma("igammac", input, other, upper=True)


class MvlgammaBackward0(Node):
    __slots__ = ("p",)

    def backward(self, g: Tensor) -> Tensor:
        (a,) = self.saved()
        s = F.digamma(a)
        for j in range(1, self.p):
            s = F.add(s, F.digamma(F.sub(a, j / 2)))
        return F.mul(g, s)


@register("mvlgamma", method=True, inplace="mvlgamma_")
def mvlgamma(input: Tensor, p: int) -> Tensor:
    """The multivariate log-gamma function of dimension ``p``: ``sum_j lgamma(x - j / 2)``
    plus ``p (p - 1) / 4 log(pi)`` (torch no longer checks that the values exceed
    ``(p - 1) / 2``; below, ``lgamma`` is the log of ``|gamma|``).

    Example:
        >>> import gradsum
        >>> round(gradsum.mvlgamma(gradsum.tensor([2.5]), 2).item(), 4)
        0.857
    """
    if p < 1:
        raise RuntimeError(_messages.mvlgamma_p_too_small(p))
    x = _unary_float(input)
    with no_grad():
        t = _make(x)
        s = F.lgamma(t)._array.astype(xp.float64)
        for j in range(1, p):
            s = s + F.lgamma(_make(x - x.dtype.type(j / 2)))._array
    out = xp.asarray(s + p * (p - 1) / 4 * math.log(math.pi), dtype=x.dtype)
    if not needs_grad(input):
        return _make(out)
    node = MvlgammaBackward0()
    node.p = int(p)
    res = record(node, (input,), out)
    node.save(input)
    return res
