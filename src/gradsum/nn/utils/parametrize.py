"""``gradsum.nn.utils.parametrize``: torch's parametrizations. ``register_parametrization(m,
"weight", p)`` moves ``m.weight`` to ``m.parametrizations.weight.original`` (or
``original0``, ``original1``, ... when ``p.right_inverse`` returns several tensors) and
makes ``m.weight`` a property that computes ``p(original)`` on every access (once per
:func:`cached` block). As in torch, the module's class is swapped for a generated subclass,
``Parametrized<Name>``, which carries the properties, so nothing in ``Module`` changes;
removing the last parametrization restores the original class.

Example:
    >>> import gradsum
    >>> from gradsum import nn
    >>> from gradsum.nn.utils import parametrize
    >>> class Symmetric(nn.Module):
    ...     def forward(self, X):
    ...         return X.triu() + X.triu(1).transpose(-1, -2)
    >>> m = nn.Linear(3, 3)
    >>> _ = parametrize.register_parametrization(m, "weight", Symmetric())
    >>> type(m).__name__, parametrize.is_parametrized(m, "weight")
    ('ParametrizedLinear', True)
    >>> bool((m.weight == m.weight.T).all())
    True
    >>> list(m.state_dict())
    ['bias', 'parametrizations.weight.original']
    >>> _ = parametrize.remove_parametrizations(m, "weight")
    >>> type(m).__name__, list(m.state_dict())
    ('Linear', ['bias', 'weight'])
"""

from __future__ import annotations

import collections.abc
import copyreg
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from copy import deepcopy
from typing import Any

from gradsum._tensor import Tensor
from gradsum.autograd.grad_mode import no_grad
from gradsum.nn import _messages
from gradsum.nn.modules.container import ModuleDict, ModuleList
from gradsum.nn.modules.module import Module
from gradsum.nn.parameter import Parameter

__all__ = ["cached", "ParametrizationList", "register_parametrization", "is_parametrized",
           "remove_parametrizations", "type_before_parametrizations",
           "transfer_parametrizations_and_params"]

_cache_enabled = 0
_cache: dict[tuple[int, str], Tensor | None] = {}


@contextmanager
def cached() -> Iterator[None]:
    """Within this context, each parametrized tensor is computed once, on its first access,
    and reused (the cache is dropped when the outermost ``cached()`` exits).

    Example:
        >>> import gradsum
        >>> from gradsum import nn
        >>> from gradsum.nn.utils import parametrize
        >>> m = nn.Linear(2, 2)
        >>> _ = parametrize.register_parametrization(m, "weight", nn.Tanh())
        >>> with parametrize.cached():
        ...     m.weight is m.weight
        True
        >>> m.weight is m.weight
        False
    """
    global _cache, _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache = {}


def _register_parameter_or_buffer(module: Module, name: str, X: Tensor) -> None:
    if isinstance(X, Parameter):
        module.register_parameter(name, X)
    else:
        module.register_buffer(name, X)


