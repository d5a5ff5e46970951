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

from typing import Any, ClassVar

from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.autograd.grad_mode import no_grad  # noqa: F401 (recorded public surface)
from gradsum.optim import _messages
from gradsum.optim._kernels import _add_scaled, _add_scaled_, _grad_block, _mul_
from gradsum.optim.optimizer import (
    Optimizer,
    _bump,
    _check_differentiable,
    _check_hyper,
    _scalars,
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
            raise ValueError(_messages.nesterov_requires_momentum())
        super().__init__(params, defaults)
        _check_differentiable(differentiable, fused, foreach)

    def _options(self, group: dict[str, Any], params: list[Tensor]) -> Any:
        # (numbers or one-element tensors, like torch; no _init_group: the buffers are made
        # by the first update, and without momentum SGD keeps no state at all)
        return (*_scalars(group, "lr", "weight_decay", "momentum", "dampening"),
                group["nesterov"], group["maximize"])

    def _entries(self, params: list[Tensor], options: Any) -> list[tuple[Any, tuple[Any, ...]]]:
        momentum = options[2]
        entries = []
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
        return entries

    def _update(self, options: Any, first: bool | None, pa: Any, ga: Any, *b: Any) -> None:
        # torch's operations in its order
        lr, wd, momentum, dampening, nesterov, maximize = options
        ga = _grad_block(ga, pa, wd, maximize)
        if b:
            bb = b[0]
            if first:
                bb[...] = ga
            else:  # buf.mul_(momentum).add_(g, alpha=1 - dampening)
                _mul_(bb, momentum)
                _add_scaled_(bb, ga, 1 - dampening)
            # g = g.add(buf, alpha=momentum) if nesterov else buf
            ga = _add_scaled(ga, bb, momentum) if nesterov else bb
        _add_scaled_(pa, ga, -lr)  # p.add_(g, alpha=-lr)
