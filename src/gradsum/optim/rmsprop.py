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
    _add_scaled_,
    _addcdiv_,
    _addcmul_,
    _addcmul_to,
    _as,
    _batches,
    _bump,
    _check_capturable,
    _check_differentiable,
    _check_hyper,
    _grad_block,
    _lerp_,
    _params_with_grad,
    _scalar,
    _sqrt,
    _step_tensor,
    _work,
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

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient; returns the closure's loss."""
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                lr = _scalar(group["lr"])
                # (numbers or one-element tensors, like torch)
                alpha, eps = _scalar(group["alpha"]), _scalar(group["eps"])
                wd, momentum = _scalar(group["weight_decay"]), _scalar(group["momentum"])
                centered, maximize = group["centered"], group["maximize"]
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
                entries = []
                for p in params:
                    state = self.state[p]
                    state["step"]._array += 1
                    written = [state["step"], state["square_avg"]]
                    arrays = [p._array, p.grad._array, state["square_avg"]._array]  # type: ignore[union-attr]
                    if centered:
                        arrays.append(state["grad_avg"]._array)
                        written.append(state["grad_avg"])
                    if momentum > 0:
                        arrays.append(state["momentum_buffer"]._array)
                        written.append(state["momentum_buffer"])
                    _bump(p, *written)
                    entries.append((None, tuple(arrays)))
                # torch's operations in its order, over cache-sized pieces (see _batches)
                for _, (pa, ga, sq, *rest) in _batches(entries, (0, 2, 3, 4)):
                    ga = _grad_block(ga, pa, wd, maximize)
                    xp.multiply(sq, _as(sq, alpha), out=sq)
                    _addcmul_(sq, ga, ga, 1 - alpha)
                    avg = _work(self, 0, sq)
                    if centered:
                        gavg = rest[0]
                        _lerp_(gavg, ga, 1 - alpha)
                        # square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
                        _addcmul_to(avg, sq, gavg, gavg, -1)
                        _sqrt(avg, out=avg)
                    else:
                        _sqrt(sq, out=avg)
                    avg += _as(avg, eps)
                    if momentum > 0:  # buf.mul_(momentum).addcdiv_(g, avg)
                        buf = rest[-1]
                        xp.multiply(buf, _as(buf, momentum), out=buf)
                        _addcdiv_(buf, ga, avg, 1, _work(self, 1, sq))
                        _add_scaled_(pa, buf, -lr)
                    else:
                        _addcdiv_(pa, ga, avg, -lr, _work(self, 1, sq))
        return loss
