"""Lazy modules (torch's ``nn.LazyLinear``, ``nn.LazyConv*d``, ``nn.LazyConvTranspose*d``,
``nn.LazyBatchNorm*d``, ``nn.LazyInstanceNorm*d``): the input size is inferred at the first
forward, then the module turns into its regular class (``cls_to_become``). This file
holds :class:`LazyModuleMixin`; as in torch, each lazy class lives beside its regular one
(``LazyLinear`` in :mod:`~gradsum.nn.modules.linear`, ``LazyConv*`` in
:mod:`~gradsum.nn.modules.conv`, ...).

Until then the parameters are :class:`~gradsum.nn.parameter.UninitializedParameter` (and
the running statistics :class:`~gradsum.nn.parameter.UninitializedBuffer`); the first forward
materializes them in place (their identity survives, so an optimizer built before sees them)
and applies the regular class's default initialisation.

Example:
    >>> import gradsum
    >>> from gradsum import nn
    >>> m = nn.LazyLinear(2)
    >>> m
    LazyLinear(in_features=0, out_features=2, bias=True)
    >>> m(gradsum.ones(4, 3)).shape
    (4, 2)
    >>> m
    Linear(in_features=3, out_features=2, bias=True)
"""

from __future__ import annotations

import itertools
import typing
from collections.abc import Mapping
from typing import Any

from gradsum.autograd.grad_mode import no_grad as _no_grad
from gradsum.nn import _messages
from gradsum.nn.parameter import is_lazy as _is_lazy

if typing.TYPE_CHECKING:
    from gradsum.nn.modules.module import Module

__all__ = ["LazyModuleMixin"]


class LazyModuleMixin:
    """torch's ``LazyModuleMixin``: a forward pre-hook calls :meth:`initialize_parameters`
    with the first input, checks nothing is left uninitialized, removes itself and turns the
    module into ``cls_to_become``. ``state_dict()`` holds the uninitialized tensors as they
    are; ``load_state_dict`` of an initialized checkpoint materializes them with its shapes.

    Example:
        >>> import gradsum
        >>> from gradsum import nn
        >>> m = nn.LazyLinear(2)
        >>> m.has_uninitialized_params(), list(m.state_dict().values())
        (True, [<UninitializedParameter>, <UninitializedParameter>])
        >>> _ = m.load_state_dict(nn.Linear(5, 2).state_dict())
        >>> m.weight.shape, m.has_uninitialized_params()
        ((2, 5), False)
    """

    cls_to_become: type | None = None
    _parameters: dict[str, Any]
    _buffers: dict[str, Any]
    _non_persistent_buffers_set: set[str]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(  # type: ignore[attr-defined]
            self._infer_parameters, with_kwargs=True)

    def _save_to_state_dict(self, destination: dict[str, Any], prefix: str,
                            keep_vars: bool) -> None:
        # (torch: uninitialized tensors go in as they are, the others detached)
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = (param if _is_lazy(param) or keep_vars
                                              else param.detach())
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if _is_lazy(buf) or keep_vars else buf.detach()

    def _plan_load(self, state_dict: Mapping[str, Any], prefix: str, missing: list[str],
                   unexpected: list[str], errors: list[str],
                   actions: list[tuple[Module, str, Any, Any]]) -> None:
        # torch's _lazy_load_hook: an initialized checkpoint entry materializes the
        # uninitialized tensor with its shape (before any check, as torch's pre-hook); an
        # uninitialized entry loaded into an uninitialized tensor is a no-op copy
        skipped: list[str] = []
        for name, param in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and param is not None and _is_lazy(param):
                value = state_dict[key]
                if not _is_lazy(value):
                    with _no_grad():
                        param.materialize(value.shape)
                else:
                    skipped.append(key)
        if skipped:
            state_dict = {k: v for k, v in state_dict.items() if k not in skipped}
        n = len(missing)
        super()._plan_load(state_dict, prefix, missing, unexpected,  # type: ignore[misc]
                           errors, actions)
        missing[n:] = [k for k in missing[n:] if k not in skipped]

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        """Infer the shapes from the input batch and materialize (overridden per class)."""
        raise NotImplementedError(
            _messages.initialize_parameters_not_implemented(self))

    def has_uninitialized_params(self) -> bool:
        """Whether a parameter or buffer of this module is still uninitialized."""
        return any(_is_lazy(t) for t in itertools.chain(self._parameters.values(),
                                                       self._buffers.values()))

    def _infer_parameters(self, module: Any, args: tuple[Any, ...],
                          kwargs: dict[str, Any] | None = None) -> None:
        kwargs = kwargs or {}
        module.initialize_parameters(*args, **kwargs)
        if module.has_uninitialized_params():
            raise RuntimeError(_messages.module_not_fully_initialized(self))
        module._initialize_hook.remove()
        delattr(module, "_initialize_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self) -> Any:
        raise RuntimeError(_messages.uninitialized_parameters_with_data_parallel())


def _size(shape: tuple[int, ...]) -> str:
    return f"gradsum.Size({list(shape)})"
