"""``gradsum.func``: torch.func's ``functional_call`` (the function transforms themselves,
``grad`` / ``vmap`` / ..., are not part of gradsum).

Example:
    >>> import gradsum
    >>> from gradsum import nn
    >>> from gradsum.func import functional_call
    >>> lin = nn.Linear(2, 1, bias=False)
    >>> w = gradsum.ones(1, 2, requires_grad=True)
    >>> functional_call(lin, {"weight": w}, gradsum.tensor([[1.0, 2.0]])).sum().backward()
    >>> w.grad.tolist(), lin.weight.grad is None
    ([[1.0, 2.0]], True)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gradsum._tensor import Tensor
from gradsum.nn.modules.module import Module
from gradsum.nn.utils.stateless import _functional_call

__all__ = ["functional_call"]


def functional_call(module: Module,
                    parameter_and_buffer_dicts: dict[str, Tensor] | Sequence[dict[str, Tensor]],
                    args: Any = None, kwargs: dict[str, Any] | None = None, *,
                    tie_weights: bool = True, strict: bool = False) -> Any:
    """Call ``module(*args, **kwargs)`` with the parameters and buffers named in
    ``parameter_and_buffer_dicts`` (a dict, or a sequence of dicts with distinct keys)
    standing in for the module's own, which are put back afterwards (torch.func's).

    ``args``: a tuple, or one argument. ``tie_weights``: a value given for one of several
    tied names is used for all of them. ``strict``: every parameter and buffer must be
    given, and nothing else.

    Example:
        >>> import gradsum
        >>> from gradsum import nn
        >>> from gradsum.func import functional_call
        >>> lin = nn.Linear(1, 1)
        >>> functional_call(lin, ({"weight": gradsum.ones(1, 1)}, {"bias": gradsum.ones(1)}),
        ...                 gradsum.ones(1, 1)).tolist()
        [[2.0]]
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        parameters_and_buffers = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError(
                "Expected all elements of parameter_and_buffer_dicts to be dictionaries"
            )
        counts: dict[str, int] = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(
                f"{repeated} appeared in multiple dictionaries; behavior of functional call "
                "is ambiguous"
            )
        parameters_and_buffers = {k: v for d in parameter_and_buffer_dicts
                                  for k, v in d.items()}
    else:
        raise ValueError(
            "Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but "
            f"got {type(parameter_and_buffer_dicts)}"
        )
    return _functional_call(module, parameters_and_buffers, args, kwargs,
                            tie_weights=tie_weights, strict=strict)
