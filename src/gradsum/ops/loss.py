"""The losses' primitives: one node per loss with its reduction in the rule, as torch's
``<Loss>Backward0`` nodes (``mse_loss``, ``nll_loss``, ``binary_cross_entropy``,
``binary_cross_entropy_with_logits``, ``smooth_l1_loss``, ``huber_loss``, ``soft_margin_loss``,
``multi_margin_loss``, ``multilabel_margin_loss``) and their double-backward nodes where torch
has them (``NllLossBackwardBackward0``, ``SmoothL1LossBackwardBackward0``, ...), and the
connectionist temporal classification loss ``CtcLossBackward0`` (torch's ``_ctc_loss``).
``nn.functional`` checks the arguments, computes an elementwise loss unrecorded and records
it here (:func:`_loss_node`); the rules are written in gradsum ops, so they differentiate.

The CTC loss's per-sequence negative log likelihood runs the alpha recursion of Graves et al.
(2006) in log space; its backward the beta recursion and torch's gradient formula. Both run
one time step at a time, vectorised over the batch and the extended target (the target with
a blank before, between and after its labels: ``2 S + 1`` states).

Example:
    >>> import gradsum
    >>> import gradsum.nn.functional as F
    >>> x = gradsum.tensor([1.0, 3.0], requires_grad=True)
    >>> loss = F.mse_loss(x, gradsum.tensor([0.0, 0.0]))
    >>> loss.grad_fn.name()
    'MseLossBackward0'
    >>> loss.backward()
    >>> x.grad.tolist()
    [1.0, 3.0]
"""

from __future__ import annotations

from typing import Any

import gradsum.ops as ops
from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.autograd.grad_mode import _state as _grad_state
from gradsum.autograd.grad_mode import is_grad_enabled, no_grad
from gradsum.autograd.graph import Node
from gradsum.ops import _messages
from gradsum.ops._core import _make, any_needs_grad, needs_grad, quietly, record
from gradsum.ops.activation import logsigmoid
from gradsum.ops.reduction import _NoDerivative

_add_reduce = xp.add.reduce


# -- the reduction and the loss node ------------------------------------------------------
def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "none":
        return loss
    if reduction == "mean":
        return ops.mean(loss)
    if reduction == "sum":
        return ops.sum(loss)
    raise ValueError(_messages.loss_invalid_reduction(reduction))


def _loss_node(node: Node, inputs: tuple[Tensor, ...], loss: Tensor, reduction: str) -> Tensor:
    """Reduce the elementwise ``loss`` (computed without recording) and record ``node`` (a
    ``<Loss>Backward0`` whose rule includes the reduction, as torch's loss nodes do) with
    edges to ``inputs``; ``node.reduction`` and ``node.numel`` are set here."""
    with no_grad():
        out = _reduce(loss, reduction)
    if not any_needs_grad(inputs):
        return out
    node.reduction = reduction  # type: ignore[attr-defined]
    node.numel = loss._array.size  # type: ignore[attr-defined]
    return record(node, inputs, out._array)


def _loss_grad(node: Any, g: Tensor) -> Tensor:
    """The output gradient ``g`` of a loss node as the elementwise loss's gradient factor:
    ``g`` itself for reduction 'none', ``g`` (0-d, broadcasting) for 'sum', ``g / numel`` for
    'mean'."""
    if node.reduction == "mean":
        return ops.div(g, node.numel)
    return g


def _sum_back(t: Tensor, shape: tuple[int, ...]) -> Tensor:
    """``t`` summed to ``shape`` (an input broadcast by the loss, as torch's expand)."""
    return t if tuple(t.shape) == tuple(shape) else ops.sum_to(t, tuple(shape))


# -- mse_loss ---------------------------------------------------------------------------------
class MseLossBackward0(Node):
    """``mse_loss`` with its reduction (torch's node): the input gets
    ``2 (input - target) * g`` (divided by the element count for 'mean'), the target the
    negation; both summed back to their shapes when the loss broadcast them."""

    __slots__ = ("numel", "reduction")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        a, b = self.saved()
        norm = 2.0 / self.numel if self.reduction == "mean" else 2.0  # (torch's order)
        gi = ops.mul(ops.mul(ops.sub(a, b), norm), g)
        ga = _sum_back(gi, a.shape) if self.needs(0) else None
        gb = _sum_back(ops.neg(gi), b.shape) if self.needs(1) else None
        return ga, gb


