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
from gradsum.optim._kernels import _add_scaled_, _as, _grad_block, _mul_
from gradsum.optim.optimizer import (
    Optimizer,
    _bump,
    _check_differentiable,
    _check_hyper,
    _count_step,
    _entry_arrays,
    _lr_value,
    _scalar_state,
    _scalars,
    _step_tensor,
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
    _SCALAR_STATE = ("eta", "mu")

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

    def _init_state(self, state: dict[str, Any], p: Tensor, group: dict[str, Any]) -> None:
        state["step"] = _step_tensor()
        state["eta"] = _scalar_state(_lr_value(group["lr"]))
        state["mu"] = _scalar_state(1.0)
        state["ax"] = _zeros_like(p)

    def _options(self, group: dict[str, Any], params: list[Tensor]) -> Any:
        lr = _lr_value(group["lr"])  # (a tensor lr: torch's 0-d tensor arithmetic)
        lambd, alpha, t0, wd = _scalars(group, "lambd", "alpha", "t0", "weight_decay")
        self._init_group(group, params)
        return lr, lambd, alpha, t0, wd, group["maximize"]

    def _entries(self, params: list[Tensor], options: Any) -> list[tuple[Any, tuple[Any, ...]]]:
        """The key of a parameter: its ``eta`` and ``mu`` as the step begins; then both are
        advanced to the next step's values."""
        lr, lambd, alpha, t0, _, _ = options
        entries = []
        for p in params:
            state = self.state[p]
            step = _count_step(state)
            eta_t, mu_t = state["eta"], state["mu"]
            key = (float(eta_t._array), float(mu_t._array))
            eta_t._array[...] = lr / ((1 + lambd * lr * step) ** alpha)
            mu_t._array[...] = 1 / max(1, step - t0)
            _bump(eta_t, mu_t)
            entries.append((key, _entry_arrays(p, state, ("ax",))))
        return entries

    def _update(self, options: Any, key: Any, pa: Any, ga: Any, ax: Any) -> None:
        # torch's operations in its order
        _, lambd, _, _, wd, maximize = options
        eta, mu = key
        ga = _grad_block(ga, pa, wd, maximize)
        _mul_(pa, 1 - lambd * eta)  # param.mul_(1 - lambd * eta)
        _add_scaled_(pa, ga, -eta)  # param.add_(grad, alpha=-eta)
        if mu != 1:  # ax.add_(param.sub(ax).mul_(mu))
            d = xp.subtract(pa, ax, out=self._scratch(0, ax))
            d *= _as(d, mu)
            ax += d
        else:
            ax[...] = pa
