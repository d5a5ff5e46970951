"""``Adadelta`` (torch's update: rho, eps, weight decay, maximize; ``lr`` defaults to 1.0).

Example:
    >>> import gradsum
    >>> from gradsum import nn, optim
    >>> w = nn.Parameter(gradsum.tensor([1.0, -1.0]))
    >>> opt = optim.Adadelta([w])
    >>> w.grad = gradsum.tensor([0.5, -2.0])
    >>> opt.step()
    >>> [round(v, 6) for v in w.tolist()]
    [0.996838, -0.996838]
    >>> list(opt.state[w])
    ['step', 'square_avg', 'acc_delta']
"""

from __future__ import annotations

from typing import Any, ClassVar

from gradsum._tensor import Tensor
from gradsum.optim import _messages
from gradsum.optim._kernels import _add_scaled_, _ema_sq_, _grad_block, _sqrt_plus
from gradsum.optim.optimizer import (
    Optimizer,
    _check_differentiable,
    _check_hyper,
    _scalars,
)


class Adadelta(Optimizer):
    """Adadelta, torch's formulation::

        step += 1
        g = grad (negated if maximize);  g = g.add(p, alpha=weight_decay)
        sq.mul_(rho).addcmul_(g, g, value=1 - rho)
        delta = sqrt(acc + eps) / sqrt(sq + eps) * g
        acc.mul_(rho).addcmul_(delta, delta, value=1 - rho)
        p.add_(delta, alpha=-lr)

    torch's single-tensor update, operation for operation (the ``alpha`` adds and the addcmuls
    fused, as torch's AVX2/AVX-512 kernels compute them).

    State per parameter (created at its first gradient): ``step``, ``square_avg``,
    ``acc_delta``.

    Example:
        >>> import gradsum
        >>> w = gradsum.nn.Parameter(gradsum.ones(2))
        >>> g = gradsum.optim.Adadelta([w]).param_groups[0]
        >>> g["lr"], g["rho"], g["eps"]
        (1.0, 0.9, 1e-06)
    """

    _GROUP_DEFAULTS: ClassVar[dict[str, Any]] = {
        "foreach": None, "maximize": False, "differentiable": False, "capturable": False,
    }
    _TENSOR_STEP = True
    _ROLES = ("square_avg", "acc_delta")

    def __init__(self, params: Any, lr: float | Tensor = 1.0, rho: float = 0.9,
                 eps: float = 1e-6, weight_decay: float = 0, foreach: bool | None = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _check_hyper(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(_messages.invalid_rho_value(rho))
        _check_hyper(lr, eps=eps, weight_decay=weight_decay)
        defaults = {
            "lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
            "maximize": maximize, "capturable": capturable, "foreach": foreach,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)
        _check_differentiable(differentiable)

    def _options(self, group: dict[str, Any], params: list[Tensor]) -> Any:
        lr, rho, eps, wd = _scalars(group, "lr", "rho", "eps", "weight_decay")
        self._init_group(group, params)
        return lr, rho, eps, wd, group["maximize"]

    def _update(self, options: Any, step: float, pa: Any, ga: Any, sq: Any, acc: Any) -> None:
        # torch's operations in its order
        lr, rho, eps, wd, maximize = options
        ga = _grad_block(ga, pa, wd, maximize)
        _ema_sq_(sq, ga, rho)
        std = _sqrt_plus(sq, eps, self._scratch(0, sq))
        delta = _sqrt_plus(acc, eps, self._scratch(1, sq))
        delta /= std
        delta *= ga
        _ema_sq_(acc, delta, rho)
        _add_scaled_(pa, delta, -lr)
