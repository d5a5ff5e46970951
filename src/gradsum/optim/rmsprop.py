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

from collections.abc import Callable
from typing import Any, ClassVar

from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.autograd.grad_mode import no_grad
from gradsum.optim.optimizer import (
    Optimizer,
    _blocks,
    _bump,
    _check_capturable,
    _check_differentiable,
    _check_hyper,
    _grad_array,
    _params_with_grad,
    _scalar,
    _step_tensor,
    _zeros_like,
)


class RMSprop(Optimizer):
    """RMSprop, torch's formulation::

        g = grad (negated if maximize) + weight_decay * p
        sq = alpha * sq + (1 - alpha) * g * g
        avg = sqrt(sq - ga * ga) (centered, ga = lerp(ga, g, 1 - alpha)) or sqrt(sq), + eps
        buf = momentum * buf + g / avg; p -= lr * buf    (momentum > 0)
        p -= lr * g / avg                                 (otherwise)
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

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient; returns the closure's loss."""
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                lr = _scalar(group["lr"])
                # (numbers or one-element tensors, like torch)
                alpha, eps = _scalar(group["alpha"]), _scalar(group["eps"])
                wd, momentum = _scalar(group["weight_decay"]), _scalar(group["momentum"])
                centered = group["centered"]
                params = _params_with_grad(group)
                for p in params:  # (all the group's state first, like torch's _init_group)
                    state = self.state[p]
                    if len(state) == 0:
                        state["step"] = _step_tensor()
                        state["square_avg"] = _zeros_like(p)
                        if momentum > 0:
                            state["momentum_buffer"] = _zeros_like(p)
                        if centered:
                            state["grad_avg"] = _zeros_like(p)
                if params:
                    _check_capturable(group)
                for p in params:
                    state = self.state[p]
                    g = _grad_array(p, group["maximize"])
                    state["step"]._array += 1
                    written = [state["step"], state["square_avg"]]
                    arrays = [p._array, g, state["square_avg"]._array]
                    if centered:
                        arrays.append(state["grad_avg"]._array)
                        written.append(state["grad_avg"])
                    if momentum > 0:
                        arrays.append(state["momentum_buffer"]._array)
                        written.append(state["momentum_buffer"])
                    for pa, ga, sq, *rest in _blocks(*arrays):  # (cache-sized blocks)
                        if wd != 0:
                            ga = ga + wd * pa
                        sq *= alpha
                        sq += (1 - alpha) * ga * ga
                        if centered:
                            gavg = rest[0]
                            gavg += (1 - alpha) * (ga - gavg)
                            avg = xp.sqrt(sq - gavg * gavg)
                        else:
                            avg = xp.sqrt(sq)
                        avg += eps
                        if momentum > 0:
                            buf = rest[-1]
                            buf *= momentum
                            buf += ga / avg
                            pa += -lr * buf
                        else:
                            pa += (-lr * ga) / avg
                    _bump(p, *written)
        return loss
