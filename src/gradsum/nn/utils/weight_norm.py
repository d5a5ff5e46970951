"""``gradsum.nn.utils.weight_norm``: torch's legacy weight normalisation by a forward
pre-hook (deprecated in torch in favour of
:func:`gradsum.nn.utils.parametrizations.weight_norm`, with the same ``FutureWarning``).
The parameter ``name`` is replaced by ``name_g`` (the norms) and ``name_v`` (the direction),
and ``module.<name>`` is recomputed as ``g * v / ||v||`` before every forward.

Example:
    >>> import warnings
    >>> from gradsum import nn
    >>> from gradsum.nn.utils import weight_norm, remove_weight_norm
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     m = weight_norm(nn.Linear(3, 2))
    >>> sorted(m.state_dict()), tuple(m.weight_g.shape)
    (['bias', 'weight_g', 'weight_v'], (2, 1))
    >>> sorted(remove_weight_norm(m).state_dict())
    ['bias', 'weight']
"""

from __future__ import annotations

import warnings
from typing import Any, TypeVar

from gradsum._tensor import Tensor
from gradsum.nn import _messages
from gradsum.nn.modules.module import Module
from gradsum.nn.parameter import Parameter
from gradsum.nn.utils.parametrizations import _norm_except_dim, _weight_norm

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


class WeightNorm:
    """The forward pre-hook that recomputes ``module.<name>`` from ``<name>_g`` and
    ``<name>_v``."""

    name: str
    dim: int

    def __init__(self, name: str, dim: int | None) -> None:
        if dim is None:
            dim = -1
        self.name = name
        self.dim = dim

    def compute_weight(self, module: Module) -> Tensor:
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module: Module, name: str, dim: int | None) -> WeightNorm:
        warnings.warn(
            _messages.weight_norm_deprecated(),
            FutureWarning, stacklevel=3,
        )
        for rec in module._forward_pre_hooks:
            hook = rec.fn
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(_messages.cannot_register_two_weight_norm(name))
        if dim is None:
            dim = -1
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(_norm_except_dim(weight, dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


T_module = TypeVar("T_module", bound=Module)


def weight_norm(module: T_module, name: str = "weight", dim: int | None = 0) -> T_module:
    """Replace ``module.<name>`` by ``<name>_g`` (norms over every dimension but ``dim``;
    the whole tensor for ``dim=None``) and ``<name>_v``, recombined before each forward.
    Deprecated as in torch (``FutureWarning``).

    Example:
        >>> import warnings
        >>> import gradsum
        >>> from gradsum import nn
        >>> from gradsum.nn.utils import weight_norm
        >>> with warnings.catch_warnings(record=True) as w:
        ...     warnings.simplefilter("always")
        ...     m = weight_norm(nn.Linear(2, 2), dim=None)
        >>> w[0].category.__name__, m.weight_g.shape
        ('FutureWarning', ())
    """
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: T_module, name: str = "weight") -> T_module:
    """Undo :func:`weight_norm`: ``module.<name>`` becomes a Parameter holding the current
    normalised weight.

    Example:
        >>> import warnings
        >>> from gradsum import nn
        >>> from gradsum.nn.utils import remove_weight_norm, weight_norm
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     m = remove_weight_norm(weight_norm(nn.Linear(2, 2)))
        >>> type(m.weight).__name__
        'Parameter'
    """
    for rec in list(module._forward_pre_hooks):
        hook = rec.fn
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            module._forward_pre_hooks.remove(rec)
            module._refresh_hooked()
            return module
    raise ValueError(_messages.weight_norm_not_found(name, module))
