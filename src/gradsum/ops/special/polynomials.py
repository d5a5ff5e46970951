"""The orthogonal polynomials of torch.special: Chebyshev (T, U, V, W and shifted), Hermite (H,
He), Laguerre and Legendre, by their recurrences.

Example:
    >>> import gradsum
    >>> x = gradsum.tensor([0.5], dtype=gradsum.float64)
    >>> gradsum.special.chebyshev_polynomial_t(x, 2).tolist()
    [-0.5]
"""

from __future__ import annotations

from typing import Any

from gradsum import _dtype as D
from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.ops import _messages
from gradsum.ops._core import _make, broadcast_error, scalar_value
from gradsum.ops.arithmetic import _ERR


# -- the orthogonal polynomials ----------------------------------------------------------------
def _poly_operands(name: str, input: Any, n: Any) -> tuple[Any, Any, Any]:
    """``(x, n, dtype)`` broadcast, with torch's promotion of the pair (integers give the
    default float); ``n`` truncated to an integer (nan/inf give -1: the polynomial is 0)."""
    if not isinstance(input, Tensor) and not isinstance(n, Tensor):
        raise TypeError(_messages.polynomial_arguments_not_tensor(name, input, n))
    if isinstance(input, Tensor):
        rt = D.result_type(input, n).np
    else:
        rt = D.result_type(n, input).np
    if rt.kind not in "fV":
        rt = D.get_default_dtype().np
    xa = input._array if isinstance(input, Tensor) else xp.asarray(scalar_value(input))
    na = n._array if isinstance(n, Tensor) else xp.asarray(scalar_value(n))
    x = xp.asarray(xa, dtype=rt)
    nf = xp.asarray(na, dtype=rt).astype(xp.float64)
    try:
        x, nf = xp.broadcast_arrays(x, nf)
    except ValueError:
        raise broadcast_error(xa, na) from None
    with xp.errstate(**_ERR):
        # (torch converts n to int64: nan, inf and values out of its range become negative)
        ni = xp.where(xp.isfinite(nf) & (xp.abs(nf) < 2.0**63), xp.trunc(nf), -1.0)
    return x.astype(xp.float64), ni, rt


def _recurrence(x: Any, n: Any, p0: Any, p1: Any, step: Any, needed: Any = None) -> Any:
    """``P_n`` from ``P_0 = p0``, ``P_1 = p1`` and ``P_{k+1} = step(k, P_k, P_{k-1})``
    (``k`` from 1), evaluated for every element up to its own ``n``. Only the elements of
    ``needed`` (all by default; the others take a closed form or an edge value) set how far
    it runs, and it stops early once every element still running is nan in both of its last
    two terms (the recurrence then stays nan, as torch's loop does)."""
    out = xp.where(n == 0, p0, p1)
    nn = n if needed is None else n[needed]
    nmax = int(nn.max(initial=0))
    p, q = p0, p1
    for k in range(1, nmax):
        with xp.errstate(**_ERR):
            r = step(k, q, p)
        p, q = q, r
        out = xp.where(n == k + 1, r, out)
        if k % 64 == 0:
            running = n > k + 1
            if needed is not None:
                running &= needed
            if not running.any() or bool(
                    (xp.isnan(xp.broadcast_to(p, n.shape)[running])
                     & xp.isnan(xp.broadcast_to(q, n.shape)[running])).all()):
                out = xp.where(running, xp.nan, out)
                break
    return xp.where(n < 0, 0.0, out)


def _finish(out: Any, rt: Any) -> Tensor:
    return _make(xp.asarray(out).astype(rt, copy=False))


def _cheb_kind(x: Any, n: Any, kind: str) -> Any:
    """T, U, V, W at ``x`` by their shared recurrence ``P_{k+1} = 2 x P_k - P_{k-1}``, with
    torch's values at ``|x| = 1`` and its closed forms for large n inside ``(-1, 1)``."""
    one = xp.ones_like(x)
    p1 = {"t": x, "u": 2 * x, "v": 2 * x - 1, "w": 2 * x + 1}[kind]
    closed = (xp.abs(x) < 1.0) & (n > (6 if kind == "t" else 8))
    out = _recurrence(x, n, one, p1, lambda k, q, p: (x + x) * q - p, ~closed)
    out = xp.where(closed, _cheb_kind_closed(x, n, kind), out)
    odd = xp.fmod(n, 2) != 0
    edge = {"t": xp.where((x > 0) | ~odd, 1.0, -1.0),
            "u": xp.where((x > 0) | ~odd, n + 1, -(n + 1)),
            "v": xp.where(x > 0, 1.0, xp.where(odd, -(2 * n + 1), 2 * n + 1)),
            "w": xp.where(x > 0, 2 * n + 1, xp.where(odd, -1.0, 1.0))}[kind]
    out = xp.where((xp.abs(x) == 1.0) & (n >= 0), edge, out)
    return xp.where(n < 0, 0.0, out)