# -- nll_loss ---------------------------------------------------------------------------------
class _NllPlan:
    """What ``nll_loss`` and its backward share: the picked positions (a fancy index of the
    (N, C, ...) input), the per-target weights (0 where ignored; None when all are 1), the
    reduction and, for 'mean', the total weight (``nonzero`` False: 0 / 0 gives nan)."""

    __slots__ = ("denom", "ignored", "key", "nonzero", "one_d", "reduction", "shape", "w")

    def __init__(self, key: tuple[Any, ...], w: Any, reduction: str, denom: Any,
                 shape: tuple[int, ...], one_d: bool) -> None:
        self.key, self.w, self.reduction, self.denom = key, w, reduction, denom
        self.shape, self.one_d = shape, one_d
        #: where targets equal ignore_index (None if none do): their gradient is exactly 0,
        #: even when 'mean' divides by a total weight of 0 (torch skips them)
        self.ignored: Any = None
        self.nonzero = denom is not None and bool(denom != 0)

    def divide(self, a: Any) -> Any:
        """``a / denom`` (nan for 0 / 0, like torch, without NumPy's warning)."""
        if self.nonzero:
            return a / self.denom
        with xp.errstate(invalid="ignore", divide="ignore"):
            return a / self.denom


class NllLossBackward0(Node):
    """``nll_loss`` as one node (torch's): its rule is :func:`_nll_backward`, a primitive."""

    __slots__ = ("plan",)

    def backward(self, g: Tensor) -> Tensor:
        (x,) = self.saved()
        return _nll_backward(g, self.plan, x)


class NllLossBackwardBackward0(Node):
    """The rule of ``_nll_backward``: it is linear in ``g`` and its adjoint is ``nll_loss``
    itself (picking and weighting ``gg`` at the targets, then reducing); the input, which it
    takes as torch's ``nll_loss_backward`` does, gets zeros."""

    __slots__ = ("plan",)

    def backward(self, gg: Tensor) -> tuple[Tensor | None, Tensor | None]:
        d_g = _nll_forward(gg, self.plan) if self.needs(0) else None
        return d_g, (ops.zeros_like(gg) if self.needs(1) else None)


def _nll_forward(x: Tensor, plan: _NllPlan) -> Tensor:
    """``-w * x[targets]``, reduced; ``x`` of shape ``plan.shape`` (``(C,)`` or (N, C, ...))."""
    arr = x._array
    if plan.one_d:
        arr = arr.reshape((1,) + arr.shape)
    picked = arr[plan.key]
    loss = -picked if plan.w is None else -(picked * plan.w)
    if plan.reduction == "none":
        out = loss.reshape(()) if plan.one_d else loss
    else:
        out = xp.asarray(_add_reduce(loss, tuple(range(loss.ndim))))
        if plan.denom is not None:
            out = xp.asarray(plan.divide(out))
    if not needs_grad(x):
        return _make(out)
    node = NllLossBackward0()
    node.plan = plan
    res = record(node, (x,), out)
    node.save(x)  # (torch saves it, with the target, weight and total weight)
    return res


def _nll_backward(g: Tensor, plan: _NllPlan, x: Tensor) -> Tensor:
    """The gradient of ``nll_loss`` for the output gradient ``g``: ``-w * g`` (divided by the
    total weight for 'mean') at each target's position, zeros elsewhere (torch's formula)."""
    ga = g._array
    if plan.denom is not None:
        ga = plan.divide(ga)
    if plan.w is None:
        coef = -ga
    elif plan.denom is None or plan.nonzero:
        coef = -ga * plan.w
    else:  # total weight 0: inf * 0 where a weight is 0 gives nan, as in torch, silently
        with xp.errstate(invalid="ignore"):
            coef = -ga * plan.w
    shape = (1,) + plan.shape if plan.one_d else plan.shape
    out = xp.zeros(shape, dtype=coef.dtype)
    if coef.ndim:
        coef = coef.reshape(plan.key[1].shape)
    if plan.ignored is not None:  # (not -g/0 * 0 = nan: an ignored target gets nothing)
        coef = xp.where(plan.ignored, 0, coef)
    out[plan.key] += coef  # += into zeros: an ignored target adds +0.0, not -0.0
    if plan.one_d:
        out = out.reshape(plan.shape)
    # (recorded when the input needs grad too: under create_graph the gradient then requires
    # grad, as torch's nll_loss_backward(grad, self, ...) output does)
    if not needs_grad(g, x):
        return _make(out)
    node = NllLossBackwardBackward0()
    node.plan = plan
    return record(node, (g, x), out)


