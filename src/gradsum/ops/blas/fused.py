"""The fused ``beta * input + alpha * product`` ops: ``addmm``, ``addmv``, ``addbmm``,
``baddbmm`` and ``addr``.

Example:
    >>> import gradsum
    >>> m = gradsum.ones(2, 2)
    >>> gradsum.addmm(m, m, m).tolist()
    [[3.0, 3.0], [3.0, 3.0]]
"""

from __future__ import annotations

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
    needs_grad,
    record,
    register,
    require_tensor,
    scalar_value,
)
from gradsum.ops.reduction import _contig


# -- addmm / addmv / addbmm / baddbmm ----------------------------------------------------------
class AddmmBackward0(Node):
    """``beta * input + alpha * (m1 @ m2)`` (and addmv, addbmm, baddbmm below)."""

    __slots__ = ("alpha", "beta", "in_shape", "kind")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
        m1, m2 = self.saved() if (self.needs(1) or self.needs(2)) else (None, None)
        alpha, beta, kind = self.alpha, self.beta, self.kind
        gi = g1 = g2 = None
        if self.needs(0):
            gi = F.sum_to(g if beta == 1 else F.mul(g, beta), self.in_shape)
        if kind == "addbmm" and (self.needs(1) or self.needs(2)):
            nb = (m1 if m1 is not None else m2).shape[0]
            g = F.expand(F.unsqueeze(g, 0), (nb, *g.shape))
        if self.needs(1):
            if kind == "addmv":
                g1 = F.outer(g, m2)
            else:
                g1 = F.matmul(g, F.transpose(m2, -1, -2))
            g1 = g1 if alpha == 1 else F.mul(g1, alpha)
        if self.needs(2):
            g2 = F.matmul(F.transpose(m1, -1, -2), g)
            g2 = g2 if alpha == 1 else F.mul(g2, alpha)
        return gi, g1, g2


class AddmvBackward0(AddmmBackward0):
    __slots__ = ()


class AddbmmBackward0(AddmmBackward0):
    __slots__ = ()


class BaddbmmBackward0(AddmmBackward0):
    __slots__ = ()


_ADD_NODES: dict[str, type[AddmmBackward0]] = {
    "addmm": AddmmBackward0, "addmv": AddmvBackward0, "addbmm": AddbmmBackward0,
    "baddbmm": BaddbmmBackward0,
}


def _add_product(kind: str, input: Tensor, m1: Tensor, m2: Tensor, beta: Any, alpha: Any
                 ) -> Tensor:
    args = {"addmm": ("input", "mat1", "mat2"), "addmv": ("input", "mat", "vec"),
            "addbmm": ("input", "batch1", "batch2"),
            "baddbmm": ("input", "batch1", "batch2")}[kind]
    for pos, (arg, v) in enumerate(zip(args, (input, m1, m2)), 1):
        require_tensor(kind, arg, pos, v)
    x, a, b = input._array, m1._array, m2._array
    want = {"addmm": (2, 2), "addmv": (2, 1), "addbmm": (3, 3), "baddbmm": (3, 3)}[kind]
    for arg, arr, nd in ((args[1], a, want[0]), (args[2], b, want[1])):
        if arr.ndim != nd:
            raise RuntimeError(_messages.fused_argument_wrong_rank(kind, arg, nd, arr))
    if kind == "addmv":
        if a.shape[1] != b.shape[0] or x.shape not in ((), (1,), (a.shape[0],)):
            raise RuntimeError(_messages.addmv_size_mismatch(x, a, b))
        shape: tuple[int, ...] = (a.shape[0],)
    elif kind == "addmm":
        if a.shape[1] != b.shape[0]:
            raise RuntimeError(_messages.addmm_shapes_cannot_be_multiplied(a, b))
        shape = (a.shape[0], b.shape[1])
    else:
        if kind == "addbmm" and (a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]):
            raise RuntimeError(_messages.baddbmm_incompatible_matrix_sizes(a, b))
        if kind == "baddbmm" and b.shape[:2] != (a.shape[0], a.shape[2]):
            raise RuntimeError(_messages.baddbmm_batch2_size_mismatch(a, b))
        shape = (a.shape[1], b.shape[2]) if kind == "addbmm" else (a.shape[0], a.shape[1],
                                                                    b.shape[2])
    for arr in (a, b):
        if arr.dtype != x.dtype:
            raise RuntimeError(_messages.fused_dtype_mismatch(x, arr, kind))
    try:
        xb = xp.broadcast_to(x, shape)
    except ValueError:
        raise RuntimeError(
            _messages.fused_expanded_size_mismatch(shape, x, len(shape) - 1)
        ) from None
    beta, alpha = scalar_value(beta), scalar_value(alpha)
    if x.itemsize < 4 and D.is_float_np(x.dtype):  # half, bfloat16: float32, rounded once
        a, b, xb = a.astype(xp.float32), b.astype(xp.float32), xb.astype(xp.float32)
    prod = xp.matmul(a, b)
    if kind == "addbmm":
        prod = prod.sum(0)
    if alpha != 1:
        prod = prod * alpha
    out = prod if beta == 0 else (prod + (xb if beta == 1 else xb * beta))
    out = _contig(out, x.dtype)
    if not needs_grad(input, m1, m2):
        return _make(out)
    node = _ADD_NODES[kind]()
    node.kind, node.alpha, node.beta, node.in_shape = kind, alpha, beta, x.shape
    t = record(node, (input, m1, m2), out)
    if node.needs(1) or node.needs(2):  # (torch saves each factor for the other's gradient)
        node.save(m1 if node.needs(2) else None, m2 if node.needs(1) else None)
    return t


