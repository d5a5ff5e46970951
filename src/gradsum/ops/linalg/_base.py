"""What the linalg ops share: :class:`LinAlgError`, the argument checks, multi-output recording,
the batched LU kernels (``_getrf``, ``_getrs``, ``_trsm``) and the warn-once helper.

Example:
    >>> from gradsum.ops.linalg._base import LinAlgError
    >>> issubclass(LinAlgError, RuntimeError)
    True
"""

from __future__ import annotations

import warnings
from typing import Any

import gradsum.ops as F
from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.autograd.graph import Node
from gradsum.ops import _messages, _scipy_special
from gradsum.ops._core import record


class LinAlgError(RuntimeError):
    """Raised when a linear-algebra routine fails (a singular matrix, a matrix that is not
    positive-definite); a RuntimeError, as ``torch.linalg.LinAlgError``."""


LinAlgError.__module__ = "gradsum.linalg"

_ERR = {"divide": "ignore", "invalid": "ignore", "over": "ignore", "under": "ignore"}


def _mT(t: Tensor) -> Tensor:
    return F.transpose(t, -2, -1)


def _check_float(name: str, a: Any) -> Any:
    if not isinstance(a, Tensor):
        raise TypeError(_messages.argument_not_tensor(name, "A", 1, a))
    x = a._array
    if x.dtype.kind not in "fV":
        raise RuntimeError(_messages.linalg_input_not_floating(name, x))
    return x


def _check_square(name: str, a: Tensor) -> Any:
    x = _check_float(name, a)
    if x.ndim < 2:
        raise RuntimeError(_messages.input_fewer_than_2_dims_shape(name, x))
    if x.shape[-1] != x.shape[-2]:
        raise RuntimeError(_messages.linalg_not_square_matrices(name, x))
    return x


