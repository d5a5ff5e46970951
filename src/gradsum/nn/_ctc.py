"""Connectionist temporal classification: ``F.ctc_loss`` and ``nn.CTCLoss``, as torch's.

The per-sequence negative log likelihood is one primitive, ``CtcLossBackward0`` (torch's
``_ctc_loss``): the forward runs the alpha recursion of Graves et al. (2006) in log space, the
backward the beta recursion and torch's gradient formula. Everything around it is composed,
in torch's order, so the graph has torch's nodes: ``unsqueeze`` for an unbatched input,
``where`` for ``zero_infinity``, ``div`` by the clamped target lengths and ``mean`` for
'mean', ``sum`` for 'sum', ``squeeze`` for an unbatched 'none'.

Both recursions run one time step at a time, vectorised over the batch and the extended
target (the target with a blank before, between and after its labels: ``2 S + 1`` states).

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
from gradsum.autograd.grad_mode import is_grad_enabled, no_grad
from gradsum.autograd.graph import Node
from gradsum.nn.loss import _Loss
from gradsum.ops._core import _make, needs_grad, quietly, record
from gradsum.ops.reduction import _NoDerivative

__all__ = ["CTCLoss", "ctc_loss"]

_CHECKED_FROM = "(while checking arguments for ctc_loss_allocate_outputs)"


# -- arguments ---------------------------------------------------------------------------------
def _signature_error(input_lengths: Any, target_lengths: Any) -> TypeError:
    """torch's overload-resolution error: lengths are both tensors or both int sequences."""
    def kind(v: Any) -> str:
        return type(v).__name__
    return TypeError(
        f"ctc_loss() received an invalid combination of arguments - got (Tensor, Tensor, "
        f"{kind(input_lengths)}, {kind(target_lengths)}, int, int, bool), but expected one of:"
        "\n * (Tensor log_probs, Tensor targets, tuple of ints input_lengths, tuple of ints "
        "target_lengths, int blank = 0, int reduction = at::Reduction::Mean, bool "
        "zero_infinity = False)\n * (Tensor log_probs, Tensor targets, Tensor input_lengths, "
        "Tensor target_lengths, int blank = 0, int reduction = at::Reduction::Mean, bool "
        "zero_infinity = False)\nPass both lengths as integer tensors or both as tuples of ints."
    )


def _lengths(input_lengths: Any, target_lengths: Any) -> tuple[Any, Any]:
    """Both lengths as int64 arrays (torch's two overloads: tensors, or sequences of ints)."""
    if isinstance(input_lengths, Tensor) and isinstance(target_lengths, Tensor):
        out = []
        for name, t in (("input_lengths", input_lengths), ("target_lengths", target_lengths)):
            if t._array.dtype.kind not in "iu":
                raise RuntimeError(f"{name} must be integral (got {t.dtype}): pass an integer "
                                   "tensor, e.g. lengths.long()")
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
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' "
                      "instead.", UserWarning, stacklevel=3)
        return "mean"
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


class _Plan:
    """The checked problem: padded targets ``(N, S)``, lengths, the extended targets
    ``(N, 2 S + 1)`` and their masks."""

    def __init__(self, lp: Any, targets: Any, il: Any, tl: Any, blank: int) -> None:
        if lp.ndim != 3:
            raise RuntimeError(f"Expected 3-dimensional tensor, but got {lp.ndim}-dimensional "
                               f"tensor for argument #1 'log_probs' {_CHECKED_FROM}")
        if not 1 <= targets.ndim <= 2:
            raise RuntimeError(f"Expected 1 to 2 dimensions, but got {targets.ndim}-dimensional "
                               f"tensor for argument #2 'targets' {_CHECKED_FROM}")
        t_max, n, c = lp.shape
        if not 0 <= blank < c:
            raise RuntimeError(f"blank must be in label range (got blank={blank} for {c} "
                               "labels)")
        if il.shape[0] != n:
            raise RuntimeError(f"input_lengths must be of size batch_size (got {il.shape[0]} "
                               f"lengths for a batch of {n})")
        if tl.shape[0] != n:
            raise RuntimeError(f"target_lengths must be of size batch_size (got {tl.shape[0]} "
                               f"lengths for a batch of {n})")
        for name, lengths in (("target_lengths", tl), ("input_lengths", il)):
            if n and lengths.min() < 0:
                raise RuntimeError(f"Expected {name} to have value at least 0, but got value "
                                   f"{int(lengths.min())} {_CHECKED_FROM}")
        s_max = int(tl.max()) if n else 0
        j = xp.arange(s_max)
        has = j[None, :] < tl[:, None]  # (N, S): position j is part of target n
        if targets.ndim == 1:  # concatenated targets
            total = int(tl.sum())
            if targets.shape[0] != total:
                raise RuntimeError(f"Expected tensor to have size {total} at dimension 0, but "
                                   f"got size {targets.shape[0]} for argument #2 'targets' "
                                   f"{_CHECKED_FROM}")
            offsets = xp.cumsum(tl) - tl
            padded = targets[xp.where(has, offsets[:, None] + j[None, :], 0)] if total else (
                xp.zeros((n, s_max), dtype=xp.int64))
        else:
            if targets.shape[0] != n:
                raise RuntimeError(f"Expected tensor to have size {n} at dimension 0, but got "
                                   f"size {targets.shape[0]} for argument #2 'targets' "
                                   f"{_CHECKED_FROM}")
            if targets.shape[1] < s_max:
                raise RuntimeError(f"Expected tensor to have size at least {s_max} at dimension "
                                   f"1, but got size {targets.shape[1]} for argument #2 "
                                   f"'targets' {_CHECKED_FROM}")
            padded = targets[:, :s_max]
        if il.size and il.max() > t_max:
            raise RuntimeError(f"Expected input_lengths to have value at most {t_max}, but got "
                               f"value {int(il.max())} {_CHECKED_FROM}")
        padded = xp.where(has, padded.astype(xp.int64), blank)
        if padded.size and (padded.min() < 0 or padded.max() >= c):
            # (torch reads out of bounds here; an index error is the honest answer)
            raise RuntimeError(f"ctc_loss: targets must be class indices in [0, {c}), got values "
                               f"in [{int(padded.min())}, {int(padded.max())}]")
        self.shape = (t_max, n, c)
        self.blank = blank
        self.il, self.tl = il, tl
        ext = xp.full((n, 2 * s_max + 1), blank, dtype=xp.int64)
        ext[:, 1::2] = padded
        self.ext = ext
        s = xp.arange(ext.shape[1])
        #: state s may be entered from s - 2 (a label that differs from the previous one)
        self.skip = xp.zeros(ext.shape, dtype=bool)
        self.skip[:, 2:] = ext[:, 2:] != ext[:, :-2]
        self.valid = s[None, :] <= 2 * tl[:, None]

    def gather(self, lp: Any) -> Any:
        """``lp[t, n, ext[n, s]]``: the log probability of each extended state, ``(T, N, L)``."""
        return lp[:, xp.arange(self.shape[1])[:, None], self.ext]


