"""The embedding lookup's primitive (torch's ``aten::embedding``): the rows of a 2-D weight at
integer indices, one ``EmbeddingBackward0`` node whose rule is
:func:`embedding_dense_backward` (the rows of the output gradient added at their indices),
itself recorded for double backward. ``F.embedding`` checks the arguments and calls
:func:`embedding`; ``F.embedding_bag`` is composed from it.

Example:
    >>> import gradsum
    >>> from gradsum.ops.embedding import embedding
    >>> w = gradsum.ones(3, 2, requires_grad=True)
    >>> y = embedding(w, gradsum.tensor([0, 2, 0])._array, 2, False)
    >>> y.grad_fn.name()
    'EmbeddingBackward0'
    >>> y.sum().backward()
    >>> w.grad.tolist()
    [[2.0, 2.0], [0.0, 0.0], [0.0, 0.0]]
"""

from __future__ import annotations

from typing import Any

import gradsum.ops as ops
from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.autograd.graph import HOLDS_STATE, Node
from gradsum.ops._core import _make, needs_grad, record
from gradsum.ops.indexing.index import _index_select
from gradsum.ops.indexing.subscript import add_rows_at

__all__ = ["embedding", "embedding_dense_backward"]


def embedding(weight: Tensor, idx: Any, padding_idx: int | None,
              scale_grad_by_freq: bool) -> Tensor:
    """The rows of the 2-D ``weight`` at the int64/int32 index array ``idx`` (checked in
    bounds by ``F.embedding``; ``padding_idx`` non-negative or None), shaped ``idx.shape +
    (dim,)``, recorded as one ``EmbeddingBackward0``."""
    n = weight.shape[0]
    flat = idx.reshape(-1).astype(xp.int64)  # (a copy: backward must not see later writes)
    w = weight._array
    out = w.take(flat, axis=0).reshape(tuple(idx.shape) + (w.shape[1],))
    if not needs_grad(weight):
        return _make(out)
    node = EmbeddingBackward0()
    node.indices, node.num_weights, node.padding_idx = flat, n, padding_idx
    node.scale = None
    if scale_grad_by_freq:  # (each row's gradient over its count in this input)
        node.scale = (1 / xp.bincount(flat, minlength=n)[flat]).astype(w.dtype)[:, None]
    node._saved = HOLDS_STATE  # (torch saves the indices)
    return record(node, (weight,), out)


class EmbeddingBackward0(Node):
    """``embedding`` (torch's node): its rule is :func:`embedding_dense_backward`."""

    __slots__ = ("indices", "num_weights", "padding_idx", "scale")

    def backward(self, g: Tensor) -> Tensor:
        return embedding_dense_backward(g, self)


class EmbeddingDenseBackwardBackward0(Node):
    """The rule of :func:`embedding_dense_backward`: the rows of ``gg`` at the indices, zero at
    ``padding_idx`` (torch's ``embedding_dense_double_backward``, which leaves out the
    ``scale_grad_by_freq`` factor, as torch does)."""

    __slots__ = ("emb", "g_shape")

    def backward(self, gg: Tensor) -> Tensor:
        emb = self.emb
        rows = _index_select(gg, 0, emb.indices)  # (indices checked in the forward)
        if emb.padding_idx is not None:
            keep = (emb.indices != emb.padding_idx).astype(gg._array.dtype)[:, None]
            rows = ops.mul(rows, _make(keep))
        return ops.reshape(rows, self.g_shape)


def embedding_dense_backward(g: Tensor, emb: EmbeddingBackward0) -> Tensor:
    """The weight's gradient of ``embedding``: the rows of ``g`` added at their indices
    (repeats in index order, as torch's), none at ``padding_idx``, each over its count with
    ``scale_grad_by_freq``; recorded for double backward."""
    ga = g._array
    rows = ga.reshape(-1, ga.shape[-1]) if ga.ndim else ga.reshape(1, 1)
    idx = emb.indices
    if emb.scale is not None:
        rows = rows * emb.scale
    if emb.padding_idx is not None:
        keep = idx != emb.padding_idx
        if not keep.all():
            idx, rows = idx[keep], rows[keep]
    out = xp.zeros((emb.num_weights, rows.shape[-1]), dtype=ga.dtype)
    if idx.size:
        add_rows_at(out, idx, rows, zeros=True)
    if not needs_grad(g):
        return _make(out)
    node = EmbeddingDenseBackwardBackward0()
    node.emb, node.g_shape = emb, ga.shape
    node._saved = HOLDS_STATE
    return record(node, (g,), out)
