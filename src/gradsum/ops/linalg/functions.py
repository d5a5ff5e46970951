"""Matrix functions and products of several matrices: ``matrix_exp``, ``matrix_power``,
``multi_dot``, ``chain_matmul``, ``vander``, ``vecdot``, ``cross``/``linalg.cross``,
``linalg.diagonal`` and ``trace``.

Example:
    >>> import gradsum
    >>> gradsum.trace(gradsum.tensor([[1.0, 2.0], [3.0, 4.0]])).item()
    5.0
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gradsum.ops as F
from gradsum import _dtype as D
from gradsum._autocast import autocast_policy
from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.autograd.graph import Node
from gradsum.ops import _messages
from gradsum.ops._core import (
    _make,
    broadcast_error,
    needs_grad,
    record,
    register,
    require_tensor,
    tensor_method,
    wrap_dim,
)
from gradsum.ops.linalg._base import _ERR, _check_square, _mT, _require, _warn_once
from gradsum.ops.reduction import _contig
from gradsum.ops.views import _diagonal_backward


class TraceBackward0(Node):
    __slots__ = ("in_shape",)

    def backward(self, g: Tensor) -> Tensor:
        n = min(self.in_shape)
        return _diagonal_backward(F.expand(g, (n,)), self.in_shape, 0, 0, 1)


@register("trace", method=True)
@autocast_policy("trace")
def trace(input: Tensor) -> Tensor:
    """The sum of the main diagonal of a matrix (integers give int64).

    Example:
        >>> import gradsum
        >>> gradsum.trace(gradsum.tensor([[1, 2], [3, 4]])).item()
        5
    """
    x = input._array
    if x.ndim != 2:
        raise RuntimeError(_messages.trace_not_matrix(x))
    out = xp.asarray(xp.trace(x))
    if x.dtype.kind in "biu":
        out = out.astype(xp.int64)
    if not needs_grad(input):
        return _make(out)
    node = TraceBackward0()
    node.in_shape = x.shape
    return record(node, (input,), out)


class LinalgCrossBackward0(Node):
    __slots__ = ("dim", "shapes")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        a, b = self.saved()
        d = self.dim
        ga = F.sum_to(cross(b, g, dim=d), self.shapes[0]) if self.needs(0) else None
        gb = F.sum_to(cross(g, a, dim=d), self.shapes[1]) if self.needs(1) else None
        return ga, gb


def _cross(input: Tensor, other: Tensor, dim: int) -> Tensor:
    require_tensor("cross", "input", 1, input)
    require_tensor("cross", "other", 2, other)
    x, y = input._array, other._array
    if x.ndim != y.ndim:
        raise RuntimeError(_messages.cross_ndim_mismatch(x, y))
    if x.dtype != y.dtype:
        raise RuntimeError(_messages.cross_dtype_mismatch(x, y))
    d = wrap_dim(dim, x.ndim)
    if x.shape[d] != 3 or y.shape[d] != 3:
        raise RuntimeError(_messages.cross_dim_not_3(dim, x, d, y))
    try:
        shape = xp.broadcast_shapes(x.shape, y.shape)
    except ValueError:
        raise broadcast_error(x, y) from None
    out = _contig(xp.cross(xp.broadcast_to(x, shape), xp.broadcast_to(y, shape),
                                        axis=d)).astype(x.dtype, copy=False)
    if not needs_grad(input, other):
        return _make(out)
    node = LinalgCrossBackward0()
    node.dim, node.shapes = d, (x.shape, y.shape)
    t = record(node, (input, other), out)
    node.save(input if node.needs(1) else None, other if node.needs(0) else None)
    return t


@tensor_method("cross")
def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """The cross product of 3-vectors along ``dim`` (broadcasting the other dims); without
    ``dim``, the first dim of size 3 (torch's deprecated default: prefer ``linalg.cross``).

    Example:
        >>> import gradsum
        >>> gradsum.cross(gradsum.tensor([1, 0, 0]), gradsum.tensor([0, 1, 0]), dim=0).tolist()
        [0, 0, 1]
    """
    if dim is None:
        shape = xp.broadcast_shapes(tuple(input.shape), tuple(other.shape)) \
            if isinstance(input, Tensor) and isinstance(other, Tensor) else ()
        dim = next((i for i, s in enumerate(shape) if s == 3), -1)
    return _cross(input, other, dim)


register("cross")(cross)


def linalg_cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """``torch.linalg.cross``: the cross product along ``dim`` (default the last)."""
    return _cross(input, other, dim)


@register("matrix_power", method=True)
def matrix_power(input: Tensor, n: int) -> Tensor:
    """The ``n``-th power of a (batch of) square matrix by repeated squaring; ``n = 0`` gives
    the identity, a negative ``n`` a power of the inverse.

    Example:
        >>> import gradsum
        >>> gradsum.matrix_power(gradsum.tensor([[1, 1], [0, 1]]), 3).tolist()
        [[1, 3], [0, 1]]
    """
    require_tensor("matrix_power", "input", 1, input)
    shape = input._array.shape
    if len(shape) < 2:
        raise RuntimeError(_messages.matrix_power_fewer_than_2_dims(shape))
    if shape[-1] != shape[-2]:
        raise RuntimeError(_messages.matrix_power_not_square(shape))
    n = int(n)
    if n == 0:
        out = F.clone(input)
        eye = xp.broadcast_to(xp.eye(shape[-1], dtype=input._array.dtype), shape)
        return out.copy_(_make(eye))
    if n < 0:
        if n == -1:
            return F.inverse(input)  # (torch's node: LinalgInvExBackward0, no clone)
        input, n = F.inverse(input), -n
    if n == 1:
        return F.clone(input)
    if n == 2:
        return F.matmul(input, input)
    if n == 3:
        return F.matmul(F.matmul(input, input), input)
    z: Tensor | None = None
    result: Tensor | None = None
    while n > 0:
        bit, n = n % 2, n // 2
        z = input if z is None else F.matmul(z, z)
        if bit:
            result = z if result is None else F.matmul(result, z)
    assert result is not None  # (n > 0 has a set bit)
    return result


# == matrix_exp ================================================================================
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
           1187353796428800.0, 129060195264000.0, 10559470521600.0, 670442572800.0,
           33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0)


def _expm_array(a: Any) -> Any:
    """Scaling and squaring with the [13/13] Pade approximant (Higham 2005), batched."""
    a64 = xp.asarray(a, dtype=xp.float64)
    n = a64.shape[-1]
    norm1 = xp.abs(a64).sum(axis=-2).max(axis=-1) if a64.size else xp.zeros(a64.shape[:-2])
    with xp.errstate(**_ERR):
        s = xp.maximum(0, xp.ceil(xp.log2(xp.maximum(norm1, 1e-300) / 5.371920351148152)))
    s = xp.where(xp.isfinite(s), s, 0).astype(int)
    a64 = a64 / (2.0 ** s)[..., None, None]
    b = _PADE13
    ident = xp.broadcast_to(xp.eye(n), a64.shape)
    a2 = a64 @ a64
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = a64 @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4
               + b[3] * a2 + b[1] * ident)
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 \
        + b[0] * ident
    r = xp.linalg.solve(v - u, v + u)
    smax = int(s.max()) if s.size else 0
    for i in range(smax):
        m = (s > i)[..., None, None]
        r = xp.where(m, r @ r, r)
    return r


class LinalgMatrixExpBackward0(Node):
    """torch's ``differential_analytic_matrix_function``: the top-right block of
    ``exp([[A^T, g], [0, A^T]])``."""

    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (a,) = self.saved()
        n = a.shape[-1]
        at = _mT(a)
        top = F.cat([at, g], -1)
        bottom = F.cat([F.zeros_like(at), at], -1)
        big = matrix_exp(F.cat([top, bottom], -2))
        return F.narrow(F.narrow(big, -2, 0, n), -1, n, n)


@tensor_method("matrix_exp")
def matrix_exp(A: Tensor) -> Tensor:
    """The matrix exponential of each square matrix.

    Example:
        >>> import gradsum
        >>> gradsum.matrix_exp(gradsum.zeros(2, 2)).tolist()
        [[1.0, 0.0], [0.0, 1.0]]
    """
    x = _check_square("linalg.matrix_exp", A)
    out = xp.asarray(_expm_array(x)).astype(x.dtype, copy=False) if x.size else x.copy()
    if not needs_grad(A):
        return _make(out)
    node = LinalgMatrixExpBackward0()
    t = record(node, (A,), out)
    node.save(A)
    return t
register("matrix_exp")(matrix_exp)


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
        raise RuntimeError(_messages.multi_dot_too_few_tensors(n))
    out_shape: list[int] = []
    first, last = ts[0], ts[-1]
    if first.dim() == 1:
        ts[0] = F.unsqueeze(first, 0)
    elif first.dim() == 2:
        out_shape.append(first.shape[0])
    else:
        raise RuntimeError(_messages.multi_dot_first_not_1d_2d(first))
    if last.dim() == 1:
        ts[-1] = F.unsqueeze(last, -1)
    elif last.dim() == 2:
        out_shape.append(last.shape[1])
    else:
        raise RuntimeError(_messages.multi_dot_last_not_1d_2d(last))
    for i in range(1, n - 1):
        if ts[i].dim() != 2:
            raise RuntimeError(_messages.multi_dot_middle_not_2d(i, ts))
    for i in range(1, n):
        if ts[i].dtype != ts[0].dtype:
            raise RuntimeError(_messages.multi_dot_dtype_mismatch(ts, i))
        if ts[i - 1].shape[-1] != ts[i].shape[0]:
            raise RuntimeError(_messages.multi_dot_shapes_mismatch(i, tensors))
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
        raise RuntimeError(_messages.chain_matmul_no_matrices())
    for m in matrices:
        if m.dim() != 2:
            raise RuntimeError(_messages.chain_matmul_not_2d(m))
    if len(matrices) == 1:
        return F.clone(matrices[0])
    return multi_dot(list(matrices))


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
        raise RuntimeError(_messages.vander_bad_dtype(a))
    x_ = F.unsqueeze(x, -1) if a.ndim == 0 else x
    shape = list(x_.shape)
    n = shape[-1] if N is None else int(N)
    if n <= 1:
        raise RuntimeError(_messages.vander_n_too_small())
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
        raise RuntimeError(_messages.vecdot_not_floating(a))
    if a.dtype != b.dtype:
        raise RuntimeError(_messages.vecdot_dtype_mismatch(a, b))
    return F.sum(F.mul(x, y), dim)
register("chain_matmul")(chain_matmul)