# -- the recursions ----------------------------------------------------------------------------
def _log_add3(a: Any, b: Any, c: Any) -> Any:
    """``log(e^a + e^b + e^c)`` with torch's max shift (0 when all three are -inf)."""
    m = xp.maximum(xp.maximum(a, b), c)
    m = xp.where(m == -xp.inf, 0, m)
    return xp.log(xp.exp(a - m) + xp.exp(b - m) + xp.exp(c - m)) + m


def _shift(a: Any, k: int, forward: bool) -> Any:
    """``a[:, s - k]`` (``forward``) or ``a[:, s + k]``, -inf where out of range."""
    out = xp.full_like(a, -xp.inf)
    if forward:
        out[:, k:] = a[:, :-k]
    else:
        out[:, :-k] = a[:, k:]
    return out


def _alpha(lpe: Any, plan: _Plan) -> tuple[Any, Any]:
    """The log alphas ``(T, N, L)`` (valid for ``t < input_length``) and the negative log
    likelihood per sequence."""
    t_max, n, _ = plan.shape
    il, tl = plan.il, plan.tl
    neg = xp.asarray(-xp.inf, dtype=lpe.dtype)
    alpha = xp.full(lpe.shape, neg, dtype=lpe.dtype)
    if t_max:
        alpha[0, :, 0] = lpe[0, :, 0]
        alpha[0, :, 1:2] = xp.where(tl[:, None] > 0, lpe[0, :, 1:2], neg)
    for t in range(1, t_max):
        prev = alpha[t - 1]
        a3 = xp.where(plan.skip, _shift(prev, 2, True), neg)
        a = _log_add3(prev, _shift(prev, 1, True), a3) + lpe[t]
        alpha[t] = xp.where(plan.valid, a, neg)
    rows = xp.arange(n)
    last = alpha[xp.maximum(il - 1, 0), rows]  # (N, L)
    l1 = last[rows, 2 * tl]
    l2 = xp.where(tl > 0, last[rows, xp.maximum(2 * tl - 1, 0)], neg)
    m = xp.maximum(l1, l2)
    m = xp.where(m == -xp.inf, 0, m)
    ll = xp.where(tl > 0, xp.log(xp.exp(l1 - m) + xp.exp(l2 - m)) + m, l1)
    # an empty input emits only the empty target, with probability one
    ll = xp.where(il == 0, xp.where(tl == 0, 0, neg), ll)
    return alpha, (-ll).astype(lpe.dtype)


