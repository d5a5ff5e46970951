"""``Muon``: momentum whose update is orthogonalised by a Newton-Schulz iteration, for 2-D
parameters (torch's ``torch.optim.Muon``: Keller Jordan's quintic coefficients, ``ns_steps``,
``nesterov``, decoupled weight decay, ``adjust_lr_fn``).

torch runs the Newton-Schulz iteration in bfloat16; gradsum has no bfloat16 tensors, so the
iteration runs on float32 arrays rounded to bfloat16 (round to nearest even) after each of
torch's operations, with float32 accumulation as torch's CPU kernels. NumPy's float32 sums
(the Frobenius norm, the matrix products) add in another order than torch's, and a sum near a
bfloat16 rounding boundary then rounds to the other neighbour: the update matches torch's bit
for bit on small matrices only (an 8x6 one, measured); on a 300x250 one about half of the entries
differ after one step, each by a bfloat16 step or so (within 2**-5 of the step size after
eight steps, measured 2**-7). The momentum buffer (torch's ``lerp_``, fused on its AVX2/AVX-512
kernels) is bitwise torch's.

Example:
    >>> import gradsum
    >>> from gradsum import nn, optim
    >>> w = nn.Parameter(gradsum.zeros(2, 2))
    >>> opt = optim.Muon([w], lr=0.1, weight_decay=0.0)
    >>> w.grad = gradsum.tensor([[1.0, 0.0], [0.0, 1.0]])
    >>> opt.step()              # the update is close to the orthogonal factor of the grad
    >>> [round(v, 2) for v in w.diagonal().tolist()]
    [-0.11, -0.11]
    >>> list(opt.state[w])
    ['momentum_buffer']
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.optim import _messages
from gradsum.optim._kernels import _add_scaled_, _lerp, _lerp_, _mul_
from gradsum.optim.optimizer import Optimizer, _bump, _lr_value, _zeros_like

# Keller Jordan's constants (https://kellerjordan.github.io/posts/muon/), torch's defaults
EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5


def _bf16(x: Any) -> Any:
    """Round a float32 array to bfloat16 values (nearest, ties to even; nan kept), as float32.
    (A float64 array goes through float32 first, as torch's ``.bfloat16()`` does.)"""
    x = xp.array(x, dtype=xp.float32, order="C")
    bits = x.view(xp.uint32).astype(xp.uint64)
    bits += ((bits >> 16) & 1) + 0x7FFF
    out = (bits & 0xFFFF0000).astype(xp.uint32).view(xp.float32)
    return xp.where(xp.isnan(x), x, out)


def _zeropower_via_newtonschulz(grad: Any, ns_coefficients: Any, ns_steps: int,
                                eps: float) -> Any:
    """torch's ``_zeropower_via_newtonschulz`` on a 2-D array: the bfloat16 quintic iteration
    ``X <- a X + (b A + c A A) X`` with ``A = X X^T``, from ``X = G / max(||G||_F, eps)``
    (``G`` transposed when it has more rows than columns). Returns float32 bfloat16 values."""
    if ns_steps >= 100:
        raise ValueError(_messages.newton_schulz_too_many_steps())
    if grad.ndim != 2:
        raise ValueError(_messages.newton_schulz_not_2d())
    if len(ns_coefficients) != 3:
        raise ValueError(_messages.newton_schulz_coefficients())
    a, b, c = (xp.float32(v) for v in ns_coefficients)  # (bfloat16 kernels' float opmath)
    x = _bf16(grad)
    tall = grad.shape[0] > grad.shape[1]
    if tall:
        x = xp.ascontiguousarray(x.T)
    norm = _bf16(xp.sqrt(xp.sum(x * x, dtype=xp.float32)))
    norm = xp.maximum(norm, _bf16(xp.float32(eps)))
    x = _bf16(x / norm)
    for _ in range(int(ns_steps)):
        gram = _bf16(x @ x.T)
        gram_update = _bf16(b * gram + c * (gram @ gram))  # addmm(A, A, A, beta=b, alpha=c)
        x = _bf16(a * x + gram_update @ x)  # addmm(X, B, X, beta=a)
    return x.T if tall else x


def _adjust_lr(lr: Any, adjust_lr_fn: str | None, shape: tuple[int, ...]) -> Any:
    """torch's learning-rate scaling by the matrix's shape ``(A, B)``: ``"original"``
    (or ``None``) ``sqrt(max(1, A / B))``, ``"match_rms_adamw"`` ``0.2 * sqrt(max(A, B))``,
    anything else 1."""
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, rows / cols))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(rows, cols))
    else:
        ratio = 1.0
    return lr * ratio


