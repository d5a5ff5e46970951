"""Op-table entries for :mod:`gradsum.ops.indexing` (appended to :data:`OPINFOS` when the
package imports this module).
"""

from __future__ import annotations

import numpy as np

import gradsum

from .core import (
    DT,
    OPINFOS,
    ErrorCase,
    Fixed,
    NoGrad,
    Sample,
    _quiet,
    _t,
    _tf,
    distinct,
    idx,
    ints,
    mask,
    op,
    pos,
    rnd,
)

op("where", _t("where"), lambda rng: [
    Sample((mask(rng, 2, 3), rnd(rng, 2, 3), rnd(rng, 2, 3))),
    Sample((mask(rng, 2, 3), rnd(rng, 3), rnd(rng, 2, 1))),
    Sample((mask(rng, 3), rnd(rng, 2, 3), 0.5)),
    Sample((mask(rng, 2, 3), rnd(rng, ), NoGrad(rnd(rng, 3)))),
    Sample((mask(rng, 1, 3), ints(rng, 2, 3), ints(rng, 3))),
], np_ref=np.where, errors=lambda rng: [
    ErrorCase((mask(rng, 2, 3), rnd(rng, 4), rnd(rng, 2, 3)), shapes=((4,),)),
    ErrorCase((ints(rng, 3), rnd(rng, 3), rnd(rng, 3))),
])
op("index_select", _t("index_select"), lambda rng: [
    Sample((rnd(rng, 3, 4), 0, idx(0, 2, 2))), Sample((rnd(rng, 3, 4), -1, idx(3, 0, 3, 1))),
    Sample((rnd(rng, 3, 4), 1, idx())), Sample((rnd(rng), 0, idx(0))),
], errors=lambda rng: [ErrorCase((rnd(rng, 3, 4), 0, idx(3))),
                       ErrorCase((rnd(rng), 0, idx(0, 0))),
                       ErrorCase((rnd(rng, 3, 4), 0, idx(-1))),  # no wrapping (IndexError)
                       ErrorCase((rnd(rng, 3, 4), 1, idx(-1))),  # dim 1: RuntimeError
                       ErrorCase((rnd(rng, 2, 3, 4), 1, idx(5))),
                       ErrorCase((rnd(rng, 2, 3, 4), 2, idx(-2))),
                       ErrorCase((rnd(rng, 3, 4), 0, Fixed(np.array([0.0]))))])
op("index_add", _t("index_add"), lambda rng: [
    Sample((rnd(rng, 3, 4), 0, idx(0, 2, 0), rnd(rng, 3, 4))),
    Sample((rnd(rng, 3, 4), 1, idx(1, 1), rnd(rng, 3, 2)), {"alpha": 2.0}),
    Sample((rnd(rng, 3, 4), 0, idx(2), NoGrad(rnd(rng, 1, 4)))),
    Sample((NoGrad(rnd(rng, 3, 4)), 0, idx(2), rnd(rng, 1, 4))),
    Sample((rnd(rng), -1, idx(0), rnd(rng))),  # 0-d: one dim of size 1
], errors=lambda rng: [ErrorCase((rnd(rng, 3, 4), 0, idx(0, 1), rnd(rng, 3, 4)))])
op("gather", _t("gather"), lambda rng: [
    Sample((rnd(rng, 3, 4), 0, Fixed(np.array([[0, 2, 2, 1], [1, 1, 0, 0]])))),
    Sample((rnd(rng, 3, 4), 1, Fixed(np.array([[3, 3], [0, 1], [2, 2]])))),
    Sample((rnd(rng, 3, 4), -1, Fixed(np.array([[0], [1]])))),
], errors=lambda rng: [ErrorCase((rnd(rng, 3, 4), 0, Fixed(np.array([[5, 0]])))),
                       ErrorCase((rnd(rng, 3, 4), 1, Fixed(np.array([[-1], [0]])))),
                       ErrorCase((rnd(rng, 3, 4), 0, Fixed(np.array([0]))))])
op("scatter_add", _t("scatter_add"), lambda rng: [
    Sample((rnd(rng, 3, 4), 0, Fixed(np.array([[0, 2, 2, 1], [0, 1, 0, 0]])), rnd(rng, 2, 4))),
    Sample((rnd(rng, 3, 4), 1, Fixed(np.array([[3, 3], [0, 1], [2, 2]])), rnd(rng, 3, 2))),
    Sample((NoGrad(rnd(rng, 3, 4)), 1, Fixed(np.array([[3], [0]])), rnd(rng, 2, 1))),
], notes="a src larger than index gets zeros outside the index region in gradsum; torch "
   "refuses that backward ('invalid gradient'), so it is not sampled here",
   errors=lambda rng: [ErrorCase((rnd(rng, 3, 4), 0, Fixed(np.array([[3, 0]])), rnd(rng, 1, 2))),
                       ErrorCase((rnd(rng, 3, 4), 1, Fixed(np.array([[-1]])), rnd(rng, 1, 1))),
                       ErrorCase((rnd(rng, 3, 4), 0, Fixed(np.array([[0, 0]])), rnd(rng, 1, 1)))])
