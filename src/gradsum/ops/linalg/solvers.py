"""Linear solves and inverses: ``solve``/``solve_ex``, ``solve_triangular``,
``triangular_solve``, ``lstsq``, ``inv``/``inv_ex``, ``pinv``/``pinverse``,
``cholesky_solve``, ``cholesky_inverse``, ``tensorinv``, ``tensorsolve`` (and the removed
torch names that raise).

Example:
    >>> import gradsum
    >>> a = gradsum.tensor([[2.0, 0.0], [0.0, 4.0]], dtype=gradsum.float64)
    >>> gradsum.linalg.solve(a, gradsum.tensor([2.0, 4.0], dtype=gradsum.float64)).tolist()
    [1.0, 1.0]
"""

from __future__ import annotations

import math
from collections import namedtuple
from collections.abc import Callable, Sequence
from typing import Any

import gradsum.ops as F
from gradsum import _dtype as D
from gradsum._autocast import autocast_policy
from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.autograd.graph import Node
from gradsum.ops import _messages
from gradsum.ops._core import _make, needs_grad, record, register, tensor_method, wrap_dim
from gradsum.ops.linalg._base import (
    _ERR,
    LinAlgError,
    _check_float,
    _check_square,
    _getrf,
    _getrs,
    _mT,
    _MultiOutput,
    _require,
    _trsm,
    _warn_once,
)


def _first_zero_pivot(m: Any) -> int:
    """1-based index of LAPACK getrf's first exactly-zero pivot (0 if none)."""
    a = xp.array(m, dtype=xp.float64)
    n = a.shape[0]
    for k in range(n):
        p = k + int(xp.argmax(xp.abs(a[k:, k])))
        if a[p, k] == 0:
            return k + 1
        a[[k, p]] = a[[p, k]]
        a[k + 1:, k] /= a[k, k]
        a[k + 1:, k + 1:] -= xp.outer(a[k + 1:, k], a[k, k + 1:])
    return 0


def _singular_error(name: str, x: Any) -> LinAlgError:
    flat = x.reshape((-1,) + x.shape[-2:])
    for i, m in enumerate(flat):
        k = _first_zero_pivot(m)
        if k:
            return LinAlgError(_messages.inverse_singular_at_diagonal(name, x, i, k))
    return LinAlgError(_messages.matrix_singular(name))


# == inverse / solve ===========================================================================
class LinalgInvExBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (out,) = self.saved()
        ot = _mT(out)
        return F.neg(F.matmul(F.matmul(ot, g), ot))


@tensor_method("inverse")
@autocast_policy("linalg_inv")
def inv(A: Tensor) -> Tensor:
    """The inverse of each square matrix; :class:`LinAlgError` for a singular one.

    Example:
        >>> import gradsum
        >>> gradsum.linalg.inv(gradsum.tensor([[2.0, 0.0], [0.0, 4.0]])).tolist()
        [[0.5, 0.0], [0.0, 0.25]]
    """
    x = _check_square("linalg.inv", A)
    try:
        out = xp.linalg.inv(x) if x.size else x.copy()
    except xp.linalg.LinAlgError:
        raise _singular_error("linalg.inv", x) from None
    out = xp.asarray(out).astype(x.dtype, copy=False)
    if not needs_grad(A):
        return _make(out)
    node = LinalgInvExBackward0()
    t = record(node, (A,), out)
    node.save(outputs=(t,))
    return t


class LinalgSolveExBackward0(Node):
    __slots__ = ("left", "shapes", "vector")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        a, x = self.saved()
        if self.vector:
            g, x = F.unsqueeze(g, -1), F.unsqueeze(x, -1)
        if self.left:  # A X = B
            gb = solve(_mT(a), g)
            ga = F.neg(F.matmul(gb, _mT(x))) if self.needs(0) else None
        else:  # X A = B
            gb = _mT(solve(a, _mT(g)))
            ga = F.neg(F.matmul(_mT(x), gb)) if self.needs(0) else None
        if self.vector:
            gb = F.squeeze(gb, -1)
        ga = F.sum_to(ga, self.shapes[0]) if ga is not None else None
        gb = F.sum_to(gb, self.shapes[1]) if self.needs(1) else None
        return ga, gb


