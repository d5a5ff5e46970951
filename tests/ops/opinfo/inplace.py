"""Op-table entries for :mod:`gradsum.ops.inplace` (appended to :data:`OPINFOS` when the
package imports this module).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import gradsum.ops as G

from .core import (
    OPINFOS,
    ErrorCase,
    NoGrad,
    OpInfo,
    Sample,
    _g_inplace,
    _t_index_put,
    _t_inplace,
    away,
    idx,
    ints,
    mask,
    off_grid,
    pos,
    rnd,
)


# in-place (applied to a non-leaf clone of the first operand) ---------------------------------
def _inplace_op(name: str, samples: Callable[..., list[Sample]], **kw: Any) -> OpInfo:
    info = OpInfo(name, _g_inplace(name), _t_inplace(name), samples, **kw)
    OPINFOS.append(info)
    return info


def _inplace_binary(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((rnd(rng, 2, 3), rnd(rng, 2, 3))), Sample((rnd(rng, 2, 3), rnd(rng, 3))),
        Sample((rnd(rng, 2, 3), 1.5)), Sample((rnd(rng, 2, 3), NoGrad(away(rng, 1, 3)))),
        Sample((NoGrad(rnd(rng, 2, 3)), away(rng, 3))), Sample((rnd(rng, 2, 3), rnd(rng))),
    ]


_inplace_errors = lambda rng: [
    ErrorCase((rnd(rng, 3), rnd(rng, 2, 3)), shapes=((3,), (2, 3))),
    ErrorCase((ints(rng, 3), rnd(rng, 3))),
]
_inplace_op("add_", _inplace_binary, errors=_inplace_errors)
_inplace_op("sub_", _inplace_binary, errors=_inplace_errors)
_inplace_op("mul_", _inplace_binary, errors=_inplace_errors)
_inplace_op("div_", _inplace_binary, errors=_inplace_errors)
_inplace_op("zero_", lambda rng: [Sample((rnd(rng, 2, 3),))])
_inplace_op("fill_", lambda rng: [Sample((rnd(rng, 2, 3), 1.5)), Sample((rnd(rng, 2, 3), rnd(rng))),
                                  Sample((NoGrad(rnd(rng, 2, 3)), rnd(rng)))])
_inplace_op("copy_", lambda rng: [
    Sample((rnd(rng, 2, 3), rnd(rng, 2, 3))), Sample((rnd(rng, 2, 3), rnd(rng, 3))),
    Sample((NoGrad(rnd(rng, 2, 3)), rnd(rng, 1, 3))), Sample((rnd(rng, 2, 3), ints(rng, 3))),
], errors=lambda rng: [ErrorCase((rnd(rng, 2, 3), rnd(rng, 4)), shapes=((2, 3), (4,)))])
_inplace_op("clamp_", lambda rng: [
    Sample((off_grid(rng, 2, 3), -0.5, 0.5)), Sample((off_grid(rng, 2, 3),), {"min": 0.0}),
], aliases=("clip_",), no_gradgrad="piecewise linear")
_inplace_op("masked_fill_", lambda rng: [
    Sample((rnd(rng, 2, 3), mask(rng, 2, 3), 0.5)),
    Sample((rnd(rng, 2, 3), mask(rng, 3), rnd(rng))),
])
_inplace_unary = lambda rng: [Sample((away(rng, 2, 3),)), Sample((away(rng),))]
_inplace_positive = lambda rng: [Sample((pos(rng, 2, 3),)), Sample((pos(rng),))]
for _name in ("exp_", "sin_", "cos_", "tanh_", "sigmoid_", "neg_", "erf_"):
    _inplace_op(_name, _inplace_unary)
for _name in ("log_", "log1p_", "sqrt_", "rsqrt_", "reciprocal_"):
    _inplace_op(_name, _inplace_positive)
for _name in ("relu_", "abs_"):
    _inplace_op(_name, _inplace_unary, no_gradgrad="piecewise linear")
for _name in ("sign_", "floor_", "ceil_", "round_", "trunc_"):
    _inplace_op(_name, lambda rng: [Sample((off_grid(rng, 2, 3),))],
                no_gradgrad="piecewise constant")
_inplace_op("pow_", lambda rng: [Sample((pos(rng, 2, 3), 2.0)), Sample((pos(rng, 2, 3), 0.5)),
                                 Sample((pos(rng, 2, 3), pos(rng, 3)))],
            errors=lambda rng: [ErrorCase((ints(rng, 3), 0.5))])
OPINFOS.append(OpInfo("index_put", G.OPS["index_put"], _t_index_put, lambda rng: [
    Sample((rnd(rng, 3, 4), idx(0, 2), rnd(rng, 2, 4))),
    Sample((rnd(rng, 3, 4), mask(rng, 3, 4), NoGrad(np.array(1.5)))),
    Sample((rnd(rng, 3, 4), (idx(0, 2), idx(1, 3)), rnd(rng, 2))),
    Sample((rnd(rng, 3, 4), idx(1), rnd(rng, 4))),
], notes="gradsum's index_put takes a __getitem__ key; torch's takes a tuple of index tensors"))
