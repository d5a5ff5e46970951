"""Norms and what is measured by them: ``vector_norm``, ``matrix_norm``, ``linalg.norm``,
``cond``, ``matrix_rank`` and ``renorm``.

Example:
    >>> import gradsum
    >>> gradsum.linalg.vector_norm(gradsum.tensor([3.0, 4.0])).item()
    5.0
"""

from __future__ import annotations

import math
from typing import Any

import gradsum.ops as F
from gradsum import _dtype as D
from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.autograd.graph import Node
from gradsum.ops import _messages
from gradsum.ops._core import _make, needs_grad, record, register, wrap_dim, wrap_dims
from gradsum.ops.linalg._base import _ERR, _check_float
from gradsum.ops.linalg.decompositions import svdvals
from gradsum.ops.linalg.solvers import inv_ex


# == norms =====================================================================================
def _ord_value(ord: Any) -> float:
    if isinstance(ord, Tensor):
        return float(ord.item())
    return float(ord)


class LinalgVectorNormBackward0(Node):
    __slots__ = ("dims", "keepdim", "ord")

    def backward(self, g: Tensor) -> Tensor:
        a, out = self.saved()
        p = self.ord
        if not self.keepdim and a.ndim:
            for d in sorted(self.dims):
                g, out = F.unsqueeze(g, d), F.unsqueeze(out, d)
        if p == 0:
            return None  # type: ignore[return-value]  (torch: an undefined gradient)
        if p == 1:
            return F.mul(g, F.sign(a))
        if math.isinf(p):
            hit = F.eq(F.abs(a), out)
            cnt = F.sum(hit.to(a.dtype), self.dims, keepdim=True) if a.ndim else 1.0
            return F.div(F.mul(F.mul(g, F.sign(a)), hit.to(a.dtype)), cnt)
        # torch's norm_backward: the ratio masked to 0 where the norm is 0 (nan in the
        # second derivative there, as torch's)
        zero = out._array == 0
        if p == 2:
            return F.mul(g, _masked_zero(F.div(a, out), zero))
        scaled = F.mul(F.sign(a), F.pow(F.abs(a), p - 1))
        return F.mul(scaled, _masked_zero(F.div(g, F.pow(out, p - 1)), zero))


def _masked_zero(t: Tensor, mask: Any) -> Tensor:
    mask = xp.broadcast_to(mask, t._array.shape)
    return F.masked_fill(t, _make(xp.ascontiguousarray(mask)), 0.0) if mask.any() else t


def vector_norm(x: Tensor, ord: Any = 2, dim: Any = None, keepdim: bool = False, *,
                dtype: D.dtype | None = None) -> Tensor:
    """The vector ``ord``-norm over ``dim`` (all elements by default): ``ord`` is any real
    number, inf, -inf or 0 (the count of nonzeros).

    Example:
        >>> import gradsum
        >>> gradsum.linalg.vector_norm(gradsum.tensor([3.0, -4.0])).item()
        5.0
        >>> gradsum.linalg.vector_norm(gradsum.tensor([3.0, -4.0]), ord=1).item()
        7.0
    """
    if dtype is None and isinstance(x, Tensor) and x._array.dtype == D._BF16_NP:
        # (accumulated in float32 and rounded once, as torch's bfloat16 kernel)
        return vector_norm(x.float(), ord, dim, keepdim).to(x.dtype)
    a = _check_float("linalg.vector_norm", x)
    if dtype is not None:
        a = a.astype(dtype.np)
        x = x.to(dtype)
    p = _ord_value(ord)
    dims = wrap_dims(dim, a.ndim) if a.ndim else ()
    if isinstance(dim, (list, tuple)) and len(dim) == 0:
        dims = tuple(range(a.ndim))
    if (p < 0 and a.size == 0) or (math.isinf(p) and any(a.shape[d] == 0 for d in dims)):
        raise RuntimeError(_messages.vector_norm_empty_no_identity(ord))
    ab = xp.abs(a)
    ax = dims if a.ndim else None
    with xp.errstate(**_ERR):
        if p == 0:
            out = (ab != 0).sum(axis=ax, keepdims=keepdim).astype(a.dtype)
        elif math.isinf(p):
            out = ab.max(axis=ax, keepdims=keepdim) if p > 0 else ab.min(axis=ax, keepdims=keepdim)
        elif p == 1:
            out = ab.sum(axis=ax, keepdims=keepdim)
        elif p == 2:
            out = xp.sqrt((ab * ab).sum(axis=ax, keepdims=keepdim))
        else:
            out = (ab ** p).sum(axis=ax, keepdims=keepdim) ** (1.0 / p)
    out = xp.asarray(out).astype(a.dtype, copy=False)
    if not needs_grad(x):
        return _make(out)
    node = LinalgVectorNormBackward0()
    node.dims, node.keepdim, node.ord = dims, keepdim, p
    t = record(node, (x,), out)
    node.save(x, outputs=(t,))
    return t