def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    """The solution ``X`` of ``A X = B`` (``X A = B`` with ``left=False``); ``B`` is a batch
    of matrices, or of vectors when it has one dimension less than ``A`` (torch's rule).
    Batch dimensions broadcast.

    Example:
        >>> import gradsum
        >>> A = gradsum.tensor([[2.0, 0.0], [0.0, 4.0]])
        >>> gradsum.linalg.solve(A, gradsum.tensor([2.0, 2.0])).tolist()
        [1.0, 0.5]
    """
    a = _check_square("linalg.solve", A)
    if not isinstance(B, Tensor):
        raise TypeError(_messages.solve_b_not_tensor(B))
    b = B._array
    if b.dtype != a.dtype:
        raise RuntimeError(_messages.linalg_operands_dtype_mismatch("linalg.solve", "A", "B", a, b))
    vector = b.ndim == 1 or (left and b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])
    bm = b[..., None] if vector else b
    n = a.shape[-1]
    if bm.ndim < 2 or (bm.shape[-2] if left else bm.shape[-1]) != n:
        shown = f"{bm.shape[-2]}x{bm.shape[-1]}" if bm.ndim >= 2 else f"{b.shape[-1]}x1"
        raise RuntimeError(_messages.solve_incompatible_shapes(left, n, shown))
    try:
        batch = xp.broadcast_shapes(a.shape[:-2], bm.shape[:-2])
    except ValueError:
        raise RuntimeError(_messages.solve_batch_dims_not_broadcast(a, b)) from None
    aa = xp.broadcast_to(a, batch + a.shape[-2:])
    bb = xp.broadcast_to(bm, batch + bm.shape[-2:])
    try:
        if left:
            out = xp.linalg.solve(aa, bb) if aa.size and bb.size else xp.zeros(bb.shape, a.dtype)
        else:
            out = xp.swapaxes(xp.linalg.solve(xp.swapaxes(aa, -1, -2), xp.swapaxes(bb, -1, -2)),
                              -1, -2) if aa.size and bb.size else xp.zeros(bb.shape, a.dtype)
    except xp.linalg.LinAlgError:
        raise LinAlgError(_messages.solve_singular()) from None
    out = xp.ascontiguousarray(out[..., 0] if vector else out).astype(a.dtype, copy=False)
    if not needs_grad(A, B):
        return _make(out)
    node = LinalgSolveExBackward0()
    node.left, node.vector, node.shapes = left, vector, (a.shape, b.shape)
    t = record(node, (A, B), out)
    node.save(A, outputs=(t,))
    return t


# == pinv ======================================================================================
def _pinv_backward(g: Tensor, a: Tensor, p: Tensor) -> Tensor:
    """torch's ``pinv_backward``: the gradient of ``p = pinv(a)`` for output gradient ``g``
    (also used by ``linalg.lstsq``)."""
    m, n = a.shape[-2], a.shape[-1]
    ph, gh = _mT(p), _mT(g)
    mm = F.matmul
    if m <= n:
        K = mm(gh, p)
        kph = mm(K, ph)
        out = F.add(F.neg(_mT(mm(p, K))), kph)
        out = F.sub(out, mm(mm(a, p), kph))
        return F.add(out, mm(mm(ph, p), F.sub(gh, mm(K, a))))
    K = mm(p, gh)
    phk = mm(ph, K)
    out = F.add(F.neg(_mT(mm(K, p))), mm(mm(F.sub(gh, mm(a, K)), p), ph))
    return F.sub(F.add(out, phk), mm(mm(phk, p), a))


class LinalgPinvBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        a, p = self.saved()
        return _pinv_backward(g, a, p)


def pinv(A: Tensor, *, atol: Any = None, rtol: Any = None, hermitian: bool = False) -> Tensor:
    """The Moore-Penrose pseudo-inverse (singular values below ``max(atol, rtol * s_max)``
    are dropped; by default ``rtol = eps * max(m, n)``, as torch).

    Example:
        >>> import gradsum
        >>> gradsum.linalg.pinv(gradsum.tensor([[2.0, 0.0], [0.0, 0.0]])).tolist()
        [[0.5, 0.0], [0.0, 0.0]]
    """
    x = _check_float("linalg.pinv", A)
    if x.ndim < 2:
        raise RuntimeError(_messages.input_fewer_than_2_dims_shape("linalg.pinv(A)", x))
    m, n = x.shape[-2], x.shape[-1]
    if atol is None and rtol is None:
        rtol = xp.finfo(x.dtype).eps * max(m, n)
    atol_v = 0.0 if atol is None else float(atol)
    rtol_v = 0.0 if rtol is None else float(rtol)
    if x.size:
        u, s, vh = xp.linalg.svd(x, full_matrices=False)
        smax = s.max(axis=-1, keepdims=True) if s.shape[-1] else s
        tol = xp.maximum(atol_v, rtol_v * smax)
        with xp.errstate(**_ERR):
            sinv = xp.where(s > tol, 1.0 / s, 0.0)
        out = (xp.swapaxes(vh, -1, -2) * sinv[..., None, :]) @ xp.swapaxes(u, -1, -2)
    else:
        out = xp.zeros(x.shape[:-2] + (n, m), dtype=x.dtype)
    out = xp.asarray(out).astype(x.dtype, copy=False)
    if not needs_grad(A):
        return _make(out)
    node = LinalgPinvBackward0()
    t = record(node, (A,), out)
    node.save(A, outputs=(t,))
    return t


@tensor_method("pinverse")
@autocast_policy("pinverse")
def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """``torch.pinverse``: :func:`pinv` with ``rtol=rcond``."""
    return pinv(input, rtol=rcond)
