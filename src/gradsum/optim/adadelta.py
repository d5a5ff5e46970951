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

from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.optim.optimizer import (
    Optimizer,
    _add_scaled_,
    _addcmul_,
    _as,
    _batches,
    _bump,
    _check_capturable,
    _check_differentiable,
    _check_hyper,
    _grad_block,
    _params_with_grad,
    _scalar,
    _sqrt,
    _step_tensor,
    _work,
    _zeros_like,
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

    def __init__(self, params: Any, lr: float | Tensor = 1.0, rho: float = 0.9,
                 eps: float = 1e-6, weight_decay: float = 0, foreach: bool | None = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _check_hyper(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        _check_hyper(lr, eps=eps, weight_decay=weight_decay)
        defaults = {
            "lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
            "maximize": maximize, "capturable": capturable, "foreach": foreach,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)
        _check_differentiable(differentiable)

    def _update_group(self, group: dict[str, Any]) -> None:
        lr = _scalar(group["lr"])
        rho, eps = _scalar(group["rho"]), _scalar(group["eps"])
        wd = _scalar(group["weight_decay"])
        params = _params_with_grad(group)
        for p in params:  # (all the group's state first, like torch's _init_group)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _step_tensor()
                state["square_avg"] = _zeros_like(p)
                state["acc_delta"] = _zeros_like(p)
        if params:
            _check_capturable(group)
        maximize = group["maximize"]
        entries = []
        for p in params:
            state = self.state[p]
            state["step"]._array += 1
            _bump(p, state["step"], state["square_avg"], state["acc_delta"])
            entries.append((None, (p._array, p.grad._array,  # type: ignore[union-attr]
                                   state["square_avg"]._array, state["acc_delta"]._array)))
        # torch's operations in its order, over cache-sized pieces (see _batches)
        for _, (pa, ga, sq, acc) in _batches(entries, (0, 2, 3)):
            ga = _grad_block(ga, pa, wd, maximize)
            xp.multiply(sq, _as(sq, rho), out=sq)
            _addcmul_(sq, ga, ga, 1 - rho)
            std = xp.add(sq, _as(sq, eps), out=_work(self, 0, sq))
            _sqrt(std, out=std)
            delta = xp.add(acc, _as(acc, eps), out=_work(self, 1, sq))
            _sqrt(delta, out=delta)
            delta /= std
            delta *= ga
            xp.multiply(acc, _as(acc, rho), out=acc)
            _addcmul_(acc, delta, delta, 1 - rho)
            _add_scaled_(pa, delta, -lr)
