"""``Adam`` and ``AdamW`` (torch's single-tensor update, amsgrad, maximize, weight decay).

Example:
    >>> import gradsum
    >>> from gradsum import nn, optim
    >>> w = nn.Parameter(gradsum.tensor([1.0, -1.0]))
    >>> opt = optim.Adam([w], lr=0.1)
    >>> w.grad = gradsum.tensor([0.5, -2.0])
    >>> opt.step()                 # the first Adam step moves each weight by ~lr
    >>> [round(v, 4) for v in w.tolist()]
    [0.9, -0.9]
    >>> sorted(opt.state[w]), opt.state[w]["step"]
    (['exp_avg', 'exp_avg_sq', 'step'], tensor(1.))
"""

from __future__ import annotations

from typing import Any, ClassVar

from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.optim import _messages
from gradsum.optim._kernels import (
    _adam_moments,
    _addcdiv_,
    _bias_correction,
    _denom,
    _rdiv,
    _sqrt_scalar,
)
from gradsum.optim.optimizer import (
    Optimizer,
    _check_differentiable,
    _check_hyper,
    _lr_value,
    _scalar,
    _step_tensor,
    _zeros_like,
)


class Adam(Optimizer):
    """Adam (``decoupled_weight_decay=True`` gives AdamW), torch's formulation::

        step += 1
        p *= 1 - lr * wd   (decoupled)    |   g = g + wd * p   (otherwise)
        m.lerp_(g, 1 - beta1);  v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
        v_hat = max(v_max, v) if amsgrad else v
        p.addcdiv_(m, sqrt(v_hat) / sqrt(1 - beta2**step) + eps,
                   value=-lr / (1 - beta1**step))

    torch's single-tensor update, operation for operation: bitwise its result on its AVX2/AVX-512
    kernels (``g + wd * p``, the lerp and the addcmul are fused multiply-adds there), float32 and
    float64, including a tensor ``lr`` or tensor ``betas`` (0-d tensor arithmetic).

    State per parameter: ``step`` (float32 0-d tensor), ``exp_avg``, ``exp_avg_sq`` and, with
    amsgrad, ``max_exp_avg_sq``; created at the parameter's first gradient.
    """

    _GROUP_DEFAULTS: ClassVar[dict[str, Any]] = {
        "amsgrad": False, "maximize": False, "foreach": None, "capturable": False,
        "differentiable": False, "decoupled_weight_decay": False, "fused": None,
    }
    _TENSOR_STEP = True
    _INTEGRAL_ERROR = NotImplementedError  # (torch: lerp on an integer tensor)

    def __init__(self, params: Any, lr: float | Tensor = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None,
                 decoupled_weight_decay: bool = False) -> None:
        if isinstance(lr, Tensor) and foreach and not capturable:
            raise ValueError(_messages.tensor_lr_foreach())
        # (betas[1] of a 1-tuple: IndexError, like torch)
        _check_hyper(lr, eps=eps, betas=betas, weight_decay=weight_decay)
        if not (all(isinstance(b, float) for b in betas[:2])
                or all(isinstance(b, Tensor) for b in betas[:2])):
            raise ValueError(_messages.betas_mixed_types(betas))
        for i, beta in enumerate(betas[:2]):
            if isinstance(beta, Tensor):
                if foreach and not capturable:
                    raise ValueError(_messages.tensor_betas_foreach(i))
                if beta.numel() != 1:
                    raise ValueError(_messages.tensor_betas_one_element(i))
        # (tensors stay tensors, one-element ones made 0-d: torch's _to_scalar)
        betas = tuple(b.reshape(()) if isinstance(b, Tensor) and b.ndim else b for b in betas)
        defaults = {
            "lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
            "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach,
            "capturable": capturable, "differentiable": differentiable, "fused": fused,
            "decoupled_weight_decay": decoupled_weight_decay,
        }
        super().__init__(params, defaults)
        _check_differentiable(differentiable, fused, foreach)

    def _init_state(self, state: dict[str, Any], p: Tensor, group: dict[str, Any]) -> None:
        amsgrad = group["amsgrad"]
        state["step"] = _step_tensor(group.get("fused"))
        state["exp_avg"] = _zeros_like(p)
        state["exp_avg_sq"] = _zeros_like(p)
        if amsgrad:
            state["max_exp_avg_sq"] = _zeros_like(p)

    def _check_group(self, group: dict[str, Any]) -> None:
        if (group.get("foreach") and isinstance(group["lr"], Tensor)
                and not group.get("capturable", False)):
            raise RuntimeError(_messages.tensor_lr_foreach_fix())
        super()._check_group(group)

    def _options(self, group: dict[str, Any], params: list[Tensor]) -> Any:
        beta1, beta2 = group["betas"]  # (unpacked: a 3-tuple raises ValueError, as torch)
        self._init_group(group, params)
        lr = _lr_value(group["lr"])  # (after torch's _init_group checks, like its update)
        # (tensors stay 0-d tensors in torch's arithmetic: NumPy scalars of their dtype here)
        beta1, beta2 = _lr_value(beta1), _lr_value(beta2)
        return (lr, beta1, beta2, _scalar(group["eps"]), _scalar(group["weight_decay"]),
                group["amsgrad"], group.get("decoupled_weight_decay", False),
                group["maximize"])

    def _roles(self, options: Any) -> tuple[str, ...]:
        if options[5]:  # (amsgrad)
            return ("exp_avg", "exp_avg_sq", "max_exp_avg_sq")
        return ("exp_avg", "exp_avg_sq")

    def _update(self, options: Any, step: float, pa: Any, ga: Any, m: Any, v: Any,
                *vmax: Any) -> None:
        # torch's operations, in its order, through scratch buffers
        lr, beta1, beta2, eps, wd, amsgrad, decoupled, maximize = options
        step_size = _rdiv(lr, _bias_correction(beta1, step))
        bias_correction2_sqrt = _sqrt_scalar(_bias_correction(beta2, step))
        _adam_moments(pa, ga, m, v, beta1, beta2, lr, wd, decoupled, maximize)
        if amsgrad:
            xp.maximum(vmax[0], v, out=vmax[0])
        v_hat = vmax[0] if amsgrad else v
        denom = _denom(v_hat, eps, self._scratch(0, m), bias_correction2_sqrt)
        _addcdiv_(pa, m, denom, -step_size, self._scratch(1, m))


class AdamW(Adam):
    """Adam with decoupled weight decay (``p *= 1 - lr * weight_decay`` before the update);
    ``weight_decay`` defaults to 1e-2, like torch."""

    def __init__(self, params: Any, lr: float | Tensor = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
