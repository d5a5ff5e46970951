"""``RAdam``: rectified Adam (torch's update: the variance rectification used once
``rho_t > 5``, ``decoupled_weight_decay``, maximize).

Example:
    >>> import gradsum
    >>> from gradsum import nn, optim
    >>> w = nn.Parameter(gradsum.tensor([1.0, -1.0]))
    >>> opt = optim.RAdam([w], lr=0.1)
    >>> w.grad = gradsum.tensor([0.5, -2.0])
    >>> opt.step()                  # rho_t <= 5: an unadapted (SGD with momentum) step
    >>> [round(v, 4) for v in w.tolist()]
    [0.95, -0.8]
    >>> list(opt.state[w])
    ['step', 'exp_avg', 'exp_avg_sq']
"""

from __future__ import annotations

from typing import Any, ClassVar

from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.optim._kernels import _adam_moments, _as, _bias_correction, _denom
from gradsum.optim.optimizer import (
    Optimizer,
    _adam_options,
    _check_differentiable,
    _check_hyper,
)


class RAdam(Optimizer):
    """RAdam, torch's formulation::

        step += 1
        p *= 1 - lr * wd   (decoupled)    |   g = g + wd * p   (otherwise)
        m.lerp_(g, 1 - beta1);  v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
        m_hat = m / (1 - beta1**step)
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * beta2**step / (1 - beta2**step)
        rho_t > 5:  p -= m_hat * lr * (sqrt(1 - beta2**step) / (sqrt(v) + eps)) * rect
                    rect = sqrt((rho_t - 4) (rho_t - 2) rho_inf
                                / ((rho_inf - 4) (rho_inf - 2) rho_t))
        otherwise:  p -= m_hat * lr

    torch's single-tensor update, operation for operation (the ``alpha`` add, the lerp and the
    addcmul fused, as torch's AVX2/AVX-512 kernels compute them; the number over a tensor as
    torch's reciprocal times the number).

    State per parameter (created at its first gradient): ``step``, ``exp_avg``,
    ``exp_avg_sq``.

    Example:
        >>> import gradsum
        >>> w = gradsum.nn.Parameter(gradsum.ones(2))
        >>> opt = gradsum.optim.RAdam([w], weight_decay=0.1, decoupled_weight_decay=True)
        >>> opt.param_groups[0]["lr"], opt.param_groups[0]["betas"]
        (0.001, (0.9, 0.999))
    """

    _GROUP_DEFAULTS: ClassVar[dict[str, Any]] = {
        "foreach": None, "maximize": False, "differentiable": False,
        "decoupled_weight_decay": False, "capturable": False,
    }
    _TENSOR_STEP = True
    _INTEGRAL_ERROR = NotImplementedError  # (torch: lerp on an integer tensor)
    _ROLES = ("exp_avg", "exp_avg_sq")

    def __init__(self, params: Any, lr: float | Tensor = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False) -> None:
        _check_hyper(lr, eps=eps, betas=betas, weight_decay=weight_decay)
        defaults = {
            "lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
            "maximize": maximize, "foreach": foreach, "capturable": capturable,
            "decoupled_weight_decay": decoupled_weight_decay,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)
        _check_differentiable(differentiable)

    def _options(self, group: dict[str, Any], params: list[Tensor]) -> Any:
        options = _adam_options(group)
        decoupled = group["decoupled_weight_decay"]
        self._init_group(group, params)
        return *options, decoupled, group["maximize"]

    def _update(self, options: Any, step: float, pa: Any, ga: Any, m: Any, v: Any) -> None:
        # torch's operations in its order
        lr, beta1, beta2, eps, wd, decoupled, maximize = options
        bias_correction1 = _bias_correction(beta1, step)
        bias_correction2 = _bias_correction(beta2, step)
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
        rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5 if rho_t > 5.0 else None
        _adam_moments(pa, ga, m, v, beta1, beta2, lr, wd, decoupled, maximize)
        # bias_corrected_exp_avg * lr (* adaptive_lr * rect); p.add_(..., alpha=-1)
        u = xp.divide(m, _as(m, bias_correction1), out=self._scratch(0, m))
        u *= _as(u, lr)
        if rect is not None:
            # adaptive_lr = bias_correction2**0.5 / (sqrt(v) + eps): a number over a
            # tensor, which torch computes as reciprocal(...) * number
            t = _denom(v, eps, self._scratch(1, m))
            xp.reciprocal(t, out=t)
            t *= _as(t, bias_correction2**0.5)
            u *= t
            u *= _as(u, rect)
        pa -= u
