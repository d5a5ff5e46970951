"""Decompositions: ``cholesky``/``cholesky_ex`` (and torch's legacy ``cholesky``), ``qr``,
``eigh``/``eigvalsh``, ``svd``/``svdvals`` (and torch's ``svd``).

Example:
    >>> import gradsum
    >>> a = gradsum.tensor([[4.0, 0.0], [0.0, 9.0]], dtype=gradsum.float64)
    >>> gradsum.linalg.cholesky(a).tolist()
    [[2.0, 0.0], [0.0, 3.0]]
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import gradsum.ops as F
from gradsum._autocast import autocast_policy
from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.autograd.graph import Node
from gradsum.ops import _messages
from gradsum.ops._core import _make, needs_grad, record, register, tensor_method
from gradsum.ops.linalg._base import (
    _ERR,
    LinAlgError,
    _check_float,
    _check_square,
    _mT,
    _MultiOutput,
    _record_outputs,
)
from gradsum.ops.linalg.solvers import solve

qr_result = namedtuple("linalg_qr", ["Q", "R"])
eigh_result = namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
svd_result = namedtuple("linalg_svd", ["U", "S", "Vh"])
torch_svd_result = namedtuple("svd", ["U", "S", "V"])


# == cholesky ==================================================================================
class LinalgCholeskyExBackward0(Node):
    __slots__ = ("upper",)

    def backward(self, g: Tensor) -> Tensor:
        from gradsum.ops.linalg.solvers import solve_triangular

        # torch's cholesky_backward, op for op (Murray 2016): the product with the whole
        # gradient before tril (an inf above the diagonal meets L's zeros: nan, as in
        # torch), then two triangular solves
        (L,) = self.saved()
        if self.upper:
            L, g = _mT(L), _mT(g)
        ga = F.tril(F.matmul(_mT(L), g))
        ga = F.mul(F.add(ga, _mT(F.tril(ga, -1))), 0.5)
        ga = solve_triangular(_mT(L), ga, upper=True, left=True)
        return solve_triangular(L, ga, upper=False, left=False)


class CholeskyBackward0(LinalgCholeskyExBackward0):
    """``torch.cholesky``'s node (the same rule)."""

    __slots__ = ()


@autocast_policy("cholesky")
def cholesky(A: Tensor, *, upper: bool = False, _legacy: bool = False) -> Tensor:
    """The Cholesky factor ``L`` (``A = L L^T``; ``upper=True``: ``U = L^T``) of each
    symmetric positive-definite matrix; only the lower triangle of ``A`` is read.

    Example:
        >>> import gradsum
        >>> gradsum.linalg.cholesky(gradsum.tensor([[4.0, 2.0], [2.0, 5.0]])).tolist()
        [[2.0, 0.0], [1.0, 2.0]]
    """
    x = _check_square("linalg.cholesky", A)
    low = xp.tril(x)
    sym = low + xp.swapaxes(xp.tril(x, -1), -1, -2)
    try:
        out = xp.linalg.cholesky(sym) if x.size else x.copy()
    except xp.linalg.LinAlgError:
        flat = sym.reshape((-1,) + sym.shape[-2:])
        for i, m in enumerate(flat):
            for k in range(1, m.shape[0] + 1):
                try:
                    xp.linalg.cholesky(m[:k, :k])
                except xp.linalg.LinAlgError:
                    raise LinAlgError(
                        _messages.cholesky_not_positive_definite(x, i, k)
                    ) from None
        raise
    out = xp.asarray(out).astype(x.dtype, copy=False)
    if upper:
        out = xp.ascontiguousarray(xp.swapaxes(out, -1, -2))
    if not needs_grad(A):
        return _make(out)
    node = CholeskyBackward0() if _legacy else LinalgCholeskyExBackward0()
    node.upper = upper
    t = record(node, (A,), out)
    node.save(outputs=(t,))
    return t


