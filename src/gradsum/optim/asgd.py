"""``ASGD``: averaged stochastic gradient descent (torch's update: lambd, alpha, t0, weight
decay, maximize; the ``eta``/``mu``/``ax`` state).

Example:
    >>> import gradsum
    >>> from gradsum import nn, optim
    >>> w = nn.Parameter(gradsum.tensor([1.0, -1.0]))
    >>> opt = optim.ASGD([w], lr=0.1, t0=0)
    >>> w.grad = gradsum.tensor([0.5, -2.0])
    >>> opt.step()
    >>> [round(v, 4) for v in w.tolist()]
    [0.95, -0.8]
    >>> list(opt.state[w]), opt.state[w]["ax"].tolist() == w.tolist()
    (['step', 'eta', 'mu', 'ax'], True)
"""

from __future__ import annotations

from typing import Any, ClassVar

from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.optim.optimizer import (
    Optimizer,
    _add_scaled_,
    _as,
    _batches,
    _bump,
    _check_capturable,
    _check_differentiable,
    _check_hyper,
    _decay_,
    _grad_block,
    _lr_value,
    _params_with_grad,
    _scalar,
    _scalar_state,
    _step_tensor,
    _work,
    _zeros_like,
)


class ASGD(Optimizer):
    """ASGD, torch's formulation::

        step += 1
        g = grad (negated if maximize);  g = g.add(p, alpha=weight_decay)
        p.mul_(1 - lambd * eta).add_(g, alpha=-eta)
        ax = p                       (while mu == 1)
        ax += (p - ax) * mu          (otherwise)
        eta = lr / (1 + lambd * lr * step) ** alpha
        mu = 1 / max(1, step - t0)

    State per parameter (created at its first gradient): ``step``, ``eta`` (starting at
    ``lr``) and ``mu`` (starting at 1), 0-d tensors of the default float dtype, and ``ax``.
    torch's single-tensor update, operation for operation (the ``alpha`` adds fused, as
    torch's AVX2/AVX-512 kernels compute them).

    Example:
        >>> import gradsum
        >>> w = gradsum.nn.Parameter(gradsum.ones(2))
        >>> g = gradsum.optim.ASGD([w]).param_groups[0]
        >>> g["lr"], g["lambd"], g["alpha"], g["t0"]
        (0.01, 0.0001, 0.75, 1000000.0)
    """

    _GROUP_DEFAULTS: ClassVar[dict[str, Any]] = {
        "foreach": None, "maximize": False, "differentiable": False, "capturable": False,
    }
    _TENSOR_STEP = True

    def __init__(self, params: Any, lr: float | Tensor = 1e-2, lambd: float = 1e-4,
                 alpha: float = 0.75, t0: float = 1e6, weight_decay: float = 0,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        _check_hyper(lr, weight_decay=weight_decay)
        defaults = {
            "lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0, "weight_decay": weight_decay,
            "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
            "capturable": capturable,
        }
        super().__init__(params, defaults)
        _check_differentiable(differentiable)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            for p in group["params"]:
                p_state = self.state.get(p)
                if p_state:
                    for key in ("eta", "mu"):
                        if not isinstance(p_state[key], Tensor):
                            p_state[key] = _scalar_state(float(p_state[key]))

    def _update_group(self, group: dict[str, Any]) -> None:
        lr = _lr_value(group["lr"])  # (a tensor lr: torch's 0-d tensor arithmetic)
        lambd, alpha = _scalar(group["lambd"]), _scalar(group["alpha"])
        t0, wd = _scalar(group["t0"]), _scalar(group["weight_decay"])
        params = _params_with_grad(group)
        for p in params:  # (all the group's state first, like torch's _init_group)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _step_tensor()
                state["eta"] = _scalar_state(lr)
                state["mu"] = _scalar_state(1.0)
                state["ax"] = _zeros_like(p)
        if params:
            _check_capturable(group)
        maximize = group["maximize"]
        entries = []
        for p in params:
            state = self.state[p]
            step_t, eta_t, mu_t = state["step"], state["eta"], state["mu"]
            step_t._array += 1
            entries.append(((float(eta_t._array), float(mu_t._array)),
                            (p._array, p.grad._array, state["ax"]._array)))  # type: ignore[union-attr]
            step = float(step_t._array)
            eta_t._array[...] = lr / ((1 + lambd * lr * step) ** alpha)
            mu_t._array[...] = 1 / max(1, step - t0)
            _bump(p, step_t, eta_t, mu_t, state["ax"])
        # torch's operations in its order, over cache-sized pieces (see _batches)
        for (eta, mu), (pa, ga, ax) in _batches(entries, (0, 2)):
            ga = _grad_block(ga, pa, wd, maximize)
            _decay_(pa, 1 - lambd * eta)  # param.mul_(1 - lambd * eta)
            _add_scaled_(pa, ga, -eta)  # param.add_(grad, alpha=-eta)
            if mu != 1:  # ax.add_(param.sub(ax).mul_(mu))
                d = xp.subtract(pa, ax, out=_work(self, 0, ax))
                d *= _as(d, mu)
                ax += d
            else:
                ax[...] = pa
