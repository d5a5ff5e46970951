"""The rest of torch.linalg on NumPy: triangular solves, LU (``lu_factor``/``lu``/
``lu_solve``/``lu_unpack``), the ``_ex`` variants (``info`` instead of an error), ``lstsq``,
``matrix_rank``, ``cond``, ``eigvalsh``, ``multi_dot``, ``tensorinv``/``tensorsolve``,
``vander``, ``vecdot``, the legacy ``cholesky_solve``/``cholesky_inverse``/
``triangular_solve``/``chain_matmul``, and ``index_reduce``.

NumPy has no triangular solve and no LU, so both are written here, batched over leading
dimensions: LAPACK's unblocked ``getf2`` (partial pivoting, the first largest pivot, 1-based
int32 pivots, ``info`` the first exactly-zero pivot) and forward/back substitution (a zero on
the diagonal gives inf/nan, as LAPACK's ``trsm``). Each primitive has torch's node, its
derivative written in gradsum ops (double backward works); torch's composites are composed
the same way, so their ``grad_fn`` is torch's.

Example:
    >>> import gradsum
    >>> A = gradsum.tensor([[2.0, 0.0], [1.0, 4.0]], dtype=gradsum.float64)
    >>> gradsum.linalg.solve_triangular(A, gradsum.tensor([[2.0], [9.0]],
    ...                                 dtype=gradsum.float64), upper=False).tolist()
    [[1.0], [2.0]]
"""

from __future__ import annotations

import math
import warnings
from collections import namedtuple
from collections.abc import Sequence
from typing import Any

import gradsum.ops as F
from gradsum import _dtype as D
from gradsum._autocast import autocast_policy
from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.autograd.graph import Node
from gradsum.ops import _scipy_special
from gradsum.ops._core import _make, needs_grad, record, register, wrap_dim
from gradsum.ops.compose import matrix_power
from gradsum.ops.decomp import (
    _ERR,
    LinalgCholeskyExBackward0,
    LinAlgError,
    LinalgInvExBackward0,
    LinalgSolveExBackward0,
    _batch_prefix,
    _check_float,
    _check_square,
    _mT,
    _MultiOutput,
    _pinv_backward,
    _tname,
    cholesky,
    eigh,
    inv,
    matrix_norm,
    pinv,
    svdvals,
)
from gradsum.ops.more import linalg
from gradsum.ops.selection import _along_key, _at

cholesky_ex_result = namedtuple("linalg_cholesky_ex", ["L", "info"])
inv_ex_result = namedtuple("linalg_inv_ex", ["inverse", "info"])
solve_ex_result = namedtuple("linalg_solve_ex", ["result", "info"])
lu_factor_result = namedtuple("linalg_lu_factor", ["LU", "pivots"])
lu_factor_ex_result = namedtuple("linalg_lu_factor_ex", ["LU", "pivots", "info"])
lu_result = namedtuple("linalg_lu", ["P", "L", "U"])
lu_unpack_result = namedtuple("lu_unpack", ["P", "L", "U"])
lstsq_result = namedtuple("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])
triangular_solve_result = namedtuple("triangular_solve", ["solution", "cloned_coefficient"])

_WARNED: set[str] = set()


def _warn_once(key: str, msg: str) -> None:
    """torch's ``TORCH_WARN_ONCE``: the first call in the process warns, later ones do not."""
    if key not in _WARNED:
        _WARNED.add(key)
        warnings.warn(msg, UserWarning, stacklevel=3)


def _require(name: str, arg: str, pos: int, t: Any) -> Any:
    if not isinstance(t, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not "
                        f"{type(t).__name__}. Wrap it with gradsum.tensor().")
    return t._array


def _same_dtype(name: str, a: Any, b: Any, an: str = "A", bn: str = "B") -> None:
    if a.dtype != b.dtype:
        raise RuntimeError(f"{name}: Expected {an} and {bn} to have the same dtype, but found "
                           f"{an} of type {_tname(a.dtype)} and {bn} of type {_tname(b.dtype)} "
                           "instead. Convert one of them.")


def _batch(name: str, a: Any, b: Any) -> tuple[int, ...]:
    try:
        return tuple(xp.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    except ValueError:
        raise RuntimeError(f"{name}: the batch dimensions of {tuple(a.shape)} and "
                           f"{tuple(b.shape)} do not broadcast") from None


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


def _unpack_arrays(lu: Any, piv: Any) -> tuple[Any, Any, Any]:
    m, n = lu.shape[-2:]
    k = min(m, n)
    eye = xp.eye(m, k, dtype=lu.dtype)
    L = xp.tril(lu[..., :, :k], -1) + eye
    U = xp.triu(lu[..., :k, :])
    perm = _perm(piv, m)
    P = xp.zeros(lu.shape[:-2] + (m, m), dtype=lu.dtype)
    xp.put_along_axis(P, perm[..., None, :], 1.0, axis=-2)
    return P, L, U


# == solve_triangular ==========================================================================
class LinalgSolveTriangularBackward0(Node):
    """``gB = A^{-T} gX`` (a triangular solve), ``gA = -gB X^T`` projected onto A's
    triangle (without the diagonal when ``unitriangular``)."""

    __slots__ = ("left", "shapes", "unit", "upper")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        a, x = self.saved()
        gb = solve_triangular(_mT(a), g, upper=not self.upper, left=self.left,
                              unitriangular=self.unit)
        ga = None
        if self.needs(0):
            ga = F.neg(F.matmul(gb, _mT(x)) if self.left else F.matmul(_mT(x), gb))
            ga = F.triu(ga, int(self.unit)) if self.upper else F.tril(ga, -int(self.unit))
            ga = F.sum_to(ga, self.shapes[0])
        return ga, (F.sum_to(gb, self.shapes[1]) if self.needs(1) else None)


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True,
                     unitriangular: bool = False) -> Tensor:
    """The solution ``X`` of ``A X = B`` (``X A = B`` with ``left=False``) for triangular
    ``A``: only its ``upper`` (or lower) triangle is read, its diagonal taken as ones when
    ``unitriangular``. Batch dimensions broadcast; a zero on the diagonal gives inf/nan.

    Example:
        >>> import gradsum
        >>> A = gradsum.tensor([[2.0, 1.0], [0.0, 4.0]])
        >>> gradsum.linalg.solve_triangular(A, gradsum.tensor([[3.0], [4.0]]),
        ...                                 upper=True).tolist()
        [[1.0], [1.0]]
    """
    name = "linalg.solve_triangular"
    a = _check_float(name, A)
    b = _require("linalg_solve_triangular", "B", 2, B)
    if a.ndim < 2 or b.ndim < 2:
        which = "A" if a.ndim < 2 else "B"
        raise RuntimeError(f"torch.{name}: The input tensor {which} must have at least 2 "
                           "dimensions.")
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{a.shape[-2]} by {a.shape[-1]} matrices")
    _same_dtype(name, a, b)
    n = a.shape[-1]
    if (b.shape[-2] if left else b.shape[-1]) != n:
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and "
                           f"{b.shape[-2]}x{b.shape[-1]})")
    batch = _batch(name, a, b)
    aa = xp.broadcast_to(a, batch + a.shape[-2:])
    bb = xp.broadcast_to(b, batch + b.shape[-2:])
    if left:
        out = _trsm(aa, bb, upper, unitriangular)
    else:  # X A = B  <=>  A^T X^T = B^T
        out = xp.swapaxes(_trsm(xp.swapaxes(aa, -1, -2), xp.swapaxes(bb, -1, -2), not upper,
                                unitriangular), -1, -2)
    out = xp.ascontiguousarray(out).astype(a.dtype, copy=False)
    if not needs_grad(A, B):
        return _make(out)
    node = LinalgSolveTriangularBackward0()
    node.upper, node.left, node.unit, node.shapes = upper, left, unitriangular, (a.shape, b.shape)
    t = record(node, (A, B), out)
    node.save(A, outputs=(t,))
    return t


