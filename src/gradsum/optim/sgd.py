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

from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.autograd.grad_mode import no_grad
from gradsum.optim.optimizer import (
    Optimizer,
    _add_scaled,
    _add_scaled_,
    _as,
    _batches,
    _bump,
    _check_differentiable,
    _check_hyper,
    _grad_block,
    _params_with_grad,
    _scalar,
)


class SGD(Optimizer):
    """Stochastic gradient descent, torch's formulation::

        g = grad (negated if maximize);  g = g.add(p, alpha=weight_decay)
        buf = g.clone()                                        (first step of p)
        buf.mul_(momentum).add_(g, alpha=1 - dampening)        (later steps)
        g = g.add(buf, alpha=momentum) if nesterov else buf
        p.add_(g, alpha=-lr)

    ``state[p]['momentum_buffer']`` exists only with ``momentum != 0``. torch's single-tensor
    update, operation for operation: each ``add`` with ``alpha`` is one fused multiply-add, so
    parameters and buffers have the bits of torch's AVX2/AVX-512 kernels (float32 and float64).
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
                maximize = group["maximize"]
                entries = []
                params = _params_with_grad(group)
                # (the buffers as the step begins, as torch's _init_group reads them: a
                # parameter listed twice gets a fresh buffer at each listing on its first step)
                bufs = [self.state[p].get("momentum_buffer") for p in params] if momentum else []
                for i, p in enumerate(params):
                    arrays: tuple[Any, ...] = (p._array, p.grad._array)  # type: ignore[union-attr]
                    first = None
                    if momentum != 0:
                        state = self.state[p]
                        buf = bufs[i]
                        first = buf is None
                        if first:  # (the first step's buffer: the gradient itself, cloned)
                            buf = Tensor._make(xp.empty(p._array.shape, p._array.dtype))
                            state["momentum_buffer"] = buf
                        else:
                            _bump(buf)
                        arrays += (buf._array,)
                    _bump(p)
                    entries.append((first, arrays))
                # torch's operations in its order, over cache-sized pieces (see _batches)
                for first, (pa, ga, *b) in _batches(entries, (0, 2)):
                    ga = _grad_block(ga, pa, wd, maximize)
                    if b:
                        bb = b[0]
                        if first:
                            bb[...] = ga
                        else:  # buf.mul_(momentum).add_(g, alpha=1 - dampening)
                            xp.multiply(bb, _as(bb, momentum), out=bb)
                            _add_scaled_(bb, ga, 1 - dampening)
                        # g = g.add(buf, alpha=momentum) if nesterov else buf
                        ga = _add_scaled(ga, bb, momentum) if nesterov else bb
                    _add_scaled_(pa, ga, -lr)  # p.add_(g, alpha=-lr)
        return loss
