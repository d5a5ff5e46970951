"""LU: ``lu_factor``/``lu_factor_ex``, ``lu``, ``lu_unpack`` and ``lu_solve``.

Example:
    >>> import gradsum
    >>> a = gradsum.tensor([[4.0, 3.0], [6.0, 3.0]], dtype=gradsum.float64)
    >>> P, L, U = gradsum.linalg.lu(a)
    >>> (P @ L @ U).tolist()
    [[4.0, 3.0], [6.0, 3.0]]
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import gradsum.ops as F
from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.autograd.graph import Node
from gradsum.ops import _messages
from gradsum.ops._core import _make, needs_grad, record, register
from gradsum.ops.linalg._base import (
    _check_float,
    _getrf,
    _getrs,
    _mT,
    _MultiOutput,
    _perm,
    _require,
)
from gradsum.ops.linalg.solvers import _same_dtype, solve_triangular

lu_factor_result = namedtuple("linalg_lu_factor", ["LU", "pivots"])
lu_factor_ex_result = namedtuple("linalg_lu_factor_ex", ["LU", "pivots", "info"])
lu_result = namedtuple("linalg_lu", ["P", "L", "U"])
lu_unpack_result = namedtuple("lu_unpack", ["P", "L", "U"])


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
        raise RuntimeError(_messages.torch_input_fewer_than_2_dims(name, "A"))
    if not pivot:
        raise RuntimeError(_messages.lu_no_pivot_unsupported(name))
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
    raise RuntimeError(_messages.lu_factor_singular(pre, k))


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
        raise RuntimeError(_messages.lu_unpack_pivots_not_int32(piv))
    if lu_a.ndim < 2:
        raise RuntimeError(_messages.lu_unpack_fewer_than_2_dims(lu_a))
    m, n = lu_a.shape[-2:]
    if piv.shape != lu_a.shape[:-2] + (min(m, n),):
        raise RuntimeError(_messages.lu_unpack_shape_mismatch(piv, lu_a))
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
        raise RuntimeError(_messages.input_fewer_than_2_dims(name, "B"))
    if lu_a.ndim < 2 or lu_a.shape[-1] != lu_a.shape[-2]:
        raise RuntimeError(_messages.linalg_not_square_matrices_any_ndim(name, lu_a))
    _same_dtype(name, lu_a, b, "LU", "B")
    if piv.dtype != xp.int32:
        raise RuntimeError(_messages.lu_solve_pivots_not_int32(name, piv))
    n = lu_a.shape[-1]
    if (b.shape[-2] if left else b.shape[-1]) != n:
        raise RuntimeError(_messages.incompatible_shapes_for_equation(name, left, n, b))
    if piv.shape != lu_a.shape[:-1]:
        raise RuntimeError(_messages.lu_solve_pivots_shape_mismatch(name, lu_a, piv))
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
register("lu_unpack")(lu_unpack)