# == qr ========================================================================================
def _copyltu(m: Tensor) -> Tensor:
    """The symmetric matrix with ``m``'s lower triangle."""
    low = F.tril(m, -1)
    return F.add(F.add(low, _mT(low)), F.diag_embed(F.diagonal(m, 0, -2, -1)))


def _qr_backward_tall(gQ: Tensor, gR: Tensor, Q: Tensor, R: Tensor) -> Tensor:
    """m >= n (reduced): ``(gQ + Q copyltu(M)) R^{-T}``, ``M = R gR^T - gQ^T Q``."""
    M = F.sub(F.matmul(R, _mT(gR)), F.matmul(_mT(gQ), Q))
    b = F.add(gQ, F.matmul(Q, _copyltu(M)))
    return _mT(solve(R, _mT(b)))


class LinalgQrBackward0(_MultiOutput):
    __slots__ = ("mode",)
    num_outputs = 2

    def backward(self, gQ: Tensor | None, gR: Tensor | None) -> Tensor:
        if self.mode == "r":
            raise RuntimeError(_messages.qr_backward_mode_r())
        Q, R = self.saved()
        m, n = Q.shape[-2], R.shape[-1]
        if self.mode == "complete" and m > n:
            raise RuntimeError(_messages.qr_backward_complete_wide())
        gQ = gQ if gQ is not None else F.zeros_like(Q)
        gR = gR if gR is not None else F.zeros_like(R)
        if m >= n:
            return _qr_backward_tall(gQ, gR, Q, R)
        # m < n: A = Q [U V]; X = A[:, :m] gets the square rule with gQ + Y gV^T
        U = F.narrow(R, -1, 0, m)
        gU, gV = F.narrow(gR, -1, 0, m), F.narrow(gR, -1, m, n - m)
        Y = F.matmul(Q, F.narrow(R, -1, m, n - m))
        gX = _qr_backward_tall(F.add(gQ, F.matmul(Y, _mT(gV))), gU, Q, U)
        return F.cat([gX, F.matmul(Q, gV)], -1)


def qr(A: Tensor, mode: str = "reduced") -> Any:
    """``(Q, R)`` with ``A = Q R`` (LAPACK's signs, as torch); ``mode`` 'reduced',
    'complete' or 'r' (Q empty).

    Example:
        >>> import gradsum
        >>> q, r = gradsum.linalg.qr(gradsum.tensor([[3.0, 0.0], [4.0, 5.0]]))
        >>> [round(v, 4) for v in r.flatten().tolist()]
        [-5.0, -4.0, 0.0, 3.0]
    """
    x = _check_float("linalg.qr", A)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(_messages.qr_invalid_mode(mode))
    if x.ndim < 2:
        raise RuntimeError(_messages.input_fewer_than_2_dims_shape("linalg.qr", x))
    q, r = xp.linalg.qr(x, mode="complete" if mode == "complete" else "reduced")
    q = xp.asarray(q).astype(x.dtype, copy=False)
    r = xp.asarray(r).astype(x.dtype, copy=False)
    if mode == "r":
        q = xp.zeros((0,), dtype=x.dtype)
    if not needs_grad(A):
        return qr_result(_make(q), _make(r))
    node = LinalgQrBackward0()
    node.mode = mode
    ts = _record_outputs(node, (A,), [q, r])
    node.save(outputs=tuple(ts))
    return qr_result(*ts)


