"""``gradsum.nn.utils.spectral_norm``: torch's legacy spectral normalisation by a forward
pre-hook. The parameter ``name`` becomes ``name_orig``, with the power-iteration buffers
``name_u`` and ``name_v``; ``module.<name>`` (a plain attribute) is recomputed as
``name_orig / sigma`` before every forward, iterating in training mode.

Example:
    >>> from gradsum import nn
    >>> from gradsum.nn.utils import spectral_norm, remove_spectral_norm
    >>> m = spectral_norm(nn.Linear(4, 3))
    >>> list(m.state_dict())
    ['bias', 'weight_orig', 'weight_u', 'weight_v']
    >>> list(remove_spectral_norm(m).state_dict())
    ['bias', 'weight']
"""

from __future__ import annotations

from typing import Any, TypeVar

from gradsum import ops
from gradsum._tensor import Tensor
from gradsum.autograd.grad_mode import no_grad
from gradsum.nn import _messages
from gradsum.nn import functional as F
from gradsum.nn.modules.module import Module
from gradsum.nn.parameter import Parameter
from gradsum.nn.utils.parametrizations import _is_conv_transpose

__all__ = ["SpectralNorm", "spectral_norm", "remove_spectral_norm"]


class SpectralNorm:
    """The forward pre-hook that recomputes ``module.<name>`` as ``<name>_orig / sigma``."""

    _version: int = 1
    name: str
    dim: int
    n_power_iterations: int
    eps: float

    def __init__(self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError(_messages.expected_n_power_iterations_positive(n_power_iterations))
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        weight_mat = weight
        if self.dim != 0:
            weight_mat = weight_mat.permute(
                self.dim, *[d for d in range(weight_mat.dim()) if d != self.dim]
            )
        return weight_mat.reshape(weight_mat.shape[0], -1)

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                # (out= updates the buffers in place, as torch's)
                for _ in range(self.n_power_iterations):
                    v = F.normalize(ops.mv(weight_mat.t(), u), dim=0, eps=self.eps, out=v)
                    u = F.normalize(ops.mv(weight_mat, v), dim=0, eps=self.eps, out=u)
                u = u.clone()
                v = v.clone()
        sigma = ops.dot(u, ops.mv(weight_mat, v))
        return weight / sigma

    def remove(self, module: Module) -> None:
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name,
                self.compute_weight(module, do_power_iteration=module.training))

    @staticmethod
    def apply(module: Module, name: str, n_power_iterations: int, dim: int,
              eps: float) -> SpectralNorm:
        for rec in module._forward_pre_hooks:
            hook = rec.fn
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(_messages.cannot_register_two_spectral_norm(name))
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(_messages.spectralnorm_cannot_applied_parameter_none(name))
        with no_grad():
            weight_mat = fn.reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = F.normalize(weight.new_empty((h,)).normal_(0, 1), dim=0, eps=fn.eps)
            v = F.normalize(weight.new_empty((w,)).normal_(0, 1), dim=0, eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        setattr(module, fn.name, weight.data)
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn


T_module = TypeVar("T_module", bound=Module)


def spectral_norm(module: T_module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> T_module:
    """Normalise ``module.<name>`` by its spectral norm, estimated by power iteration before
    each forward (``n_power_iterations`` steps in training mode). ``dim``: the output
    dimension (default 1 for ConvTranspose, else 0).

    Example:
        >>> import gradsum
        >>> from gradsum import nn
        >>> from gradsum.nn.utils import spectral_norm
        >>> m = spectral_norm(nn.Linear(3, 2))
        >>> m(gradsum.ones(1, 3)).shape
        (1, 2)
    """
    if dim is None:
        dim = 1 if _is_conv_transpose(module) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module: T_module, name: str = "weight") -> T_module:
    """Undo :func:`spectral_norm`: ``module.<name>`` becomes a Parameter holding
    ``<name>_orig / sigma`` (no further iteration).

    Example:
        >>> from gradsum import nn
        >>> from gradsum.nn.utils import remove_spectral_norm, spectral_norm
        >>> m = remove_spectral_norm(spectral_norm(nn.Linear(2, 2)))
        >>> type(m.weight).__name__
        'Parameter'
    """
    for rec in list(module._forward_pre_hooks):
        hook = rec.fn
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            module._forward_pre_hooks.remove(rec)
            module._refresh_hooked()
            return module
    raise ValueError(_messages.spectral_norm_not_found(name, module))
