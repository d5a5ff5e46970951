"""torch's ``torch.utils.data._utils.collate`` path: ``default_collate``, ``default_convert``,
``collate`` and its per-type functions and map, re-exported from gradsum's
``gradsum.utils.data._collate`` (the same objects).

Example:
    >>> from gradsum.utils.data._utils.collate import default_collate
    >>> default_collate([(1, 2.0), (3, 4.0)])
    [tensor([1, 3]), tensor([2., 4.], dtype=gradsum.float64)]
"""

from gradsum.utils.data._collate import (
    collate,
    collate_float_fn,
    collate_int_fn,
    collate_numpy_array_fn,
    collate_numpy_scalar_fn,
    collate_str_fn,
    collate_tensor_fn,
    default_collate,
    default_collate_err_msg_format,
    default_collate_fn_map,
    default_convert,
    np_str_obj_array_pattern,
)

__all__ = [
    "collate", "collate_float_fn", "collate_int_fn", "collate_numpy_array_fn",
    "collate_numpy_scalar_fn", "collate_str_fn", "collate_tensor_fn", "default_collate",
    "default_collate_err_msg_format", "default_collate_fn_map", "default_convert",
    "np_str_obj_array_pattern",
]