# == eigh ======================================================================================
class LinalgEighBackward0(_MultiOutput):
    """``V (diag(gL) + skew(V^T gV) / E) V^T`` with ``E_ij = L_j - L_i`` (defined for
    distinct eigenvalues only, as torch's)."""

    __slots__ = ()
    num_outputs = 2

    def backward(self, gL: Tensor | None, gV: Tensor | None) -> Tensor:
        L, V = self.saved()
        if gV is not None:
            vg = F.matmul(_mT(V), gV)
            vg = F.mul(F.sub(vg, _mT(vg)), 0.5)
            E = F.sub(F.unsqueeze(L, -2), F.unsqueeze(L, -1))
            n = L.shape[-1]
            eye = _make(xp.eye(n, dtype=bool))
            E = F.where(eye, F.ones_like(E), E)
            mid = F.div(vg, E)
            if gL is not None:
                mid = F.add(mid, F.diag_embed(gL))
        else:
            mid = F.diag_embed(gL)
        return F.matmul(V, F.matmul(mid, _mT(V)))


def eigh(A: Tensor, UPLO: str = "L") -> Any:
    """``(eigenvalues, eigenvectors)`` of symmetric matrices, ascending; only the ``UPLO``
    triangle is read. The gradient is defined for distinct eigenvalues (torch's note: it is
    inf/nan, or numerically unstable, when eigenvalues repeat or are close).

    Example:
        >>> import gradsum
        >>> gradsum.linalg.eigh(gradsum.tensor([[2.0, 0.0], [0.0, 1.0]])).eigenvalues.tolist()
        [1.0, 2.0]
    """
    if UPLO not in ("L", "U"):
        raise RuntimeError(_messages.eigh_invalid_uplo(UPLO))
    x = _check_square("linalg.eigh", A)
    w, v = xp.linalg.eigh(x, UPLO=UPLO)
    w, v = xp.asarray(w).astype(x.dtype, copy=False), xp.asarray(v).astype(x.dtype, copy=False)
    if not needs_grad(A):
        return eigh_result(_make(w), _make(v))
    node = LinalgEighBackward0()
    ts = _record_outputs(node, (A,), [w, v])
    node.save(outputs=tuple(ts))
    return eigh_result(*ts)


# == svd =======================================================================================
class LinalgSvdBackward0(_MultiOutput):
    """torch's ``svd_backward`` (real case; distinct nonzero singular values)."""

    __slots__ = ("full",)
    num_outputs = 3

    def backward(self, gU: Tensor | None, gS: Tensor | None, gVh: Tensor | None) -> Tensor:
        U, S, Vh = self.saved()
        k = S.shape[-1]
        if self.full:
            U, Vh = F.narrow(U, -1, 0, k), F.narrow(Vh, -2, 0, k)
            gU = F.narrow(gU, -1, 0, k) if gU is not None else None
            gVh = F.narrow(gVh, -2, 0, k) if gVh is not None else None
        m, n = U.shape[-2], Vh.shape[-1]
        if gU is None and gVh is None:
            return F.matmul(U, F.mul(F.unsqueeze(gS, -1), Vh))
        V = _mT(Vh)
        gV = _mT(gVh) if gVh is not None else None
        S2 = F.mul(S, S)
        E = F.sub(F.unsqueeze(S2, -2), F.unsqueeze(S2, -1))
        eye = _make(xp.eye(k, dtype=bool))
        E = F.where(eye, F.ones_like(E), E)
        if gU is not None:
            uhgu = F.matmul(_mT(U), gU)
            uhgu = F.sub(uhgu, _mT(uhgu))
        if gV is not None:
            vhgv = F.matmul(_mT(V), gV)
            vhgv = F.sub(vhgv, _mT(vhgv))
        if gU is not None and gV is not None:
            gA = F.div(F.add(F.mul(uhgu, F.unsqueeze(S, -2)), F.mul(F.unsqueeze(S, -1), vhgv)),
                       E)
        elif gU is not None:
            gA = F.div(F.mul(uhgu, F.unsqueeze(S, -2)), E)
        else:
            gA = F.div(F.mul(F.unsqueeze(S, -1), vhgv), E)
        if gS is not None:
            gA = F.add(gA, F.diag_embed(gS))
        if m > n and gU is not None:
            gA = F.matmul(U, gA)
            gusinv = F.div(gU, F.unsqueeze(S, -2))
            gA = F.sub(F.add(gA, gusinv), F.matmul(U, F.matmul(_mT(U), gusinv)))
            return F.matmul(gA, Vh)
        if m < n and gV is not None:
            gA = F.matmul(gA, Vh)
            sinvgvh = F.div(gVh, F.unsqueeze(S, -1))
            gA = F.sub(F.add(gA, sinvgvh), F.matmul(F.matmul(sinvgvh, V), Vh))
            return F.matmul(U, gA)
        return F.matmul(U, F.matmul(gA, Vh)) if m >= n else F.matmul(F.matmul(U, gA), Vh)


