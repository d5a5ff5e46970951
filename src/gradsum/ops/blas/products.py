"""Matrix products: ``matmul`` (and its folding of batched operands), ``mm``, ``bmm``, ``mv``,
``dot``, ``vdot``, ``inner``, ``outer`` and ``linear``.

Example:
    >>> import gradsum
    >>> a = gradsum.tensor([[1.0, 2.0]], requires_grad=True)
    >>> (a @ gradsum.tensor([[3.0], [4.0]])).grad_fn.name()
    'MmBackward0'
"""

from __future__ import annotations

import math
from typing import Any

import gradsum.ops as F
from gradsum import _blas
from gradsum import _dtype as D
from gradsum._autocast import autocast_policy, excluded
from gradsum._backend import dot as _xp_dot  # (2-D products: less dispatch than matmul)
from gradsum._backend import xp
from gradsum._blas import matmul as _mm
from gradsum._tensor import Tensor
from gradsum.autograd.grad_mode import _state
from gradsum.autograd.graph import _NOTHING_SAVED, Node, _saved_input
from gradsum.ops import _messages
from gradsum.ops._core import (
    _make,
    needs_grad,
    record,
    register,
    require_tensor,
)


class MmBackward0(Node):
    """Backward of ``a @ b`` for any ranks: 1-D operands are promoted as matmul does, the
    batch dimensions broadcast, and gradients are summed back to each operand's shape."""

    __slots__ = ("a_shape", "b_shape", "transposed")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        a, b = self.saved()
        a_shape, b_shape = self.a_shape, self.b_shape
        nxt = self._next
        if len(a_shape) == 2 and len(b_shape) == 2:  # mm: no promotion, nothing to sum
            # Each gradient in its operand's layout (torch's mm_mat1/mat2_backward): for a
            # transposed operand (``w.T``) the product is computed transposed, so the
            # transpose's own backward hands a contiguous gradient on (no strided add or copy).
            ta, tb = self.transposed
            ga = gb = None
            if nxt[0][0] is not None:
                ga = _grad_product(b, False, g, True, True) if ta else _grad_product(
                    g, False, b, True, False)
            if nxt[1][0] is not None:
                gb = _grad_product(g, True, a, False, True) if tb else _grad_product(
                    a, True, g, False, False)
            return ga, gb
        a1, b1 = len(a_shape) == 1, len(b_shape) == 1
        if a1 and b1:  # dot product: g is a scalar
            ga = F.mul(g, b) if self.needs(0) else None
            gb = F.mul(g, a) if self.needs(1) else None
            return ga, gb
        pa = (1,) + a_shape if a1 else a_shape
        pb = b_shape + (1,) if b1 else b_shape
        if a1:
            g = F.unsqueeze(g, -2)
            a = F.unsqueeze(a, 0) if a is not None else None
        if b1:
            g = F.unsqueeze(g, -1)
            b = F.unsqueeze(b, -1) if b is not None else None
        ga = gb = None
        if self.needs(0):
            ga = F.sum_to(F.matmul(g, F.transpose(b, -1, -2)), pa)
            if a1:
                ga = F.reshape(ga, a_shape)
        if self.needs(1):
            gb = F.sum_to(F.matmul(F.transpose(a, -1, -2), g), pb)
            if b1:
                gb = F.reshape(gb, b_shape)
        return ga, gb


def _grad_product(x: Tensor, tx: bool, y: Tensor, ty: bool, t_out: bool) -> Tensor:
    """A gradient product of MmBackward0: ``x @ y`` with ``x`` transposed if ``tx``, ``y``
    if ``ty``, and the product if ``t_out``. Recorded as those ops under create_graph;
    otherwise the same product on the arrays, without the view and product tensors between
    (the same BLAS call either way)."""
    if not _state.enabled:
        xa, ya = x._array, y._array
        if tx:
            xa = xa.T
        if ty:
            ya = ya.T
        # (a small product straight to NumPy: _blas.matmul's own test costs a tenth of it)
        out = (_xp_dot(xa, ya) if xa.shape[0] * xa.shape[1] * ya.shape[1] < _blas.MIN_FLOPS
               else _mm(xa, ya))
        return _make(out.T if t_out else out)
    out = F.matmul(F.t(x) if tx else x, F.t(y) if ty else y)
    return F.t(out) if t_out else out


class DotBackward0(MmBackward0):
    __slots__ = ()


class MvBackward0(MmBackward0):
    __slots__ = ()