#: torch's binary_cross_entropy_backward divides by max(x (1 - x), EPSILON), EPSILON a float32
#: 1e-12 in every dtype (9.99999996e-13 in float64)
# -- binary cross entropy -------------------------------------------------------------------
_BCE_EPS = float(xp.float32(1e-12))


class BinaryCrossEntropyBackward0(Node):
    """BCE with its weight and reduction (torch's node) and torch's gradients:
    ``(x - t) / max(x (1 - x), 1e-12)`` for the input and ``-logit(x)`` for the target (not
    clamped: +-inf at x = 0 and 1, like torch), times the weight, over the count for 'mean'."""

    __slots__ = ("numel", "reduction", "weight")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        x, t = self.saved()
        g = _loss_grad(self, g)
        if self.weight is not None:
            g = ops.mul(g, self.weight)
        gx = gt = None
        if self.needs(0):
            den = ops.clamp(ops.mul(x, ops.rsub(x, 1.0)), min=_BCE_EPS)
            gx = _sum_back(ops.div(ops.mul(g, ops.sub(x, t)), den), x.shape)
        if self.needs(1):  # torch: grad * -logit(x) = grad * -log(x / (1 - x))
            with xp.errstate(divide="ignore"):  # (x = 0 or 1: +-inf, as in torch, silently)
                gt = ops.mul(g, ops.neg(ops.log(ops.div(x, ops.rsub(x, 1.0)))))
            gt = _sum_back(gt, t.shape)
        return gx, gt


def _bce_elementwise(x: Tensor, t: Tensor) -> Tensor:
    xa, ta = x._array, t._array.astype(x._array.dtype, copy=False)
    with xp.errstate(divide="ignore"):
        lx = xp.maximum(xp.log(xa), -100.0)
        l1x = xp.maximum(xp.log(1.0 - xa), -100.0)
    return _make((-(ta * lx + (1.0 - ta) * l1x)).astype(xa.dtype, copy=False))


def _bce_logits_arrays(x: Any, t: Any, w: Any, pw: Any) -> tuple[Any, Any]:
    """The elementwise loss of :func:`binary_cross_entropy_with_logits` on float32/float64
    arrays of one dtype, and ``exp(-|x|)`` (the backward's sigmoid is made from it):
    ``(1 - t) x + lw softplus(-x)`` with ``softplus(-x) = log1p(exp(-|x|)) + max(-x, 0)``
    (torch's ``-log_sigmoid``), ``max(-x, 0) = -(x - |x|) / 2`` exactly. No ``where`` or
    ``minimum`` with a scalar (NumPy runs them several times slower than arithmetic) unless
    the input has an infinity or nan."""
    with xp.errstate(over="ignore", invalid="ignore"):
        na = xp.abs(x)
        xp.negative(na, out=na)  # -|x|
        e = xp.exp(na)
        na += x
        na *= -0.5  # max(-x, 0)
        if xp.isnan(na).any():  # (x = inf: inf - inf; x = nan: nan either way)
            na = xp.maximum(-x, 0.0)
        nls = xp.log1p(e)
        nls += na  # -log(sigmoid(x))
        loss = 1.0 - t  # (1 - t) x
        loss *= x
        if pw is not None:
            lw = (pw - 1.0) * t
            lw += 1.0
            nls *= lw
        loss += nls
        if w is not None:
            loss = loss * w  # (a weight may broadcast the loss beyond the input's shape)
    return loss, e