class TriangularSolveBackward0(_MultiOutput):
    """torch's ``triangular_solve_backward``: the solution's rule, plus the gradient of the
    cloned coefficient added to A's."""

    __slots__ = ("shapes", "transpose", "unit", "upper")
    num_outputs = 2

    def backward(self, gx: Tensor | None, gm: Tensor | None
                 ) -> tuple[Tensor | None, Tensor | None]:
        a, x = self.saved()
        gb = ga = None
        if gx is not None:
            at = a if self.transpose else _mT(a)
            up = self.upper if self.transpose else not self.upper
            gb = solve_triangular(at, gx, upper=up, unitriangular=self.unit)
            if self.needs(1):
                ga = F.neg(F.matmul(x, _mT(gb)) if self.transpose else F.matmul(gb, _mT(x)))
                ga = F.triu(ga, int(self.unit)) if self.upper else F.tril(ga, -int(self.unit))
        if gm is not None and self.needs(1):
            ga = gm if ga is None else F.add(ga, gm)
        gb = F.sum_to(gb, self.shapes[0]) if gb is not None and self.needs(0) else None
        ga = F.sum_to(ga, self.shapes[1]) if ga is not None else None
        return gb, ga


def triangular_solve(b: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False) -> Any:
    """``torch.triangular_solve`` (deprecated in torch: prefer ``linalg.solve_triangular``):
    ``(solution, cloned_coefficient)`` of ``op(A) X = b``, ``op`` the transpose when
    ``transpose``; the coefficient is ``A`` broadcast to the batch, copied.

    Example:
        >>> import gradsum
        >>> A = gradsum.tensor([[2.0, 1.0], [0.0, 1.0]])
        >>> gradsum.triangular_solve(gradsum.tensor([[3.0], [1.0]]), A).solution.tolist()
        [[1.0], [1.0]]
    """
    x = _require("triangular_solve", "self", 1, b)
    a = _require("triangular_solve", "A", 2, A)
    _warn_once("triangular_solve", (
        "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangular"
        "and will be removed in a future PyTorch release.\ntorch.linalg.solve_triangular has "
        "its arguments reversed and does not return a copy of one of the inputs.\n"
        "X = torch.triangular_solve(B, A).solution\nshould be replaced with\n"
        "X = torch.linalg.solve_triangular(A, B)."))
    if x.ndim < 2:
        raise RuntimeError(f"torch.triangular_solve: The input tensor b must have at least 2 "
                           f"dimensions (got shape {tuple(x.shape)}).")
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"triangular_solve: A must be batches of square matrices, but they "
                           f"are {a.shape[-2] if a.ndim > 1 else 1} by {a.shape[-1]} matrices")
    _same_dtype("triangular_solve", x, a, "self", "A")
    if x.dtype.kind not in "fV":
        raise D.not_implemented("triangular_solve_cpu", x.dtype, "Convert with .double().")
    if x.shape[-2] != a.shape[-1]:
        raise RuntimeError(f"Incompatible matrix sizes for triangular_solve: each A matrix is "
                           f"{a.shape[-1]} by {a.shape[-1]} but each b matrix is "
                           f"{x.shape[-2]} by {x.shape[-1]}")
    batch = _batch("triangular_solve", x, a)
    aa = xp.broadcast_to(a, batch + a.shape[-2:])
    bb = xp.broadcast_to(x, batch + x.shape[-2:])
    at = xp.swapaxes(aa, -1, -2) if transpose else aa
    sol = xp.ascontiguousarray(_trsm(at, bb, upper != transpose, unitriangular))
    sol = sol.astype(x.dtype, copy=False)
    coef = xp.array(aa, copy=True)
    if not needs_grad(b, A):
        return triangular_solve_result(_make(sol), _make(coef))
    node = TriangularSolveBackward0()
    node.upper, node.transpose, node.unit = upper, transpose, unitriangular
    node.shapes = (x.shape, a.shape)
    ts = [record(node, (b, A), sol, 0), record(node, (b, A), coef, 1)]
    node.save(A, outputs=(ts[0],))
    return triangular_solve_result(*ts)


# == the _ex variants ==========================================================================
def _chol_partial(x: Any) -> tuple[Any, Any]:
    """Left-looking Cholesky (LAPACK ``potf2``) on a batch: ``(L, info)``; where it fails at
    column ``j`` the diagonal keeps ``a_jj - |L_j|^2`` and later columns the input."""
    n = x.shape[-1]
    batch = x.shape[:-2]
    a = xp.tril(xp.array(x, copy=True)).reshape((-1, n, n))
    info = xp.zeros(a.shape[0], dtype=xp.int32)
    with xp.errstate(**_ERR):
        for j in range(n):
            live = info == 0
            d = a[:, j, j] - (a[:, j, :j] ** 2).sum(-1)
            bad = live & ~(d > 0)
            a[bad, j, j] = d[bad]
            info[bad] = j + 1
            ok = live & ~bad
            if not ok.any():
                continue
            s = xp.sqrt(d[ok])
            a[ok, j, j] = s
            if j + 1 < n:
                col = a[ok, j + 1:, j] - (a[ok, j + 1:, :j] @ a[ok, j, :j, None])[..., 0]
                a[ok, j + 1:, j] = col / s[:, None]
    return a.reshape(batch + (n, n)), info.reshape(batch)


def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False) -> Any:
    """``(L, info)``: :func:`gradsum.linalg.cholesky` without the error; ``info`` (int32) is
    the order of the first leading minor that is not positive-definite, 0 on success.

    Example:
        >>> import gradsum
        >>> gradsum.linalg.cholesky_ex(gradsum.tensor([[1.0, 2.0], [2.0, 1.0]])).info.item()
        2
    """
    x = _check_square("linalg.cholesky_ex", A)
    try:
        if x.size:
            xp.linalg.cholesky(xp.tril(x) + xp.swapaxes(xp.tril(x, -1), -1, -2))
    except xp.linalg.LinAlgError:
        if check_errors:
            cholesky(A, upper=upper)  # raises torch's LinAlgError
        out, info = _chol_partial(x)
        out = out.astype(x.dtype, copy=False)
        if upper:
            out = xp.ascontiguousarray(xp.swapaxes(out, -1, -2))
        if not needs_grad(A):
            return cholesky_ex_result(_make(out), _make(info))
        node = LinalgCholeskyExBackward0()
        node.upper = upper
        t = record(node, (A,), out)
        node.save(outputs=(t,))
        return cholesky_ex_result(t, _make(info))
    return cholesky_ex_result(cholesky(A, upper=upper),
                              _make(xp.zeros(x.shape[:-2], dtype=xp.int32)))


def _solve_lu(name: str, a: Any, b: Any) -> tuple[Any, Any]:
    """``(A^{-1} B, info)``: LAPACK's ``gesv`` when it succeeds, else LU and substitution
    (inf/nan, as torch's, for a singular matrix); ``b`` already broadcast to ``a``'s batch."""
    try:
        out = xp.linalg.solve(a, b) if a.size and b.size else xp.zeros(b.shape, a.dtype)
        return out, xp.zeros(a.shape[:-2], dtype=xp.int32)
    except xp.linalg.LinAlgError:
        lu, piv, info = _getrf(a)
        return _getrs(lu, piv, b, adjoint=False), info