class BmmBackward0(MmBackward0):
    __slots__ = ()

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        a, b = self.saved()  # (torch's rule: each gradient is one bmm)
        ga = _product(g, F.transpose(b, 1, 2), BmmBackward0) if self.needs(0) else None
        gb = _product(F.transpose(a, 1, 2), g, BmmBackward0) if self.needs(1) else None
        return ga, gb


@register("matmul", method=True, dunders="__matmul__")
@autocast_policy("matmul")
def matmul(a: Tensor, b: Tensor) -> Tensor:
    """Matrix product with torch's rules for 1-D, 2-D and batched (broadcast) operands."""
    if isinstance(b, Tensor) and isinstance(a, Tensor):
        x, y = a._array, b._array
        if (x.ndim == 2 and y.ndim == 2 and x.dtype is y.dtype and x.shape[1] == y.shape[0]
                and x.dtype.kind != "b"):
            # the common 2-D case, checks done: no promotion, no broadcasting
            out = (_xp_dot(x, y) if x.shape[0] * x.shape[1] * y.shape[1] < _blas.MIN_FLOPS
                   else _mm(x, y))
            if not _state.enabled:
                return _make(out)
            a_rg = a._grad_fn is not None or a._requires_grad
            b_rg = b._grad_fn is not None or b._requires_grad
            if not (a_rg or b_rg):
                return _make(out)
            return _record_product(MmBackward0(), a, b, out)
    return _matmul(a, b, False)


def _record_product(node: MmBackward0, a: Tensor, b: Tensor, out: Any) -> Tensor:
    """Record ``out = a @ b`` (an mm, mv or bmm) with ``node``: the operands' shapes and
    layouts, and each operand saved for the other's gradient.

    Note "Saved for an edge": as torch, an operand is saved only for the gradient of an input
    that has an edge. A view made in no_grad mode of a tensor that requires grad requires grad
    but has none, so the other operand is not saved for it (and modifying that operand in
    place later does not break the backward)."""
    x, y = a._array, b._array
    node.a_shape, node.b_shape = x.shape, y.shape
    # (whether each operand is laid out as the transpose of a contiguous matrix)
    fx, fy = x.flags, y.flags
    node.transposed = (x.ndim == 2 and fx.f_contiguous and not fx.c_contiguous,
                       y.ndim == 2 and fy.f_contiguous and not fy.c_contiguous)
    t = record(node, (a, b), out)
    nxt = node._next
    node._saved = (_saved_input(a) if nxt[1][0] is not None else _NOTHING_SAVED,  # (save)
                   _saved_input(b) if nxt[0][0] is not None else _NOTHING_SAVED)
    return t


def _matmul(a: Tensor, b: Tensor, batched: bool) -> Tensor:
    """matmul's checks, then its product: one node for dot, mv, mm and (``batched``, the
    product of :func:`bmm`) bmm; the other ranks are composed as torch composes them."""
    if not isinstance(b, Tensor) or not isinstance(a, Tensor):
        bad = type(b if isinstance(a, Tensor) else a).__name__
        raise TypeError(_messages.matmul_argument_not_tensor(bad))
    x, y = a._array, b._array
    if x.ndim == 0 or y.ndim == 0:
        raise RuntimeError(_messages.matmul_needs_1d_arguments(x, y))
    k_a = x.shape[-1]
    k_b = y.shape[-2] if y.ndim > 1 else y.shape[0]
    # torch's order: a shape error comes before a dtype error (the dot of two vectors checks
    # the dtypes first), and a bool operand raises only once the shapes are known to fit
    if x.dtype != y.dtype and (k_a == k_b or (x.ndim == 1 and y.ndim == 1)):
        raise RuntimeError(_messages.mm_dtype_mismatch(x, y))
    if k_a != k_b:
        if x.ndim == 1 and y.ndim == 1:
            raise RuntimeError(_messages.inconsistent_tensor_size(x.shape[0], y.shape[0]))
        sa = "x".join(str(s) for s in (x.shape if x.ndim > 1 else (1,) + x.shape)[-2:])
        sb = "x".join(str(s) for s in (y.shape if y.ndim > 1 else y.shape + (1,))[-2:])
        raise RuntimeError(_messages.mat1_mat2_shapes_cannot_be_multiplied(sa, sb, k_a, k_b))
    if x.dtype != y.dtype:  # (shapes that do not fit raised above)
        raise RuntimeError(_messages.mm_dtype_mismatch(x, y))
    nx, ny = x.ndim, y.ndim
    # (recorded ranks other than dot/mv/mm/bmm go through the composite, which computes the
    # product itself)
    composite = (not batched and (nx > 2 or ny > 2 or (nx == 1 and ny == 2))
                 and x.dtype.kind != "b" and needs_grad(a, b))
    try:
        if x.dtype.kind == "b" or composite:  # the batch shapes are checked
            xp.broadcast_shapes(x.shape[:-2], y.shape[:-2])
        else:
            out = _mm(x, y)
    except ValueError:
        raise RuntimeError(_messages.matmul_batch_dims_not_broadcastable(x, y)) from None
    if x.dtype.kind == "b":
        raise D.not_implemented(_bool_kernel(x.ndim, y.ndim), x.dtype,
                                "Convert with .float() first.")
    if composite:
        return _matmul_composite(a, b)
    if not isinstance(out, xp.ndarray):
        out = xp.asarray(out)
    if not needs_grad(a, b):
        return _make(out)
    if nx == 1 and ny == 1:
        node: MmBackward0 = DotBackward0()
    elif nx == 2 and ny == 2:
        node = MmBackward0()
    elif nx == 2 and ny == 1:
        node = MvBackward0()
    else:
        node = BmmBackward0()
    return _record_product(node, a, b, out)