def _grad(lp: Any, alpha: Any, nll: Any, gout: Any, plan: _Plan, zero_infinity: bool) -> Any:
    """torch's ``_ctc_loss_backward``: with ``ab[t, c]`` the log sum of ``alpha * beta`` over
    the states labelled ``c``, the gradient is ``(exp(lp) - exp(ab + nll - lp)) * grad`` for
    ``t < input_length`` (it assumes ``lp`` are log-softmax outputs) and 0 after."""
    t_max, n, c = plan.shape
    il, tl = plan.il, plan.tl
    lpe = plan.gather(lp)
    neg = xp.asarray(-xp.inf, dtype=lp.dtype)
    rows = xp.arange(n)
    end = il - 1
    s = xp.arange(lpe.shape[2])
    init_states = (s[None, :] == 2 * tl[:, None]) | ((s[None, :] == 2 * tl[:, None] - 1)
                                                     & (tl[:, None] > 0))
    skip_next = _shift(plan.skip.astype(lp.dtype), 2, False) == 1  # state s + 2 skips to s
    beta = xp.full(lpe.shape, neg, dtype=lp.dtype)
    nxt = xp.full(lpe.shape[1:], neg, dtype=lp.dtype)
    for t in range(t_max - 1, -1, -1):
        b3 = xp.where(skip_next, _shift(nxt, 2, False), neg)
        rec = xp.where(plan.valid, _log_add3(nxt, _shift(nxt, 1, False), b3) + lpe[t], neg)
        init = xp.where(init_states, lpe[t], neg)
        here = (t == end)[:, None]
        cur = xp.where(here, init, xp.where((t < end)[:, None], rec, neg))
        beta[t] = cur
        nxt = cur
    ab = (alpha + beta).reshape(-1)
    # the log sum over the states of each label, as a scatter: a max, then a sum of exps
    t_idx = xp.arange(t_max)[:, None, None]
    flat = ((t_idx * n + rows[None, :, None]) * c + plan.ext[None]).reshape(-1)
    mx = xp.full(t_max * n * c, neg, dtype=lp.dtype)
    xp.maximum.at(mx, flat, ab)
    mx = xp.where(mx == -xp.inf, 0, mx)
    acc = xp.zeros(t_max * n * c, dtype=lp.dtype)
    xp.add.at(acc, flat, xp.exp(ab - mx[flat]))
    lcab = (xp.log(acc) + mx).reshape(lp.shape)
    g = (xp.exp(lp) - xp.exp(lcab + nll[None, :, None] - lp)) * gout[None, :, None]
    keep = xp.arange(t_max)[:, None] < il[None, :]
    if zero_infinity:
        keep = keep & (nll != xp.inf)[None, :]
    return xp.where(keep[:, :, None], g, 0).astype(lp.dtype)


class CtcLossBackward0(Node):
    """torch's ``_ctc_loss`` node (per-sequence losses, no reduction): the gradient of
    ``log_probs`` from the saved log alphas, a beta recursion and torch's formula. Its own
    derivative is not implemented, as torch's (``create_graph`` records a node that raises)."""

    __slots__ = ("plan", "zero_infinity")

    def backward(self, g: Tensor) -> Tensor:
        lp, alpha, nll = self.saved()  # (all three saved by _ctc_loss_raw)
        arr = quietly(_grad, lp._array, alpha._array, nll._array,  # type: ignore[union-attr]
                      xp.broadcast_to(g._array, nll.shape), self.plan, self.zero_infinity)
        if is_grad_enabled() and needs_grad(g, lp):
            node = _NoDerivative()
            node.op = "_ctc_loss_backward"
            return record(node, (g, lp), arr)
        return _make(arr)


def _ctc_loss_raw(log_probs: Tensor, targets: Tensor, il: Any, tl: Any, blank: int,
                  zero_infinity: bool) -> Tensor:
    """The per-sequence losses of a batched ``(T, N, C)`` input, recorded as one node."""
    if log_probs.numel() == 0:
        raise RuntimeError("log_probs tensor must not be empty")
    plan = _Plan(log_probs._array, targets._array, il, tl, blank)
    lp = log_probs._array
    alpha, nll = quietly(_alpha, plan.gather(lp), plan)
    if not needs_grad(log_probs):
        return _make(nll)
    node = CtcLossBackward0()
    node.plan = plan
    node.zero_infinity = zero_infinity
    out = record(node, (log_probs,), nll)
    node.save(log_probs, _make(alpha), outputs=(out,))
    return out


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
        from gradsum.nn.functional import _torch_name

        raise NotImplementedError(f"\"ctc_loss_cpu\" not implemented for "
                                  f"'{_torch_name(log_probs.dtype)}': ctc_loss takes float32 or "
                                  "float64 log_probs, convert them with .float()")
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


class CTCLoss(_Loss):
    """The connectionist temporal classification loss (:func:`ctc_loss` as a module).

    Args:
        blank: the index of the blank label.
        reduction: 'none', 'mean' (each loss divided by its target length, then averaged) or
            'sum'.
        zero_infinity: replace infinite losses and their gradients by zero.

    Example:
        >>> import gradsum
        >>> from gradsum import nn
        >>> ctc = nn.CTCLoss(reduction="sum")
        >>> lp = gradsum.full((3, 1, 2), 0.5).log()
        >>> round(ctc(lp, gradsum.tensor([[1]]), gradsum.tensor([3]), gradsum.tensor([1])).item(),
        ...       4)
        0.2877
    """

    def __init__(self, blank: int = 0, reduction: str = "mean",
                 zero_infinity: bool = False) -> None:
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs: Tensor, targets: Tensor, input_lengths: Tensor,
                target_lengths: Tensor) -> Tensor:
        return ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                        self.reduction, self.zero_infinity)