def _bce_logits_composed(input: Tensor, target: Tensor, weight: Tensor | None,
                         pos_weight: Tensor | None) -> Tensor:
    """The elementwise loss of :func:`binary_cross_entropy_with_logits` in gradsum ops (any
    dtypes, torch's promotion), unrecorded."""
    with no_grad():
        neg_log_sig = ops.softplus(ops.neg(input))  # -log(sigmoid(x))
        one_minus_t = ops.rsub(target, 1.0)
        if pos_weight is not None:
            lw = ops.add(ops.mul(ops.sub(pos_weight, 1.0), target), 1.0)
            loss = ops.add(ops.mul(one_minus_t, input), ops.mul(lw, neg_log_sig))
        else:
            loss = ops.add(ops.mul(one_minus_t, input), neg_log_sig)
        if weight is not None:
            loss = ops.mul(loss, weight)
        if loss.dtype != target.dtype:
            # torch computes in place into ``1 - target``: the loss has the target's dtype
            loss = loss.to(target.dtype)
    return loss


class BinaryCrossEntropyWithLogitsBackward0(Node):
    """``binary_cross_entropy_with_logits`` with its weights and reduction (torch's node).
    With ``lw = 1 + (pos_weight - 1) t``: the input gets ``lw sigmoid(x) - pos_weight t``
    (``sigmoid(x) - t`` without pos_weight), the target ``-x - (pos_weight - 1) logsigmoid(x)``
    (``-x``), each times ``g``, the weight, and over the count for 'mean'."""

    __slots__ = ("numel", "pos_weight", "reduction", "weight")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        if not self.needs(1) and not _grad_state.enabled:  # (no graph to record: on arrays)
            arrays = self.saved_arrays()
            xa, ta = arrays[0], arrays[1]
            dt = xa.dtype
            if dt.char in "fd" and ta.dtype == dt and g._array.dtype == dt:
                return self._input_grad(g._array, xa, ta, arrays[2] if len(arrays) > 2
                                        else None), None
        saved = self.saved()
        x, t = saved[0], saved[1]
        g = _loss_grad(self, g)
        if self.weight is not None:
            g = ops.mul(g, self.weight)
        pw = self.pos_weight
        gx = gt = None
        if self.needs(0):
            sig = ops.sigmoid(x)
            if pw is None:
                d = ops.sub(sig, t)
            else:
                pwt = ops.mul(pw, t)
                d = ops.sub(ops.mul(ops.sub(ops.add(pwt, 1.0), t), sig), pwt)
            gx = _sum_back(ops.mul(d, g), x.shape)
        if self.needs(1):
            d = ops.neg(x)
            if pw is not None:
                d = ops.sub(d, ops.mul(ops.sub(pw, 1.0), logsigmoid(x)))
            gt = _sum_back(ops.mul(d, g), t.shape)
        return gx, gt

    def _input_grad(self, ga: Any, xa: Any, ta: Any, e: Any) -> Tensor:
        """The input's gradient on arrays: the recorded rule's arithmetic, in place (``e``:
        the forward's ``exp(-|x|)``, or None)."""
        if self.reduction == "mean":
            ga = ga / self.numel
        if self.weight is not None:
            ga = ga * self.weight._array
        if e is None:
            sig = ops.sigmoid(_make(xa))._array
        else:  # sigmoid's own arithmetic: 1 / (1 + e) for x >= 0, e / (1 + e) below
            sig = e + 1.0
            xp.divide(xp.maximum(e, xa >= 0, dtype=e.dtype), sig, out=sig)
        pw = self.pos_weight
        if pw is None:
            d = sig - ta  # (a fresh array: the pass below writes into it)
        else:
            pwt = pw._array * ta
            d = ((pwt + 1.0) - ta) * sig
            d -= pwt
        gx = d * ga if d.shape != xp.broadcast_shapes(d.shape, xp.shape(ga)) else \
            xp.multiply(d, ga, out=d)
        out = _make(gx)
        return out if gx.shape == xa.shape else ops.sum_to(out, xa.shape)


