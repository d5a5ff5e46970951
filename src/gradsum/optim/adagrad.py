"""``Adagrad`` (torch's update; its state is created for every parameter at construction).

Example:
    >>> import gradsum
    >>> from gradsum import nn, optim
    >>> w = nn.Parameter(gradsum.tensor([1.0]))
    >>> opt = optim.Adagrad([w], lr=0.1, initial_accumulator_value=0.5)
    >>> opt.state[w]
    {'step': tensor(0.), 'sum': tensor([0.5000])}
"""

from __future__ import annotations

from typing import Any, ClassVar

from gradsum._backend import xp
from gradsum._dtype import bool_
from gradsum._tensor import Tensor
from gradsum.autograd.grad_mode import no_grad  # noqa: F401 (recorded public surface)
from gradsum.optim._kernels import _addcdiv_, _addcmul_, _denom, _grad_block
from gradsum.optim.optimizer import (
    Optimizer,
    _check_differentiable,
    _check_hyper,
    _lr_value,
    _scalar,
    _scalars,
    _step_tensor,
)


class Adagrad(Optimizer):
    """Adagrad, torch's formulation::

        step += 1
        g = grad (negated if maximize);  g = g.add(p, alpha=weight_decay)
        clr = lr / (1 + (step - 1) * lr_decay)
        sum.addcmul_(g, g, value=1)
        p.addcdiv_(g, sum.sqrt().add_(eps), value=-clr)

    torch's single-tensor update, operation for operation (the ``alpha`` add and the addcmul
    fused, as torch's AVX2/AVX-512 kernels compute them).
    """

    _GROUP_DEFAULTS: ClassVar[dict[str, Any]] = {
        "foreach": None, "maximize": False, "differentiable": False, "fused": None,
    }
    _TENSOR_STEP = True
    _ROLES = ("sum",)

    def _integral_error(self, group: dict[str, Any], p: Tensor) -> type[Exception]:
        """torch's type for an integer or bool parameter: its ``addcmul`` has no bool kernel
        (``NotImplementedError``); the rest fail a float-to-integer cast (``RuntimeError``)."""
        if (p.dtype == bool_ and not group["maximize"]
                and _scalar(group["weight_decay"]) == 0):
            return NotImplementedError
        return super()._integral_error(group, p)

    def __init__(self, params: Any, lr: float | Tensor = 1e-2, lr_decay: float = 0,
                 weight_decay: float = 0, initial_accumulator_value: float = 0,
                 eps: float = 1e-10, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        _check_hyper(lr, lr_decay=lr_decay, weight_decay=weight_decay,
                     initial_accumulator_value=initial_accumulator_value, eps=eps)
        defaults = {
            "lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value, "foreach": foreach,
            "maximize": maximize, "differentiable": differentiable, "fused": fused,
        }
        super().__init__(params, defaults)
        _check_differentiable(differentiable, fused, foreach)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(self.state[p], p, group)

    def _init_state(self, state: dict[str, Any], p: Tensor, group: dict[str, Any]) -> None:
        """(At construction, for every parameter; at the first gradient of one added by
        add_param_group.)"""
        state["step"] = _step_tensor(group.get("fused"))
        # torch fills from the constructor's value (self.defaults), even for a param group
        # that sets its own initial_accumulator_value
        state["sum"] = Tensor._make(
            xp.full_like(p._array, _scalar(self.defaults["initial_accumulator_value"]))
        )

    def _options(self, group: dict[str, Any], params: list[Tensor]) -> Any:
        lr = _lr_value(group["lr"])  # (a tensor lr: torch's 0-d tensor arithmetic)
        # (numbers or one-element tensors, like torch)
        wd, lr_decay, eps = _scalars(group, "weight_decay", "lr_decay", "eps")
        self._init_group(group, params)
        return lr, wd, lr_decay, eps, group["maximize"]

    def _update(self, options: Any, step: float, pa: Any, ga: Any, s: Any) -> None:
        # torch's operations in its order
        lr, wd, lr_decay, eps, maximize = options
        clr = lr / (1 + (step - 1) * lr_decay)
        ga = _grad_block(ga, pa, wd, maximize)
        _addcmul_(s, ga, ga, 1)
        std = _denom(s, eps, self._scratch(0, s))
        _addcdiv_(pa, ga, std, -clr, self._scratch(1, s))
