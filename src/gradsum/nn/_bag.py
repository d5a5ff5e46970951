"""``F.embedding_bag`` and ``nn.EmbeddingBag``: sums, means or maxima over bags of embedding
rows, without materialising the per-index embeddings for the caller.

The bags are the rows of a 2-D ``input`` or, for a 1-D ``input``, the runs that ``offsets``
starts. Built from differentiable pieces (an ``embedding`` lookup, then a bag matrix product
for sum/mean or a gather of the per-feature maxima for max), so the gradients of ``weight``
and ``per_sample_weights`` are torch's: every index of a bag gets the bag's gradient (over
the bag size for mean), only the maximal row per feature for max, nothing for
``padding_idx``.

Example:
    >>> import gradsum
    >>> import gradsum.nn.functional as F
    >>> w = gradsum.arange(10.0).reshape(5, 2)
    >>> F.embedding_bag(gradsum.tensor([0, 1, 4]), w, gradsum.tensor([0, 2]), mode="sum")
    tensor([[2., 4.],
            [8., 9.]])
"""

from __future__ import annotations

from typing import Any

import gradsum.ops as ops
from gradsum import _creation
from gradsum import _dtype as D
from gradsum._autocast import excluded
from gradsum._backend import xp
from gradsum._tensor import Tensor

__all__ = ["embedding_bag"]


def _bags(n: int, offsets: Any, include_last_offset: bool) -> tuple[Any, Any]:
    """(starts, ends) of the bags over ``n`` indices, checked as torch checks them."""
    off = offsets.astype(xp.int64)
    if off.size:
        if off[0] != 0:
            raise RuntimeError(
                "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to "
                f"start from position 0. However, got {int(off[0])}")
        if off[-1] > n:
            raise RuntimeError(
                f"offsets[-1] can not be greater than input's length {n} but got offsets[-1] "
                f"of {int(off[-1])}")
        if (xp.diff(off) < 0).any():
            raise RuntimeError(
                f"embedding_bag: offsets must be non-decreasing, got {off.tolist()}")
    if include_last_offset:
        if off.size == 0:
            return off, off
        return off[:-1], off[1:]
    return off, xp.append(off[1:], n)


@excluded  # (not on torch's autocast lists: its matmul does not cast)
def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None,
                  max_norm: float | None = None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """Sum, mean or max of the ``weight`` rows of each bag of indices (torch's
    ``F.embedding_bag``): output ``(num_bags, embedding_dim)``, zeros for an empty bag.

    ``input`` 2-D ``(B, N)``: ``B`` bags of ``N`` (``offsets`` must be None); 1-D: the bags
    start at ``offsets`` (with ``include_last_offset`` the last offset ends the last bag).
    ``per_sample_weights`` (same shape as ``input``, ``mode="sum"`` only) scale each row;
    ``padding_idx`` entries are left out of the reduction (and a mean's count) and get no
    gradient; ``max_norm`` renormalises the used rows of ``weight`` in place first.

    Example:
        >>> import gradsum
        >>> import gradsum.nn.functional as F
        >>> w = gradsum.tensor([[1.0, 5.0], [3.0, 2.0], [0.0, 0.0]], requires_grad=True)
        >>> out = F.embedding_bag(gradsum.tensor([[0, 1, 2]]), w, mode="max", padding_idx=2)
        >>> out
        tensor([[3., 5.]], grad_fn=<IndexBackward0>)
        >>> out.sum().backward()
        >>> w.grad.tolist()
        [[0.0, 1.0], [1.0, 0.0], [0.0, 0.0]]
    """
    from gradsum.nn import functional as F

    if weight.dtype == D.int64 and input.is_floating_point():
        import warnings

        warnings.warn(
            "Argument order of nn.functional.embedding_bag was changed. Usage "
            "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
            "`embedding_bag(input, weight, ...)`.", stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({tuple(per_sample_weights.shape)}) is not "
            f"None, then it must have the same shape as the input ({tuple(input.shape)})")
    if weight.ndim != 2:
        raise ValueError(
            f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}")
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a "
                "mini-batch of fixed length sequences. However, found offsets of type "
                f"{type(offsets)}")
        b, length = input.shape
        off_arr = xp.arange(0, b * length, max(length, 1), dtype=xp.int64)[:b]
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        off_arr = offsets._array
    else:
        raise ValueError(
            f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")
    if mode == "max":
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    elif mode not in ("sum", "mean"):
        raise ValueError("mode has to be one of sum, mean or max")
    idx = input._array
    if idx.dtype not in (xp.int64, xp.int32):
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got {input.type()} instead (while checking arguments for "
            "embedding_bag)")
    n_emb = weight.shape[0]
    if max_norm is not None:
        F._embedding_renorm_(weight, idx, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            "GitHub.")
    if sparse:
        raise ValueError("gradsum has no sparse gradients: use embedding_bag(..., sparse=False)")
    if per_sample_weights is not None and per_sample_weights.dtype != weight.dtype:
        raise RuntimeError(
            "Expected tensor for argument #1 'weight' to have the same type as tensor for "
            f"argument #1 'per_sample_weights'; but type {weight.type()} does not equal "
            f"{per_sample_weights.type()} (while checking arguments for embedding_bag)")
    if padding_idx is not None:
        if not -n_emb <= padding_idx < n_emb:
            raise RuntimeError(
                "padding_idx must be within the number of embeddings, "
                f"-{n_emb} through {n_emb - 1}, but got {padding_idx}")
        if padding_idx < 0:
            padding_idx += n_emb
    n = int(idx.size)
    for i, v in enumerate(idx.reshape(-1).tolist()):
        if not 0 <= v < n_emb:
            raise RuntimeError(
                f"Index {i} of input takes value {v} which is not in the valid range "
                f"[0, {n_emb})")
    starts, ends = _bags(n, off_arr, include_last_offset)
    n_bags, dim = int(starts.size), weight.shape[1]
    flat = idx.reshape(-1).astype(xp.int64)
    keep = (flat != padding_idx) if padding_idx is not None else xp.ones(n, dtype=bool)
    rows = F.embedding(Tensor._make(flat), weight, None, None, 2.0, scale_grad_by_freq)
    if mode == "max":
        # per bag and feature, the first maximal row (padding rows left out); an empty bag
        # picks the appended zero row, which has no gradient path
        vals = rows.detach()._array
        pick = xp.full((n_bags, dim), n, dtype=xp.int64)
        for b in range(n_bags):
            pos = xp.arange(starts[b], ends[b])
            pos = pos[keep[pos]]
            if pos.size:
                pick[b] = pos[xp.argmax(vals[pos], axis=0)]
        padded = ops.cat([rows, _creation.zeros(1, dim, dtype=weight.dtype)])
        return padded[Tensor._make(pick), Tensor._make(xp.arange(dim)[None, :])]
    # sum / mean: a (bags x indices) matrix of 1 (or 1/count), 0 for padding
    mat = xp.zeros((n_bags, n), dtype=weight._array.dtype)
    for b in range(n_bags):
        s, e = int(starts[b]), int(ends[b])
        sel = keep[s:e]
        if mode == "mean":
            count = int(sel.sum())
            mat[b, s:e] = sel / count if count else 0
        else:
            mat[b, s:e] = sel
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.reshape(-1).unsqueeze(1)
    return Tensor._make(mat) @ rows
