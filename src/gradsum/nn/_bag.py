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
from gradsum.nn import _messages

__all__ = ["embedding_bag"]


def _bags(n: int, offsets: Any, include_last_offset: bool) -> tuple[Any, Any]:
    """(starts, ends) of the bags over ``n`` indices, checked as torch checks them."""
    off = offsets.astype(xp.int64)
    if off.size:
        if off[0] != 0:
            raise RuntimeError(
                _messages.embedding_bag_first_offset_not_zero(off))
        if off[-1] > n:
            raise RuntimeError(
                _messages.embedding_bag_last_offset_too_large(n, off))
        if (xp.diff(off) < 0).any():
            raise RuntimeError(
                _messages.embedding_bag_offsets_non_decreasing(off))
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
            _messages.argument_order_nn_functional_embedding(), stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(
            _messages.embedding_bag_if_per_sample(per_sample_weights, input))
    if weight.ndim != 2:
        raise ValueError(
            _messages.embedding_bag_weight_not_2d(weight))
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(
                _messages.if_input_2d_then_offsets(offsets))
        b, length = input.shape
        off_arr = xp.arange(0, b * length, max(length, 1), dtype=xp.int64)[:b]
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError(_messages.offsets_1d_tensor_none())
        if offsets.ndim != 1:
            raise ValueError(_messages.offsets_1d_tensor())
        off_arr = offsets._array
    else:
        raise ValueError(
            _messages.input_1d_or_2d_tensor(input))
    if mode == "max":
        if scale_grad_by_freq:
            raise ValueError(_messages.embedding_bag_max_no_scale_grad())
        if sparse:
            raise ValueError(_messages.embedding_bag_max_no_sparse())
    elif mode not in ("sum", "mean"):
        raise ValueError(_messages.mode_one_sum_mean_or())
    idx = input._array
    if idx.dtype not in (xp.int64, xp.int32):
        raise RuntimeError(
            _messages.embedding_bag_indices_dtype(input))
    n_emb = weight.shape[0]
    if max_norm is not None:
        F._embedding_renorm_(weight, idx, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            _messages.embedding_bag_per_sample_weights(mode))
    if sparse:
        raise ValueError(_messages.no_sparse_embedding_bag())
    if per_sample_weights is not None and per_sample_weights.dtype != weight.dtype:
        raise RuntimeError(
            _messages.expected_tensor_argument_1_weight(weight, per_sample_weights))
    if padding_idx is not None:
        if not -n_emb <= padding_idx < n_emb:
            raise RuntimeError(
                _messages.padding_idx_within_number_embeddings(n_emb, padding_idx))
        if padding_idx < 0:
            padding_idx += n_emb
    n = int(idx.size)
    for i, v in enumerate(idx.reshape(-1).tolist()):
        if not 0 <= v < n_emb:
            raise RuntimeError(
                _messages.embedding_bag_index_out_of_range(i, v, n_emb))
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