def inv_ex(A: Tensor, *, check_errors: bool = False) -> Any:
    """``(inverse, info)``: :func:`gradsum.linalg.inv` without the error; ``info`` (int32) is
    the index of the first zero pivot of the LU factorisation, 0 if invertible.

    Example:
        >>> import gradsum
        >>> gradsum.linalg.inv_ex(gradsum.tensor([[1.0, 2.0], [2.0, 4.0]])).info.item()
        2
    """
    x = _check_square("linalg.inv_ex", A)
    out, info = _solve_lu("linalg.inv_ex", x, xp.broadcast_to(xp.eye(x.shape[-1],
                                                                      dtype=x.dtype), x.shape))
    if check_errors and info.any():
        inv(A)  # raises torch's LinAlgError
    out = xp.ascontiguousarray(out).astype(x.dtype, copy=False)
    if not needs_grad(A):
        return inv_ex_result(_make(out), _make(info))
    node = LinalgInvExBackward0()
    t = record(node, (A,), out)
    node.save(outputs=(t,))
    return inv_ex_result(t, _make(info))


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False) -> Any:
    """``(result, info)``: :func:`gradsum.linalg.solve` without the singular-matrix error
    (``info`` as in :func:`inv_ex`).

    Example:
        >>> import gradsum
        >>> A = gradsum.tensor([[2.0, 0.0], [0.0, 4.0]])
        >>> gradsum.linalg.solve_ex(A, gradsum.tensor([2.0, 2.0])).result.tolist()
        [1.0, 0.5]
    """
    from gradsum.ops.decomp import solve

    a = _check_square("linalg.solve_ex", A)
    b = _require("linalg_solve_ex", "B", 2, B)
    try:
        return solve_ex_result(solve(A, B, left=left), _make(xp.zeros(
            xp.broadcast_shapes(a.shape[:-2], b.shape[:-2] if b.ndim >= 2 else ()),
            dtype=xp.int32)))
    except LinAlgError:
        if check_errors:
            raise
    vector = b.ndim == 1 or (left and b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])
    bm = b[..., None] if vector else b
    batch = _batch("linalg.solve_ex", a, bm)
    aa = xp.broadcast_to(a, batch + a.shape[-2:])
    bb = xp.broadcast_to(bm, batch + bm.shape[-2:])
    if left:
        out, info = _solve_lu("linalg.solve_ex", aa, bb)
    else:
        out, info = _solve_lu("linalg.solve_ex", xp.swapaxes(aa, -1, -2), xp.swapaxes(bb, -1, -2))
        out = xp.swapaxes(out, -1, -2)
    out = xp.ascontiguousarray(out[..., 0] if vector else out).astype(a.dtype, copy=False)
    if not needs_grad(A, B):
        return solve_ex_result(_make(out), _make(info))
    node = LinalgSolveExBackward0()
    node.left, node.vector, node.shapes = left, vector, (a.shape, b.shape)
    t = record(node, (A, B), out)
    node.save(A, outputs=(t,))
    return solve_ex_result(t, _make(info))


# == LU ========================================================================================
def _lu_backward(gL: Tensor | None, gU: Tensor | None, P: Tensor, L: Tensor, U: Tensor
                 ) -> Tensor:
    """torch's ``linalg_lu_backward`` (real case, pivoting)."""
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    st = solve_triangular
    if m == n:
        ga = F.tril(F.matmul(_mT(L), gL), -1) if gL is not None else None
        if gU is not None:
            gu = F.triu(F.matmul(gU, _mT(U)))
            ga = gu if ga is None else F.add(ga, gu)
        ga = st(_mT(U), ga, upper=False, left=False)
        ga = st(_mT(L), ga, upper=True, unitriangular=True)
        return F.matmul(P, ga)
    if m < n:
        U1 = F.narrow(U, -1, 0, k)
        ga = F.matmul(_mT(L), gL) if gL is not None else None
        if gU is not None:
            gu = F.matmul(F.triu(gU), _mT(U))
            ga = F.neg(gu) if ga is None else F.sub(ga, gu)
        ga = st(_mT(U1), F.tril(ga, -1), upper=False, left=False)
        if gU is not None:
            ga = F.cat([F.add(ga, F.triu(F.narrow(gU, -1, 0, k))), F.narrow(gU, -1, k, n - k)],
                       -1)
        ga = st(_mT(L), ga, upper=True, unitriangular=True)
        if gU is None:
            ga = F.cat([ga, F.zeros_like(F.narrow(U, -1, k, n - k))], -1)
        return F.matmul(P, ga)
    L1 = F.narrow(L, -2, 0, k)
    if gL is not None:  # (L's unit upper part carries no gradient)
        gL = F.cat([F.tril(F.narrow(gL, -2, 0, k), -1), F.narrow(gL, -2, k, m - k)], -2)
    ga = F.matmul(gU, _mT(U)) if gU is not None else None
    if gL is not None:
        gl = F.matmul(_mT(L), gL)
        ga = F.neg(gl) if ga is None else F.sub(ga, gl)
    ga = st(_mT(L1), F.triu(ga), upper=True, unitriangular=True)
    if gL is not None:
        ga = F.cat([F.add(ga, F.tril(F.narrow(gL, -2, 0, k), -1)), F.narrow(gL, -2, k, m - k)],
                   -2)
    ga = st(_mT(U), ga, upper=False, left=False)
    if gL is None:
        ga = F.cat([ga, F.zeros_like(F.narrow(L, -2, k, m - k))], -2)
    return F.matmul(P, ga)


class LinalgLuFactorExBackward0(_MultiOutput):
    __slots__ = ("pivots",)
    num_outputs = 3

    def backward(self, g: Tensor | None, *_: Tensor | None) -> Tensor | None:
        if g is None:
            return None
        (lu,) = self.saved()
        P = lu_unpack(lu.detach(), _make(self.pivots), unpack_data=False).P
        L, U = _unpacked_L(lu), _unpacked_U(lu)
        m, n = lu.shape[-2], lu.shape[-1]
        k = min(m, n)
        return _lu_backward(F.narrow(g, -1, 0, k), F.narrow(g, -2, 0, k), P, L, U)


def _unpacked_L(lu: Tensor) -> Tensor:
    m, n = lu.shape[-2], lu.shape[-1]
    k = min(m, n)
    return F.add(F.tril(F.narrow(lu, -1, 0, k), -1), _make(xp.eye(m, k, dtype=lu._array.dtype)))


def _unpacked_U(lu: Tensor) -> Tensor:
    k = min(lu.shape[-2], lu.shape[-1])
    return F.triu(F.narrow(lu, -2, 0, k))


def _lu_check(name: str, A: Tensor, pivot: bool) -> Any:
    x = _check_float(name, A)
    if x.ndim < 2:
        raise RuntimeError(f"torch.{name}: The input tensor A must have at least 2 dimensions.")
    if not pivot:
        raise RuntimeError(f"{name}: LU without pivoting is not implemented on the CPU")
    return x


def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False) -> Any:
    """``(LU, pivots, info)``: the packed LU factorisation with partial pivoting (LAPACK's
    ``getrf``: 1-based int32 ``pivots``); ``info`` the first zero pivot, 0 if none.

    Example:
        >>> import gradsum
        >>> r = gradsum.linalg.lu_factor_ex(gradsum.tensor([[1.0, 2.0], [3.0, 4.0]]))
        >>> r.pivots.tolist(), r.info.item()
        ([2, 2], 0)
    """
    x = _lu_check("linalg.lu_factor_ex", A, pivot)
    lu, piv, info = _getrf(x)
    if check_errors and info.any():
        _raise_lu(info, x)
    lu = lu.astype(x.dtype, copy=False)
    if not needs_grad(A):
        return lu_factor_ex_result(_make(lu), _make(piv), _make(info))
    node = LinalgLuFactorExBackward0()
    node.pivots = piv
    t = record(node, (A,), lu)
    node.save(outputs=(t,))
    return lu_factor_ex_result(t, _make(piv), _make(info))


def _raise_lu(info: Any, x: Any) -> None:
    flat = info.reshape(-1)
    i = int(xp.argmax(flat > 0))
    k = int(flat[i])
    pre = f"(Batch element {i}): " if x.ndim > 2 else ""
    raise RuntimeError(f"torch.linalg.lu_factor: {pre}U[{k},{k}] is zero and using it on "
                       "lu_solve would result in a division by zero. If you still want to "
                       "perform the factorization, consider calling linalg.lu(A, pivot) or "
                       "linalg.lu_factor_ex(A, pivot)")


def lu_factor(A: Tensor, *, pivot: bool = True) -> Any:
    """``(LU, pivots)`` of :func:`lu_factor_ex`; RuntimeError when a pivot is zero.

    Example:
        >>> import gradsum
        >>> LU, piv = gradsum.linalg.lu_factor(gradsum.tensor([[1.0, 2.0], [3.0, 4.0]]))
        >>> [round(v, 4) for v in LU.flatten().tolist()]
        [3.0, 4.0, 0.3333, 0.6667]
    """
    x = _lu_check("linalg.lu_factor", A, pivot)
    LU, piv, info = lu_factor_ex(A, pivot=pivot)
    if info._array.any():
        _raise_lu(info._array, x)
    return lu_factor_result(LU, piv)


