"""``skip_init``: build a module without running its parameter initialisation (torch's
``nn.utils.skip_init``).

Example:
    >>> import gradsum
    >>> from gradsum import nn
    >>> from gradsum.nn.utils import skip_init
    >>> state = gradsum.get_rng_state()
    >>> m = skip_init(nn.Linear, 3, 2)
    >>> m.weight.shape, gradsum.get_rng_state() == state
    ((2, 3), True)
"""

from __future__ import annotations

import inspect
from typing import Any

from gradsum._random import get_rng_state, set_rng_state
from gradsum.nn import _messages
from gradsum.nn.modules.module import Module

__all__ = ["skip_init"]


def skip_init(module_cls: type[Module], *args: Any, **kwargs: Any) -> Module:
    """An instance of ``module_cls(*args, **kwargs)`` whose parameters and buffers hold
    arbitrary values, to be filled by the caller.

    torch builds the module on the ``meta`` device and allocates uninitialised memory; gradsum
    has no meta device, so the module is built normally and the random generator is put
    back as it was: the generator advances exactly as torch's does (not at all), and the
    values are arbitrary from the caller's point of view, as torch's.

    Raises:
        RuntimeError: ``module_cls`` is not a Module class, or its constructor takes no
            ``device`` argument (torch's requirement).
    """
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(_messages.expected_module(module_cls))
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError(_messages.module_support_device_arg_skip())
    kwargs["device"] = kwargs.pop("device", "cpu")
    state = get_rng_state()
    try:
        return module_cls(*args, **kwargs)
    finally:
        set_rng_state(state)
