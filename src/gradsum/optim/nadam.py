"""``NAdam``: Adam with Nesterov momentum (torch's update: ``momentum_decay``, the
``mu_product`` state, ``decoupled_weight_decay`` for NAdamW, maximize).

Example:
    >>> import gradsum
    >>> from gradsum import nn, optim
    >>> w = nn.Parameter(gradsum.tensor([1.0, -1.0]))
    >>> opt = optim.NAdam([w], lr=0.1)
    >>> w.grad = gradsum.tensor([0.5, -2.0])
    >>> opt.step()
    >>> [round(v, 4) for v in w.tolist()]
    [0.8944, -0.8944]
    >>> list(opt.state[w])
    ['step', 'mu_product', 'exp_avg', 'exp_avg_sq']
"""

from __future__ import annotations

from typing import Any, ClassVar

from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.optim._kernels import _adam_moments, _addcdiv_, _as, _bias_correction, _denom
from gradsum.optim.optimizer import (
    Optimizer,
    _adam_options,
    _bump,
    _check_differentiable,
    _check_hyper,
    _count_step,
    _entry_arrays,
    _scalar_state,
    _step_tensor,
    _zeros_like,
)


class NAdam(Optimizer):
    """NAdam, torch's formulation::

        step += 1
        p *= 1 - lr * wd   (decoupled)    |   g = g + wd * p   (otherwise)
        mu = beta1 * (1 - 0.5 * 0.96 ** (step * momentum_decay))
        mu_next = beta1 * (1 - 0.5 * 0.96 ** ((step + 1) * momentum_decay))
        mu_product *= mu
        m.lerp_(g, 1 - beta1);  v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
        denom = sqrt(v / (1 - beta2**step)) + eps
        p.addcdiv_(g, denom, value=-lr * (1 - mu) / (1 - mu_product))
        p.addcdiv_(m, denom, value=-lr * mu_next / (1 - mu_product * mu_next))

    torch's single-tensor update, operation for operation (the ``alpha`` add, the lerp and the
    addcmul fused, as torch's AVX2/AVX-512 kernels compute them).

    State per parameter (created at its first gradient): ``step`` and ``mu_product`` (0-d
    tensors of the default float dtype), ``exp_avg``, ``exp_avg_sq``.

    Example:
        >>> import gradsum
        >>> w = gradsum.nn.Parameter(gradsum.ones(2))
        >>> opt = gradsum.optim.NAdam([w], momentum_decay=0.0, decoupled_weight_decay=True)
        >>> opt.param_groups[0]["lr"], opt.param_groups[0]["momentum_decay"]
        (0.002, 0.0)
    """

    _GROUP_DEFAULTS: ClassVar[dict[str, Any]] = {
        "maximize": False, "foreach": None, "capturable": False, "differentiable": False,
        "decoupled_weight_decay": False,
    }
    _TENSOR_STEP = True
    _SCALAR_STATE = ("mu_product",)
    _INTEGRAL_ERROR = NotImplementedError  # (torch: lerp on an integer tensor)

    def __init__(self, params: Any, lr: float | Tensor = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _check_hyper(lr, eps=eps, betas=betas, weight_decay=weight_decay,
                     momentum_decay=momentum_decay)
        defaults = {
            "lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
            "momentum_decay": momentum_decay, "decoupled_weight_decay": decoupled_weight_decay,
            "maximize": maximize, "foreach": foreach, "capturable": capturable,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)
        _check_differentiable(differentiable)

    def _init_state(self, state: dict[str, Any], p: Tensor, group: dict[str, Any]) -> None:
        state["step"] = _step_tensor()
        state["mu_product"] = _scalar_state(1.0)
        state["exp_avg"] = _zeros_like(p)
        state["exp_avg_sq"] = _zeros_like(p)

    def _options(self, group: dict[str, Any], params: list[Tensor]) -> Any:
        options = _adam_options(group, "momentum_decay")
        decoupled = group["decoupled_weight_decay"]
        self._init_group(group, params)
        return *options, decoupled, group["maximize"]

    def _entries(self, params: list[Tensor], options: Any) -> list[tuple[Any, tuple[Any, ...]]]:
        """The key of a parameter: this step's bias correction and the two step sizes, which
        depend on its ``mu_product`` (updated here, in the state's own dtype like torch's)."""
        lr, beta1, beta2, _, _, momentum_decay, _, _ = options
        entries = []
        for p in params:
            state = self.state[p]
            step = _count_step(state)
            mu_product_t = state["mu_product"]
            bias_correction2 = _bias_correction(beta2, step)
            mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
            mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
            mu_product_t._array *= mu
            mu_product = float(mu_product_t._array)
            mu_product_next = mu_product * mu_next
            grad_value = -lr * (1.0 - mu) / (1.0 - mu_product)
            avg_value = (-lr * mu_next) / (1.0 - mu_product_next)
            _bump(mu_product_t)
            entries.append(((bias_correction2, grad_value, avg_value),
                            _entry_arrays(p, state, ("exp_avg", "exp_avg_sq"))))
        return entries

    def _update(self, options: Any, key: Any, pa: Any, ga: Any, m: Any, v: Any) -> None:
        # torch's operations in its order
        lr, beta1, beta2, eps, wd, _, decoupled, maximize = options
        bias_correction2, grad_value, avg_value = key
        ga = _adam_moments(pa, ga, m, v, beta1, beta2, lr, wd, decoupled, maximize)
        denom = xp.divide(v, _as(v, bias_correction2), out=self._scratch(0, v))
        _denom(denom, eps, denom)  # sqrt(v / bias_correction2) + eps
        u = self._scratch(1, v)
        _addcdiv_(pa, ga, denom, grad_value, u)
        _addcdiv_(pa, m, denom, avg_value, u)