class LinalgLuBackward0(_MultiOutput):
    __slots__ = ()
    num_outputs = 3

    def backward(self, gP: Tensor | None, gL: Tensor | None, gU: Tensor | None
                 ) -> Tensor | None:
        if gL is None and gU is None:
            return None
        P, L, U = self.saved()
        return _lu_backward(gL, gU, P, L, U)


def lu(A: Tensor, *, pivot: bool = True) -> Any:
    """``(P, L, U)`` with ``A = P L U`` (``L`` unit lower ``(m, k)``, ``U`` upper ``(k, n)``,
    ``k = min(m, n)``).

    Example:
        >>> import gradsum
        >>> P, L, U = gradsum.linalg.lu(gradsum.tensor([[0.0, 1.0], [2.0, 3.0]]))
        >>> P.tolist(), U.tolist()
        ([[0.0, 1.0], [1.0, 0.0]], [[2.0, 3.0], [0.0, 1.0]])
    """
    x = _lu_check("linalg.lu", A, pivot)
    lu_a, piv, _ = _getrf(x)
    P, L, U = (o.astype(x.dtype, copy=False) for o in _unpack_arrays(lu_a, piv))
    if not needs_grad(A):
        return lu_result(_make(P), _make(L), _make(U))
    node = LinalgLuBackward0()
    tP = _make(P)
    tL, tU = record(node, (A,), L, 1), record(node, (A,), U, 2)
    node.save(tP, outputs=(tL, tU))
    return lu_result(tP, tL, tU)


class LuUnpackBackward0(_MultiOutput):
    """torch's ``lu_unpack_backward``: L's strict lower and U's upper triangle, packed."""

    __slots__ = ("mn",)
    num_outputs = 3

    def backward(self, gP: Tensor | None, gL: Tensor | None, gU: Tensor | None
                 ) -> Tensor | None:
        m, n = self.mn
        k = min(m, n)
        gl = F.tril(gL, -1) if gL is not None else None
        gu = F.triu(gU) if gU is not None else None
        if m == n:
            if gl is None or gu is None:
                return gl if gu is None else gu
            return F.add(gl, gu)
        if m < n:  # gl (m, m), gu (m, n)
            if gl is None:
                return gu
            gl = F.cat([gl, F.zeros(gl.shape[:-1] + (n - k,), dtype=gl.dtype)], -1)
            return gl if gu is None else F.add(gu, gl)
        if gu is None:  # m > n: gl (m, n), gu (n, n)
            return gl
        gu = F.cat([gu, F.zeros(gu.shape[:-2] + (m - k, n), dtype=gu.dtype)], -2)
        return gu if gl is None else F.add(gl, gu)


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True,
              unpack_pivots: bool = True) -> Any:
    """``(P, L, U)`` from the packed ``(LU, pivots)`` of :func:`gradsum.linalg.lu_factor`
    (``unpack_data=False``: empty L and U; ``unpack_pivots=False``: empty P).

    Example:
        >>> import gradsum
        >>> LU, piv = gradsum.linalg.lu_factor(gradsum.tensor([[0.0, 1.0], [2.0, 3.0]]))
        >>> gradsum.lu_unpack(LU, piv).P.tolist()
        [[0.0, 1.0], [1.0, 0.0]]
    """
    lu_a = _require("lu_unpack", "LU_data", 1, LU_data)
    piv = _require("lu_unpack", "LU_pivots", 2, LU_pivots)
    if piv.dtype != xp.int32:
        raise RuntimeError("lu_unpack: LU_pivots is expected to be a contiguous tensor of "
                           f"torch.int32 dtype. Note: this function is intended to be used with "
                           f"the output produced by torch.linalg.lu_factor (got "
                           f"{_tname(piv.dtype)})")
    if lu_a.ndim < 2:
        raise RuntimeError(f"torch.lu_unpack: Expected tensor with 2 or more dimensions. Got "
                           f"size: {list(lu_a.shape)} instead")
    m, n = lu_a.shape[-2:]
    if piv.shape != lu_a.shape[:-2] + (min(m, n),):
        raise RuntimeError(f"lu_unpack: LU_pivots of shape {list(piv.shape)} does not match "
                           f"LU_data of shape {list(lu_a.shape)}")
    P, L, U = _unpack_arrays(lu_a, piv)
    empty = xp.zeros((0,), dtype=lu_a.dtype)
    tP = _make(P if unpack_pivots else empty)
    if not unpack_data:
        return lu_unpack_result(tP, _make(empty), _make(empty.copy()))
    if not needs_grad(LU_data):
        return lu_unpack_result(tP, _make(L), _make(U))
    node = LuUnpackBackward0()
    node.mn = (m, n)
    return lu_unpack_result(tP, record(node, (LU_data,), L, 1), record(node, (LU_data,), U, 2))


class LinalgLuSolveBackward0(Node):
    """torch's ``linalg_lu_solve_LU`` for LU, and an adjoint LU solve for B."""

    __slots__ = ("adjoint", "left", "pivots", "shapes")

    def backward(self, gX: Tensor) -> tuple[Tensor | None, Tensor | None]:
        LU, X = self.saved()
        left, adj = self.left, self.adjoint
        piv = _make(self.pivots)
        gB = lu_solve(LU, piv, gX, left=left, adjoint=not adj) if self.needs(2) else None
        gLU = None
        if self.needs(0):
            P = lu_unpack(LU.detach(), piv, unpack_data=False).P
            L, U = _unpacked_L(LU), _unpacked_U(LU)
            st = solve_triangular
            if left != adj:
                gR = st(_mT(U), F.neg(F.matmul(gX if left else _mT(gX), _mT(X) if left else X)),
                        upper=False)
                gL = F.tril(st(_mT(L), F.matmul(gR, _mT(U)), upper=True, unitriangular=True),
                            -1)
                gLU = F.add(gL, F.triu(gR))
            else:
                gR = F.neg(F.matmul(F.matmul(F.matmul(_mT(P), X if left else _mT(X)),
                                             _mT(gX) if left else gX), P))
                gR = st(_mT(L), gR, upper=True, left=False, unitriangular=True)
                gU = F.triu(st(_mT(U), F.matmul(_mT(L), gR), upper=False, left=False))
                gLU = F.add(F.tril(gR, -1), gU)
            gLU = F.sum_to(gLU, self.shapes[0])
        if gB is not None:
            gB = F.sum_to(gB, self.shapes[1])
        return gLU, None, gB


def lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True,
             adjoint: bool = False) -> Tensor:
    """The solution of ``A X = B`` from :func:`lu_factor`'s ``(LU, pivots)``: ``A^T X = B``
    with ``adjoint``, ``X A = B`` with ``left=False``. Batch dimensions broadcast.

    Example:
        >>> import gradsum
        >>> LU, piv = gradsum.linalg.lu_factor(gradsum.tensor([[2.0, 0.0], [0.0, 4.0]]))
        >>> gradsum.linalg.lu_solve(LU, piv, gradsum.tensor([[2.0], [2.0]])).tolist()
        [[1.0], [0.5]]
    """
    name = "linalg.lu_solve"
    lu_a = _check_float(name, LU)
    piv = _require("linalg_lu_solve", "pivots", 2, pivots)
    b = _require("linalg_lu_solve", "B", 3, B)
    if b.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor B must have at least 2 dimensions.")
    if lu_a.ndim < 2 or lu_a.shape[-1] != lu_a.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{lu_a.shape[-2] if lu_a.ndim > 1 else 1} by {lu_a.shape[-1]} "
                           "matrices")
    _same_dtype(name, lu_a, b, "LU", "B")
    if piv.dtype != xp.int32:
        raise RuntimeError(f"{name}: pivots should be a Tensor of scalar type int32 (got "
                           f"{_tname(piv.dtype)})")
    n = lu_a.shape[-1]
    if (b.shape[-2] if left else b.shape[-1]) != n:
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and "
                           f"{b.shape[-2]}x{b.shape[-1]})")
    if piv.shape != lu_a.shape[:-1]:
        raise RuntimeError(f"{name}: Incompatible shapes of LU {list(lu_a.shape)} and pivots "
                           f"{list(piv.shape)}")
    if left:
        out = _getrs(lu_a, piv, b, adjoint)
    else:  # X A = B <=> A^T X^T = B^T (and X A^T = B <=> A X^T = B^T)
        out = xp.swapaxes(_getrs(lu_a, piv, xp.swapaxes(b, -1, -2), not adjoint), -1, -2)
    out = xp.ascontiguousarray(out).astype(lu_a.dtype, copy=False)
    if not needs_grad(LU, B):
        return _make(out)
    node = LinalgLuSolveBackward0()
    node.left, node.adjoint, node.pivots = left, adjoint, piv
    node.shapes = (lu_a.shape, b.shape)
    t = record(node, (LU, pivots, B), out)
    node.save(LU, outputs=(t,))
    return t