# -- smooth_l1_loss, huber_loss ---------------------------------------------------------------
class _PiecewiseLoss:
    """What the nodes of ``smooth_l1_loss`` / ``huber_loss`` need: with ``d = a - b``, the
    first gradient is ``norm * g * clip(d * scale, -cap, cap)`` and its derivative in ``a`` is
    ``norm * g * scale`` where ``|d| < bound`` (0 elsewhere), as torch's
    ``<loss>_backward`` and ``<loss>_double_backward``."""

    __slots__ = ("bound", "bwd", "cap", "numel", "reduction", "scale")

    def __init__(self, bwd: type[Node], reduction: str, numel: int, scale: float, cap: float,
                 bound: float) -> None:
        self.bwd, self.reduction, self.numel = bwd, reduction, numel
        self.scale, self.cap, self.bound = scale, cap, bound


class _PiecewiseLossBackward(Node):
    """``SmoothL1LossBackward0`` / ``HuberLossBackward0``: the input gets
    ``<loss>_backward(g, input, target)``, the target ``<loss>_backward(g, target, input)``
    (torch's formulas: one ``...BackwardBackward0`` node each under ``create_graph``)."""

    __slots__ = ("numel", "plan", "reduction")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        x, t = self.saved()
        gx = _sum_back(_piecewise_backward(g, x, t, self.plan), x.shape) if self.needs(0) else None
        gt = _sum_back(_piecewise_backward(g, t, x, self.plan), t.shape) if self.needs(1) else None
        return gx, gt


class _PiecewiseLossBackwardBackward(Node):
    """The rule of :func:`_piecewise_backward` (inputs ``g, a, b``): ``g`` gets the first
    rule again (summed against the incoming gradient when the loss was reduced), ``a`` gets
    ``gg * g * scale`` where ``|a - b| < bound`` (over the count for 'mean'), ``b`` the
    negation: torch's ``<loss>_double_backward``."""

    __slots__ = ("plan",)

    def backward(self, gg: Tensor) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
        g, a, b = self.saved()
        plan = self.plan
        d_g = d_a = d_b = None
        if self.needs(0):
            if plan.reduction == "none":
                d_g = _sum_back(_piecewise_backward(gg, a, b, plan), g.shape)
            else:
                ones = _make(xp.ones(g._array.shape, dtype=g._array.dtype))
                d_g = ops.sum(ops.mul(_piecewise_backward(ones, a, b, plan), gg))
        if self.needs(1) or self.needs(2):
            inside = _make(xp.abs(a._array - b._array) < plan.bound)
            dd = ops.mul(ops.mul(gg, g), ops.mul(inside.to(gg.dtype), plan.scale))
            if plan.reduction == "mean":
                dd = ops.div(dd, plan.numel)
            d_a = _sum_back(dd, a.shape) if self.needs(1) else None
            d_b = _sum_back(ops.neg(dd), b.shape) if self.needs(2) else None
        return d_g, d_a, d_b


class SmoothL1LossBackward0(_PiecewiseLossBackward):
    """``smooth_l1_loss``."""

    __slots__ = ()


class SmoothL1LossBackwardBackward0(_PiecewiseLossBackwardBackward):
    """``smooth_l1_loss_backward``."""

    __slots__ = ()


class HuberLossBackward0(_PiecewiseLossBackward):
    """``huber_loss``."""

    __slots__ = ()


class HuberLossBackwardBackward0(_PiecewiseLossBackwardBackward):
    """``huber_loss_backward``."""

    __slots__ = ()


def _piecewise_backward(g: Tensor, a: Tensor, b: Tensor, plan: _PiecewiseLoss) -> Tensor:
    """torch's ``smooth_l1_loss_backward`` / ``huber_loss_backward(g, a, b)``, one op
    recorded with ``g, a, b`` as inputs (so under ``create_graph`` the gradient requires grad
    whenever one of them does)."""
    ga, aa = g._array, a._array
    with xp.errstate(invalid="ignore"):
        d = aa - b._array
        out = ga * xp.clip(d * plan.scale, -plan.cap, plan.cap)
    if plan.reduction == "mean":
        out = out / plan.numel
    out = xp.asarray(out, dtype=aa.dtype)
    if not needs_grad(g, a, b):
        return _make(out)
    node = plan.bwd()
    node.plan = plan
    res = record(node, (g, a, b), out)
    node.save(g, a, b)
    return res


