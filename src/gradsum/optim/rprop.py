"""``Rprop``: resilient backpropagation (torch's update: etas, step_sizes, maximize).

Example:
    >>> import gradsum
    >>> from gradsum import nn, optim
    >>> w = nn.Parameter(gradsum.tensor([1.0, -1.0]))
    >>> opt = optim.Rprop([w], lr=0.1)
    >>> w.grad = gradsum.tensor([0.5, -2.0])
    >>> opt.step()                  # each weight moves by its step size against the sign
    >>> [round(v, 4) for v in w.tolist()]
    [0.9, -0.9]
    >>> w.grad = gradsum.tensor([-0.5, -1.0])
    >>> opt.step()                  # a sign change halves the step size and skips the move
    >>> [round(v, 4) for v in opt.state[w]["step_size"].tolist()], round(w.tolist()[0], 4)
    ([0.05, 0.12], 0.9)
"""

from __future__ import annotations

from typing import Any, ClassVar

from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.optim import _messages
from gradsum.optim._kernels import _grad_block
from gradsum.optim.optimizer import (
    Optimizer,
    _check_differentiable,
    _check_hyper,
    _scalar,
    _step_tensor,
    _zeros_like,
)


def _sign(a: Any) -> Any:
    """torch's ``sign``: 0 for nan (NumPy's is nan), so a nan or inf gradient (``inf * 0`` is
    nan) leaves the step size and the parameter as torch's do."""
    s = xp.sign(a)
    return xp.where(xp.isnan(s), 0, s)  # (a 0-d array's sign is a NumPy scalar)


class Rprop(Optimizer):
    """Rprop, torch's formulation (elementwise)::

        step += 1
        s = sign(g * prev)
        step_size = clamp(step_size * (etaplus if s > 0 else etaminus if s < 0 else 1),
                          step_size_min, step_size_max)
        g = 0 where s < 0        (a sign change: no move, and no sign memory)
        p -= sign(g) * step_size
        prev = g

    State per parameter (created at its first gradient): ``step``, ``prev`` (zeros) and
    ``step_size`` (filled with ``lr``).

    Example:
        >>> import gradsum
        >>> w = gradsum.nn.Parameter(gradsum.ones(2))
        >>> g = gradsum.optim.Rprop([w]).param_groups[0]
        >>> g["lr"], g["etas"], g["step_sizes"]
        (0.01, (0.5, 1.2), (1e-06, 50))
    """

    _GROUP_DEFAULTS: ClassVar[dict[str, Any]] = {
        "foreach": None, "maximize": False, "differentiable": False, "capturable": False,
    }
    _TENSOR_STEP = True

    def __init__(self, params: Any, lr: float | Tensor = 1e-2,
                 etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _check_hyper(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(_messages.invalid_etas(etas))
        defaults = {
            "lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach,
            "maximize": maximize, "differentiable": differentiable, "capturable": capturable,
        }
        super().__init__(params, defaults)
        _check_differentiable(differentiable)

    _ROLES = ("prev", "step_size")

    def _init_state(self, state: dict[str, Any], p: Tensor, group: dict[str, Any]) -> None:
        state["step"] = _step_tensor()
        state["prev"] = _zeros_like(p)
        state["step_size"] = Tensor._make(
            xp.full_like(p.grad._array, _scalar(group["lr"]))  # type: ignore[union-attr]
        )

    def _options(self, group: dict[str, Any], params: list[Tensor]) -> Any:
        etaminus, etaplus = group["etas"]  # (unpacked, as torch: other lengths raise)
        step_size_min, step_size_max = group["step_sizes"]
        etaminus, etaplus = _scalar(etaminus), _scalar(etaplus)
        step_size_min, step_size_max = _scalar(step_size_min), _scalar(step_size_max)
        self._init_group(group, params)
        return etaminus, etaplus, step_size_min, step_size_max, group["maximize"]

    def _update(self, options: Any, step: float, pa: Any, ga: Any, prev: Any,
                step_size: Any) -> None:
        # torch's operations in its order
        etaminus, etaplus, step_size_min, step_size_max, maximize = options
        ga = _grad_block(ga, pa, 0, maximize)
        sign = _sign(ga * prev)
        negative = sign < 0
        factor = xp.where(sign > 0, etaplus, xp.where(negative, etaminus,
                                                       xp.where(sign == 0, 1.0, sign)))
        step_size *= factor.astype(step_size.dtype, copy=False)
        xp.clip(step_size, step_size_min, step_size_max, out=step_size)
        ga = xp.where(negative, xp.zeros_like(ga), ga)
        pa -= _sign(ga) * step_size  # (addcmul_(sign, step_size, value=-1): exact
        # product, one rounding)
        prev[...] = ga
