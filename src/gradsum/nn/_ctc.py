"""Connectionist temporal classification: ``F.ctc_loss`` and ``nn.CTCLoss``, as torch's.

The per-sequence negative log likelihood is one primitive, ``CtcLossBackward0`` (torch's
``_ctc_loss``, in :mod:`gradsum.ops.loss`: the alpha recursion of Graves et al. (2006) in log
space, the backward the beta recursion and torch's gradient formula). Everything around it is
composed here, in torch's order, so the graph has torch's nodes: ``unsqueeze`` for an
unbatched input, ``where`` for ``zero_infinity``, ``div`` by the clamped target lengths and
``mean`` for 'mean', ``sum`` for 'sum', ``squeeze`` for an unbatched 'none'.

Example:
    >>> import gradsum
    >>> import gradsum.nn.functional as F
    >>> log_probs = gradsum.full((3, 1, 2), 0.5).log().requires_grad_()
    >>> loss = F.ctc_loss(log_probs, gradsum.tensor([[1]]), [3], [1], reduction="sum")
    >>> round(loss.item(), 4)  # 6 of the 8 paths of length 3 collapse to [1]
    0.2877
    >>> loss.backward()
    >>> [round(v, 4) for v in log_probs.grad[:, 0, 1].tolist()]
    [0.0, -0.1667, 0.0]
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import gradsum.ops as ops
from gradsum import _creation
from gradsum._autocast import autocast_policy
from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.autograd.grad_mode import no_grad
from gradsum.nn import _messages
from gradsum.ops._core import _make
from gradsum.ops.loss import _ctc_loss_raw

__all__ = ["ctc_loss"]


# -- arguments ---------------------------------------------------------------------------------
def _signature_error(input_lengths: Any, target_lengths: Any) -> TypeError:
    """torch's overload-resolution error: lengths are both tensors or both int sequences."""
    return TypeError(_messages.ctc_loss_invalid_arguments(input_lengths, target_lengths))


def _lengths(input_lengths: Any, target_lengths: Any) -> tuple[Any, Any]:
    """Both lengths as int64 arrays (torch's two overloads: tensors, or sequences of ints)."""
    if isinstance(input_lengths, Tensor) and isinstance(target_lengths, Tensor):
        out = []
        for name, t in (("input_lengths", input_lengths), ("target_lengths", target_lengths)):
            if t._array.dtype.kind not in "iu":
                raise RuntimeError(_messages.integral_pass_integer_tensor_e(name, t))
            out.append(t._array.reshape(-1).astype(xp.int64))
        return out[0], out[1]
    seqs = (input_lengths, target_lengths)
    if all(isinstance(v, Sequence) and not isinstance(v, str) for v in seqs) and all(
            isinstance(i, int) or (hasattr(i, "dtype") and xp.asarray(i).dtype.kind in "iu")
            for v in seqs for i in v):
        return (xp.asarray([int(i) for i in input_lengths], dtype=xp.int64),
                xp.asarray([int(i) for i in target_lengths], dtype=xp.int64))
    raise _signature_error(input_lengths, target_lengths)


def _reduction(reduction: str) -> str:
    if reduction == "elementwise_mean":  # (torch's _Reduction.get_enum)
        warnings.warn(_messages.elementwise_mean_deprecated(), UserWarning, stacklevel=3)
        return "mean"
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(_messages.loss_invalid_reduction(reduction))
    return reduction


@autocast_policy("ctc_loss")
def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Tensor | Sequence[int],
             target_lengths: Tensor | Sequence[int], blank: int = 0, reduction: str = "mean",
             zero_infinity: bool = False) -> Tensor:
    """The connectionist temporal classification loss of ``log_probs`` ``(T, N, C)`` (or
    ``(T, C)`` unbatched; log-softmax outputs) against ``targets``, padded ``(N, S)`` or
    concatenated ``(sum(target_lengths),)``; the lengths are integer tensors or tuples of ints.

    'mean' divides each loss by its target length (at least 1) before averaging over the batch;
    ``zero_infinity`` replaces infinite losses (inputs too short for their target) and their
    gradients by zero.

    Example:
        >>> import gradsum
        >>> import gradsum.nn.functional as F
        >>> lp = gradsum.tensor([[0.9, 0.1], [0.2, 0.8]]).log()[:, None]
        >>> round(F.ctc_loss(lp, gradsum.tensor([[1]]), [2], [1]).item(), 4)
        0.1985
    """
    reduction = _reduction(reduction)
    il, tl = _lengths(input_lengths, target_lengths)
    dt = log_probs._array.dtype
    if dt.kind not in "fV" or dt.itemsize < 4:

        raise NotImplementedError(_messages.ctc_loss_not_floating(log_probs))
    batched = log_probs.ndim == 3
    lp = log_probs if batched else ops.unsqueeze(log_probs, 1)
    res = _ctc_loss_raw(lp, targets, il, tl, blank, zero_infinity)
    if zero_infinity:
        res = ops.where(ops.eq(res, float("inf")), _creation.zeros((), dtype=res.dtype), res)
    if reduction == "mean":
        with no_grad():
            lengths = ops.clamp_min(_make(tl.astype(dt)), 1)
        return ops.mean(ops.div(res, lengths))
    if reduction == "sum":
        return ops.sum(res)
    return res if batched else ops.squeeze(res, 0)