def _piecewise_loss(input: Tensor, target: Tensor, reduction: str, loss: Any,
                    nodes: tuple[type[Node], type[Node]], scale: float, cap: float,
                    bound: float) -> Tensor:
    """The elementwise ``loss`` array of ``input`` and ``target``, reduced, recorded as one
    node of ``nodes`` (see :class:`_PiecewiseLoss`)."""
    node = nodes[0]()
    res = _loss_node(node, (input, target), _make(loss), reduction)
    if res.grad_fn is node:
        node.plan = _PiecewiseLoss(nodes[1], reduction, loss.size, scale, cap, bound)
        node.save(input, target)
    return res


# -- soft_margin_loss ------------------------------------------------------------------------
class SoftMarginLossBackward0(Node):
    """``soft_margin_loss`` with its reduction (torch's node; the target is not
    differentiable): the input gets :func:`_soft_margin_backward`."""

    __slots__ = ("numel", "reduction", "target")

    def backward(self, g: Tensor) -> Tensor:
        (x,) = self.saved()
        return _soft_margin_backward(g, x, self)


class SoftMarginLossBackwardBackward0(Node):
    """The rule of :func:`_soft_margin_backward` (inputs ``g, x``): ``g`` gets the first rule
    again (summed against the incoming gradient when reduced), ``x`` gets
    ``gg * g * t**2 * z / (1 + z)**2`` with ``z = exp(-t x)`` (torch's
    ``soft_margin_loss_double_backward``)."""

    __slots__ = ("plan",)

    def backward(self, gg: Tensor) -> tuple[Tensor | None, Tensor | None]:
        g, x = self.saved()
        plan = self.plan
        d_g = d_x = None
        if self.needs(0):
            if plan.reduction == "none":
                d_g = _soft_margin_backward(gg, x, plan)
            else:
                ones = _make(xp.ones(g._array.shape, dtype=g._array.dtype))
                d_g = ops.sum(ops.mul(_soft_margin_backward(ones, x, plan), gg))
        if self.needs(1):
            t = plan.target
            z = ops.exp(ops.mul(ops.neg(t), x))
            zp1 = ops.add(z, 1.0)
            d_x = ops.div(ops.mul(ops.mul(ops.mul(gg, g), ops.mul(t, t)), z), ops.mul(zp1, zp1))
            if plan.reduction == "mean":
                d_x = ops.div(d_x, plan.numel)
        return d_g, d_x


def _soft_margin_backward(g: Tensor, x: Tensor, plan: Any) -> Tensor:
    """torch's ``soft_margin_loss_backward(g, x, t)``: ``-norm * t * z / (1 + z) * g`` with
    ``z = exp(-t x)``, recorded with ``g, x`` as inputs."""
    ta = plan.target._array
    with xp.errstate(over="ignore", invalid="ignore"):
        z = xp.exp(-ta * x._array)
        out = -ta * z / (1 + z) * g._array
    if plan.reduction == "mean":
        out = out / plan.numel
    out = xp.asarray(out, dtype=x._array.dtype)
    if not needs_grad(g, x):
        return _make(out)
    node = SoftMarginLossBackwardBackward0()
    node.plan = plan
    res = record(node, (g, x), out)
    node.save(g, x)
    return res


# -- multi_margin_loss, multilabel_margin_loss ------------------------------------------------
class _MarginLossBackward(Node):
    """``multi_margin_loss`` / ``multilabel_margin_loss`` with the reduction (torch's nodes):
    ``coef`` is the gradient of the loss per unit output gradient, shaped like the (2-D)
    input; the rule is ``g * coef`` (g per sample for reduction 'none'), and torch has no
    derivative for that rule (its node is ``NotImplemented``)."""

    __slots__ = ("coef", "numel", "op", "reduction")

    def backward(self, g: Tensor) -> Tensor:
        (x,) = self.saved()
        coef = self.coef
        ga = g._array
        if self.reduction == "none":
            ga = ga.reshape(-1, 1)
        elif self.reduction == "mean":
            coef = coef / self.numel
        out = xp.asarray((ga * coef).reshape(x._array.shape), dtype=x._array.dtype)
        if not needs_grad(x):
            return _make(out)
        node = _NoDerivative()
        node.op = self.op
        return record(node, (x,), out)