@register("addmm", method=True, inplace="addmm_")
@autocast_policy("addmm")
def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1
          ) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)``; ``input`` broadcasts to the product's shape
    (with ``beta=0`` it is ignored, nan included).

    Example:
        >>> import gradsum
        >>> gradsum.addmm(gradsum.ones(2, 2), gradsum.eye(2), gradsum.eye(2), beta=2).tolist()
        [[3.0, 2.0], [2.0, 3.0]]
    """
    return _add_product("addmm", input, mat1, mat2, beta, alpha)


@register("addmv", method=True, inplace="addmv_")
def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * (mat @ vec)``."""
    return _add_product("addmv", input, mat, vec, beta, alpha)


@register("addbmm", method=True, inplace="addbmm_")
@autocast_policy("addbmm")
def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1
           ) -> Tensor:
    """``beta * input + alpha * sum_b(batch1[b] @ batch2[b])``."""
    return _add_product("addbmm", input, batch1, batch2, beta, alpha)


@register("baddbmm", method=True, inplace="baddbmm_")
@autocast_policy("baddbmm")
def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1
            ) -> Tensor:
    """``beta * input + alpha * (batch1 @ batch2)``, batch by batch."""
    return _add_product("baddbmm", input, batch1, batch2, beta, alpha)


# -- addr ------------------------------------------------------------------------------------------
class AddrBackward0(Node):
    __slots__ = ("alpha", "beta", "in_shape")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
        v1, v2 = self.saved()
        gi = None
        if self.needs(0):
            gi = F.sum_to(g if self.beta == 1 else F.mul(g, self.beta), self.in_shape)
        g1 = F.mul(F.mv(g, v2), self.alpha) if self.needs(1) else None
        g2 = F.mul(F.mv(F.t(g), v1), self.alpha) if self.needs(2) else None
        return gi, g1, g2


@register("addr", method=True, inplace="addr_")
def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta: Any = 1, alpha: Any = 1
         ) -> Tensor:
    """``beta * input + alpha * outer(vec1, vec2)`` (``input`` broadcasts; with ``beta`` 0 it
    is ignored, nan included).

    Example:
        >>> import gradsum
        >>> gradsum.addr(gradsum.zeros(2, 2), gradsum.tensor([1.0, 2.0]),
        ...              gradsum.tensor([3.0, 4.0])).tolist()
        [[3.0, 4.0], [6.0, 8.0]]
    """
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if v._array.ndim != 1:
            raise RuntimeError(_messages.addr_expected_1d_argument(name, v))
    rt = D.promote_types(D.promote_types(input.dtype, vec1.dtype), vec2.dtype).np
    if rt.kind in "biu":
        for name, s in (("beta", beta), ("alpha", alpha)):
            if isinstance(s, float):
                raise RuntimeError(_messages.addr_float_scalar_for_integral_input(name))
    shape = (vec1._array.shape[0], vec2._array.shape[0])
    x = input._array.astype(rt, copy=False)
    try:
        xb = xp.broadcast_to(x, shape)
    except ValueError:
        raise RuntimeError(
            _messages.fused_expanded_size_mismatch(shape, x, x.ndim - 1)
        ) from None
    o = xp.multiply.outer(vec1._array.astype(rt, copy=False), vec2._array.astype(rt, copy=False))
    if rt.kind == "b":
        out = (o & bool(alpha)) | (xb & bool(beta))
    else:
        out = o * alpha if alpha != 1 else o.copy()
        if beta != 0:
            out = out + (xb * beta if beta != 1 else xb)
    out = xp.asarray(out, dtype=rt)
    if not needs_grad(input, vec1, vec2):
        return _make(out)
    node = AddrBackward0()
    node.alpha, node.beta, node.in_shape = alpha, beta, input._array.shape
    res = record(node, (input, vec1, vec2), out)
    node.save(vec1, vec2)
    return res