# -- matmul of other ranks: torch's composition ------------------------------------------------
# torch's ``matmul`` is a composite (``at::native::_matmul_impl``): it folds the operands into
# one mm/mv/bmm between views, so the output's grad_fn (and what ``next_functions`` shows) is
# the last step's: ``SqueezeBackward4`` for 1-D @ 2-D, ``UnsafeViewBackward0`` over an
# ``MmBackward0``/``MvBackward0``/``BmmBackward0`` for batched operands (``CloneBackward0`` of
# a transpose when the larger operand is the right one). gradsum composes them the same way,
# so graphs, hooks on intermediate nodes and double backward look the same in both. The
# 2-D @ 2-D product (the hot path) stays one node.
def _product(a: Tensor, b: Tensor, cls: type[MmBackward0]) -> Tensor:
    """One mm/mv/bmm node on operands whose checks are done."""
    x, y = a._array, b._array
    out = _mm(x, y)
    if not isinstance(out, xp.ndarray):
        out = xp.asarray(out)
    if not needs_grad(a, b):
        return _make(out)
    return _record_product(cls(), a, b, out)


def _reshaped(a: Tensor, shape: tuple[int, ...], cls: type[Node]) -> Tensor:
    """``a`` (a fresh result, contiguous) in ``shape`` as a new tensor that is not a view:
    torch's ``_unsafe_view`` (and the ``squeeze_`` of 1-D @ 2-D)."""
    out = a._array.reshape(shape)
    if not needs_grad(a):
        return _make(out)
    node = cls()
    node.in_shape = a._array.shape  # type: ignore[attr-defined]
    return record(node, (a,), out)


def _should_fold(a: Tensor, b: Tensor) -> bool:
    """torch's ``should_fold``: whether the larger operand (at least 3-D, the other at most
    2-D) is folded into a matrix for one mm/mv instead of a bmm over expanded operands."""
    x, y = a._array, b._array
    larger = x.ndim >= y.ndim
    t1 = x if larger else xp.swapaxes(y, -1, -2)
    if not (t1.ndim >= 3 and (y.ndim if larger else x.ndim) <= 2):
        return False
    if (b if larger else a).requires_grad:  # (a bmm would give it an expanded gradient)
        return True
    if x.ndim == 2:  # (the folded product would need a transposed copy)
        return False
    if t1.size == 0:
        return True
    st, sh = t1.strides, t1.shape
    return all(st[i] == st[i + 1] * sh[i + 1] for i in range(t1.ndim - 2))