class _MultiOutput(Node):
    """A node of an op with several outputs; missing output gradients stay None."""

    __slots__ = ()

    def _materialize(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        return grads


def _record_outputs(node: Node, inputs: tuple[Any, ...], outs: list[Any]) -> list[Tensor]:
    return [record(node, inputs, o, i) for i, o in enumerate(outs)]

_WARNED: set[str] = set()


def _warn_once(key: str, msg: str) -> None:
    """torch's ``TORCH_WARN_ONCE``: the first call in the process warns, later ones do not."""
    if key not in _WARNED:
        _WARNED.add(key)
        warnings.warn(msg, UserWarning, stacklevel=3)


def _require(name: str, arg: str, pos: int, t: Any) -> Any:
    if not isinstance(t, Tensor):
        raise TypeError(_messages.argument_not_tensor(name, arg, pos, t))
    return t._array


# == array kernels =============================================================================
#: below this order a batch of matrices is factored by the vectorised steps here, one call
#: for the whole batch, rather than by one LAPACK call per matrix
_LAPACK_MIN_ORDER = 16


def _trsm(a: Any, b: Any, upper: bool, unit: bool = False, wide: bool = False) -> Any:
    """``X`` with ``tri(A) X = B`` by substitution (batches already broadcast); only the
    ``upper``/lower triangle of ``a`` is read, its diagonal taken as ones when ``unit``.

    Blocked: the rows of each block of ``_NB`` first take one product with the rows already
    solved, then are substituted one by one within the block (each row sees the same
    products as a row-by-row substitution, so a zero on the diagonal gives the same inf/nan).
    A float32 problem is worked in float64 (``wide``: the caller already widened it) and
    rounded once; with finite entries each diagonal block is then applied as its inverse
    (float64's error far below float32's spacing), falling back to the rows for a singular
    block."""
    dt = xp.result_type(a, b)
    if dt == xp.float32:
        a, wide = a.astype(xp.float64), True
    x = xp.array(b, dtype=xp.float64 if dt == xp.float32 else dt, copy=True)
    n = a.shape[-1]
    starts = range(0, n, _NB)
    by_inverse = wide and bool(xp.isfinite(a).all()) and bool(xp.isfinite(x).all())
    with xp.errstate(**_ERR):
        for s in (reversed(starts) if upper else starts):
            e = min(s + _NB, n)
            if upper and e < n:
                x[..., s:e, :] -= a[..., s:e, e:] @ x[..., e:, :]
            elif not upper and s:
                x[..., s:e, :] -= a[..., s:e, :s] @ x[..., :s, :]
            if by_inverse:
                t = a[..., s:e, s:e]
                t = xp.triu(t, int(unit)) if upper else xp.tril(t, -int(unit))
                if unit:
                    t = t + xp.eye(e - s, dtype=t.dtype)
                try:
                    x[..., s:e, :] = xp.linalg.inv(t) @ x[..., s:e, :]
                    continue
                except xp.linalg.LinAlgError:
                    pass
            for i in (range(e - 1, s - 1, -1) if upper else range(s, e)):
                if upper and i + 1 < e:
                    x[..., i:i + 1, :] -= a[..., i:i + 1, i + 1:e] @ x[..., i + 1:e, :]
                elif not upper and i > s:
                    x[..., i:i + 1, :] -= a[..., i:i + 1, s:i] @ x[..., s:i, :]
                if not unit:
                    x[..., i, :] /= a[..., i, i, None]
    return x.astype(dt, copy=False)


#: block size of the blocked LU and triangular substitution
_NB = 32


def _panel_one(lu: Any, piv: Any, j0: int, j1: int) -> None:
    """:func:`_getrf`'s panel ``j0:j1`` of one matrix, in place (pivots 0-based)."""
    for j in range(j0, j1):
        p = j + int(xp.argmax(xp.abs(lu[j:, j])))
        piv[j] = p
        if p != j:
            lu[[j, p]] = lu[[p, j]]
        d = lu[j, j]
        if d != 0:
            lu[j + 1:, j] /= d
        lu[j + 1:, j + 1:j1] -= lu[j + 1:, j, None] * lu[j, None, j + 1:j1]


def _lapack_getrf(a: Any) -> tuple[Any, Any, Any] | None:
    """:func:`_getrf` by SciPy's LAPACK ``dgetrf`` (the ``special`` extra), matrix by matrix,
    or ``None`` where that does not apply: no SciPy (or ``GRADSUM_SCIPY=0``), a dtype other
    than float32/float64, a non-finite element (LAPACK's ``idamax`` skips nan, where
    gradsum's pivot search takes the first nan as torch's does), or a batch of small
    matrices (faster in one vectorised call). float32 is factored in float64 and rounded
    once, as below: the same pivots (the first largest), the factors within 0.5 ULP."""
    m, n = a.shape[-2:]
    if a.dtype not in (xp.float32, xp.float64) or not a.size:
        return None
    count = a.size // (m * n)
    if count > 1 and min(m, n) < _LAPACK_MIN_ORDER:
        return None
    lapack = _scipy_special.module("scipy.linalg.lapack")
    if lapack is None or not xp.isfinite(a).all():
        return None
    k = min(m, n)
    flat = a.reshape((count, m, n))
    lu = xp.empty((count, m, n), dtype=a.dtype)
    piv = xp.empty((count, k), dtype=xp.int32)
    info = xp.zeros(count, dtype=xp.int32)
    for i in range(count):
        f, p, inf = lapack.dgetrf(flat[i], overwrite_a=False)
        lu[i] = f
        piv[i] = p
        info[i] = inf
    piv += 1
    return lu.reshape(a.shape), piv.reshape(a.shape[:-2] + (k,)), info.reshape(a.shape[:-2])


def _getrf(a: Any) -> tuple[Any, Any, Any]:
    """LAPACK ``getrf`` on a batch: ``(LU, pivots, info)`` (1-based int32 pivots; info the
    1-based index of the first exactly-zero pivot, 0 if none).

    Right-looking and blocked as LAPACK's: each panel of ``_NB`` columns is factored column
    by column (partial pivoting, the first largest pivot, rows swapped whole), then the
    block row right of it is solved with the panel's unit lower triangle and the trailing
    matrix takes one product update."""
    m, n = a.shape[-2:]
    batch = a.shape[:-2]
    fast = _lapack_getrf(a)
    if fast is not None:
        return fast
    # float32 is factored in float64 and rounded once at the end: the blocked updates in
    # float32 were no more accurate than the column-by-column ones (max ULP error against a
    # float64 LU within noise of each other, a few hundred ULP either way); this is ~0.5 ULP
    lu = xp.array(a, dtype=xp.float64 if a.dtype == xp.float32 else a.dtype,
                  copy=True, order="C").reshape((-1, m, n))
    k = min(m, n)
    piv = xp.zeros((lu.shape[0], k), dtype=xp.int32)
    rows = xp.arange(lu.shape[0])
    with xp.errstate(**_ERR):
        for j0 in range(0, k, _NB):
            j1 = min(j0 + _NB, k)
            if lu.shape[0] == 1:  # one matrix: the same steps with scalar pivots
                _panel_one(lu[0], piv[0], j0, j1)
            for j in (range(0) if lu.shape[0] == 1 else range(j0, j1)):
                p = j + xp.argmax(xp.abs(lu[:, j:, j]), axis=1)
                piv[:, j] = p
                if (p != j).any():
                    top = lu[rows, j, :].copy()
                    lu[rows, j, :] = lu[rows, p, :]
                    lu[rows, p, :] = top
                d = lu[:, j, j]
                lu[:, j + 1:, j] /= xp.where(d == 0, 1.0, d)[:, None]
                lu[:, j + 1:, j + 1:j1] -= lu[:, j + 1:, j, None] * lu[:, j, None, j + 1:j1]
            if j1 < n:  # U12 = L11^-1 A12
                l11 = xp.tril(lu[:, j0:j1, j0:j1], -1) + xp.eye(j1 - j0, dtype=lu.dtype)
                if lu.dtype == xp.float64 and xp.isfinite(l11).all():
                    # LAPACK's gesv on the unit lower L11 (|l| <= 1: it swaps no rows, its
                    # factors are L11 and I) is the forward substitution, in one call
                    lu[:, j0:j1, j1:] = xp.linalg.solve(l11, lu[:, j0:j1, j1:])
                else:  # nan: row by row, so it spreads only where substitution spreads it
                    for i in range(j0 + 1, j1):
                        lu[:, i:i + 1, j1:] -= lu[:, i:i + 1, j0:i] @ lu[:, j0:i, j1:]
                if j1 < m:
                    lu[:, j1:, j1:] -= lu[:, j1:, j0:j1] @ lu[:, j0:j1, j1:]
    piv += 1
    # the pivots stay on U's diagonal (later steps touch only the rows below them)
    zero = xp.diagonal(lu[:, :k, :k], 0, -2, -1) == 0
    info = (xp.where(zero.any(axis=1), xp.argmax(zero, axis=1) + 1, 0) if k else
            xp.zeros(lu.shape[0])).astype(xp.int32)
    return (lu.astype(a.dtype, copy=False).reshape(batch + (m, n)), piv.reshape(batch + (k,)),
            info.reshape(batch))


def _perm(piv: Any, m: int) -> Any:
    """Row order ``perm`` of LAPACK pivots: ``A[perm] = L U``."""
    batch = piv.shape[:-1]
    flat = piv.reshape((-1, piv.shape[-1])).astype(xp.int64) - 1
    if flat.shape[0] <= flat.shape[1]:  # few matrices: the swaps on Python lists
        out = []
        for ps in flat.tolist():
            order = list(range(m))
            for j, p in enumerate(ps):
                order[j], order[p] = order[p], order[j]
            out.append(order)
        return xp.array(out, dtype=xp.int64).reshape(batch + (m,))
    perm = xp.broadcast_to(xp.arange(m), (flat.shape[0], m)).copy()
    rows = xp.arange(flat.shape[0])
    for j in range(flat.shape[1]):
        p = flat[:, j]
        tmp = perm[rows, j].copy()
        perm[rows, j] = perm[rows, p]
        perm[rows, p] = tmp
    return perm.reshape(batch + (m,))


def _take_rows(b: Any, perm: Any) -> Any:
    return xp.take_along_axis(b, perm[..., :, None], axis=-2)


def _getrs(lu: Any, piv: Any, b: Any, adjoint: bool) -> Any:
    """``A X = B`` (``A^T X = B`` with ``adjoint``) from the LU factors; batches broadcast."""
    n = lu.shape[-1]
    dt = xp.result_type(lu, b)
    if dt == xp.float32:  # both substitutions in float64, rounded once
        lu, b = lu.astype(xp.float64), b.astype(xp.float64)
    batch = xp.broadcast_shapes(lu.shape[:-2], b.shape[:-2])
    lu = xp.broadcast_to(lu, batch + lu.shape[-2:])
    b = xp.broadcast_to(b, batch + b.shape[-2:])
    perm = xp.broadcast_to(_perm(piv, n), batch + (n,))
    wide = dt == xp.float32
    if not adjoint:
        y = _trsm(lu, _take_rows(b, perm), upper=False, unit=True, wide=wide)
        return _trsm(lu, y, upper=True, wide=wide).astype(dt, copy=False)
    luT = xp.swapaxes(lu, -1, -2)
    z = _trsm(luT, _trsm(luT, b, upper=False, wide=wide), upper=True, unit=True, wide=wide)
    out = xp.empty_like(z)
    xp.put_along_axis(out, perm[..., :, None], z, axis=-2)
    return out.astype(dt, copy=False)