def _maybe_set(dest: Tensor, src: Tensor) -> None:
    """torch's ``dest.set_(src)``: ``dest`` (same object) now holds ``src``'s buffer."""
    dest.data = src


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor (``module.parametrizations[name]``), a ModuleList
    holding the unparametrized tensor as ``original`` (or ``original0``, ``original1``, ...).
    Calling it computes the parametrized tensor; :meth:`right_inverse` assigns to it.

    Example:
        >>> import gradsum
        >>> from gradsum import nn
        >>> from gradsum.nn.utils.parametrize import ParametrizationList
        >>> plist = ParametrizationList([nn.Identity()], nn.Parameter(gradsum.ones(2)))
        >>> plist().tolist(), type(plist.original).__name__
        ([1.0, 1.0], 'Parameter')
    """

    original: Tensor
    unsafe: bool

    def __init__(self, modules: Sequence[Module], original: Tensor,
                 unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise ValueError(_messages.parametrizationlist_requires_one_or_more())
        super().__init__(modules)
        self.unsafe = unsafe
        original_shape = tuple(original.shape)
        original_dtype = original.dtype
        with no_grad():
            new: Any = original
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    with suppress(NotImplementedError):
                        new = module.right_inverse(new)
        if not isinstance(new, (Tensor, Sequence)):
            raise ValueError(_messages.right_inverse_not_tensors(new))
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError(_messages.when_right_inverse_outputs_one(original, new))
            with no_grad():
                _maybe_set(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, originali in enumerate(new):
                if not isinstance(originali, Tensor):
                    raise ValueError(_messages.right_inverse_bad_element(i, originali))
                # as torch: a Parameter original gives Parameters, with its requires_grad
                if isinstance(original, Parameter):
                    originali = Parameter(originali, original.requires_grad)
                originali.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", originali)
        if not self.unsafe:
            Z = self()
            if not isinstance(Z, Tensor):
                raise ValueError(_messages.parametrization_return_tensor(Z))
            if Z.dtype != original_dtype:
                raise ValueError(_messages.parametrization_changes_dtype(original_dtype, Z))
            if tuple(Z.shape) != original_shape:
                raise ValueError(_messages.parametrization_changes_shape(original_shape, Z))

    def right_inverse(self, value: Tensor) -> None:
        """Set the originals so that the parametrized tensor is ``value``: each
        parametrization's ``right_inverse``, last to first, under ``no_grad``."""
        with no_grad():
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    value = module.right_inverse(value)
                else:
                    raise RuntimeError(_messages.right_inverse_not_implemented(module))
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(_messages.right_inverse_return_tensor(value))
                if value.dtype != self.original.dtype:
                    raise ValueError(_messages.right_inverse_dtype_mismatch(value, self))
                _maybe_set(self.original, value)
            else:
                if not isinstance(value, collections.abc.Sequence):
                    raise ValueError(_messages.right_inverse_return_sequence_tensors(value))
                if len(value) != self.ntensors:
                    raise ValueError(_messages.right_inverse_wrong_length(self, value))
                for i, tensor in enumerate(value):
                    original_i = getattr(self, f"original{i}")
                    if not isinstance(tensor, Tensor):
                        raise ValueError(
                            _messages.right_inverse_return_sequence_tensors_or(i, tensor)
                        )
                    if original_i.dtype != tensor.dtype:
                        raise ValueError(
                            _messages.right_inverse_dtype_mismatch_at(i, tensor, original_i)
                        )
                    _maybe_set(original_i, tensor)

    def forward(self) -> Tensor:  # type: ignore[override]
        if self.is_tensor:
            x = self[0](self.original)
        else:
            originals = (getattr(self, f"original{i}") for i in range(self.ntensors))
            x = self[0](*originals)
        curr_idx = 1
        while hasattr(self, str(curr_idx)):
            x = self[curr_idx](x)
            curr_idx += 1
        return x


def _inject_new_class(module: Module) -> None:
    """Swap ``module``'s class for ``Parametrized<Name>``, a subclass that will hold the
    properties (torch's way: properties live on a class, and this one is the module's own)."""
    cls = module.__class__

    def default_deepcopy(self: Module, memo: dict[int, Any]) -> Module:
        obj = memo.get(id(self))
        if obj is not None:
            return obj  # type: ignore[no-any-return]
        replica = self.__new__(self.__class__)
        memo[id(self)] = replica
        object.__setattr__(replica, "__dict__", deepcopy(self.__dict__, memo))
        for slot in copyreg._slotnames(self.__class__):  # type: ignore[attr-defined]
            if hasattr(self, slot):
                setattr(replica, slot, deepcopy(getattr(self, slot), memo))
        return replica

    def getstate(self: Module) -> Any:
        raise RuntimeError(_messages.serialization_parametrized_modules_only_supported())

    dct: dict[str, Any] = {"__getstate__": getstate}
    if not hasattr(cls, "__deepcopy__"):
        dct["__deepcopy__"] = default_deepcopy
    param_cls = type(f"Parametrized{cls.__name__}", (cls,), dct)
    module.__class__ = param_cls


