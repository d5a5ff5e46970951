"""torch's ``torch.nn.modules.utils``: the argument helpers custom layers import from there
(``_single``, ``_pair``, ``_triple``, ``_quadruple``, ``_ntuple``, ``_reverse_repeat_tuple``,
``_list_with_default``) and ``consume_prefix_in_state_dict_if_present``, with torch's rules.

Example:
    >>> from gradsum.nn.modules.utils import _pair, consume_prefix_in_state_dict_if_present
    >>> _pair(3), _pair([1, 2])
    ((3, 3), (1, 2))
    >>> sd = {"module.weight": 1}
    >>> consume_prefix_in_state_dict_if_present(sd, "module.")
    >>> sd
    {'weight': 1}
"""

from __future__ import annotations

import collections.abc
from collections.abc import Callable
from itertools import repeat
from typing import Any

from gradsum.nn import _messages

__all__ = ["consume_prefix_in_state_dict_if_present"]


def _ntuple(n: int, name: str = "parse") -> Callable[[Any], tuple[Any, ...]]:
    """A parser: an iterable becomes a tuple as it is, anything else is repeated ``n`` times
    (no length check, no int conversion: torch's)."""

    def parse(x: Any) -> tuple[Any, ...]:
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t: Any, n: int) -> tuple[Any, ...]:
    """``t`` reversed, each element repeated ``n`` times: a Conv/Pool padding as ``F.pad``
    takes it (``(1, 2)`` -> ``(2, 2, 1, 1)``)."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size: Any, defaults: list[int]) -> Any:
    """An adaptive pooling output size with each ``None`` replaced by the matching trailing
    entry of ``defaults`` (an int is returned as is)."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(_messages.input_dimension_at_least(out_size))
    return [v if v is not None else d
            for v, d in zip(out_size, defaults[-len(out_size):], strict=False)]


def consume_prefix_in_state_dict_if_present(state_dict: dict[str, Any], prefix: str) -> None:
    """Strip ``prefix`` from the keys of ``state_dict`` in place (and from its
    ``_metadata``), as torch does: how a checkpoint of a ``DataParallel`` /
    ``DistributedDataParallel`` model (``"module."`` keys) loads into the bare model."""
    for key in list(state_dict.keys()):
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is not None:
        for key in list(metadata.keys()):
            # '' is the wrapper's own entry (kept); 'module' (the prefix without its dot) and
            # 'module.xx' are the wrapped model's
            if len(key) == 0:
                continue
            if key == prefix.replace(".", "") or key.startswith(prefix):
                metadata[key[len(prefix):]] = metadata.pop(key)
