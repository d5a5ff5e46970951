"""``Adafactor``: Adam-like steps with factored second moments (torch's ``torch.optim.Adafactor``:
row/column factors for parameters of two or more dimensions, ``beta2_decay``, the ``eps`` pair,
update clipping ``d``, decoupled weight decay, maximize).

Example:
    >>> import gradsum
    >>> from gradsum import nn, optim
    >>> w = nn.Parameter(gradsum.ones(2, 3))
    >>> opt = optim.Adafactor([w])
    >>> w.grad = gradsum.ones(2, 3)
    >>> opt.step()              # relative step: lr * RMS(w) = 0.01 * 1
    >>> [round(v, 4) for v in w[0].tolist()]
    [0.99, 0.99, 0.99]
    >>> list(opt.state[w]), tuple(opt.state[w]["row_var"].shape)
    (['step', 'row_var', 'col_var'], (2, 1))
"""

from __future__ import annotations

from typing import Any, ClassVar

from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.optim import _messages
from gradsum.optim._kernels import _add_scaled_, _grad_block, _lerp_, _mul_
from gradsum.optim.optimizer import (
    Optimizer,
    _bump,
    _count_step,
    _lr_value,
    _params_with_grad,
    _step_tensor,
)


def _norm(a: Any) -> float:
    """``a.norm(2).item()``."""
    return float(xp.sqrt(xp.sum(a * a)))