op("masked_fill", _t("masked_fill"), lambda rng: [
    Sample((rnd(rng, 2, 3), mask(rng, 2, 3), 0.5)), Sample((rnd(rng, 2, 3), mask(rng, 3), -1.0)),
    Sample((rnd(rng, 2, 3), mask(rng, 2, 3), rnd(rng))),
    Sample((ints(rng, 2, 3), mask(rng, 2, 3), 7)),
    Sample((rnd(rng, 1, 3), mask(rng, 2, 3), rnd(rng))),  # the mask broadcasts the input
], errors=lambda rng: [ErrorCase((rnd(rng, 2, 3), mask(rng, 4), 0.0), shapes=((4,),)),
                       ErrorCase((rnd(rng, 2, 3), ints(rng, 2, 3), 0.0))])
op("one_hot", _tf("one_hot"), lambda rng: [
    Sample((idx(0, 2, 1),)),
    Sample((idx(0, 2, 1), 4)), Sample((Fixed(np.array([[1, 0], [2, 2]])),)),
], differentiable=False, errors=lambda rng: [ErrorCase((idx(0, 3), 2)),
                                              ErrorCase((idx(-1, 0),))])
op("nonzero", _t("nonzero"), lambda rng: [
    Sample((mask(rng, 3, 4),)), Sample((ints(rng, 5),)), Sample((mask(rng, 2, 3),),
                                                                {"as_tuple": True}),
], differentiable=False)
op("masked_select", _t("masked_select"), lambda rng: [
    Sample((rnd(rng, 3, 4), mask(rng, 3, 4))), Sample((rnd(rng, 3, 4), mask(rng, 4))),
    Sample((rnd(rng, 4), mask(rng, 2, 3, 4))), Sample((rnd(rng, 2, 1), mask(rng, 3))),
    Sample((rnd(rng), mask(rng, 3))), Sample((ints(rng, 3, 2), mask(rng, 2))),
], errors=lambda rng: [
    ErrorCase((rnd(rng, 3), ints(rng, 3))), ErrorCase((rnd(rng, 3), mask(rng, 2))),
])


def _idx_arr(rng: np.random.Generator, hi: int, *shape: int) -> Fixed:
    return Fixed(rng.integers(0, hi, shape).astype(np.int64))
op("take_along_dim", _t("take_along_dim"), lambda rng: [
    Sample((rnd(rng, 3, 4), _idx_arr(rng, 4, 3, 1), 1)),
    Sample((rnd(rng, 3, 4), idx(0, 5, 11, 5))),
    Sample((rnd(rng, 3, 4), _idx_arr(rng, 3, 2, 1), 0)),
    Sample((rnd(rng, 3, 4), _idx_arr(rng, 4, 3, 6), -1)),
    Sample((rnd(rng, 3, 1), _idx_arr(rng, 3, 2, 4), 0)),
], errors=lambda rng: [
    ErrorCase((rnd(rng, 3, 4), idx(0, 1), 1)),
    ErrorCase((rnd(rng, 3, 4), Fixed(np.zeros((1, 1))), 1)),
    ErrorCase((rnd(rng, 3, 4), Fixed(np.zeros((2, 1), dtype=np.int64)), 1)),
])
for _name in ("triu_indices", "tril_indices"):
    op(_name, _t(_name), lambda rng: [
        Sample((3, 3)), Sample((3, 4, 1)), Sample((4, 3, -1)), Sample((0, 0)),
        Sample((3, 5, -7)), Sample((3, 3), {"dtype": DT("int32")}),
    ], differentiable=False, errors=lambda rng: [ErrorCase((-1, 4)), ErrorCase((3, -2))])

# -- the *_scatter family -----------------------------------------------------------------------
op("select_scatter", _t("select_scatter"), lambda rng: [
    Sample((rnd(rng, 3, 4), rnd(rng, 4), 0, 1)), Sample((rnd(rng, 3, 4), rnd(rng, 3), 1, -1)),
    Sample((rnd(rng, 3), rnd(rng), 0, 2)), Sample((rnd(rng, 2, 3), NoGrad(rnd(rng, 3)), 0, 0)),
], errors=lambda rng: [ErrorCase((rnd(rng, 3, 4), rnd(rng, 3), 0, 1)),
                       ErrorCase((rnd(rng, 3, 4), rnd(rng, 4), 0, 3))])
