"""The op test table: one :class:`OpInfo` per public op of :data:`gradsum.ops.OPS`, assembled
into one :data:`op_db` from one definition module per ops family (as PyTorch's
``opinfo/definitions/<family>.py``).

:mod:`.core` holds the machinery (the entry and sample types, the generators, the conversion
of a sample to gradsum or torch); each family module (``arithmetic``, ``pointwise``, ...,
``linalg``, ``inplace``) appends its entries to :data:`OPINFOS` when this package imports it.

Example:
    >>> from ops.opinfo import by_name, op_db
    >>> by_name()["add"].name in {info.name for info in op_db}
    True
"""

from __future__ import annotations

from . import (  # noqa: F401  (each appends its entries to OPINFOS, in this order)
    activation,
    arithmetic,
    blas,
    comparison,
    indexing,
    inplace,
    linalg,
    pointwise,
    rearrange,
    reduction,
    scan,
    sorting,
    special,
    views,
)
from .core import (
    DT,
    OPINFOS,
    ErrorCase,
    Fixed,
    NoGrad,
    OpInfo,
    Sample,
    away,
    by_name,
    convert,
    distinct,
    flat_outputs,
    grad_leaves,
    has_float_operand,
    idx,
    ints,
    mask,
    missing_entries,
    off_grid,
    pos,
    rnd,
    to_lib,
    walk_tensors,
)

#: the whole table (torch's name for it); the same list as :data:`OPINFOS`
op_db = OPINFOS

__all__ = [
    "DT", "OPINFOS", "ErrorCase", "Fixed", "NoGrad", "OpInfo", "Sample", "away", "by_name",
    "convert", "distinct", "flat_outputs", "grad_leaves", "has_float_operand", "idx", "ints",
    "mask", "missing_entries", "off_grid", "op_db", "pos", "rnd", "to_lib", "walk_tensors",
]