def _matmul_composite(a: Tensor, b: Tensor) -> Tensor:
    """matmul of checked operands of ranks other than 1/1, 2/1, 2/2 while recording, composed
    of views around one mm/mv/bmm as torch composes it (see the note above)."""
    x, y = a._array, b._array
    nx, ny = x.ndim, y.ndim
    if nx == 1 and ny == 2:
        r = _product(F.unsqueeze(a, 0), b, MmBackward0)
        return _reshaped(r, r._array.shape[1:], F.inplace.SqueezeBackward4)
    if nx == 3 and ny == 3 and (x.shape[0] == 1) != (y.shape[0] == 1):
        # a batch of one that requires grad is squeezed (its gradient is then one mm, not
        # the sum of a bmm's)
        if x.shape[0] == 1 and a.requires_grad:
            return _matmul_composite(F.squeeze(a, 0), b)
        if y.shape[0] == 1 and b.requires_grad:
            return _matmul_composite(a, F.squeeze(b, 0))
    if _should_fold(a, b):
        transpose = ny > nx
        t1 = F.transpose(b, -1, -2) if transpose else a
        t2 = (F.t(a) if nx == 2 else a) if transpose else b
        s1 = t1._array.shape
        out_shape = s1[:-1]
        rows = math.prod(out_shape)
        matrix = t2._array.ndim == 2
        folded = F.reshape(t1, (rows, s1[-1]))
        if not matrix:
            return _reshaped(_product(folded, t2, MvBackward0), out_shape, _unsafe_view_cls())
        out = _reshaped(_product(folded, t2, MmBackward0), out_shape + (t2._array.shape[1],),
                        _unsafe_view_cls())
        return F.contiguous(F.transpose(out, -1, -2)) if transpose else out
    n = x.shape[-2] if nx > 1 else 1
    p = y.shape[-1] if ny > 1 else 1
    batch = tuple(xp.broadcast_shapes(x.shape[:-2], y.shape[:-2]))
    nb = math.prod(batch)
    t1 = F.reshape(F.expand(a, batch + (n, x.shape[-1])), (nb, n, x.shape[-1]))
    if ny == 1:
        t2 = F.unsqueeze(F.reshape(F.expand(b, batch + y.shape), (nb,) + y.shape), 2)
    else:
        t2 = F.reshape(F.expand(b, batch + y.shape[-2:]), (nb,) + y.shape[-2:])
    out_shape = batch + ((n,) if nx > 1 else ()) + ((p,) if ny > 1 else ())
    r = _product(t1, t2, BmmBackward0)
    if ny == 1:
        r = F.squeeze(r, -1)
    return _reshaped(r, out_shape, _unsafe_view_cls())


def _unsafe_view_cls() -> type[Node]:
    return F.views.UnsafeViewBackward0


def _bool_kernel(nx: int, ny: int) -> str:
    """The torch kernel that refuses bool operands of ranks ``nx`` @ ``ny`` (its error names
    it): matmul folds its operands into dot, mv, mm or bmm."""
    if nx == 1 and ny == 1:
        return "dot"
    if ny >= 3:
        return "bmm"
    return "addmv_impl_cpu" if ny == 1 else "addmm_impl_cpu_"


def _check_tensors(name: str, a: Any, b: Any, arg2: str) -> None:
    """torch's TypeError for a non-tensor operand of ``mm``/``bmm``/``mv``/``dot``."""
    require_tensor(name, "input", 1, a)
    require_tensor(name, arg2, 2, b)


@register("mm", method=True)
@autocast_policy("mm")
def mm(input: Tensor, mat2: Tensor) -> Tensor:
    """Product of two matrices (2-D only: use :func:`matmul` for other ranks).

    Example:
        >>> import gradsum
        >>> gradsum.mm(gradsum.ones(2, 3), gradsum.ones(3, 1)).tolist()
        [[3.0], [3.0]]
    """
    if input.__class__ is not Tensor or mat2.__class__ is not Tensor:
        _check_tensors("mm", input, mat2, "mat2")
    if input._array.ndim != 2 or mat2._array.ndim != 2:
        which, t = ("self", input) if input._array.ndim != 2 else ("mat2", mat2)
        raise RuntimeError(_messages.product_argument_not_matrix(which, t))
    return matmul(input, mat2)


@register("bmm", method=True)
@autocast_policy("bmm")
def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    """Batched matrix product of two 3-D tensors with the same batch size (no broadcasting:
    use :func:`matmul` for that).

    Example:
        >>> import gradsum
        >>> gradsum.bmm(gradsum.ones(4, 2, 3), gradsum.ones(4, 3, 5)).shape
        (4, 2, 5)
    """
    if input.__class__ is not Tensor or mat2.__class__ is not Tensor:
        _check_tensors("bmm", input, mat2, "mat2")
    x, y = input._array, mat2._array
    for which, arr in (("batch1", x), ("batch2", y)):
        if arr.ndim != 3:
            raise RuntimeError(_messages.bmm_argument_not_3d(which, arr))
    if y.shape[:2] != (x.shape[0], x.shape[2]):
        raise RuntimeError(_messages.bmm_batch2_size_mismatch(x, y))
    if x.dtype != y.dtype:
        raise RuntimeError(_messages.bmm_dtype_mismatch(x, y))
    return _matmul(input, mat2, True)


