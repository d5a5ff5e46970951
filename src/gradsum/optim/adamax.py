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
from gradsum.optim.optimizer import (
    Optimizer,
    _addcdiv_,
    _as,
    _batches,
    _bump,
    _check_betas,
    _check_capturable,
    _check_differentiable,
    _check_hyper,
    _grad_block,
    _lerp_,
    _lr_value,
    _params_with_grad,
    _scalar,
    _step_tensor,
    _work,
    _zeros_like,
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

    def __init__(self, params: Any, lr: float | Tensor = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        _check_hyper(lr, eps=eps)
        _check_betas(betas)
        _check_hyper(lr, weight_decay=weight_decay)
        defaults = {
            "lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
            "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
            "capturable": capturable,
        }
        super().__init__(params, defaults)
        _check_differentiable(differentiable)

    def _update_group(self, group: dict[str, Any]) -> None:
        lr = _lr_value(group["lr"])  # (a tensor lr: torch's 0-d tensor arithmetic)
        beta1, beta2 = group["betas"]  # (unpacked: a 3-tuple raises ValueError, as torch)
        beta1, beta2 = _scalar(beta1), _scalar(beta2)
        eps, wd = _scalar(group["eps"]), _scalar(group["weight_decay"])
        params = _params_with_grad(group)
        for p in params:  # (all the group's state first, like torch's _init_group)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _step_tensor()
                state["exp_avg"] = _zeros_like(p)
                state["exp_inf"] = _zeros_like(p)
        if params:
            _check_capturable(group)
        maximize = group["maximize"]
        entries = []
        for p in params:
            state = self.state[p]
            step_t = state["step"]
            step_t._array += 1
            _bump(p, step_t, state["exp_avg"], state["exp_inf"])
            entries.append((float(step_t._array), (p._array, p.grad._array,  # type: ignore[union-attr]
                                                   state["exp_avg"]._array,
                                                   state["exp_inf"]._array)))
        # torch's operations in its order, over cache-sized pieces (see _batches)
        for step, (pa, ga, m, u) in _batches(entries, (0, 2, 3)):
            clr = lr / (1 - beta1**step)
            ga = _grad_block(ga, pa, wd, maximize)
            _lerp_(m, ga, 1 - beta1)
            xp.multiply(u, _as(u, beta2), out=u)
            t = xp.abs(ga, out=_work(self, 0, u))
            t += _as(t, eps)
            xp.maximum(u, t, out=u)  # torch.maximum(u.mul_(beta2), |g| + eps, out=u)
            _addcdiv_(pa, m, u, -clr, _work(self, 1, u))