op("slice_scatter", _t("slice_scatter"), lambda rng: [
    Sample((rnd(rng, 3, 4), rnd(rng, 3, 2), 1, 0, 4, 2)), Sample((rnd(rng, 3, 4), rnd(rng, 3, 4))),
    Sample((rnd(rng, 3, 4), rnd(rng, 3, 1), 1, -1)), Sample((rnd(rng, 5), rnd(rng, 2), 0, 1, 3)),
    Sample((rnd(rng, 4, 2), rnd(rng, 0, 2), 0, 3, 1)),
], errors=lambda rng: [ErrorCase((rnd(rng, 3, 4), rnd(rng, 3, 3), 1, 0, 4, 2))])
op("diagonal_scatter", _t("diagonal_scatter"), lambda rng: [
    Sample((rnd(rng, 3, 4), rnd(rng, 3))), Sample((rnd(rng, 3, 4), rnd(rng, 3), 1)),
    Sample((rnd(rng, 3, 4), rnd(rng, 2), -1)), Sample((rnd(rng, 2, 3, 3), rnd(rng, 3, 2), 0, 0, 2)),
], errors=lambda rng: [ErrorCase((rnd(rng, 3, 4), rnd(rng, 3), 2))])
op("argwhere", _t("argwhere"), lambda rng: [
    Sample((ints(rng, 3, 4, lo=0, hi=2),)), Sample((Fixed(np.array(2.0)),)),
], differentiable=False)
op("index_copy", _t("index_copy"), lambda rng: [
    Sample((rnd(rng, 3, 4), 0, idx(2, 0), rnd(rng, 2, 4))),
    Sample((rnd(rng, 3, 4), 1, idx(3), rnd(rng, 3, 1))),
    Sample((rnd(rng, 3, 4), -1, idx(1, 1), rnd(rng, 3, 2)), no_gradcheck="a repeated index: "
           "torch hands g to every copy, not the numerical (last-wins) derivative"),
    Sample((rnd(rng, 4), 0, idx(3), rnd(rng))), Sample((rnd(rng), 0, idx(0), rnd(rng, 1))),
    Sample((rnd(rng, 3, 2), 0, idx(1), NoGrad(rnd(rng, 1, 2)))),
    Sample((ints(rng, 3), 0, idx(0, 2), ints(rng, 2))),
], errors=lambda rng: [
    ErrorCase((rnd(rng, 3, 4), 0, idx(3), rnd(rng, 1, 4))),
    ErrorCase((rnd(rng, 3, 4), 0, idx(0), rnd(rng, 1, 3))),
    ErrorCase((rnd(rng, 3, 4), 0, idx(0, 1), rnd(rng, 1, 4))),
    ErrorCase((rnd(rng, 3, 4), 0, Fixed(np.array([0], np.int32)), rnd(rng, 1, 4))),
])
op("index_fill", _t("index_fill"), lambda rng: [
    Sample((rnd(rng, 3, 4), 0, idx(2, 0), 1.5)), Sample((rnd(rng, 3, 4), -1, idx(1), -2.0)),
    Sample((rnd(rng, 3, 4), 1, idx(0, 2, 0), rnd(rng))),
    Sample((rnd(rng, 3, 4), 0, idx(1), NoGrad(rnd(rng)))),
    Sample((NoGrad(rnd(rng, 3, 4)), 1, idx(3, 1), rnd(rng))),
    Sample((rnd(rng), 0, idx(0), rnd(rng))), Sample((rnd(rng, 2, 3), 1, idx(-1), 0.5)),
    Sample((ints(rng, 4), 0, idx(1, 3), 7)),
], errors=lambda rng: [
    ErrorCase((rnd(rng, 3, 4), 0, idx(3), 1.0)),
    ErrorCase((rnd(rng, 3, 4), 0, idx(0), rnd(rng, 1))),
    ErrorCase((rnd(rng, 3, 4), 0, Fixed(np.array([0], np.int32)), 1.0)),
])