class Adafactor(Optimizer):
    """Adafactor, torch's formulation (``eps1 = None``: the machine epsilon of the first
    parameter's dtype; ``G`` the gradient, negated with ``maximize``)::

        step += 1
        beta2_complement = step ** beta2_decay
        rho = min(lr, 1 / sqrt(step));  alpha = max(eps2, RMS(p)) * rho
        p *= 1 - lr * weight_decay
        if G.dim() > 1:   # factored over the last two dimensions
            row_var = lerp(row_var, mean(G * G, dim=-1), beta2_complement)
            col_var = lerp(col_var, mean(G * G, dim=-2), beta2_complement)
            v = row_var @ col_var / max(mean(row_var, dim=-2), eps1)
        else:
            variance = lerp(variance, G * G, beta2_complement);  v = variance
        u = G / sqrt(max(v, eps1 * eps1))
        p -= alpha / max(1, RMS(u) / d) * u

    The elementwise steps are torch's operations (the lerps and the last ``add_`` with ``alpha``
    fused, as torch's AVX2/AVX-512 kernels compute them; ``rsqrt`` as ``1 / sqrt``); the norms
    and means are sums, which NumPy adds in another order than torch, so results agree with
    torch's to float rounding, not bit for bit (a 1-D parameter's ``variance`` is bitwise).

    State per parameter (created at its first gradient): ``step`` (a 0-d tensor of the default
    float dtype), then ``row_var`` (shape ``(..., R, 1)``) and ``col_var`` (``(..., 1, C)``)
    for a gradient of two or more dimensions, else ``variance`` (the gradient's shape).

    Args:
        params: the parameters, or param groups (dicts).
        lr: the largest relative step size and the weight decay's scale (default 1e-2).
        beta2_decay: ``beta2 = 1 - step ** beta2_decay`` (at most 0; default -0.8).
        eps: ``(eps1, eps2)``: ``eps1`` floors the variance (``None``: the dtype's epsilon),
            ``eps2`` the parameter scale (default ``(None, 1e-3)``).
        d: the update clipping threshold (at least 1).
        weight_decay: decoupled weight decay coefficient.
        foreach: accepted for torch compatibility (the update is the same).
        maximize: maximize the objective.

    Example:
        >>> import gradsum
        >>> b = gradsum.nn.Parameter(gradsum.tensor([1.0, -2.0]))
        >>> opt = gradsum.optim.Adafactor([b], lr=0.1, weight_decay=0.5)
        >>> b.grad = gradsum.tensor([0.0, 0.0])   # a zero gradient still decays the weights
        >>> opt.step()
        >>> [round(v, 4) for v in b.tolist()]
        [0.95, -1.9]
    """

    _GROUP_DEFAULTS: ClassVar[dict[str, Any]] = {"foreach": None}
    _TENSOR_STEP = True
    _ELEMENTWISE = False  # (norms and means over each parameter)

    def __init__(self, params: Any, lr: float | Tensor = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple[float | None, float] = (None, 1e-3), d: float = 1.0,
                 weight_decay: float = 0.0, *, foreach: bool | None = None,
                 maximize: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError(_messages.tensor_lr_one_element())
        if not lr >= 0.0:
            raise ValueError(_messages.lr_negative(lr))
        if not beta2_decay <= 0.0:
            raise ValueError(_messages.beta2_decay_positive(beta2_decay))
        if eps[0] is not None and not eps[0] >= 0.0:
            raise ValueError(_messages.epsilon_negative(1, eps[0]))
        if not eps[1] >= 0.0:
            raise ValueError(_messages.epsilon_negative(2, eps[1]))
        if not d >= 1.0:
            raise ValueError(_messages.clipping_threshold_below_one(d))
        if not weight_decay >= 0.0:
            raise ValueError(_messages.weight_decay_negative(weight_decay))
        defaults = {
            "lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d,
            "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize,
        }
        super().__init__(params, defaults)

    def _integral_error(self, group: dict[str, Any], p: Tensor) -> type[Exception]:
        """torch's first failure on an integer or bool parameter: negating a bool gradient
        (``maximize``), else ``finfo`` of an integer dtype when ``eps1`` is None and ``p`` is
        the group's first parameter with a gradient (eps1 comes from its dtype)."""
        if group["maximize"] and p._array.dtype.kind == "b":
            return RuntimeError
        first = _params_with_grad(group)[0]
        return TypeError if group["eps"][0] is None and first is p else RuntimeError

    def _init_state(self, state: dict[str, Any], p: Tensor, group: dict[str, Any]) -> None:
        state["step"] = _step_tensor()
        g = p.grad._array  # type: ignore[union-attr]
        if g.ndim > 1:
            state["row_var"] = Tensor._make(xp.zeros((*g.shape[:-1], 1), g.dtype))
            state["col_var"] = Tensor._make(
                xp.zeros((*g.shape[:-2], 1, g.shape[-1]), g.dtype))
        else:
            state["variance"] = Tensor._make(xp.zeros_like(g))

    def _options(self, group: dict[str, Any], params: list[Tensor]) -> Any:
        eps1, eps2 = group["eps"]  # (unpacked first: a 3-tuple raises ValueError, as torch)
        self._init_group(group, params)
        if not params:
            return None
        if eps1 is None:  # (torch sets it once, from the first parameter's dtype)
            eps1 = float(xp.finfo(params[0]._array.dtype).eps)
        return (_lr_value(group["lr"]), float(group["beta2_decay"]), float(group["d"]),
                float(group["weight_decay"]), eps1, eps2, group["maximize"])

    def _entries(self, params: list[Tensor], options: Any) -> list[tuple[Any, tuple[Any, ...]]]:
        # (each parameter whole, its step counted by its own update)
        return [(p, (p._array, p.grad._array)) for p in params]  # type: ignore[union-attr]

    def _update(self, options: Any, p: Tensor, pa: Any, ga: Any) -> None:
        lr, beta2_decay, d, weight_decay, eps1, eps2, maximize = options
        state = self.state[p]
        g = _grad_block(ga, pa, 0, maximize)
        step = _count_step(state)
        beta2_complement = step**beta2_decay
        inv_sqrt_step = 1 / (step**0.5)
        rho = inv_sqrt_step if inv_sqrt_step < lr else lr  # (python's min(lr, ...))
        alpha = max(eps2, _norm(pa) / (pa.size**0.5)) * rho
        if weight_decay != 0:
            _mul_(pa, 1 - lr * weight_decay)
        if g.ndim > 1:
            if "row_var" not in state or "col_var" not in state:
                raise AssertionError(_messages.factored_variance_undefined())
            row_var, col_var = state["row_var"]._array, state["col_var"]._array
            gg = g * g
            # (torch: norm(g, dim).square() / size: the same sums, through a square root)
            row_mean = xp.sqrt(xp.sum(gg, axis=-1, keepdims=True))
            row_mean *= row_mean
            row_mean /= g.shape[-1]
            _lerp_(row_var, row_mean, beta2_complement)
            col_mean = xp.sqrt(xp.sum(gg, axis=-2, keepdims=True))
            col_mean *= col_mean
            col_mean /= g.shape[-2]
            _lerp_(col_var, col_mean, beta2_complement)
            var_estimate = xp.matmul(row_var, col_var)
            var_estimate /= xp.maximum(xp.mean(row_var, axis=-2, keepdims=True), eps1)
            _bump(state["row_var"], state["col_var"])
        else:
            if "variance" not in state:
                raise AssertionError(_messages.vector_variance_undefined())
            variance = state["variance"]._array
            _lerp_(variance, g * g, beta2_complement)
            var_estimate = variance.copy()
            _bump(state["variance"])
        update = xp.asarray(xp.maximum(var_estimate, eps1 * eps1))
        xp.sqrt(update, out=update)
        xp.divide(1, update, out=update)  # (torch's rsqrt: 1 / sqrt)
        update *= g
        denom = max(1.0, _norm(update) / ((update.size**0.5) * d))
        _add_scaled_(pa, update, -alpha / denom)
        _bump(p)


__all__ = ["Adafactor"]