def _matrix_dims(name: str, a: Any, dim: Any) -> tuple[int, int]:
    if a.ndim < 2:
        raise RuntimeError(_messages.input_fewer_than_2_dims(name, "A"))
    dims = tuple(dim)
    if len(dims) != 2:
        raise RuntimeError(_messages.matrix_norm_dim_not_2_tuple(name, dims))
    d0, d1 = wrap_dim(dims[0], a.ndim), wrap_dim(dims[1], a.ndim)
    if d0 == d1:
        raise RuntimeError(_messages.matrix_norm_dims_equal(name, d0, d1))
    return d0, d1


def matrix_norm(A: Tensor, ord: Any = "fro", dim: Any = (-2, -1), keepdim: bool = False, *,
                dtype: D.dtype | None = None) -> Tensor:
    """The matrix norm over the two dims ``dim``: 'fro', 'nuc', inf, -inf, 1, -1, 2, -2
    (composed as torch composes it).

    Example:
        >>> import gradsum
        >>> gradsum.linalg.matrix_norm(gradsum.tensor([[1.0, -2.0], [3.0, 4.0]]), 1).item()
        6.0
    """
    a = _check_float("linalg.matrix_norm", A)
    d0, d1 = _matrix_dims("linalg.matrix_norm", a, dim)
    if dtype is not None:
        A = A.to(dtype)
    if isinstance(ord, str):
        if ord == "fro":
            return vector_norm(A, 2, (d0, d1), keepdim)
        if ord == "nuc":
            s = svdvals(F.movedim(A, (d0, d1), (-2, -1)))
            out = F.sum(s, -1)
            if keepdim:
                out = F.unsqueeze(F.unsqueeze(out, min(d0, d1)), max(d0, d1))
            return out
        raise RuntimeError(_messages.matrix_norm_order_unsupported(ord))
    p = _ord_value(ord)
    if abs(p) == 2:
        s = svdvals(F.movedim(A, (d0, d1), (-2, -1)))
        out = F.amax(s, -1) if p > 0 else F.amin(s, -1)
        if keepdim:
            out = F.unsqueeze(F.unsqueeze(out, min(d0, d1)), max(d0, d1))
        return out
    if abs(p) not in (1, math.inf):
        raise RuntimeError(_messages.matrix_norm_order_unsupported(ord))
    if math.isinf(p):
        d0, d1 = d1, d0
    if not keepdim and d0 < d1:
        d1 -= 1
    cols = vector_norm(A, 1.0, (d0,), keepdim)
    return F.amax(cols, d1, keepdim) if p > 0 else F.amin(cols, d1, keepdim)


def norm(A: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False, *,
         dtype: D.dtype | None = None) -> Tensor:
    """torch.linalg.norm: a vector norm (``dim`` an int or 1-tuple, or a 1-D input) or a
    matrix norm (``dim`` a 2-tuple, or a 2-D input with ``ord`` given); ``ord=None`` is the
    2-norm of the flattened input (over ``dim`` when given).

    Example:
        >>> import gradsum
        >>> gradsum.linalg.norm(gradsum.tensor([[3.0, 0.0], [0.0, 4.0]])).item()
        5.0
    """
    a = _check_float("linalg.norm", A)
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dims) not in (1, 2):
            raise RuntimeError(_messages.linalg_norm_dim_length(dims))
    elif ord is not None and a.ndim not in (1, 2):
        raise RuntimeError(_messages.linalg_norm_ord_needs_1d_or_2d(a))
    if isinstance(ord, str) or (ord is not None and (
            (dim is not None and len(dims) == 2) or (dim is None and a.ndim == 2))):
        return matrix_norm(A, ord, dims if dim is not None else (0, 1), keepdim, dtype=dtype)
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


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
        raise RuntimeError(_messages.input_fewer_than_2_dims("torch.linalg.matrix_rank", "input"))
    if tol is not None:
        atol, rtol = tol, 0.0
    m, n = x.shape[-2:]
    if hermitian:
        if m != n:
            raise RuntimeError(_messages.matrix_rank_not_square(m, n))
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
        raise RuntimeError(_messages.cond_invalid_norm(p))
    if x.ndim < 2:
        raise RuntimeError(_messages.input_fewer_than_2_dims("linalg.cond", "A"))
    if p is None or (not isinstance(p, str) and abs(float(p)) == 2.0):
        s = svdvals(A)
        first, last = F.narrow(s, -1, 0, 1), F.narrow(s, -1, s.shape[-1] - 1, 1)
        neg = p is not None and float(p) < 0
        return F.squeeze(F.div(last, first) if neg else F.div(first, last), -1)
    if x.shape[-1] != x.shape[-2]:
        shown = int(p) if math.isfinite(float(p)) else p
        raise RuntimeError(_messages.cond_not_square(shown, x))
    if p == "nuc":
        s = svdvals(A)
        return F.mul(F.sum(s, -1), F.sum(F.reciprocal(s), -1))
    inverse, info = inv_ex(A)
    mask = _make(xp.ascontiguousarray((info._array > 0)[..., None, None]))
    inverse.masked_fill_(mask, math.inf)  # (in place, as torch: its backward then raises)
    res = F.mul(matrix_norm(A, p), matrix_norm(inverse, p))
    return F.nan_to_num(res, math.inf, math.inf, -math.inf)