# == lstsq =====================================================================================
class LinalgLstsqBackward0(_MultiOutput):
    """torch's ``linalg_lstsq_backward``: the solution through ``pinv(A)``; the residuals
    ``|A X - B|^2`` (stationary in X) through ``2 (A X - B)``."""

    __slots__ = ("shapes", "vector")
    num_outputs = 4

    def backward(self, gX: Tensor | None, gR: Tensor | None, *_: Tensor | None
                 ) -> tuple[Tensor | None, Tensor | None]:
        A, B, X = self.saved()
        if self.vector:
            B, X = F.unsqueeze(B, -1), F.unsqueeze(X, -1)
            gX = F.unsqueeze(gX, -1) if gX is not None else None
        gA = gB = None
        if gX is not None:
            pA = pinv(A)
            if self.needs(0):
                gA = _pinv_backward(F.matmul(gX, _mT(B)), A, pA)
            if self.needs(1):
                gB = F.matmul(_mT(pA), gX)
        if gR is not None and gR.numel() > 0:
            r = F.mul(F.sub(F.matmul(A, X), B), F.mul(F.unsqueeze(gR, -2), 2.0))
            if self.needs(0):
                ra = F.matmul(r, _mT(X))
                gA = ra if gA is None else F.add(gA, ra)
            if self.needs(1):
                gB = F.neg(r) if gB is None else F.sub(gB, r)
        if gA is not None:
            gA = F.sum_to(gA, self.shapes[0])
        if gB is not None:
            if self.vector:
                gB = F.squeeze(gB, -1)
            gB = F.sum_to(gB, self.shapes[1])
        return gA, gB


_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def lstsq(A: Tensor, B: Tensor, rcond: float | None = None, *, driver: str | None = None
          ) -> Any:
    """``(solution, residuals, rank, singular_values)`` of the least-squares problem
    ``min |A X - B|``, the minimum-norm solution (computed as LAPACK's ``gelsd``; singular
    values below ``rcond * s_max`` count as zero, ``rcond`` by default ``eps * max(m, n)``).
    torch's rules for the other fields: ``residuals`` only when ``m > n``, the driver is not
    'gelsy' (the CPU default) and every matrix has full rank; ``rank`` except for 'gels';
    ``singular_values`` for 'gelsd'/'gelss' only; otherwise empty.

    Example:
        >>> import gradsum
        >>> A = gradsum.tensor([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
        >>> r = gradsum.linalg.lstsq(A, gradsum.tensor([[1.0], [2.0], [3.0]]), driver="gelsd")
        >>> r.solution.tolist(), r.residuals.tolist(), r.rank.item()
        ([[1.0], [2.0]], [9.0], 2)
    """
    name = "torch.linalg.lstsq"
    a = _check_float("linalg.lstsq", A)
    b = _require("linalg_lstsq", "b", 2, B)
    if driver is None:
        driver = "gelsy"
    if driver not in _DRIVERS:
        raise RuntimeError(f"{name}: parameter `driver` should be one of (gels, gelsy, gelsd, "
                           f"gelss)")
    if a.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    _same_dtype("linalg.lstsq", a, b)
    vector = b.ndim == a.ndim - 1 and b.shape == a.shape[:-1]
    bm = b[..., None] if vector else b
    if bm.ndim < 2:
        raise RuntimeError(f"{name}: input.dim() must be greater or equal to other.dim() and "
                           f"(input.dim() - other.dim()) <= 1")
    m, n = a.shape[-2:]
    if bm.shape[-2] != m:
        raise RuntimeError(f"{name}: input.size(-2) should match other.size(-2) (got {m} and "
                           f"{bm.shape[-2]})")
    batch = _batch(name, a, bm)
    k = bm.shape[-1]
    a64 = xp.broadcast_to(a.astype(xp.float64), batch + (m, n)).reshape((-1, m, n))
    b64 = xp.broadcast_to(bm.astype(xp.float64), batch + (m, k)).reshape((-1, m, k))
    eps = float(xp.finfo(a.dtype).eps)
    rc = eps * max(m, n) if rcond is None or rcond < 0 else float(rcond)
    sol = xp.zeros((a64.shape[0], n, k))
    for i in range(a64.shape[0]):
        if a64[i].size and b64[i].size:
            sol[i] = xp.linalg.lstsq(a64[i], b64[i], rcond=rc)[0]
    sv = xp.linalg.svd(a, compute_uv=False) if a.size else xp.zeros(a.shape[:-2] + (min(m, n),))
    smax = sv[..., :1] if sv.shape[-1] else sv
    rank = (sv > rc * smax).sum(-1).astype(xp.int64)
    sol = sol.reshape(batch + (n, k))
    full = bool((rank == n).all())
    if m > n and driver != "gelsy" and (driver == "gels" or full):
        res = ((a64 @ sol.reshape((-1, n, k)) - b64) ** 2).sum(-2).reshape(batch + (k,))
    else:
        res = xp.zeros((0,))
    sol_out = xp.ascontiguousarray(sol[..., 0] if vector else sol).astype(a.dtype)
    res = res.astype(a.dtype)
    rank_t = _make(rank if driver != "gels" else xp.zeros((0,), dtype=xp.int64))
    sv_t = _make(sv.astype(a.dtype) if driver in ("gelsd", "gelss") else
                 xp.zeros((0,), dtype=a.dtype))
    if not needs_grad(A, B):
        return lstsq_result(_make(sol_out), _make(res), rank_t, sv_t)
    node = LinalgLstsqBackward0()
    node.vector, node.shapes = vector, (a.shape, b.shape)
    ts = record(node, (A, B), sol_out, 0), record(node, (A, B), res, 1)
    node.save(A, B, outputs=(ts[0],))
    return lstsq_result(ts[0], ts[1], rank_t, sv_t)


# == rank, cond, eigvalsh ======================================================================
def _tol_array(v: Any) -> Any:
    return v._array.astype(xp.float64) if isinstance(v, Tensor) else xp.asarray(float(v))


def matrix_rank(A: Tensor, tol: Any = None, hermitian: bool = False, *, atol: Any = None,
                rtol: Any = None) -> Tensor:
    """The number of singular values (eigenvalue magnitudes with ``hermitian``) above
    ``max(atol, rtol * s_max)``, int64; ``rtol`` defaults to ``eps * max(m, n)`` unless
    ``atol > 0`` is given (then 0). ``tol`` is the legacy spelling of ``atol``.

    Example:
        >>> import gradsum
        >>> gradsum.linalg.matrix_rank(gradsum.ones(3, 3)).item()
        1
    """
    x = _check_float("linalg.matrix_rank", A)
    if x.ndim < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at "
                           "least 2 dimensions.")
    if tol is not None:
        atol, rtol = tol, 0.0
    m, n = x.shape[-2:]
    if hermitian:
        if m != n:
            raise RuntimeError(f"linalg.matrix_rank: A must be batches of square matrices, but "
                               f"they are {m} by {n} matrices")
        s = xp.abs(xp.linalg.eigvalsh(x)) if x.size else xp.zeros(x.shape[:-1])
    else:
        s = xp.linalg.svd(x, compute_uv=False) if x.size else xp.zeros(x.shape[:-2] + (0,))
    a_t = _tol_array(atol) if atol is not None else xp.asarray(0.0)
    default = float(xp.finfo(x.dtype).eps) * max(m, n)
    if rtol is not None:
        r_t = _tol_array(rtol)
    elif atol is not None:
        r_t = xp.where(a_t > 0, 0.0, default)
    else:
        r_t = xp.asarray(default)
    smax = s.max(axis=-1) if s.shape[-1] else xp.zeros(s.shape[:-1])
    tol_v = xp.maximum(a_t, r_t * smax)
    return _make(xp.asarray((s > tol_v[..., None]).sum(-1)).astype(xp.int64))


