"""torch.linalg's decompositions and the ops built on them: ``det``, ``slogdet``/``logdet``,
``inv``, ``solve``, ``vector_norm``/``matrix_norm``/``norm``, ``cholesky``, ``qr``, ``eigh``,
``svd``/``svdvals``, ``pinv`` and ``matrix_exp``; batched over leading dimensions.

Each primitive has torch's ``Linalg<Op>Backward0`` node with torch's derivative written in
gradsum ops (double backward works). Ops that torch composes (``logdet``, ``matrix_norm`` of
order 1/2/inf/'nuc', ``norm``, ``torch.svd``) are composed the same way, so their ``grad_fn``
is torch's. Failures of the factorisations raise :class:`LinAlgError` (a RuntimeError, as
``torch.linalg.LinAlgError``).

Example:
    >>> import gradsum
    >>> a = gradsum.tensor([[2.0, 1.0], [1.0, 3.0]], dtype=gradsum.float64, requires_grad=True)
    >>> gradsum.linalg.det(a).backward()
    >>> [[round(v, 12) for v in row] for row in a.grad.tolist()]
    [[3.0, -1.0], [-1.0, 2.0]]
"""

from __future__ import annotations

import math
from collections import namedtuple
from typing import Any

import gradsum.ops as F
from gradsum import _dtype as D
from gradsum._autocast import autocast_policy
from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.autograd.grad_mode import _state
from gradsum.autograd.graph import Node
from gradsum.ops._core import _make, needs_grad, record, register, wrap_dim, wrap_dims
from gradsum.ops.more import linalg


class LinAlgError(RuntimeError):
    """Raised when a linear-algebra routine fails (a singular matrix, a matrix that is not
    positive-definite); a RuntimeError, as ``torch.linalg.LinAlgError``."""


LinAlgError.__module__ = "gradsum.linalg"

slogdet_result = namedtuple("slogdet", ["sign", "logabsdet"])
linalg_slogdet_result = namedtuple("linalg_slogdet", ["sign", "logabsdet"])
qr_result = namedtuple("linalg_qr", ["Q", "R"])
eigh_result = namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
svd_result = namedtuple("linalg_svd", ["U", "S", "Vh"])
torch_svd_result = namedtuple("svd", ["U", "S", "V"])

_ERR = {"divide": "ignore", "invalid": "ignore", "over": "ignore", "under": "ignore"}


def _mT(t: Tensor) -> Tensor:
    return F.transpose(t, -2, -1)


def _tname(dt: Any) -> str:
    return D._TORCH_SCALAR_NAMES.get(str(dt), str(dt))


def _check_float(name: str, a: Any) -> Any:
    if not isinstance(a, Tensor):
        raise TypeError(f"{name}(): argument 'A' (position 1) must be Tensor, not "
                        f"{type(a).__name__}. Wrap it with gradsum.tensor().")
    x = a._array
    if x.dtype.kind not in "fV":
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{_tname(x.dtype)}. Convert it with .double() or .float().")
    return x


def _check_square(name: str, a: Tensor) -> Any:
    x = _check_float(name, a)
    if x.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions "
                           f"(got shape {tuple(x.shape)}).")
    if x.shape[-1] != x.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{x.shape[-2]} by {x.shape[-1]} matrices")
    return x


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


def _batch_prefix(x: Any, i: int) -> str:
    return f"(Batch element {i}): " if x.ndim > 2 else ""


def _singular_error(name: str, x: Any) -> LinAlgError:
    flat = x.reshape((-1,) + x.shape[-2:])
    for i, m in enumerate(flat):
        k = _first_zero_pivot(m)
        if k:
            return LinAlgError(f"{name}: {_batch_prefix(x, i)}The diagonal element {k} is zero, "
                               "the inversion could not be completed because the input matrix "
                               "is singular.")
    return LinAlgError(f"{name}: The input matrix is singular.")