def _inject_property(module: Module, tensor_name: str) -> None:
    """Define ``tensor_name`` on the module's (generated) class as a property: get computes
    the parametrization (cached inside :func:`cached`), set calls its ``right_inverse``."""
    if hasattr(module, tensor_name):
        raise AssertionError(_messages.module_already_attribute_named(tensor_name))

    def get_cached_parametrization(parametrization: Module) -> Tensor:
        key = (id(module), tensor_name)
        tensor = _cache.get(key)
        if tensor is None:
            tensor = parametrization()
            _cache[key] = tensor
        return tensor

    def get_parametrized(self: Module) -> Tensor:
        parametrization = self.parametrizations[tensor_name]
        if _cache_enabled:
            return get_cached_parametrization(parametrization)
        return parametrization()  # type: ignore[no-any-return]

    def set_original(self: Module, value: Tensor) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Parametrize ``module.<tensor_name>`` (a parameter, a buffer, or an already
    parametrized tensor, to which ``parametrization`` is appended) by ``parametrization``.

    Unless ``unsafe``, the parametrization may not change the tensor's dtype or shape
    (``ValueError``). If ``parametrization`` has ``right_inverse``, it initialises the
    originals from the current value (so the value is kept) and makes the property
    assignable; it may return several tensors (``original0``, ``original1``, ...).

    Example:
        >>> import gradsum
        >>> from gradsum import nn
        >>> from gradsum.nn.utils import parametrize
        >>> class Double(nn.Module):
        ...     def forward(self, X):
        ...         return 2 * X
        ...     def right_inverse(self, Y):
        ...         return Y / 2
        >>> m = nn.Linear(2, 1)
        >>> w = m.weight.detach().clone()
        >>> _ = parametrize.register_parametrization(m, "weight", Double())
        >>> bool((m.weight == w).all())
        True
        >>> m.weight = gradsum.ones(1, 2)
        >>> m.parametrizations.weight.original.tolist()
        [[0.5, 0.5]]
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            Y = getattr(module, tensor_name)
            X = parametrization(Y)
            if not isinstance(X, Tensor):
                raise ValueError(_messages.parametrization_return_tensor(X))
            if X.dtype != Y.dtype:
                raise ValueError(_messages.parametrization_output_changes_dtype(tensor_name, Y, X))
            if tuple(X.shape) != tuple(Y.shape):
                raise ValueError(_messages.parametrization_output_changes_shape(tensor_name, Y, X))
            if hasattr(parametrization, "right_inverse"):
                try:
                    Z = parametrization.right_inverse(X)
                except NotImplementedError:
                    pass
                else:
                    if not isinstance(Z, Tensor):
                        raise ValueError(_messages.parametrization_right_inverse_return_tensor(Z))
                    if Z.dtype != Y.dtype:
                        raise ValueError(_messages.right_inverse_changes_dtype(tensor_name, Y, Z))
                    if tuple(Z.shape) != tuple(Y.shape):
                        raise ValueError(_messages.right_inverse_changes_shape(tensor_name, Y, Z))
        plist = module.parametrizations[tensor_name]
        plist.append(parametrization)
        plist.unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise ValueError(_messages.no_tensor_to_parametrize(module, tensor_name))
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has any parametrization (on ``tensor_name``, if given).

    Example:
        >>> from gradsum import nn
        >>> from gradsum.nn.utils.parametrize import is_parametrized
        >>> is_parametrized(nn.Linear(2, 2))
        False
    """
    parametrizations = getattr(module, "parametrizations", None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(module: Module, tensor_name: str,
                            leave_parametrized: bool = True) -> Module:
    """Remove the parametrizations on ``module.<tensor_name>``: it becomes a plain parameter
    (or buffer) again, holding the parametrized value (``leave_parametrized=True``, written
    into the original Parameter object) or the unparametrized ``original``.

    Example:
        >>> import gradsum
        >>> from gradsum import nn
        >>> from gradsum.nn.utils import parametrize
        >>> m = nn.Linear(2, 2)
        >>> _ = parametrize.register_parametrization(m, "weight", nn.ReLU())
        >>> _ = parametrize.remove_parametrizations(m, "weight")
        >>> bool((m.weight >= 0).all()), type(m.weight).__name__
        (True, 'Parameter')
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(_messages.no_parametrization_on(module, tensor_name))
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with no_grad():
                t = getattr(module, tensor_name)
                _maybe_set(original, t)
    else:
        if leave_parametrized:
            t = getattr(module, tensor_name)
            original = Parameter(t) if t.requires_grad else t
        else:
            raise ValueError(_messages.cannot_leave_unparametrized_leave_parametrized())
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """The module's class before any parametrization was registered.

    Example:
        >>> from gradsum import nn
        >>> from gradsum.nn.utils import parametrize
        >>> m = parametrize.register_parametrization(nn.Linear(2, 2), "weight", nn.Tanh())
        >>> parametrize.type_before_parametrizations(m).__name__
        'Linear'
    """
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)


def transfer_parametrizations_and_params(from_module: Module, to_module: Module,
                                         tensor_name: str | None = None) -> Module:
    """Register ``from_module``'s parametrizations (all, or those of ``tensor_name``) on
    ``to_module``, sharing the original tensors.

    Example:
        >>> from gradsum import nn
        >>> from gradsum.nn.utils import parametrize
        >>> a = parametrize.register_parametrization(nn.Linear(2, 2), "weight", nn.Tanh())
        >>> b = parametrize.transfer_parametrizations_and_params(a, nn.Linear(2, 2))
        >>> b.parametrizations.weight.original is a.parametrizations.weight.original
        True
    """
    if is_parametrized(from_module):
        names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
        for parameter_name in names:
            if not hasattr(to_module, parameter_name):
                setattr(to_module, parameter_name,
                        Parameter(getattr(from_module, parameter_name)))
            source = from_module.parametrizations[parameter_name]
            for param_func in source:
                register_parametrization(to_module, parameter_name, param_func)
            target = to_module.parametrizations[parameter_name]
            if hasattr(source, "original"):
                target.original = source.original
            else:
                num = 0
                while hasattr(source, f"original{num}"):
                    setattr(target, f"original{num}", getattr(source, f"original{num}"))
                    num += 1
    return to_module