class Muon(Optimizer):
    """Muon, torch's formulation::

        buf = lerp(buf, g, 1 - momentum)               # momentum * buf + (1 - momentum) * g
        u = lerp(g, buf, momentum) if nesterov else buf
        O = NewtonSchulz(u, ns_coefficients, ns_steps, eps)     # in bfloat16
        p *= 1 - lr * weight_decay
        p -= adjust_lr(lr, adjust_lr_fn, p.shape) * O

    Every parameter given to the constructor must be 2-D (``ValueError`` otherwise); other
    parameters (biases, embeddings) belong to another optimizer such as AdamW. State per
    parameter: ``momentum_buffer`` (zeros at its first gradient).

    Args:
        params: the 2-D parameters, or param groups (dicts).
        lr: learning rate (default 1e-3).
        weight_decay: decoupled weight decay (default 0.1).
        momentum: momentum factor (default 0.95).
        nesterov: use Nesterov momentum (default True).
        ns_coefficients: the quintic's ``(a, b, c)``.
        eps: floor of the Frobenius norm the iteration starts by dividing by.
        ns_steps: Newton-Schulz iterations (fewer than 100).
        adjust_lr_fn: ``None``/``"original"`` or ``"match_rms_adamw"``.

    Example:
        >>> import gradsum
        >>> w = gradsum.nn.Parameter(gradsum.ones(3, 2))
        >>> opt = gradsum.optim.Muon([w], adjust_lr_fn="match_rms_adamw")
        >>> opt.defaults["momentum"], opt.defaults["ns_steps"]
        (0.95, 5)
    """

    _GROUP_DEFAULTS: ClassVar[dict[str, Any]] = {}
    _ELEMENTWISE = False  # (matrix products over each parameter)

    def __init__(self, params: Any, lr: float | Tensor = 1e-3, weight_decay: float = 0.1,
                 momentum: float = 0.95, nesterov: bool = True,
                 ns_coefficients: tuple[float, float, float] = (DEFAULT_A, DEFAULT_B,
                                                                DEFAULT_C),
                 eps: float = EPS, ns_steps: int = DEFAULT_NS_STEPS,
                 adjust_lr_fn: str | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError(_messages.tensor_lr_one_element())
        if not lr >= 0.0:
            raise ValueError(_messages.lr_negative(lr))
        if not momentum >= 0.0:
            raise ValueError(_messages.momentum_negative(momentum))
        if not weight_decay >= 0.0:
            raise ValueError(_messages.muon_weight_decay_negative(weight_decay))
        if adjust_lr_fn is not None and adjust_lr_fn not in ["original", "match_rms_adamw"]:
            raise ValueError(_messages.adjust_lr_fn_unsupported(adjust_lr_fn))
        defaults = {
            "lr": lr, "weight_decay": weight_decay, "momentum": momentum, "nesterov": nesterov,
            "ns_coefficients": ns_coefficients, "eps": eps, "ns_steps": ns_steps,
            "adjust_lr_fn": adjust_lr_fn,
        }
        super().__init__(params, defaults)
        # (only here, like torch: a group added later is checked at step, by its gradient)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(_messages.muon_param_not_2d(p))

    def _integral_error(self, group: dict[str, Any], p: Tensor) -> type[Exception]:
        return NotImplementedError  # (torch: the momentum's lerp on an integer tensor)

    def _init_group(self, group: dict[str, Any], params: list[Tensor]) -> None:
        for p in params:  # (all the group's state first, like torch's _init_group)
            state = self.state[p]
            if "momentum_buffer" not in state:
                state["momentum_buffer"] = _zeros_like(p.grad)  # type: ignore[arg-type]

    def _options(self, group: dict[str, Any], params: list[Tensor]) -> Any:
        self._init_group(group, params)
        if not params:
            return None
        return (_lr_value(group["lr"]), float(group["weight_decay"]), float(group["momentum"]),
                group["nesterov"], group["ns_coefficients"], group["ns_steps"], group["eps"],
                group["adjust_lr_fn"])

    def _entries(self, params: list[Tensor], options: Any) -> list[tuple[Any, tuple[Any, ...]]]:
        return [(p, (p._array, p.grad._array)) for p in params]  # type: ignore[union-attr]

    def _update(self, options: Any, p: Tensor, pa: Any, g: Any) -> None:
        lr, weight_decay, momentum, nesterov, ns_coefficients, ns_steps, eps, adjust_lr_fn = (
            options)
        if g.ndim != 2:
            raise ValueError(_messages.muon_grad_not_2d())
        buf_t = self.state[p]["momentum_buffer"]
        _lerp_(buf_t._array, g, 1 - momentum)  # buf.lerp_(grad, 1 - momentum)
        _bump(buf_t)
        buf = buf_t._array
        update = _lerp(g, buf, momentum) if nesterov else buf
        ortho = _zeropower_via_newtonschulz(update, ns_coefficients, ns_steps, eps)
        adjusted_lr = _adjust_lr(lr, adjust_lr_fn, tuple(p.shape))
        _mul_(pa, 1 - lr * weight_decay)  # param.mul_(1 - lr * weight_decay)
        _add_scaled_(pa, ortho, -adjusted_lr)  # param.add_(update, alpha=-lr')
        _bump(p)


__all__ = ["Muon"]