def cond(A: Tensor, p: Any = None) -> Tensor:
    """The condition number in the norm ``p`` (None/2/-2 from the singular values, for any
    shape; 'fro', 'nuc', inf, -inf, 1, -1 as ``norm(A) * norm(inv(A))`` for square
    matrices, inf for a singular one), composed as torch composes it.

    Example:
        >>> import gradsum
        >>> gradsum.linalg.cond(gradsum.tensor([[2.0, 0.0], [0.0, 0.5]])).item()
        4.0
    """
    x = _check_float("linalg.cond", A)
    if p is not None and not (isinstance(p, str) and p in ("fro", "nuc")) and not (
            not isinstance(p, str) and float(p) in (1.0, -1.0, 2.0, -2.0, math.inf, -math.inf)):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    if x.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor A must have at least 2 dimensions.")
    if p is None or (not isinstance(p, str) and abs(float(p)) == 2.0):
        s = svdvals(A)
        first, last = F.narrow(s, -1, 0, 1), F.narrow(s, -1, s.shape[-1] - 1, 1)
        neg = p is not None and float(p) < 0
        return F.squeeze(F.div(last, first) if neg else F.div(first, last), -1)
    if x.shape[-1] != x.shape[-2]:
        shown = int(p) if math.isfinite(float(p)) else p
        raise RuntimeError(f"linalg.cond(ord={shown}): A must be batches of square matrices, "
                           f"but they are {x.shape[-2]} by {x.shape[-1]} matrices")
    if p == "nuc":
        s = svdvals(A)
        return F.mul(F.sum(s, -1), F.sum(F.reciprocal(s), -1))
    inverse, info = inv_ex(A)
    mask = _make(xp.ascontiguousarray((info._array > 0)[..., None, None]))
    inverse.masked_fill_(mask, math.inf)  # (in place, as torch: its backward then raises)
    res = F.mul(matrix_norm(A, p), matrix_norm(inverse, p))
    return F.nan_to_num(res, math.inf, math.inf, -math.inf)


def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:
    """The eigenvalues of symmetric matrices, ascending (torch's node: the eigh's).

    Example:
        >>> import gradsum
        >>> gradsum.linalg.eigvalsh(gradsum.tensor([[2.0, 1.0], [1.0, 2.0]])).tolist()
        [1.0, 3.0]
    """
    return eigh(A, UPLO).eigenvalues


# == products ==================================================================================
def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """``torch.linalg.diagonal``: :func:`gradsum.diagonal` with the matrix dims last by
    default.

    Example:
        >>> import gradsum
        >>> gradsum.linalg.diagonal(gradsum.eye(2)).tolist()
        [1.0, 1.0]
    """
    return F.diagonal(A, offset, dim1, dim2)