# -- index_reduce ------------------------------------------------------------------------------
def _ir_samples(rng: np.random.Generator) -> list[Sample]:
    idx = Fixed(np.array([0, 2, 0, 4]))
    out = []
    for red in ("prod", "mean", "amax", "amin"):
        gen = pos if red == "prod" else distinct
        for inc in (True, False):
            out.append(Sample((gen(rng, 5, 3), 0, idx, gen(rng, 4, 3), red),
                              {"include_self": inc}))
    out.append(Sample((pos(rng, 3, 5), 1, idx, pos(rng, 3, 4), "mean")))
    out.append(Sample((Fixed(np.arange(6).reshape(3, 2)), 0, Fixed(np.array([0, 0])),
                       Fixed(np.array([[3, 4], [5, 7]])), "mean")))
    return out


op("index_reduce", _quiet(_t("index_reduce")), _ir_samples, errors=lambda rng: [
    ErrorCase((rnd(rng, 3, 2), 0, Fixed(np.array([0])), rnd(rng, 1, 2), "sum")),
    ErrorCase((rnd(rng, 3, 2), 0, Fixed(np.array([0, 1])), rnd(rng, 1, 2), "prod")),
    ErrorCase((rnd(rng, 3, 2), 0, Fixed(np.array([0.0])), rnd(rng, 1, 2), "prod")),
])
OPINFOS[-1].op = _quiet(gradsum.index_reduce)
op("put", _t("put"), lambda rng: [
    Sample((rnd(rng, 2, 3), idx(0, 4, -1), rnd(rng, 3))),
    Sample((rnd(rng, 2, 3), idx(0, 4, 4), rnd(rng, 3), True)),
    Sample((rnd(rng, 2, 3), Fixed(np.array([[1], [2]])), rnd(rng, 2, 1))),
    Sample((rnd(rng, 4), idx(1), NoGrad(rnd(rng, 1)))),
    Sample((ints(rng, 4), idx(1, 2), ints(rng, 2))),
], errors=lambda rng: [
    ErrorCase((rnd(rng, 3), idx(5), rnd(rng, 1))), ErrorCase((rnd(rng, 3), idx(0, 1), rnd(rng, 1))),
    ErrorCase((rnd(rng, 3), idx(0), ints(rng, 1))),
])
op("take", _t("take"), lambda rng: [
    Sample((rnd(rng, 3, 4), idx(0, 5, 11, 5))), Sample((rnd(rng, 3, 4), idx(-1, -12))),
    Sample((rnd(rng, 2, 3), Fixed(np.array([[0, 1], [5, 5]])))), Sample((rnd(rng), idx(0))),
    Sample((ints(rng, 4), idx(3, 1))), Sample((rnd(rng, 3), Fixed(np.zeros(0, np.int64)))),
], errors=lambda rng: [ErrorCase((rnd(rng, 3, 4), idx(20))),
                       ErrorCase((rnd(rng, 3, 4), Fixed(np.array([1.0]))))])


def _sr_index(rng: np.random.Generator, n: int, *shape: int) -> Fixed:
    return Fixed(rng.integers(0, n, shape).astype(np.int64))


def _scatter_reduce_samples(rng: np.random.Generator) -> list[Sample]:
    out = []
    for red in ("sum", "mean", "amax", "amin", "prod"):
        gen = pos if red == "prod" else distinct
        for inc in (True, False):
            out.append(Sample((gen(rng, 3, 4), 0, _sr_index(rng, 3, 5, 4), gen(rng, 5, 4), red),
                              {"include_self": inc}))
        out.append(Sample((gen(rng, 3, 4), 1, _sr_index(rng, 4, 3, 2), gen(rng, 3, 2), red)))
        # (src larger than index: torch's backward fails its own shape check; forward only)
        out.append(Sample((gen(rng, 3, 4), 1, _sr_index(rng, 4, 3, 2), gen(rng, 3, 3), red),
                          forward_only=True))
        out.append(Sample((gen(rng, 5), 0, _sr_index(rng, 5, 7), NoGrad(gen(rng, 7)), red),
                          {"include_self": False}))
    out.append(Sample((ints(rng, 5), 0, _sr_index(rng, 5, 7), ints(rng, 7), "amax")))
    out.append(Sample((ints(rng, 5), 0, _sr_index(rng, 5, 7), ints(rng, 7), "mean"),
                      {"include_self": False}))
    return out


op("scatter_reduce", _t("scatter_reduce"), _scatter_reduce_samples, errors=lambda rng: [
    ErrorCase((rnd(rng, 3), 0, idx(0), rnd(rng, 3), "foo")),
    ErrorCase((rnd(rng, 3), 0, idx(5), rnd(rng, 3), "sum")),
    ErrorCase((rnd(rng, 3), 0, Fixed(np.array([0.0])), rnd(rng, 3), "sum")),
])
