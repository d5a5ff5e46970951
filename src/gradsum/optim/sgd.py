"""``SGD`` with momentum, dampening, Nesterov, weight decay and ``maximize`` (torch's update).

Example:
    >>> import gradsum
    >>> from gradsum import nn, optim
    >>> w = nn.Parameter(gradsum.tensor([1.0]))
    >>> opt = optim.SGD([w], lr=0.5, momentum=0.9)
    >>> w.grad = gradsum.tensor([1.0])
    >>> opt.step()                            # buffer = grad (first step: no dampening)
    >>> opt.state[w]["momentum_buffer"].tolist(), w.tolist()
    ([1.0], [0.5])
    >>> w.grad = None
    >>> opt.step()                            # no gradient: skipped, the buffer does not decay
    >>> opt.state[w]["momentum_buffer"].tolist(), w.tolist()
    ([1.0], [0.5])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from gradsum import _blas
from gradsum._backend import xp
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
    _work,
)


class SGD(Optimizer):
    """Stochastic gradient descent, torch's formulation::

        g = grad (negated if maximize) + weight_decay * p
        buf = g                                  (first step of p)
        buf = momentum * buf + (1 - dampening) * g   (later steps)
        g = g + momentum * buf if nesterov else buf
        p -= lr * g

    ``state[p]['momentum_buffer']`` exists only with ``momentum != 0``.
    """

    _GROUP_DEFAULTS: ClassVar[dict[str, Any]] = {
        "nesterov": False, "maximize": False, "foreach": None, "differentiable": False,
        "fused": False,
    }

    def __init__(self, params: Any, lr: float | Tensor = 1e-3, momentum: float = 0,
                 dampening: float = 0, weight_decay: float = 0, nesterov: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        _check_hyper(lr, nan_ok=True, momentum=momentum, weight_decay=weight_decay)
        defaults = {
            "lr": lr, "momentum": momentum, "dampening": dampening,
            "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
            "foreach": foreach, "differentiable": differentiable, "fused": fused,
        }
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        _check_differentiable(differentiable, fused, foreach)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient; returns the closure's loss."""
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                lr = _scalar(group["lr"])
                # (numbers or one-element tensors, like torch)
                wd, momentum = _scalar(group["weight_decay"]), _scalar(group["momentum"])
                dampening, nesterov = _scalar(group["dampening"]), group["nesterov"]
                for p in _params_with_grad(group):
                    g = _grad_array(p, group["maximize"])
                    if wd != 0:
                        g = g + wd * p._array
                    if momentum != 0:
                        state = self.state[p]
                        buf = state.get("momentum_buffer")
                        if buf is None:
                            buf = Tensor._make(xp.array(g, dtype=p._array.dtype))
                            state["momentum_buffer"] = buf
                        else:
                            b = buf._array
                            if not _blas.axpby_(1 - dampening, g, momentum, b):  # one pass
                                for bb, gb in _blocks(b, g):  # (else cache-sized blocks)
                                    bb *= momentum
                                    bb += gb if dampening == 0 else (1 - dampening) * gb
                            _bump(buf)
                        g = g + momentum * buf._array if nesterov else buf._array
                    if not _blas.axpy_(-lr, g, p._array):  # one pass with MKL
                        for pa, ga in _blocks(p._array, g):  # (else cache-sized blocks)
                            pa += xp.multiply(ga, -lr, out=_work(self, 0, ga))  # -lr * g
                    _bump(p)
        return loss