class _MultiOutput(Node):
    """A node of an op with several outputs; missing output gradients stay None."""

    __slots__ = ()

    def _materialize(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        return grads


def _record_outputs(node: Node, inputs: tuple[Any, ...], outs: list[Any]) -> list[Tensor]:
    return [record(node, inputs, o, i) for i, o in enumerate(outs)]


def _eye_like(x: Any) -> Any:
    return xp.broadcast_to(xp.eye(x.shape[-1], dtype=x.dtype), x.shape)


# == det / slogdet / logdet ====================================================================
def _lu_solve_diag(a: Any, d: Any, perturb: bool) -> Any:
    """``d * A^{-T}`` as torch's det and slogdet rules compute it when the backward is not
    recorded: an LU solve against ``diag(d)`` (zeros off the diagonal, so an inf ``d`` meets
    LAPACK's substitution order, which decides inf vs nan), with the LU of ``A^T`` for a
    contiguous ``A`` (torch factors ``A.mT`` then) and an adjoint solve otherwise; for det,
    a zero pivot is replaced by eps (torch's perturbation for singular inputs)."""
    from gradsum.ops.linalg2 import _getrf, _getrs  # (linalg2 imports this module)

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


def logdet(A: Tensor) -> Tensor:
    """``log(det(A))``: nan for a negative determinant, -inf for a singular matrix
    (torch's composite: slogdet, then ``where``)."""
    sign, lad = slogdet(A)
    return F.where(F.eq(sign, -1), math.nan, lad)


# == inverse / solve ===========================================================================
class LinalgInvExBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (out,) = self.saved()
        ot = _mT(out)
        return F.neg(F.matmul(F.matmul(ot, g), ot))


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
        raise TypeError(f"linalg_solve(): argument 'B' (position 2) must be Tensor, not "
                        f"{type(B).__name__}")
    b = B._array
    if b.dtype != a.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found "
                           f"A of type {_tname(a.dtype)} and B of type {_tname(b.dtype)} "
                           "instead. Convert one of them.")
    vector = b.ndim == 1 or (left and b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])
    bm = b[..., None] if vector else b
    n = a.shape[-1]
    if bm.ndim < 2 or (bm.shape[-2] if left else bm.shape[-1]) != n:
        shown = f"{bm.shape[-2]}x{bm.shape[-1]}" if bm.ndim >= 2 else f"{b.shape[-1]}x1"
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {shown})")
    try:
        batch = xp.broadcast_shapes(a.shape[:-2], bm.shape[:-2])
    except ValueError:
        raise RuntimeError(f"linalg.solve: the batch dimensions of A {tuple(a.shape)} and B "
                           f"{tuple(b.shape)} do not broadcast") from None
    aa = xp.broadcast_to(a, batch + a.shape[-2:])
    bb = xp.broadcast_to(bm, batch + bm.shape[-2:])
    try:
        if left:
            out = xp.linalg.solve(aa, bb) if aa.size and bb.size else xp.zeros(bb.shape, a.dtype)
        else:
            out = xp.swapaxes(xp.linalg.solve(xp.swapaxes(aa, -1, -2), xp.swapaxes(bb, -1, -2)),
                              -1, -2) if aa.size and bb.size else xp.zeros(bb.shape, a.dtype)
    except xp.linalg.LinAlgError:
        raise LinAlgError("torch.linalg.solve: The solver failed because the input matrix is "
                          "singular.") from None
    out = xp.ascontiguousarray(out[..., 0] if vector else out).astype(a.dtype, copy=False)
    if not needs_grad(A, B):
        return _make(out)
    node = LinalgSolveExBackward0()
    node.left, node.vector, node.shapes = left, vector, (a.shape, b.shape)
    t = record(node, (A, B), out)
    node.save(A, outputs=(t,))
    return t


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
        raise RuntimeError(f"linalg.vector_norm cannot compute the {ord} norm on an empty "
                           "tensor because the operation does not have an identity")
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
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    dims = tuple(dim)
    if len(dims) != 2:
        raise RuntimeError(f"{name}: dim must be a 2-tuple. Got {', '.join(map(str, dims))}")
    d0, d1 = wrap_dim(dims[0], a.ndim), wrap_dim(dims[1], a.ndim)
    if d0 == d1:
        raise RuntimeError(f"{name}: dims must be different. Got ({d0}, {d1})")
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
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    p = _ord_value(ord)
    if abs(p) == 2:
        s = svdvals(F.movedim(A, (d0, d1), (-2, -1)))
        out = F.amax(s, -1) if p > 0 else F.amin(s, -1)
        if keepdim:
            out = F.unsqueeze(F.unsqueeze(out, min(d0, d1)), max(d0, d1))
        return out
    if abs(p) not in (1, math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
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
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or "
                               f"2. Got {list(dims)}")
    elif ord is not None and a.ndim not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must "
                           f"be 1D or 2D. Got {a.ndim}D.")
    if isinstance(ord, str) or (ord is not None and (
            (dim is not None and len(dims) == 2) or (dim is None and a.ndim == 2))):
        return matrix_norm(A, ord, dims if dim is not None else (0, 1), keepdim, dtype=dtype)
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


# == cholesky ==================================================================================
class LinalgCholeskyExBackward0(Node):
    __slots__ = ("upper",)

    def backward(self, g: Tensor) -> Tensor:
        from gradsum.ops.linalg2 import solve_triangular  # (linalg2 imports this module)

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
                        f"linalg.cholesky: {_batch_prefix(x, i)}The factorization could not "
                        f"be completed because the input is not positive-definite (the "
                        f"leading minor of order {k} is not positive-definite).") from None
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
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed "
                               "when mode='r'. Please use linalg.qr(A, mode='reduced') if you "
                               "are going to differentiate through linalg.qr.")
        Q, R = self.saved()
        m, n = Q.shape[-2], R.shape[-1]
        if self.mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when "
                               "mode='complete' and nrows > ncols.")
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
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    if x.ndim < 2:
        raise RuntimeError(f"linalg.qr: The input tensor A must have at least 2 dimensions "
                           f"(got shape {tuple(x.shape)}).")
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
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
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
        raise RuntimeError(f"linalg.svd: The input tensor A must have at least 2 dimensions "
                           f"(got shape {tuple(x.shape)}).")
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
        raise RuntimeError(f"linalg.pinv(A): The input tensor A must have at least 2 "
                           f"dimensions (got shape {tuple(x.shape)}).")
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


@autocast_policy("pinverse")
def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """``torch.pinverse``: :func:`pinv` with ``rtol=rcond``."""
    return pinv(input, rtol=rcond)


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


def cholesky_legacy(input: Tensor, upper: bool = False) -> Tensor:
    """``torch.cholesky`` (deprecated in torch: prefer ``linalg.cholesky``)."""
    return cholesky(input, upper=upper, _legacy=True)


# == registration ==============================================================================
register("det")(det)
register("logdet")(logdet)
register("slogdet")(slogdet)
register("inverse")(inv)
register("svd")(torch_svd)
register("pinverse")(pinverse)
register("matrix_exp")(matrix_exp)
register("cholesky")(cholesky_legacy)

for _name, _fn in {
    "det": det, "slogdet": linalg_slogdet, "inv": inv, "solve": solve,
    "vector_norm": vector_norm, "matrix_norm": matrix_norm, "norm": norm,
    "cholesky": cholesky, "qr": qr, "eigh": eigh, "svd": svd, "svdvals": svdvals,
    "pinv": pinv, "matrix_exp": matrix_exp, "LinAlgError": LinAlgError,
}.items():
    setattr(linalg, _name, _fn)