# -- renorm, mvlgamma -----------------------------------------------------------------------------
def _norm_backward(gsum: Tensor, x: Tensor, p: float, norm: Tensor, dims: tuple[int, ...]
                   ) -> Tensor:
    """The gradient of ``vector_norm(x, p, dims, keepdim=True)`` for the incoming ``gsum``."""
    if p == 1:
        return F.mul(F.sign(x), gsum)
    if p == math.inf:
        mask = F.to_dtype(F.eq(F.abs(x), norm), x.dtype)
        return F.mul(F.div(F.mul(F.sign(x), mask), F.sum(mask, dims, True)), gsum)
    zero = _make(norm._array == 0)
    if p == 2:
        scaled = F.div(x, norm)
    else:
        scaled = F.div(F.mul(x, F.pow(F.abs(x), p - 2)), F.pow(norm, p - 1))
    return F.where(zero, F.zeros_like(x), F.mul(scaled, gsum))


class RenormBackward0(Node):
    __slots__ = ("dim", "maxnorm", "p")

    def backward(self, g: Tensor) -> Tensor:
        (x,) = self.saved()
        dims = tuple(d for d in range(x.ndim) if d != self.dim)
        norm = vector_norm(x, self.p, dims, True)
        gsum = F.sum(F.mul(x, g), dims, True)
        nb = _norm_backward(gsum, x, self.p, norm, dims)
        inv = F.reciprocal(F.add(norm, 1e-7))
        factor = F.mul(inv, self.maxnorm)
        active = _make(norm._array > self.maxnorm)
        return F.where(active, F.sub(F.mul(factor, g), F.mul(F.mul(F.mul(inv, inv),
                                                                   self.maxnorm), nb)), g)


@register("renorm", method=True, inplace="renorm_")
def renorm(input: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    """Each slice along ``dim`` rescaled so that its ``p``-norm is at most ``maxnorm``.

    Example:
        >>> import gradsum
        >>> gradsum.renorm(gradsum.tensor([[3.0, 4.0], [0.3, 0.4]]), 2, 0, 1.0).tolist()
        [[0.6000000238418579, 0.800000011920929], [0.30000001192092896, 0.4000000059604645]]
    """
    x = input._array
    if not p > 0:
        raise RuntimeError(_messages.renorm_p_not_positive(p))
    if maxnorm < 0:
        raise RuntimeError(_messages.renorm_maxnorm_negative(maxnorm))
    if x.ndim <= 1:
        raise RuntimeError(_messages.renorm_fewer_than_2_dims(x))
    if x.dtype.kind not in "fV":
        raise RuntimeError(_messages.vector_norm_not_floating(x))
    d = wrap_dim(dim, x.ndim)
    dims = tuple(i for i in range(x.ndim) if i != d)
    a = xp.abs(x.astype(xp.float64))
    if p == math.inf:
        norm = a.max(axis=dims, keepdims=True, initial=0.0)
    else:
        norm = (a ** p).sum(axis=dims, keepdims=True) ** (1.0 / p)
    factor = xp.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
    out = xp.asarray(x * factor.astype(x.dtype), dtype=x.dtype)
    if not needs_grad(input):
        return _make(out)
    node = RenormBackward0()
    node.p, node.dim, node.maxnorm = float(p), d, float(maxnorm)
    res = record(node, (input,), out)
    node.save(input)
    return res