def _cheb_kind_closed(z: Any, n: Any, kind: str) -> Any:
    """The trigonometric forms torch switches to for large n inside ``(-1, 1)``."""
    with xp.errstate(**_ERR):
        th = xp.arccos(xp.clip(z, -1.0, 1.0))
        odd = xp.fmod(n, 2) != 0
        if kind == "t":
            return xp.cos(n * th)
        if kind == "u":
            s = xp.sin(th)
            return xp.where(s != 0, xp.sin((n + 1) * th) / s, (n + 1) * xp.cos((n + 1) * th) / z)
        if kind == "v":
            return xp.where(xp.sin(th / 2) != 1.0, xp.cos((n + 0.5) * th) / xp.cos(th / 2),
                            xp.where(odd, -(2 * n + 1), 2 * n + 1))
        return xp.where(xp.cos(th / 2) != 1.0, xp.sin((n + 0.5) * th) / xp.sin(th / 2),
                        xp.where(z > 0, 2 * n + 1, xp.where(odd, -1.0, 1.0)))


def _shifted(x: Any, n: Any, kind: str) -> Any:
    """The shifted Chebyshev polynomials ``P*(x) = P(2x - 1)`` with torch's branches (edge
    values at x = 1 and 0, the closed form for n > 6 (W: n > 4) inside ``(0, 1)``)."""
    z = x + x - 1.0
    one = xp.ones_like(z)
    p1 = {"t": z, "u": 2 * z, "v": 2 * z - 1, "w": 2 * z + 1}[kind]
    closed = (n > (4 if kind == "w" else 6)) & (xp.abs(z) < 1.0)
    out = _recurrence(z, n, one, p1, lambda k, q, p: (z + z) * q - p, ~closed)
    out = xp.where(closed, _cheb_kind_closed(z, n, kind), out)
    odd = xp.fmod(n, 2) != 0
    at1 = {"t": one, "u": n + 1, "v": one, "w": 2 * n + 1}[kind]
    at0 = {"t": xp.where(odd, -1.0, 1.0), "u": xp.where(odd, -(n + 1), n + 1),
           "v": xp.where(odd, -(2 * n + 1), 2 * n + 1), "w": xp.where(odd, -1.0, 1.0)}[kind]
    out = xp.where(x == 0.0, at0, out)
    out = xp.where(x == 1.0, at1, out)
    return xp.where(n < 0, 0.0, out)


def _poly_fn(name: str, kernel: Any, doc: str) -> Any:
    def fn(input: Any, n: Any) -> Tensor:
        x, ni, rt = _poly_operands(f"special_{name}", input, n)
        return _finish(kernel(x, ni, rt), rt)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc + " Not differentiable (as torch); ``n`` is truncated to an integer."
    return fn


def _hermite(x: Any, n: Any, rt: Any, physicists: bool) -> Any:
    limit = 128 if rt == xp.float32 else 512
    c = 2.0 if physicists else 1.0
    out = _recurrence(x, n, xp.ones_like(x), c * x, lambda k, q, p: c * x * q - c * k * p,
                      n <= limit)
    return xp.where(n > limit, xp.nan, out)


def _laguerre(x: Any, n: Any, rt: Any) -> Any:
    out = _recurrence(x, n, xp.ones_like(x), 1.0 - x,
                      lambda k, q, p: ((2 * k + 1.0 - x) * q - k * p) / (k + 1))
    return xp.where((x == 0) & (n >= 0), 1.0, out)


def _legendre(x: Any, n: Any, rt: Any) -> Any:
    out = _recurrence(x, n, xp.ones_like(x), x,
                      lambda k, q, p: ((2 * k + 1) * x * q - k * p) / (k + 1))
    odd = xp.fmod(n, 2) != 0
    edge = xp.where((x > 0) | ~odd, 1.0, -1.0)
    return xp.where((xp.abs(x) == 1.0) & (n >= 0), edge, out)


_KIND_ORDINALS = {"t": "first", "u": "second", "v": "third", "w": "fourth"}


def _chebyshev_fn(kind: str, shifted: bool) -> Any:
    """``chebyshev_polynomial_{kind}`` (of ``_cheb_kind``) or its shifted form (``_shifted``)."""
    if shifted:
        return _poly_fn(f"shifted_chebyshev_polynomial_{kind}",
                        lambda x, n, rt: _shifted(x, n, kind),
                        f"The shifted Chebyshev polynomial ``{kind.upper()}*_n(input)``.")
    return _poly_fn(f"chebyshev_polynomial_{kind}", lambda x, n, rt: _cheb_kind(x, n, kind),
                    f"The Chebyshev polynomial of the {_KIND_ORDINALS[kind]} kind "
                    f"``{kind.upper()}_n(input)``.")


chebyshev_polynomial_t, chebyshev_polynomial_u, chebyshev_polynomial_v, chebyshev_polynomial_w = (
    _chebyshev_fn(kind, False) for kind in "tuvw")
(shifted_chebyshev_polynomial_t, shifted_chebyshev_polynomial_u, shifted_chebyshev_polynomial_v,
 shifted_chebyshev_polynomial_w) = (_chebyshev_fn(kind, True) for kind in "tuvw")
hermite_polynomial_h, hermite_polynomial_he, laguerre_polynomial_l, legendre_polynomial_p = (
    _poly_fn(name, kernel, doc) for name, kernel, doc in (
        ("hermite_polynomial_h", lambda x, n, rt: _hermite(x, n, rt, True),
         "The physicists' Hermite polynomial ``H_n(input)``."),
        ("hermite_polynomial_he", lambda x, n, rt: _hermite(x, n, rt, False),
         "The probabilists' Hermite polynomial ``He_n(input)``."),
        ("laguerre_polynomial_l", _laguerre, "The Laguerre polynomial ``L_n(input)``."),
        ("legendre_polynomial_p", _legendre, "The Legendre polynomial ``P_n(input)``.")))
