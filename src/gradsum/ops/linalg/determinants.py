"""Determinants: ``det``, ``slogdet`` (torch's and linalg's) and ``logdet``.

Example:
    >>> import gradsum
    >>> gradsum.det(gradsum.tensor([[2.0, 0.0], [0.0, 3.0]], dtype=gradsum.float64)).item()
    6.0
"""

from __future__ import annotations

import math
from collections import namedtuple
from typing import Any

import gradsum.ops as F
from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.autograd.grad_mode import _state
from gradsum.autograd.graph import Node
from gradsum.ops._core import _make, needs_grad, record, register, tensor_method
from gradsum.ops.linalg._base import _check_square, _mT, _MultiOutput, _record_outputs
from gradsum.ops.linalg.solvers import inv

slogdet_result = namedtuple("slogdet", ["sign", "logabsdet"])
linalg_slogdet_result = namedtuple("linalg_slogdet", ["sign", "logabsdet"])


def _eye_like(x: Any) -> Any:
    return xp.broadcast_to(xp.eye(x.shape[-1], dtype=x.dtype), x.shape)


# == det / slogdet / logdet ====================================================================
def _lu_solve_diag(a: Any, d: Any, perturb: bool) -> Any:
    """``d * A^{-T}`` as torch's det and slogdet rules compute it when the backward is not
    recorded: an LU solve against ``diag(d)`` (zeros off the diagonal, so an inf ``d`` meets
    LAPACK's substitution order, which decides inf vs nan), with the LU of ``A^T`` for a
    contiguous ``A`` (torch factors ``A.mT`` then) and an adjoint solve otherwise; for det,
    a zero pivot is replaced by eps (torch's perturbation for singular inputs)."""
    from gradsum.ops.linalg._base import _getrf, _getrs

    if a.size == 0:
        return xp.zeros_like(a)
    n = a.shape[-1]
    if xp.isfinite(d).all() and xp.isfinite(a).all():
        # finite inputs: LAPACK's gesv (the blocked getrf + getrs torch's lu_solve also runs)
        b = xp.zeros(d.shape + (n, n), dtype=a.dtype)
        b[..., xp.arange(n), xp.arange(n)] = d[..., None]
        try:
            with xp.errstate(all="ignore"):
                return xp.linalg.solve(xp.swapaxes(a, -1, -2), b).astype(a.dtype, copy=False)
        except xp.linalg.LinAlgError:  # an exactly zero pivot: the substitution path below
            pass
    contiguous = a.flags.c_contiguous
    lu, piv, _ = _getrf(xp.swapaxes(a, -1, -2) if contiguous else a)
    if perturb:
        diag = xp.diagonal(lu, 0, -2, -1)
        lu = lu + xp.eye(n, dtype=lu.dtype) * xp.where(diag == 0, xp.finfo(lu.dtype).eps,
                                                       0)[..., None, :]
    b = xp.zeros(d.shape + (n, n), dtype=a.dtype)
    idx = xp.arange(n)
    b[..., idx, idx] = d[..., None]
    with xp.errstate(all="ignore"):
        return _getrs(lu, piv, b, adjoint=not contiguous).astype(a.dtype, copy=False)



class LinalgDetBackward0(Node):
    """``g * det(A) * A^{-T}``; 0 for an exactly singular matrix, as torch's."""

    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        a, det = self.saved()
        if not _state.enabled:  # torch's first-order path: an LU solve (see _lu_solve_diag)
            with xp.errstate(all="ignore"):
                d = det._array * g._array
            return _make(_lu_solve_diag(a._array, d, perturb=True))
        sing = _make((det._array == 0)[..., None, None])
        safe = F.where(sing, _make(_eye_like(a._array)), a)
        scale = F.unsqueeze(F.unsqueeze(F.mul(g, det), -1), -1)
        return F.mul(scale, _mT(inv(safe)))


@tensor_method("det")
def det(A: Tensor) -> Tensor:
    """The determinant of each square matrix in ``A`` (``(..., n, n)``).

    Example:
        >>> import gradsum
        >>> gradsum.det(gradsum.tensor([[1.0, 2.0], [3.0, 4.0]])).item()
        -2.0
    """
    x = _check_square("linalg.det", A)
    out = xp.asarray(xp.linalg.det(x)).astype(x.dtype, copy=False) if x.size else \
        xp.ones(x.shape[:-2], dtype=x.dtype)
    if not needs_grad(A):
        return _make(out)
    node = LinalgDetBackward0()
    t = record(node, (A,), out)
    node.save(A, outputs=(t,))
    return t


class LinalgSlogdetBackward0(_MultiOutput):
    __slots__ = ()
    num_outputs = 2

    def backward(self, gsign: Tensor | None, glogabs: Tensor | None) -> Tensor | None:
        if glogabs is None:
            return None
        (a,) = self.saved()
        if not _state.enabled:  # torch's first-order path: an LU solve (see _lu_solve_diag)
            return _make(_lu_solve_diag(a._array, glogabs._array, perturb=False))
        return F.mul(F.unsqueeze(F.unsqueeze(glogabs, -1), -1), _mT(inv(a)))


def _slogdet(name: str, A: Tensor, cls: Any) -> Any:
    x = _check_square(name, A)
    sign, lad = xp.linalg.slogdet(x)
    sign = xp.asarray(sign).astype(x.dtype, copy=False)
    lad = xp.asarray(lad).astype(x.dtype, copy=False)
    if not needs_grad(A):
        return cls(_make(sign), _make(lad))
    node = LinalgSlogdetBackward0()
    ts = _record_outputs(node, (A,), [sign, lad])
    node.save(A)
    return cls(*ts)


@tensor_method("slogdet")
def slogdet(A: Tensor) -> Any:
    """``(sign, logabsdet)`` of each square matrix (sign 0 and -inf for a singular one).

    Example:
        >>> import gradsum
        >>> s, l = gradsum.slogdet(gradsum.tensor([[-2.0, 0.0], [0.0, 1.0]]))
        >>> s.item(), round(l.item(), 6)
        (-1.0, 0.693147)
    """
    return _slogdet("linalg.slogdet", A, slogdet_result)


def linalg_slogdet(A: Tensor) -> Any:
    """``torch.linalg.slogdet``: see :func:`slogdet`."""
    return _slogdet("linalg.slogdet", A, linalg_slogdet_result)


@tensor_method("logdet")
def logdet(A: Tensor) -> Tensor:
    """``log(det(A))``: nan for a negative determinant, -inf for a singular matrix
    (torch's composite: slogdet, then ``where``)."""
    sign, lad = slogdet(A)
    return F.where(F.eq(sign, -1), math.nan, lad)


# == registration ==============================================================================
register("det")(det)
register("logdet")(logdet)
register("slogdet")(slogdet)