def svd(A: Tensor, full_matrices: bool = True) -> Any:
    """``(U, S, Vh)`` with ``A = U diag(S) Vh`` (LAPACK's signs). The gradient follows torch:
    defined for distinct singular values, and with ``full_matrices`` only the first
    ``min(m, n)`` columns of U / rows of Vh take part.

    Example:
        >>> import gradsum
        >>> gradsum.linalg.svd(gradsum.tensor([[3.0, 0.0], [0.0, -4.0]])).S.tolist()
        [4.0, 3.0]
    """
    x = _check_float("linalg.svd", A)
    if x.ndim < 2:
        raise RuntimeError(_messages.input_fewer_than_2_dims_shape("linalg.svd", x))
    u, s, vh = xp.linalg.svd(x, full_matrices=full_matrices)
    outs = [xp.asarray(o).astype(x.dtype, copy=False) for o in (u, s, vh)]
    if not needs_grad(A):
        return svd_result(*[_make(o) for o in outs])
    node = LinalgSvdBackward0()
    node.full = full_matrices and x.shape[-1] != x.shape[-2]
    ts = _record_outputs(node, (A,), outs)
    node.save(outputs=tuple(ts))
    return svd_result(*ts)


def svdvals(A: Tensor) -> Tensor:
    """The singular values, descending (torch computes U and V too when a gradient is
    needed, and its grad_fn is the SVD's)."""
    return svd(A, full_matrices=False).S


@tensor_method("svd")
def torch_svd(input: Tensor, some: bool = True, compute_uv: bool = True) -> Any:
    """``torch.svd``: ``(U, S, V)`` with ``V = Vh^T`` (``some=False``: full matrices;
    ``compute_uv=False``: zero U and V)."""
    U, S, Vh = svd(input, full_matrices=not some)
    if not compute_uv:
        x = input._array
        m, n = x.shape[-2], x.shape[-1]
        return torch_svd_result(F.zeros(x.shape[:-2] + (m, m), dtype=input.dtype), S,
                                F.zeros(x.shape[:-2] + (n, n), dtype=input.dtype))
    return torch_svd_result(U, S, _mT(Vh))


@tensor_method("cholesky")
def cholesky_legacy(input: Tensor, upper: bool = False) -> Tensor:
    """``torch.cholesky`` (deprecated in torch: prefer ``linalg.cholesky``)."""
    return cholesky(input, upper=upper, _legacy=True)
register("svd")(torch_svd)
register("cholesky")(cholesky_legacy)

cholesky_ex_result = namedtuple("linalg_cholesky_ex", ["L", "info"])


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


def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:
    """The eigenvalues of symmetric matrices, ascending (torch's node: the eigh's).

    Example:
        >>> import gradsum
        >>> gradsum.linalg.eigvalsh(gradsum.tensor([[2.0, 1.0], [1.0, 2.0]])).tolist()
        [1.0, 3.0]
    """
    return eigh(A, UPLO).eigenvalues


# -- linalg method forms ---------------------------------------------------------------------------
@tensor_method("qr")
def _qr_method(self: Tensor, some: bool = True) -> Any:
    """``t.qr(some)``: ``linalg.qr(t, 'reduced' if some else 'complete')``."""
    return qr(self, "reduced" if some else "complete")