def _chain_order(dims: list[int]) -> list[list[int]]:
    """The split points of the cheapest parenthesisation (the classic O(n^3) program)."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = -1
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] == -1 or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _chain(ts: list[Tensor], split: list[list[int]], i: int, j: int) -> Tensor:
    if i == j:
        return ts[i]
    k = split[i][j]
    return F.mm(_chain(ts, split, i, k), _chain(ts, split, k + 1, j))


def multi_dot(tensors: Sequence[Tensor]) -> Tensor:
    """The product of two or more matrices in the cheapest order; the first may be a row
    vector and the last a column vector (1-D), as torch.

    Example:
        >>> import gradsum
        >>> gradsum.linalg.multi_dot([gradsum.ones(2), gradsum.ones(2, 3), gradsum.ones(3)]).item()
        6.0
    """
    ts = list(tensors)
    n = len(ts)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    out_shape: list[int] = []
    first, last = ts[0], ts[-1]
    if first.dim() == 1:
        ts[0] = F.unsqueeze(first, 0)
    elif first.dim() == 2:
        out_shape.append(first.shape[0])
    else:
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got "
                           f"{first.dim()}D")
    if last.dim() == 1:
        ts[-1] = F.unsqueeze(last, -1)
    elif last.dim() == 2:
        out_shape.append(last.shape[1])
    else:
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got "
                           f"{last.dim()}D")
    for i in range(1, n - 1):
        if ts[i].dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {ts[i].dim()}D")
    for i in range(1, n):
        if ts[i].dtype != ts[0].dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but "
                               f"tensor 0 is {ts[0].dtype} and tensor {i} {ts[i].dtype}")
        if ts[i - 1].shape[-1] != ts[i].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i - 1} and {i} with shapes "
                               f"{list(tensors[i - 1].shape)} and {list(tensors[i].shape)} "
                               "cannot be multiplied")
    if n == 2:
        out = F.mm(ts[0], ts[1])
    elif n == 3:
        a, b, c, d = ts[0].shape[0], ts[1].shape[0], ts[2].shape[0], ts[2].shape[1]
        if (a * c) * (b + d) > (b * d) * (a + c):
            out = F.mm(ts[0], F.mm(ts[1], ts[2]))
        else:
            out = F.mm(F.mm(ts[0], ts[1]), ts[2])
    else:
        dims = [t.shape[0] for t in ts] + [ts[-1].shape[1]]
        out = _chain(ts, _chain_order(dims), 0, n - 1)
    return F.view(out, tuple(out_shape))


def chain_matmul(*matrices: Tensor) -> Tensor:
    """``torch.chain_matmul`` (deprecated in torch: prefer ``linalg.multi_dot``): the
    product of 2-D matrices; one matrix gives a copy.

    Example:
        >>> import gradsum
        >>> gradsum.chain_matmul(gradsum.eye(2), gradsum.ones(2, 2)).tolist()
        [[1.0, 1.0], [1.0, 1.0]]
    """
    _warn_once("chain_matmul", (
        "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. "
        "Use torch.linalg.multi_dot instead, which accepts a list of two or more tensors "
        "rather than multiple parameters."))
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for m in matrices:
        if m.dim() != 2:
            raise RuntimeError(f"Tensor dimension is {m.dim()}, expected 2 instead.")
    if len(matrices) == 1:
        return F.clone(matrices[0])
    return multi_dot(list(matrices))


def tensorinv(A: Tensor, ind: int = 2) -> Tensor:
    """The inverse of ``A`` seen as a linear map from its last dims to its first ``ind``
    dims: ``tensordot(tensorinv(A, ind), A, ind)`` is the identity.

    Example:
        >>> import gradsum
        >>> tuple(gradsum.linalg.tensorinv(gradsum.eye(4).reshape(4, 2, 2), ind=1).shape)
        (2, 2, 4)
    """
    x = _check_float("linalg.tensorinv", A)
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    start, end = x.shape[:ind], x.shape[ind:]
    p_end, p_start = math.prod(end), math.prod(start)
    if p_end != p_start:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {p_end} != {p_start}")
    # (torch's inverse comes from LAPACK in column-major layout, so its reshape is a
    # ``_reshape_alias``: recorded as such, though gradsum's inverse is row-major)
    return F.shape._reshape(inv(F.reshape(A, (p_end, p_end))), tuple(end) + tuple(start),
                            F.shape.ReshapeAliasBackward0, False)


def tensorsolve(A: Tensor, B: Tensor, dims: Sequence[int] | None = None) -> Tensor:
    """The ``X`` with ``tensordot(A, X, X.ndim) = B`` (``dims``: dims of ``A`` moved to the
    end first).

    Example:
        >>> import gradsum
        >>> A = gradsum.eye(6).reshape(2, 3, 6)
        >>> tuple(gradsum.linalg.tensorsolve(A, gradsum.ones(2, 3)).shape)
        (6,)
    """
    a = _check_float("linalg.tensorsolve", A)
    b = _require("linalg_tensorsolve", "B", 2, B)
    if dims is not None:
        nd = a.ndim
        src = [wrap_dim(d, nd) for d in dims]
        A = F.movedim(A, src, list(range(nd - len(src), nd)))
        a = A._array
    res_shape = a.shape[b.ndim:]
    rp, bp = math.prod(res_shape), math.prod(b.shape)
    if rp != bp:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:"
                           f"]) == prod(self.shape[:other.ndim]), but got {rp} != {bp}")
    from gradsum.ops.decomp import solve

    x = solve(F.reshape(A, (rp, rp)), F.flatten(B))
    return F.reshape(x, tuple(res_shape))


def vander(x: Tensor, *, N: int | None = None) -> Tensor:
    """The Vandermonde matrix: columns ``x**0, x**1, ..., x**(N-1)`` (``N`` defaults to the
    last dim of ``x``).

    Example:
        >>> import gradsum
        >>> gradsum.linalg.vander(gradsum.tensor([1, 2, 3])).tolist()
        [[1, 1, 1], [1, 2, 4], [1, 3, 9]]
    """
    a = _require("linalg_vander", "x", 1, x)
    if a.dtype.kind not in "fiu" or a.dtype == xp.float16:
        raise RuntimeError(f"linalg.vander supports floating point, complex, and integer "
                           f"tensors, but got {_tname(a.dtype)}")
    x_ = F.unsqueeze(x, -1) if a.ndim == 0 else x
    shape = list(x_.shape)
    n = shape[-1] if N is None else int(N)
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    res = F.cumprod(F.expand(F.unsqueeze(x_, -1), tuple(shape) + (n - 1,)), -1)
    ones = F.ones(tuple(shape) + (1,), dtype=res.dtype)
    return F.cat([ones, res], -1)


@autocast_policy("linalg_vecdot")
def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """The dot product of vectors along ``dim`` (batch dimensions broadcast).

    Example:
        >>> import gradsum
        >>> gradsum.linalg.vecdot(gradsum.tensor([1.0, 2.0]), gradsum.tensor([3.0, 4.0])).item()
        11.0
    """
    a = _require("linalg_vecdot", "x", 1, x)
    b = _require("linalg_vecdot", "y", 2, y)
    if not D.is_float_np(a.dtype):
        raise RuntimeError(f"linalg.vecdot: Expected a floating point or complex tensor as "
                           f"input. Got {_tname(a.dtype)}")
    if a.dtype != b.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found "
                           f"x of type {_tname(a.dtype)} and y of type {_tname(b.dtype)} "
                           "instead")
    return F.sum(F.mul(x, y), dim)


# == cholesky_solve / cholesky_inverse =========================================================
class CholeskySolveBackward0(Node):
    __slots__ = ("shapes", "upper")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        L, X = self.saved()
        gb = cholesky_solve(g, L, self.upper)
        gl = None
        if self.needs(1):
            c = F.matmul(gb, _mT(X))
            c = F.add(c, _mT(c))
            gl = F.neg(F.matmul(L, c) if self.upper else F.matmul(c, L))
            gl = F.sum_to(gl, self.shapes[1])
        return (F.sum_to(gb, self.shapes[0]) if self.needs(0) else None), gl


@autocast_policy("cholesky_solve")
def cholesky_solve(B: Tensor, L: Tensor, upper: bool = False) -> Tensor:
    """The solution of ``A X = B`` given the Cholesky factor of ``A`` (``A = L L^T``, or
    ``U^T U`` with ``upper``); only that triangle of ``L`` is read. Batches broadcast.

    Example:
        >>> import gradsum
        >>> L = gradsum.tensor([[2.0, 0.0], [1.0, 1.0]])
        >>> gradsum.cholesky_solve(gradsum.tensor([[4.0], [3.0]]), L).tolist()
        [[0.5], [1.0]]
    """
    b = _require("cholesky_solve", "self", 1, B)
    u = _require("cholesky_solve", "input2", 2, L)
    if b.ndim < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {b.ndim} dimensions "
                           "instead")
    if u.ndim < 2:
        raise RuntimeError(f"u should have at least 2 dimensions, but has {u.ndim} dimensions "
                           "instead")
    _same_dtype("cholesky_solve", b, u, "b", "u")
    if b.dtype.kind not in "fV":
        raise D.not_implemented("cholesky_solve_cpu", b.dtype, "Convert with .double().")
    if u.shape[-1] != u.shape[-2]:
        raise RuntimeError(f"cholesky_solve: A must be batches of square matrices, but they are "
                           f"{u.shape[-2]} by {u.shape[-1]} matrices")
    if b.shape[-2] != u.shape[-1]:
        raise RuntimeError(f"Incompatible matrix sizes for cholesky_solve: each A matrix is "
                           f"{u.shape[-1]} by {u.shape[-1]} but each b matrix is {b.shape[-2]} "
                           f"by {b.shape[-1]}")
    batch = _batch("cholesky_solve", b, u)
    uu = xp.broadcast_to(u, batch + u.shape[-2:])
    bb = xp.broadcast_to(b, batch + b.shape[-2:])
    lo = xp.swapaxes(uu, -1, -2) if upper else uu
    y = _trsm(lo, bb, upper=False)
    out = _trsm(xp.swapaxes(lo, -1, -2), y, upper=True)
    out = xp.ascontiguousarray(out).astype(b.dtype, copy=False)
    if not needs_grad(B, L):
        return _make(out)
    node = CholeskySolveBackward0()
    node.upper, node.shapes = upper, (b.shape, u.shape)
    t = record(node, (B, L), out)
    node.save(L, outputs=(t,))
    return t


class CholeskyInverseBackward0(Node):
    __slots__ = ("upper",)

    def backward(self, g: Tensor) -> Tensor:
        L, out = self.saved()
        c = F.matmul(out, F.matmul(F.add(g, _mT(g)), out))
        return F.neg(F.matmul(L, c) if self.upper else F.matmul(c, L))


@autocast_policy("cholesky_inverse")
def cholesky_inverse(L: Tensor, upper: bool = False) -> Tensor:
    """The inverse of ``A = L L^T`` (``U^T U`` with ``upper``) from its Cholesky factor;
    only that triangle is read. LinAlgError for a zero on the diagonal.

    Example:
        >>> import gradsum
        >>> gradsum.cholesky_inverse(gradsum.tensor([[2.0, 0.0], [0.0, 1.0]])).tolist()
        [[0.25, 0.0], [0.0, 1.0]]
    """
    u = _check_float("cholesky_inverse", L)
    if u.ndim < 2 or u.shape[-1] != u.shape[-2]:
        raise RuntimeError(f"cholesky_inverse: A must be batches of square matrices, but they "
                           f"are {u.shape[-2] if u.ndim > 1 else 1} by {u.shape[-1]} matrices")
    n = u.shape[-1]
    diag = xp.diagonal(u, 0, -2, -1).reshape((-1, n))
    for i, row in enumerate(diag):
        zero = xp.flatnonzero(row == 0)
        if zero.size:
            raise LinAlgError(f"cholesky_inverse: {_batch_prefix(u, i)}The diagonal element "
                              f"{int(zero[0]) + 1} is zero, the inversion could not be completed "
                              "because the input matrix is singular.")
    lo = xp.swapaxes(u, -1, -2) if upper else u
    linv = _trsm(lo, xp.broadcast_to(xp.eye(n, dtype=u.dtype), u.shape), upper=False)
    m = xp.swapaxes(linv, -1, -2) @ linv
    out = xp.ascontiguousarray(xp.tril(m) + xp.swapaxes(xp.tril(m, -1), -1, -2))
    out = out.astype(u.dtype, copy=False)
    if not needs_grad(L):
        return _make(out)
    node = CholeskyInverseBackward0()
    node.upper = upper
    t = record(node, (L,), out)
    node.save(L, outputs=(t,))
    return t


# == index_reduce ==============================================================================
_IDX_REDUCES = ("prod", "mean", "amax", "amin")


def _index_reduce_array(x: Any, d: int, idx: Any, s: Any, reduce: str, include_self: bool
                        ) -> Any:
    # (the slices reduced element by element through scatter_reduce's flat positions: each
    # position takes its sources in index order, as a loop over the index would)
    full = x.copy()
    along = [1] * x.ndim
    along[d] = -1
    key = _along_key(xp.broadcast_to(idx.reshape(along), s.shape), d, x.shape)
    out = xp.moveaxis(full, d, 0)
    if not include_self:
        if reduce in ("prod", "mean"):
            ident: Any = 1 if reduce == "prod" else 0
        elif out.dtype.kind in "fV":
            ident = -xp.inf if reduce == "amax" else xp.inf
        else:
            info = xp.iinfo(out.dtype)
            ident = info.min if reduce == "amax" else info.max
        out[idx] = ident
    if reduce == "prod":
        _at(xp.multiply, full, key, s)
    elif reduce == "amax":
        _at(xp.maximum, full, key, s)
    elif reduce == "amin":
        _at(xp.minimum, full, key, s)
    else:
        _at(xp.add, full, key, s)
        counts = xp.full(out.shape[0], 1 if include_self else 0, dtype=xp.int64)
        xp.add.at(counts, idx, 1)
        counts = xp.maximum(counts, 1).reshape((-1,) + (1,) * (out.ndim - 1))
        if out.dtype.kind in "fV":
            out /= counts.astype(out.dtype)
        else:
            out[...] = xp.floor_divide(out, counts)
    return xp.ascontiguousarray(xp.moveaxis(out, 0, d))


class IndexReduceBackward0(Node):
    """torch's ``index_reduce_backward`` (prod: zeros of ``self`` and single zeros of
    ``source`` handled as torch's; amax/amin: the gradient shared among ties)."""

    __slots__ = ("dim", "include_self", "index", "reduce")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        x, src, result = self.saved()
        d, index, red = self.dim, self.index, self.reduce
        if red == "prod":
            masked_self = F.masked_fill(x, F.eq(x, 0), 1)
            msr = index_reduce(masked_self, d, index, src, red, include_self=self.include_self)
            gs = F.div(F.mul(g, msr), masked_self)
            src_zero = F.eq(src, 0)
            nz = F.index_select(F.index_add(F.zeros_like(x), d, index, src_zero.to(x.dtype)),
                                d, index)
            single = F.logical_and(src_zero, F.eq(nz, 1))
            masked_src = F.masked_fill(src, single, 1)
            msrc_res = index_reduce(x, d, index, masked_src, red,
                                    include_self=self.include_self)
            g_src = F.where(single, F.index_select(F.mul(g, msrc_res), d, index),
                            F.div(F.index_select(F.mul(g, result), d, index),
                                  F.masked_fill(src, src_zero, 1)))
        elif red == "mean":
            N = F.ones_like(g) if self.include_self else F.zeros_like(g)
            N = F.index_add(N, d, index, F.ones_like(src))
            N = F.masked_fill(N, F.eq(N, 0), 1)
            gs = F.div(g, N)
            g_src = F.div(F.index_select(g, d, index), F.index_select(N, d, index))
        else:
            value = F.index_select(result, d, index)
            self_is = F.eq(x, result).to(x.dtype)
            src_is = F.eq(src, value).to(x.dtype)
            n_dist = F.index_add(self_is, d, index, src_is)
            gd = F.div(g, n_dist)
            gs = F.mul(self_is, gd)
            g_src = F.mul(src_is, F.index_select(gd, d, index))
        if not self.include_self:
            gs = F.index_fill(gs, d, index, 0)
        return (gs if self.needs(0) else None), (g_src if self.needs(1) else None)


