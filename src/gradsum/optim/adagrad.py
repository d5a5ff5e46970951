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

from collections.abc import Callable
from typing import Any, ClassVar

from gradsum._backend import xp
from gradsum._dtype import bool_
from gradsum._tensor import Tensor
from gradsum.autograd.grad_mode import no_grad
from gradsum.optim.optimizer import (
    Optimizer,
    _blocks,
    _bump,
    _check_differentiable,
    _check_hyper,
    _grad_array,
    _params_with_grad,
    _scalar,
    _step_tensor,
)


class Adagrad(Optimizer):
    """Adagrad, torch's formulation::

        step += 1
        g = grad (negated if maximize) + weight_decay * p
        clr = lr / (1 + (step - 1) * lr_decay)
        sum += g * g
        p -= clr * g / (sqrt(sum) + eps)
    """

    _GROUP_DEFAULTS: ClassVar[dict[str, Any]] = {
        "foreach": None, "maximize": False, "differentiable": False, "fused": None,
    }
    _TENSOR_STEP = True

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
                self._init_state(p, group)

    def _init_state(self, p: Tensor, group: dict[str, Any]) -> None:
        state = self.state[p]
        state["step"] = _step_tensor(group.get("fused"))
        # torch fills from the constructor's value (self.defaults), even for a param group
        # that sets its own initial_accumulator_value
        state["sum"] = Tensor._make(
            xp.full_like(p._array, _scalar(self.defaults["initial_accumulator_value"]))
        )

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient; returns the closure's loss."""
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                lr = _scalar(group["lr"])
                # (numbers or one-element tensors, like torch)
                wd, lr_decay = _scalar(group["weight_decay"]), _scalar(group["lr_decay"])
                eps = _scalar(group["eps"])
                for p in _params_with_grad(group):
                    state = self.state[p]
                    if len(state) == 0:  # a parameter added by add_param_group
                        self._init_state(p, group)
                    step_t = state["step"]
                    step_t._array += 1
                    step = float(step_t._array)
                    g = _grad_array(p, group["maximize"])
                    clr = lr / (1 + (step - 1) * lr_decay)
                    for pa, ga, s in _blocks(p._array, g, state["sum"]._array):  # (see _blocks)
                        if wd != 0:
                            ga = ga + wd * pa
                        s += ga * ga
                        std = xp.sqrt(s) + eps
                        pa += (-clr * ga) / std
                    _bump(p, step_t, state["sum"])
        return loss
