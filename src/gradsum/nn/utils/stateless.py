"""``gradsum.nn.utils.stateless``: call a module with some of its parameters and buffers
replaced, without changing the module (torch's ``functional_call``). The replacements are
swapped into the modules' ``_parameters`` / ``_buffers`` (or set as attributes) for the
call and the originals put back afterwards, even when the call raises.

Example:
    >>> import gradsum
    >>> from gradsum import nn
    >>> from gradsum.func import functional_call
    >>> lin = nn.Linear(2, 1)
    >>> params = {"weight": gradsum.ones(1, 2), "bias": gradsum.zeros(1)}
    >>> functional_call(lin, params, (gradsum.tensor([[1.0, 2.0]]),)).tolist()
    [[3.0]]
    >>> lin.weight is params["weight"]
    False
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterable, Iterator
from typing import Any

from gradsum._tensor import Tensor
from gradsum.nn import _messages
from gradsum.nn.modules.module import Module

__all__ = ["functional_call"]

_MISSING: Any = object()


def _untie_named_tensors_map(module: Module,
                             parameters_and_buffers: dict[str, Tensor]) -> dict[str, Tensor]:
    """``parameters_and_buffers`` with every name tied to a given one added (the same value);
    two different values for tied names raise ``ValueError``."""
    all_named_tensors: dict[str, Tensor] = {}
    all_named_tensors.update(module.named_parameters(remove_duplicate=False))
    all_named_tensors.update(module.named_buffers(remove_duplicate=False))
    tied_by_id: dict[int, set[str]] = {}
    for name, tensor in all_named_tensors.items():
        tied_by_id.setdefault(id(tensor), set()).add(name)
    tied_names_map: dict[str, set[str]] = {}
    for tied_names in tied_by_id.values():
        if len(tied_names) > 1:
            for tied_name in tied_names:
                tied_names_map[tied_name] = tied_names
    given_names = set(parameters_and_buffers)
    given_tied = {name for name in given_names if name in tied_names_map}
    for given_name in given_tied:
        tied_names = tied_names_map[given_name]
        values = {id(parameters_and_buffers[n]) for n in tied_names if n in given_names}
        if len(tied_names & given_tied) > 1 and len(values) != 1:
            raise ValueError(_messages.functional_call_multiple_values_keys(tied_names))
    untied = dict(parameters_and_buffers)
    for given_name in given_tied:
        for tied_name in tied_names_map[given_name]:
            untied[tied_name] = parameters_and_buffers[given_name]
    return untied


def _get_submodule(module: Module, name: str) -> Module:
    if not name:
        return module
    prefix, dot, attr = name.rpartition(".")
    parent = _get_submodule(module, prefix) if dot else module
    try:
        sub = getattr(parent, attr)
    except AttributeError as ex:
        raise AttributeError(_messages.no_attribute(parent, attr)) from ex
    if not isinstance(sub, Module):
        raise TypeError(_messages.submodule_not_a_module(name, sub))
    return sub


def _swap_tensor(module: Module, name: str, tensor: Any) -> Any:
    """torch's ``_named_member_accessor.swap_tensor`` with ``allow_missing=True``."""
    if tensor is not _MISSING and tensor is not None and not isinstance(tensor, Tensor):
        raise TypeError(_messages.not_a_tensor(tensor))
    prefix, _, attr = name.rpartition(".")
    module = _get_submodule(module, prefix)
    if attr == "":
        raise KeyError(_messages.tensor_name_empty())
    # (written straight into the stores, as torch: a plain tensor may stand in for a
    # Parameter for the duration of the call)
    for store in (module._parameters, module._buffers):
        if attr in store:
            orig = store[attr]
            if tensor is not _MISSING:
                store[attr] = tensor
            else:
                del store[attr]
            return orig
    orig = getattr(module, attr) if hasattr(module, attr) else _MISSING
    if orig is not _MISSING and orig is not None and not isinstance(orig, Tensor):
        raise TypeError(_messages.attribute_not_a_tensor(attr, orig))
    if tensor is not _MISSING:
        setattr(module, attr, tensor)
    elif hasattr(module, attr):
        delattr(module, attr)
    return orig


def _swap_tensors_dict(module: Module, named: dict[str, Any]) -> dict[str, Any]:
    orig: dict[str, Any] = {}
    try:
        for name, tensor in named.items():
            orig[name] = _swap_tensor(module, name, tensor)
    except Exception:
        for name, tensor in orig.items():
            _swap_tensor(module, name, tensor)
        raise
    return orig


def _named_tensors(module: Module) -> Iterable[str]:
    yield from (n for n, _ in module.named_parameters(remove_duplicate=False))
    yield from (n for n, _ in module.named_buffers(remove_duplicate=False))


@contextlib.contextmanager
def _reparametrize_module(module: Module, parameters_and_buffers: dict[str, Tensor],
                          tie_weights: bool = False, strict: bool = False) -> Iterator[None]:
    if tie_weights:
        untied = _untie_named_tensors_map(module, parameters_and_buffers)
    else:
        untied = parameters_and_buffers
    if strict:
        valid = set(_named_tensors(module))
        keys = set(untied)
        missing, unexpected = sorted(valid - keys), sorted(keys - valid)
        error_msgs = []
        if unexpected:
            error_msgs.append(_messages.functional_call_unexpected_keys(unexpected))
        if missing:
            error_msgs.append(_messages.functional_call_missing_keys(missing))
        if error_msgs:
            raise RuntimeError(_messages.reparametrize_errors(module, error_msgs))
    orig: dict[str, Any] = {}
    try:
        orig = _swap_tensors_dict(module, untied)
        yield
    finally:
        new = _swap_tensors_dict(module, orig)
        # (an in-place or attribute update made by the call shows in the caller's dict)
        parameters_and_buffers.update(
            {k: new[k] for k in parameters_and_buffers if k in new}
        )


def _functional_call(module: Module, parameters_and_buffers: dict[str, Tensor],
                     args: Any = None, kwargs: dict[str, Any] | None = None, *,
                     tie_weights: bool = True, strict: bool = False) -> Any:
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights=tie_weights,
                               strict=strict):
        return module(*args, **kwargs)


def functional_call(module: Module, parameters_and_buffers: dict[str, Tensor],
                    args: Any = None, kwargs: dict[str, Any] | None = None, *,
                    tie_weights: bool = True, strict: bool = False) -> Any:
    """Call ``module(*args, **kwargs)`` with its parameters and buffers named in
    ``parameters_and_buffers`` replaced (deprecated in torch in favour of
    :func:`gradsum.func.functional_call`, with the same ``FutureWarning``).

    ``args``: a tuple, or one argument. ``tie_weights``: a value given for one of several
    tied names is used for all of them (different values for tied names raise
    ``ValueError``). ``strict``: every parameter and buffer must be given, and nothing else
    (``RuntimeError``).

    Example:
        >>> import warnings
        >>> import gradsum
        >>> from gradsum import nn
        >>> from gradsum.nn.utils.stateless import functional_call
        >>> lin = nn.Linear(1, 1)
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     y = functional_call(lin, {"weight": gradsum.full((1, 1), 2.0),
        ...                               "bias": gradsum.zeros(1)}, gradsum.ones(1, 1))
        >>> y.tolist()
        [[2.0]]
    """
    warnings.warn(
        _messages.stateless_functional_call_deprecated(),
        FutureWarning, stacklevel=2,
    )
    return _functional_call(module, parameters_and_buffers, args, kwargs,
                            tie_weights=tie_weights, strict=strict)