@register("mv", method=True)
@excluded  # (not on torch's autocast lists: its matmul does not cast)
def mv(input: Tensor, vec: Tensor) -> Tensor:
    """Product of a matrix and a vector.

    Example:
        >>> import gradsum
        >>> gradsum.mv(gradsum.ones(2, 3), gradsum.ones(3)).tolist()
        [3.0, 3.0]
    """
    if input.__class__ is not Tensor or vec.__class__ is not Tensor:
        _check_tensors("mv", input, vec, "vec")
    x, y = input._array, vec._array
    if x.ndim == 0:  # (torch reads the size of dim 0 first)
        raise IndexError(_messages.mv_matrix_has_no_dimensions())
    if x.ndim != 2 or y.ndim != 1:
        raise RuntimeError(_messages.mv_vector_matrix_vector_expected(x, y))
    if x.shape[1] != y.shape[0]:
        raise RuntimeError(_messages.mv_size_mismatch(x, y))
    if x.dtype != y.dtype:
        raise RuntimeError(_messages.addmv_dtype_mismatch(x, y))
    return matmul(input, vec)


@register("dot", method=True)
@excluded
def dot(input: Tensor, tensor: Tensor) -> Tensor:
    """Inner product of two 1-D tensors of the same size and dtype.

    Example:
        >>> import gradsum
        >>> gradsum.dot(gradsum.tensor([1.0, 2.0]), gradsum.tensor([3.0, 4.0]))
        tensor(11.)
    """
    if input.__class__ is not Tensor or tensor.__class__ is not Tensor:
        _check_tensors("dot", input, tensor, "tensor")
    x, y = input._array, tensor._array
    if x.ndim != 1 or y.ndim != 1:
        raise RuntimeError(_messages.dot_expects_1d_tensors(x, y))
    if x.dtype != y.dtype:
        raise RuntimeError(_messages.dot_dtype_mismatch(x, y))
    return matmul(input, tensor)


@register("outer", "ger", method=True)
def outer(a: Tensor, b: Tensor) -> Tensor:
    """Outer product of two vectors."""
    # (torch's graph: ``a.reshape(n, 1) * b``, b broadcast as it is)
    col = F.reshape(a, (a._array.shape[0], 1)) if a._array.ndim == 1 else F.unsqueeze(a, 1)
    return F.mul(col, b)


# -- linear ------------------------------------------------------------------------------------
class AddmmBackward0(Node):
    """``x @ w.T + b`` as one node (torch's ``F.linear`` on a 2-D input with bias). Computing
    ``dw = g.T @ x`` directly gives a contiguous, unshared buffer that the weight's sink can
    take over (a transposed view of ``x.T @ g`` would have to be copied)."""

    #: b_shape: the bias's own shape ((out,), (1,) or ()), None without a bias
    __slots__ = ("b_shape", "x_shape")

    def backward(self, g: Tensor) -> tuple[Tensor | None, ...]:
        x, w = self.saved()
        gx = gw = gb = None
        if self.needs(0):
            gx = F.matmul(g, w)
        if self.needs(1):
            # explicit row counts: a -1 cannot be inferred when a dim is 0 (no features)
            rows = math.prod(self.x_shape[:-1])
            g2 = g if g.ndim == 2 else F.reshape(g, (rows, g.shape[-1]))
            x2 = x if x.ndim == 2 else F.reshape(x, (rows, x.shape[-1]))
            gw = _grad_product(g2, True, x2, False, False)
        if self.b_shape is not None and self.needs(2):
            gb = F.sum_to(g, self.b_shape)
        return gx, gw, gb


class MmBackward1(AddmmBackward0):
    """``F.linear`` without bias (torch shows ``MmBackward0``; named apart from matmul's)."""

    __slots__ = ()

    def name(self) -> str:
        return "MmBackward0"


class LinearBackward0(AddmmBackward0):
    """``F.linear`` on an input of more than 2 dimensions."""

    __slots__ = ()