register("inverse")(inv)
register("pinverse")(pinverse)
inv_ex_result = namedtuple("linalg_inv_ex", ["inverse", "info"])
solve_ex_result = namedtuple("linalg_solve_ex", ["result", "info"])
lstsq_result = namedtuple("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])
triangular_solve_result = namedtuple("triangular_solve", ["solution", "cloned_coefficient"])


def _same_dtype(name: str, a: Any, b: Any, an: str = "A", bn: str = "B") -> None:
    if a.dtype != b.dtype:
        raise RuntimeError(_messages.linalg_operands_dtype_mismatch(name, an, bn, a, b))


def _batch(name: str, a: Any, b: Any) -> tuple[int, ...]:
    try:
        return tuple(xp.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    except ValueError:
        raise RuntimeError(_messages.batch_dims_not_broadcast(name, a, b)) from None


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
        raise RuntimeError(_messages.torch_input_fewer_than_2_dims(name, which))
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(_messages.linalg_not_square_matrices(name, a))
    _same_dtype(name, a, b)
    n = a.shape[-1]
    if (b.shape[-2] if left else b.shape[-1]) != n:
        raise RuntimeError(_messages.incompatible_shapes_for_equation(name, left, n, b))
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


@tensor_method("triangular_solve")
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
        raise RuntimeError(_messages.triangular_solve_b_fewer_than_2_dims(x))
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise RuntimeError(_messages.linalg_not_square_matrices_any_ndim("triangular_solve", a))
    _same_dtype("triangular_solve", x, a, "self", "A")
    if x.dtype.kind not in "fV":
        raise D.not_implemented("triangular_solve_cpu", x.dtype, "Convert with .double().")
    if x.shape[-2] != a.shape[-1]:
        raise RuntimeError(_messages.incompatible_matrix_sizes("triangular_solve", a, x))
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
        raise RuntimeError(_messages.lstsq_invalid_driver(name))
    if a.ndim < 2:
        raise RuntimeError(_messages.lstsq_fewer_than_2_dims(name))
    _same_dtype("linalg.lstsq", a, b)
    vector = b.ndim == a.ndim - 1 and b.shape == a.shape[:-1]
    bm = b[..., None] if vector else b
    if bm.ndim < 2:
        raise RuntimeError(_messages.lstsq_ndim_mismatch(name))
    m, n = a.shape[-2:]
    if bm.shape[-2] != m:
        raise RuntimeError(_messages.lstsq_rows_mismatch(name, m, bm))
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
        raise RuntimeError(_messages.tensorinv_ind_not_positive(ind))
    start, end = x.shape[:ind], x.shape[ind:]
    p_end, p_start = math.prod(end), math.prod(start)
    if p_end != p_start:
        raise RuntimeError(_messages.tensorinv_shape_requirement(p_end, p_start))
    # (torch's inverse comes from LAPACK in column-major layout, so its reshape is a
    # ``_reshape_alias``: recorded as such, though gradsum's inverse is row-major)
    return F.views._reshape(inv(F.reshape(A, (p_end, p_end))), tuple(end) + tuple(start),
                            F.views.ReshapeAliasBackward0, False)


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
        raise RuntimeError(_messages.tensorsolve_shape_requirement(rp, bp))

    x = solve(F.reshape(A, (rp, rp)), F.flatten(B))
    return F.reshape(x, tuple(res_shape))


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


@tensor_method("cholesky_solve")
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
        raise RuntimeError(_messages.operand_fewer_than_2_dims("b", b))
    if u.ndim < 2:
        raise RuntimeError(_messages.operand_fewer_than_2_dims("u", u))
    _same_dtype("cholesky_solve", b, u, "b", "u")
    if b.dtype.kind not in "fV":
        raise D.not_implemented("cholesky_solve_cpu", b.dtype, "Convert with .double().")
    if u.shape[-1] != u.shape[-2]:
        raise RuntimeError(_messages.linalg_not_square_matrices("cholesky_solve", u))
    if b.shape[-2] != u.shape[-1]:
        raise RuntimeError(_messages.incompatible_matrix_sizes("cholesky_solve", u, b))
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


@tensor_method("cholesky_inverse")
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
        raise RuntimeError(_messages.linalg_not_square_matrices_any_ndim("cholesky_inverse", u))
    n = u.shape[-1]
    diag = xp.diagonal(u, 0, -2, -1).reshape((-1, n))
    for i, row in enumerate(diag):
        zero = xp.flatnonzero(row == 0)
        if zero.size:
            raise LinAlgError(_messages.cholesky_inverse_singular(u, i, zero))
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


# == registration ==============================================================================
register("cholesky_solve")(cholesky_solve)
register("cholesky_inverse")(cholesky_inverse)
register("triangular_solve")(triangular_solve)


_REMOVED = {
    "solve": "`torch.solve` is deprecated in favor of `torch.linalg.solve`.",
    "lstsq": "`torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.",
    "eig": "`torch.linalg.eig` returns complex tensors; use torch.linalg.eig.",
    "symeig": "Use `torch.linalg.eigh` instead.",
}


def _removed(name: str) -> Callable[..., Any]:
    """``Tensor.<name>``, a method torch removed: it raises with torch's text."""

    advice = _REMOVED[name]

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(_messages.tensor_method_removed(advice))

    method.__name__ = name
    method.__doc__ = f"Removed in torch 1.9: raises, as torch's ``Tensor.{name}``."
    return tensor_method(name)(method)


for _name in _REMOVED:
    _removed(_name)
