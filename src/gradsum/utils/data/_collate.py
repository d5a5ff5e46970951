"""``default_collate`` / ``default_convert``: samples to batches, with torch's type rules.

``default_collate`` stacks gradsum tensors (``gradsum.stack``, so a batch of tensors that
require grad stays in the graph), turns NumPy arrays and scalars into tensors of their
dtype, Python floats into float64, ints into int64 and bools into bool tensors, keeps
strings and bytes as they come (the batch's list, or a tuple inside a
transposed sample), and recurses into dicts (by key), namedtuples (same type),
tuples (a list, as torch) and other sequences (same type when it can be rebuilt).

Example:
    >>> from collections import namedtuple
    >>> from gradsum.utils.data import default_collate
    >>> default_collate([(0, 1.5, "a"), (2, 3.0, "b")])
    [tensor([0, 2]), tensor([1.5000, 3.0000], dtype=gradsum.float64), ('a', 'b')]
    >>> Point = namedtuple("Point", ["x", "y"])
    >>> default_collate([Point(0, True), Point(1, False)])
    Point(x=tensor([0, 1]), y=tensor([ True, False]))
    >>> default_collate([{"a": 0}, {"a": 100}])
    {'a': tensor([  0, 100])}
"""

from __future__ import annotations

import collections.abc
import copy
import re
from collections.abc import Callable
from typing import Any

from gradsum._backend import xp
from gradsum._tensor import Tensor

__all__ = ["collate", "default_collate", "default_collate_fn_map", "default_convert"]

np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
    "found {}"
)

CollateFnMap = dict[type | tuple[type, ...], Callable[..., Any]]


def default_convert(data: Any) -> Any:
    """Convert the NumPy arrays and scalars inside ``data`` to tensors (the collate function
    of a ``DataLoader`` with ``batch_size=None``); tuples become lists, as in torch.

    Example:
        >>> import numpy as np
        >>> default_convert((np.array([0, 1]), 2, "s"))
        [tensor([0, 1]), 2, 's']
    """
    import gradsum

    elem_type = type(data)
    if isinstance(data, Tensor):
        return data
    if (elem_type.__module__ == xp.__name__ and elem_type.__name__ != "str_"
            and elem_type.__name__ != "string_"):
        # arrays of strings or objects are left alone
        if (elem_type.__name__ == "ndarray"
                and np_str_obj_array_pattern.search(data.dtype.str) is not None):
            return data
        return gradsum.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update({key: default_convert(data[key]) for key in data})
                return clone
            return elem_type({key: default_convert(data[key]) for key in data})
        except TypeError:  # the mapping type cannot be rebuilt
            return {key: default_convert(data[key]) for key in data}
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]  # (torch: backwards compatibility)
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                seq = copy.copy(data)
                for i, d in enumerate(data):
                    seq[i] = default_convert(d)
                return seq
            return elem_type([default_convert(d) for d in data])
        except TypeError:  # the sequence type cannot be rebuilt
            return [default_convert(d) for d in data]
    return data


def collate(batch: Any, *, collate_fn_map: CollateFnMap | None = None) -> Any:
    """Collate ``batch`` (a list of samples), looking up each element type in
    ``collate_fn_map`` (exact type first, then ``isinstance`` in insertion order) and
    recursing into mappings, namedtuples and sequences.

    Example:
        >>> collate([[1, 2], [3, 4]], collate_fn_map={int: lambda b, **_: sum(b)})
        [4, 6]
    """
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = copy.copy(elem)
                clone.update({key: collate([d[key] for d in batch],
                                           collate_fn_map=collate_fn_map) for key in elem})
                return clone
            return elem_type({key: collate([d[key] for d in batch],
                                           collate_fn_map=collate_fn_map) for key in elem})
        except TypeError:  # the mapping type cannot be rebuilt
            return {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map)
                    for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map)
                           for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            sizes = [len(e) for e in batch]
            raise RuntimeError(f"each element in list of batch should be of equal size; got "
                               f"sizes {sizes}. Pad the samples, or pass a collate_fn.")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [collate(samples, collate_fn_map=collate_fn_map)
                    for samples in transposed]  # (torch: backwards compatibility)
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                seq = copy.copy(elem)
                for i, samples in enumerate(transposed):
                    seq[i] = collate(samples, collate_fn_map=collate_fn_map)
                return seq
            return elem_type([collate(samples, collate_fn_map=collate_fn_map)
                              for samples in transposed])
        except TypeError:  # the sequence type cannot be rebuilt
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch: Any, *, collate_fn_map: CollateFnMap | None = None) -> Any:
    import gradsum

    return gradsum.stack(list(batch), 0)


def collate_numpy_array_fn(batch: Any, *, collate_fn_map: CollateFnMap | None = None) -> Any:
    import gradsum

    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([gradsum.as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch: Any, *, collate_fn_map: CollateFnMap | None = None) -> Any:
    import gradsum

    return gradsum.as_tensor(list(batch))


def collate_float_fn(batch: Any, *, collate_fn_map: CollateFnMap | None = None) -> Any:
    import gradsum

    return gradsum.tensor(list(batch), dtype=gradsum.float64)


def collate_int_fn(batch: Any, *, collate_fn_map: CollateFnMap | None = None) -> Any:
    import gradsum

    return gradsum.tensor(list(batch))


def collate_str_fn(batch: Any, *, collate_fn_map: CollateFnMap | None = None) -> Any:
    return batch


default_collate_fn_map: CollateFnMap = {
    Tensor: collate_tensor_fn,
    xp.ndarray: collate_numpy_array_fn,
    (xp.bool_, xp.number, xp.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch: Any) -> Any:
    """Put a list of samples together into a batch with a new leading dimension (the
    collate function of a ``DataLoader`` with a batch size): torch's rules (see the module
    docstring), gradsum tensors out.

    Example:
        >>> import gradsum
        >>> default_collate([gradsum.zeros(2), gradsum.ones(2)]).shape
        (2, 2)
        >>> default_collate([[0, 1], [2, 3]])
        [tensor([0, 2]), tensor([1, 3])]
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)