@register("linear")
def linear(x: Tensor, w: Tensor, b: Tensor | None = None) -> Tensor:
    """``x @ w.T + b`` in one op (the core of ``nn.Linear``)."""
    xa, wa = x._array, w._array
    if wa.ndim != 2 or xa.ndim == 0:
        out = matmul(x, F.t(w) if wa.ndim == 2 else w)
        return out if b is None else F.add(out, b)
    if xa.dtype != wa.dtype or (b is not None and b._array.dtype != xa.dtype):
        raise RuntimeError(_messages.linear_dtype_mismatch(xa, wa, b))
    if xa.shape[-1] != wa.shape[1]:
        rows = 1
        for s in xa.shape[:-1]:
            rows *= s
        raise RuntimeError(_messages.linear_shapes_cannot_be_multiplied(rows, xa, wa))
    ba = None if b is None else b._array
    low = xa.dtype if xa.itemsize < 4 and D.is_float_np(xa.dtype) else None
    if low is not None:  # half, bfloat16: the product and the bias in float32, rounded once
        xa, wa = xa.astype(xp.float32), wa.astype(xp.float32)
        ba = None if ba is None else ba.astype(xp.float32)
    out = (_xp_dot(xa, wa.T) if xa.ndim == 2 and xa.shape[0] * wa.size < _blas.MIN_FLOPS
           else _mm(xa, wa.T))
    if ba is not None:
        if ba.shape not in ((wa.shape[0],), (1,), ()):
            out = out + ba  # let broadcasting raise or work as torch does
        else:
            out += ba
    if low is not None:
        out = out.astype(low)
        xa = x._array
    if not needs_grad(x, w, b):
        return _make(out)
    if b is None:
        node: AddmmBackward0 = MmBackward1() if xa.ndim == 2 else LinearBackward0()
    else:
        node = AddmmBackward0() if xa.ndim == 2 else LinearBackward0()
    node.b_shape = None if b is None else b._array.shape
    node.x_shape = xa.shape
    t = record(node, (x, w, b), out)
    # (note "Saved for an edge" in _record_product: torch's linear multiplies by ``w.t()``, a view
    # with a node even for a w made in no_grad mode, so x is saved whenever w requires
    # grad; a 2-d x is used as it is, so w is saved only if x has an edge)
    save_w = node._next[0][0] is not None or xa.ndim != 2
    node.save(x if w.requires_grad else None, w if save_w else None)
    return t


# -- products -------------------------------------------------------------------------------
@register("inner", method=True)
def inner(input: Tensor, other: Tensor) -> Tensor:
    """The sum of products over the last dimensions (a product when either is 0-d).

    Example:
        >>> import gradsum
        >>> gradsum.inner(gradsum.tensor([[1.0, 2.0]]), gradsum.tensor([3.0, 4.0])).tolist()
        [11.0]
    """
    require_tensor("inner", "input", 1, input)
    require_tensor("inner", "other", 2, other)
    if input._array.ndim == 0 or other._array.ndim == 0:
        return F.mul(input, other)
    if input._array.dtype != other._array.dtype:
        raise RuntimeError(_messages.inner_dtype_mismatch(input, other))
    if input._array.shape[-1] != other._array.shape[-1]:
        raise RuntimeError(_messages.inner_last_dimension_mismatch(input, other))
    return F.tensordot(input, other, ([-1], [-1]))


class VdotBackward0(Node):
    """``input`` gets ``g * other``, ``other`` gets ``g * input`` (real tensors)."""

    __slots__ = ()

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        a, b = self.saved()
        return (F.mul(g, b) if self.needs(0) else None,
                F.mul(g, a) if self.needs(1) else None)


@register("vdot", method=True)
def vdot(input: Tensor, other: Tensor) -> Tensor:
    """The dot product of two 1-D tensors of one dtype (the first conjugated, which changes
    nothing for gradsum's real dtypes).

    Example:
        >>> import gradsum
        >>> gradsum.vdot(gradsum.tensor([1, 2]), gradsum.tensor([3, 4])).item()
        11
    """
    require_tensor("vdot", "input", 1, input)
    require_tensor("vdot", "other", 2, other)
    x, y = input._array, other._array
    if x.ndim != 1 or y.ndim != 1:
        raise RuntimeError(_messages.vdot_expects_1d_tensors(x, y))
    if x.dtype != y.dtype:
        raise RuntimeError(_messages.vdot_dtype_mismatch(x, y))
    if x.size != y.size:
        raise RuntimeError(_messages.inconsistent_tensor_size(x.size, y.size))
    out = xp.asarray(xp.dot(x, y), dtype=x.dtype)
    if not needs_grad(input, other):
        return _make(out)
    node = VdotBackward0()
    t = record(node, (input, other), out)
    node.save(input, other)
    return t
