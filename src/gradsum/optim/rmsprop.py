"""``RMSprop`` (torch's update: alpha, eps, centered, momentum, weight decay, maximize).

Example:
    >>> import gradsum
    >>> from gradsum import nn, optim
    >>> w = nn.Parameter(gradsum.tensor([1.0]))
    >>> opt = optim.RMSprop([w], lr=0.01, centered=True, momentum=0.5)
    >>> w.grad = gradsum.tensor([2.0])
    >>> opt.step()
    >>> sorted(opt.state[w])
    ['grad_avg', 'momentum_buffer', 'square_avg', 'step']
"""

from __future__ import annotations

from typing import Any, ClassVar

from gradsum._tensor import Tensor
from gradsum.autograd.grad_mode import no_grad  # noqa: F401 (recorded public surface)
from gradsum.optim._kernels import (
    _add_scaled_,
    _addcdiv_,
    _addcmul_to,
    _denom,
    _ema_sq_,
    _grad_block,
    _lerp_,
    _mul_,
)
from gradsum.optim.optimizer import (
    Optimizer,
    _check_differentiable,
    _check_hyper,
    _scalar,
    _scalars,
    _step_tensor,
    _zeros_like,
)


class RMSprop(Optimizer):
    """RMSprop, torch's formulation::

        g = grad (negated if maximize);  g = g.add(p, alpha=weight_decay)
        sq.mul_(alpha).addcmul_(g, g, value=1 - alpha)
        avg = sq.addcmul(ga, ga, value=-1).sqrt() (centered, ga.lerp_(g, 1 - alpha))
              or sq.sqrt(), then avg.add_(eps)
        buf.mul_(momentum).addcdiv_(g, avg); p.add_(buf, alpha=-lr)    (momentum > 0)
        p.addcdiv_(g, avg, value=-lr)                                    (otherwise)

    torch's single-tensor update, operation for operation (the ``alpha`` adds, the addcmuls and
    the lerp fused, as torch's AVX2/AVX-512 kernels compute them).
    """

    _GROUP_DEFAULTS: ClassVar[dict[str, Any]] = {
        "momentum": 0, "centered": False, "foreach": None, "maximize": False,
        "differentiable": False, "capturable": False,
    }
    _TENSOR_STEP = True

    def __init__(self, params: Any, lr: float | Tensor = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0, momentum: float = 0,
                 centered: bool = False, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _check_hyper(lr, eps=eps, momentum=momentum, weight_decay=weight_decay, alpha=alpha)
        defaults = {
            "lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps, "centered": centered,
            "weight_decay": weight_decay, "capturable": capturable, "foreach": foreach,
            "maximize": maximize, "differentiable": differentiable,
        }
        super().__init__(params, defaults)
        _check_differentiable(differentiable)

    def _init_state(self, state: dict[str, Any], p: Tensor, group: dict[str, Any]) -> None:
        state["step"] = _step_tensor()
        state["square_avg"] = _zeros_like(p)
        if _scalar(group["momentum"]) > 0:
            state["momentum_buffer"] = _zeros_like(p)
        if group["centered"]:
            state["grad_avg"] = _zeros_like(p)

    def _options(self, group: dict[str, Any], params: list[Tensor]) -> Any:
        # (numbers or one-element tensors, like torch)
        lr, alpha, eps, wd, momentum = _scalars(group, "lr", "alpha", "eps", "weight_decay",
                                                "momentum")
        centered, maximize = group["centered"], group["maximize"]
        self._init_group(group, params)
        return lr, alpha, eps, wd, momentum, centered, maximize

    def _roles(self, options: Any) -> tuple[str, ...]:
        momentum, centered = options[4], options[5]
        roles = ("square_avg", "grad_avg") if centered else ("square_avg",)
        return (*roles, "momentum_buffer") if momentum > 0 else roles

    def _update(self, options: Any, step: float, pa: Any, ga: Any, sq: Any, *rest: Any) -> None:
        # torch's operations in its order
        lr, alpha, eps, wd, momentum, centered, maximize = options
        ga = _grad_block(ga, pa, wd, maximize)
        _ema_sq_(sq, ga, alpha)
        avg = self._scratch(0, sq)
        if centered:
            gavg = rest[0]
            _lerp_(gavg, ga, 1 - alpha)
            # square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_().add_(eps)
            _addcmul_to(avg, sq, gavg, gavg, -1)
            _denom(avg, eps, avg)
        else:
            _denom(sq, eps, avg)  # square_avg.sqrt().add_(eps)
        if momentum > 0:  # buf.mul_(momentum).addcdiv_(g, avg)
            buf = rest[-1]
            _mul_(buf, momentum)
            _addcdiv_(buf, ga, avg, 1, self._scratch(1, sq))
            _add_scaled_(pa, buf, -lr)
        else:
            _addcdiv_(pa, ga, avg, -lr, self._scratch(1, sq))