def index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                 include_self: bool = True) -> Tensor:
    """``input`` with the slices of ``source`` reduced (``prod``, ``mean``, ``amax``,
    ``amin``) into the positions ``index`` along ``dim``; ``include_self=False`` leaves the
    input's values out of the positions written. Integer ``mean`` rounds down, as torch's.

    Example:
        >>> import gradsum
        >>> x = gradsum.tensor([1.0, 2.0, 3.0])
        >>> x.index_reduce(0, gradsum.tensor([0, 0]), gradsum.tensor([4.0, 5.0]), "prod").tolist()
        [20.0, 2.0, 3.0]
    """
    x = _require("index_reduce", "input", 1, input)
    idx = _require("index_reduce", "index", 3, index)
    s = _require("index_reduce", "source", 4, source)
    _warn_once("index_reduce", "index_reduce() is in beta and the API may change at any time.")
    if reduce not in _IDX_REDUCES:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    d = wrap_dim(dim, max(x.ndim, 1))
    if idx.dtype not in (xp.int64, xp.int32):
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: "
                         f"{_tname(idx.dtype)}")
    if idx.ndim > 1:
        raise IndexError("index_reduce_(): Index is supposed to be a vector")
    if x.dtype != s.dtype:
        raise RuntimeError(f"index_reduce_(): self ({_tname(x.dtype)}) and source "
                           f"({_tname(s.dtype)}) must have the same scalar type")
    if x.dtype.kind not in "fiu":
        raise D.not_implemented("index_reduce_func_cpu_", x.dtype, "Convert with .float().")
    if s.ndim != x.ndim or (x.ndim and s.shape[d] != idx.size):
        raise RuntimeError(f"index_reduce_(): Number of indices ({idx.size}) should be equal to "
                           f"source.size(dim) ({s.shape[d] if s.ndim else 1}), and source "
                           f"{list(s.shape)} should have the same number of dimensions as self "
                           f"{list(x.shape)}")
    if any(s.shape[i] != x.shape[i] for i in range(x.ndim) if i != d):
        raise RuntimeError(f"index_reduce_(): source {list(s.shape)} and self {list(x.shape)} "
                           f"must match in every dimension but {d}")
    size = x.shape[d] if x.ndim else 1
    flat = idx.reshape(-1).astype(xp.int64)
    bad = flat[(flat < -size) | (flat >= size)]
    if bad.size:
        raise IndexError(f"index out of range in self: index {int(bad[0])} for dimension {d} "
                         f"with size {size}")
    flat = xp.where(flat < 0, flat + size, flat)
    if x.ndim == 0:
        out = _index_reduce_array(x.reshape(1), 0, flat, s.reshape(1), reduce,
                                  include_self).reshape(())
    else:
        out = _index_reduce_array(x, d, flat, s, reduce, include_self)
    if not needs_grad(input, source):
        return _make(out)
    node = IndexReduceBackward0()
    node.dim, node.index, node.reduce, node.include_self = d, _make(flat), reduce, include_self
    t = record(node, (input, source), out)
    node.save(input, source, outputs=(t,))
    return t


register("index_reduce")(index_reduce)


# == registration ==============================================================================
register("cholesky_solve")(cholesky_solve)
register("cholesky_inverse")(cholesky_inverse)
register("triangular_solve")(triangular_solve)
register("lu_unpack")(lu_unpack)
register("chain_matmul")(chain_matmul)

for _name, _fn in {
    "solve_triangular": solve_triangular, "cholesky_ex": cholesky_ex, "inv_ex": inv_ex,
    "solve_ex": solve_ex, "lu_factor": lu_factor, "lu_factor_ex": lu_factor_ex, "lu": lu,
    "lu_solve": lu_solve, "lstsq": lstsq, "matrix_rank": matrix_rank, "cond": cond,
    "eigvalsh": eigvalsh, "diagonal": diagonal, "matmul": F.matmul,
    "matrix_power": matrix_power, "multi_dot": multi_dot, "tensorinv": tensorinv,
    "tensorsolve": tensorsolve, "vander": vander, "vecdot": vecdot,
}.items():
    setattr(linalg, _name, _fn)