class MultiMarginLossBackward0(_MarginLossBackward):
    """``multi_margin_loss``."""

    __slots__ = ()


class MultilabelMarginLossBackward0(_MarginLossBackward):
    """``multilabel_margin_loss``."""

    __slots__ = ()


def _margin_loss(input: Tensor, loss: Any, coef: Any, reduction: str, one_d: bool,
                 node: _MarginLossBackward, op: str) -> Tensor:
    """The per-sample ``loss`` array reduced and recorded as ``node`` (see
    :class:`_MarginLossBackward`)."""
    if one_d and reduction == "none":
        loss = loss.reshape(())
    res = _loss_node(node, (input,), _make(loss), reduction)
    if res.grad_fn is node:
        node.coef = coef
        node.op = op
        node.save(input)
    return res


# -- ctc_loss ---------------------------------------------------------------------------------
class _CtcPlan:
    """The checked problem: padded targets ``(N, S)``, lengths, the extended targets
    ``(N, 2 S + 1)`` and their masks."""

    def __init__(self, lp: Any, targets: Any, il: Any, tl: Any, blank: int) -> None:
        if lp.ndim != 3:
            raise RuntimeError(_messages.ctc_log_probs_wrong_rank(lp))
        if not 1 <= targets.ndim <= 2:
            raise RuntimeError(_messages.ctc_targets_wrong_rank(targets))
        t_max, n, c = lp.shape
        if not 0 <= blank < c:
            raise RuntimeError(_messages.ctc_blank_out_of_range(blank, c))
        if il.shape[0] != n:
            raise RuntimeError(_messages.ctc_input_lengths_size_mismatch(il, n))
        if tl.shape[0] != n:
            raise RuntimeError(_messages.ctc_target_lengths_size_mismatch(tl, n))
        for name, lengths in (("target_lengths", tl), ("input_lengths", il)):
            if n and lengths.min() < 0:
                raise RuntimeError(_messages.ctc_negative_length(name, lengths))
        s_max = int(tl.max()) if n else 0
        j = xp.arange(s_max)
        has = j[None, :] < tl[:, None]  # (N, S): position j is part of target n
        if targets.ndim == 1:  # concatenated targets
            total = int(tl.sum())
            if targets.shape[0] != total:
                raise RuntimeError(_messages.ctc_targets_size_mismatch(total, targets))
            offsets = xp.cumsum(tl) - tl
            padded = targets[xp.where(has, offsets[:, None] + j[None, :], 0)] if total else (
                xp.zeros((n, s_max), dtype=xp.int64))
        else:
            if targets.shape[0] != n:
                raise RuntimeError(_messages.ctc_targets_size_mismatch(n, targets))
            if targets.shape[1] < s_max:
                raise RuntimeError(_messages.ctc_targets_too_short(s_max, targets))
            padded = targets[:, :s_max]
        if il.size and il.max() > t_max:
            raise RuntimeError(_messages.ctc_input_length_too_large(t_max, il))
        padded = xp.where(has, padded.astype(xp.int64), blank)
        if padded.size and (padded.min() < 0 or padded.max() >= c):
            # (torch reads out of bounds here; an index error is the honest answer)
            raise RuntimeError(_messages.ctc_target_out_of_range(c, padded))
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


def _ctc_alpha(lpe: Any, plan: _CtcPlan) -> tuple[Any, Any]:
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


def _ctc_grad(lp: Any, alpha: Any, nll: Any, gout: Any, plan: _CtcPlan, zero_infinity: bool) -> Any:
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
        arr = quietly(_ctc_grad, lp._array, alpha._array, nll._array,  # type: ignore[union-attr]
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
        raise RuntimeError(_messages.ctc_empty_log_probs())
    plan = _CtcPlan(log_probs._array, targets._array, il, tl, blank)
    lp = log_probs._array
    alpha, nll = quietly(_ctc_alpha, plan.gather(lp), plan)
    if not needs_grad(log_probs):
        return _make(nll)
    node = CtcLossBackward0()
    node.plan = plan
    node.zero_infinity = zero_infinity
    out = record(node, (log_probs,), nll)
    node.save(log_probs, _make(alpha), outputs=(out,))
    return out
