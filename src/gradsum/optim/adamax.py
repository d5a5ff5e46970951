"""``Adamax``: Adam with the infinity norm (torch's update, weight decay, maximize).

Example:
    >>> import gradsum
    >>> from gradsum import nn, optim
    >>> w = nn.Parameter(gradsum.tensor([1.0, -1.0]))
    >>> opt = optim.Adamax([w], lr=0.1)
    >>> w.grad = gradsum.tensor([0.5, -2.0])
    >>> opt.step()                  # the first step moves each weight by ~lr
    >>> [round(v, 4) for v in w.tolist()]
    [0.9, -0.9]
    >>> list(opt.state[w])
    ['step', 'exp_avg', 'exp_inf']
"""

from __future__ import annotations

from typing import Any, ClassVar

from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.optim._kernels import _addcdiv_, _as, _bias_correction, _grad_block, _lerp_, _mul_
from gradsum.optim.optimizer import (
    Optimizer,
    _adam_options,
    _check_differentiable,
    _check_hyper,
)


class Adamax(Optimizer):
    """Adamax, torch's formulation::

        step += 1
        g = grad (negated if maximize);  g = g.add(p, alpha=weight_decay)
        m.lerp_(g, 1 - beta1)
        u = max(beta2 * u, |g| + eps)
        p.addcdiv_(m, u, value=-lr / (1 - beta1**step))

    torch's single-tensor update, operation for operation (the ``alpha`` add and the lerp
    fused, as torch's AVX2/AVX-512 kernels compute them).

    State per parameter (created at its first gradient): ``step``, ``exp_avg``, ``exp_inf``.

    Example:
        >>> import gradsum
        >>> w = gradsum.nn.Parameter(gradsum.ones(2))
        >>> gradsum.optim.Adamax([w]).param_groups[0]["lr"]
        0.002
    """

    _GROUP_DEFAULTS: ClassVar[dict[str, Any]] = {
        "foreach": None, "maximize": False, "differentiable": False, "capturable": False,
    }
    _TENSOR_STEP = True
    _INTEGRAL_ERROR = NotImplementedError  # (torch: lerp on an integer tensor)
    _ROLES = ("exp_avg", "exp_inf")

    def __init__(self, params: Any, lr: float | Tensor = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        _check_hyper(lr, eps=eps, betas=betas, weight_decay=weight_decay)
        defaults = {
            "lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
            "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
            "capturable": capturable,
        }
        super().__init__(params, defaults)
        _check_differentiable(differentiable)

    def _options(self, group: dict[str, Any], params: list[Tensor]) -> Any:
        options = _adam_options(group)
        self._init_group(group, params)
        return *options, group["maximize"]

    def _update(self, options: Any, step: float, pa: Any, ga: Any, m: Any, u: Any) -> None:
        # torch's operations in its order
        lr, beta1, beta2, eps, wd, maximize = options
        clr = lr / _bias_correction(beta1, step)
        ga = _grad_block(ga, pa, wd, maximize)
        _lerp_(m, ga, 1 - beta1)
        _mul_(u, beta2)
        t = xp.abs(ga, out=self._scratch(0, u))
        t += _as(t, eps)
        xp.maximum(u, t, out=u)  # torch.maximum(u.mul_(beta2), |g| + eps, out=u)
        _addcdiv_(pa, m, u, -clr, self._scratch(1, u))
