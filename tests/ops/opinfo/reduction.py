"""Op-table entries for :mod:`gradsum.ops.reduction` (appended to :data:`OPINFOS` when the
package imports this module).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .core import (
    DT,
    ErrorCase,
    Fixed,
    NoGrad,
    Sample,
    _t,
    _t_max,
    _t_min,
    _ties,
    away,
    distinct,
    idx,
    ints,
    mask,
    op,
    rnd,
)


# reductions -----------------------------------------------------------------------------------
def _reduce_samples(gen: Callable[..., np.ndarray], dims: bool = True, dtype_kw: bool = False
                    ) -> Callable[[np.random.Generator], list[Sample]]:
    def samples(rng: np.random.Generator) -> list[Sample]:
        s = [Sample((gen(rng, 2, 3),)), Sample((gen(rng),)), Sample((gen(rng, 4),))]
        if dims:
            s += [
                Sample((gen(rng, 2, 3), 1)), Sample((gen(rng, 2, 3), -1, True)),
                Sample((gen(rng, 2, 3, 2),), {"dim": (0, 2)}),
                Sample((gen(rng, 2, 3, 2),), {"dim": (-1, 0), "keepdim": True}),
                Sample((gen(rng, 2, 3), 0), {"keepdim": False}),
                Sample((gen(rng), 0)),
            ]
        return s

    return samples


op("sum", _t("sum"), lambda rng: _reduce_samples(rnd)(rng) + [
    Sample((rnd(rng, 0, 3),)), Sample((rnd(rng, 0, 3), 1)), Sample((rnd(rng, 2, 0), 1)),
    Sample((ints(rng, 2, 3),)), Sample((Fixed(np.array([True, True, False])),)),
    Sample((Fixed(np.array([1, 2], dtype=np.int32)), 0)),
    Sample((rnd(rng, 2, 3),), {"dtype": DT("float64")}),
    Sample((rnd(rng, 2, 3), ())), Sample((rnd(rng, 2, 3), [], True)),  # () / []: all dims
], np_ref=None, errors=lambda rng: [
    ErrorCase((rnd(rng, 2, 3), 2)), ErrorCase((rnd(rng, 2, 3), (0, 0))),
    ErrorCase((rnd(rng), 1)), ErrorCase((rnd(rng), (0, -1)))])  # a 0-d tensor's dims
op("mean", _t("mean"), lambda rng: _reduce_samples(rnd)(rng) + [
    Sample((rnd(rng, 2, 0), 0)),
    Sample((ints(rng, 2, 3),), {"dtype": DT("float32")}, forward_only=True),
], errors=lambda rng: [ErrorCase((ints(rng, 2, 3),)), ErrorCase((rnd(rng, 2, 3), -3))])


def _var_samples(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((rnd(rng, 2, 3),)), Sample((rnd(rng, 2, 3), 1)),
        Sample((rnd(rng, 2, 3), -1), {"keepdim": True}),
        Sample((rnd(rng, 2, 3),), {"dim": 0, "correction": 0}),
        Sample((rnd(rng, 3, 4),), {"dim": (0, 1), "correction": 2}),
        Sample((rnd(rng, 2, 3), 1, False)),          # unbiased=False
        Sample((rnd(rng, 4),), {"unbiased": True}),
        Sample((rnd(rng, 1),), forward_only=True),   # n - correction = 0: nan/inf
    ]


op("var", _t("var"), _var_samples, errors=lambda rng: [ErrorCase((ints(rng, 3),))])
op("std", _t("std"), _var_samples, errors=lambda rng: [ErrorCase((ints(rng, 3),))])


def _ext_samples(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((distinct(rng, 2, 3),)), Sample((distinct(rng, 2, 3), 1)),
        Sample((distinct(rng, 2, 3), -1, True)), Sample((distinct(rng, 2, 3, 2), (0, 2))),
        Sample((distinct(rng),)), Sample((ints(rng, 2, 3), 0)),
        Sample((NoGrad(np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.5]])), 1), forward_only=True),
    ]


op("amax", _t("amax"), lambda rng: _ext_samples(rng) + [Sample((rnd(rng, 2, 0), 0))],
   errors=lambda rng: [
       ErrorCase((rnd(rng, 0, 3),)), ErrorCase((rnd(rng, 2, 3), 5)),
       ErrorCase((rnd(rng, 2, 0), 1)), ErrorCase((rnd(rng), 1))])
op("amin", _t("amin"), lambda rng: _ext_samples(rng) + [Sample((rnd(rng, 0, 3), 1))],
   errors=lambda rng: [ErrorCase((rnd(rng, 0, 3),)), ErrorCase((rnd(rng, 0, 3), -2))])


def _max_samples(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((distinct(rng, 2, 3),)), Sample((distinct(rng, 2, 3), 1)),
        Sample((distinct(rng, 2, 3), -1, True)), Sample((distinct(rng, 2, 3),), {"dim": 0}),
        Sample((distinct(rng), 0)), Sample((distinct(rng, 2, 3), distinct(rng, 3))),
        Sample((ints(rng, 2, 3), 1)), Sample((ints(rng, 2, 3),)),
    ]


op("max", _t_max, _max_samples, errors=lambda rng: [
    ErrorCase((rnd(rng, 0, 3),)), ErrorCase((rnd(rng, 0, 3), 0)), ErrorCase((rnd(rng, 2), 1))])
op("min", _t_min, _max_samples, errors=lambda rng: [ErrorCase((rnd(rng, 0, 3),))])
for _name in ("argmax", "argmin"):
    op(_name, _t(_name), lambda rng: [
        Sample((distinct(rng, 2, 3),)), Sample((distinct(rng, 2, 3), 1)),
        Sample((distinct(rng, 2, 3), -1, True)), Sample((distinct(rng, 2, 3),), {"keepdim": True}),
        Sample((distinct(rng),)), Sample((ints(rng, 2, 4), 0)),
        Sample((NoGrad(np.array([1.0, 3.0, 3.0])),)),   # ties: first index
        Sample((distinct(rng), 0)), Sample((distinct(rng), -1, True)),  # 0-d with a dim
    ], differentiable=False, errors=lambda rng: [
        ErrorCase((rnd(rng, 2, 3), 2)), ErrorCase((rnd(rng, 0),)),
        ErrorCase((rnd(rng, 2, 0), 1)), ErrorCase((mask(rng, 3),))])
op("logsumexp", _t("logsumexp"), lambda rng: [
    Sample((rnd(rng, 2, 3), 1)), Sample((rnd(rng, 2, 3), -1, True)),
    Sample((rnd(rng, 2, 3, 2), (0, 2))), Sample((rnd(rng), 0)),
    Sample((rnd(rng, 3) * 100, 0)),
    Sample((rnd(rng, 2, 0), 1)), Sample((rnd(rng, 2, 3), ()), {"keepdim": True}),
], errors=lambda rng: [ErrorCase((rnd(rng, 2, 3), 3)), ErrorCase((rnd(rng), 1))])
op("prod", _t("prod"), lambda rng: [
    Sample((away(rng, 2, 3),)), Sample((away(rng, 2, 3), 1)), Sample((away(rng, 2, 3), -1, True)),
    Sample((away(rng),)), Sample((ints(rng, 2, 3),)), Sample((ints(rng, 2, 3), 0)),
    Sample((NoGrad(np.array([[1.0, 0.0, 3.0], [2.0, 0.0, 0.0]])), 1), forward_only=True),
    Sample((np.array([[1.5, 0.0, 3.0], [2.0, -1.0, 0.5]]), 1), no_gradcheck="zeros (first "
           "order checked by parity)"),
], errors=lambda rng: [ErrorCase((rnd(rng, 2, 3), (0,))), ErrorCase((rnd(rng), 1))])


def _norm_samples(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((away(rng, 2, 3),)), Sample((away(rng, 2, 3), 2, 1)),
        Sample((away(rng, 2, 3),), {"p": 1, "dim": -1, "keepdim": True}),
        Sample((distinct(rng, 2, 3),), {"p": math.inf, "dim": 1}),
        Sample((distinct(rng, 2, 3),), {"p": -math.inf}),
        Sample((away(rng, 2, 3),), {"p": 3, "dim": 0}),
        Sample((away(rng, 4),), {"p": 0.5}),
        Sample((away(rng, 2, 3),), {"p": "fro"}),
        Sample((away(rng, 2, 3),), {"p": 0}, forward_only=True),
        Sample((NoGrad(np.zeros((2, 3))),), {"dim": 1}, forward_only=True),
    ]


op("norm", _t("norm"), lambda rng: _norm_samples(rng) + [
    Sample((rnd(rng, 2, 0),), {"p": math.inf, "dim": 0}),
    Sample((away(rng, 2, 3),), {"dim": ()}),
], errors=lambda rng: [
    ErrorCase((ints(rng, 3),)), ErrorCase((rnd(rng, 2, 0),), {"p": math.inf, "dim": 1}),
    ErrorCase((rnd(rng, 2, 0),), {"p": -math.inf})])
for _name in ("all", "any"):
    op(_name, _t(_name), lambda rng: [
        Sample((mask(rng, 2, 3),)), Sample((mask(rng, 2, 3), 1)),
        Sample((mask(rng, 2, 3), 0, True)), Sample((ints(rng, 2, 3, lo=0, hi=2), 1)),
        Sample((Fixed(np.zeros((0, 2), dtype=bool)),)),
        Sample((mask(rng), 0)), Sample((mask(rng), -1, True)),  # a 0-d tensor's dim
    ], differentiable=False)
op("count_nonzero", _t("count_nonzero"), lambda rng: [
    Sample((ints(rng, 2, 3, lo=0, hi=2),)), Sample((ints(rng, 2, 3, lo=0, hi=2), 1)),
    Sample((mask(rng, 2, 3),), {"dim": (0, 1)}),
    Sample((mask(rng, 2, 3),), {"dim": ()}), Sample((ints(rng), -1)),  # (): all dims
], differentiable=False, np_ref=None)

# -- reductions with nan ------------------------------------------------------------------------
def _with_nan(rng: np.random.Generator, *shape: int) -> Fixed:
    a = rng.standard_normal(shape)
    a[rng.random(shape) < 0.3] = np.nan
    return Fixed(a)


_nan_samples = lambda rng: [
    Sample((rnd(rng, 3, 4),)), Sample((rnd(rng, 3, 4), 1)), Sample((rnd(rng, 3, 4), (0, 1), True)),
    Sample((rnd(rng, 2, 3, 2), -1, True)), Sample((rnd(rng),)), Sample((_with_nan(rng, 4, 5), 1)),
    Sample((_with_nan(rng, 6),)), Sample((Fixed(np.array([[np.nan, np.nan], [1.0, 2.0]])), 1)),
    Sample((rnd(rng, 2, 3),), {"dtype": DT("float64")}),
]
op("nansum", _t("nansum"), lambda rng: [
    *_nan_samples(rng), Sample((ints(rng, 3, 4), 0)), Sample((Fixed(np.array([True, True])),)),
], errors=lambda rng: [ErrorCase((rnd(rng, 2), 1))])
op("nanmean", _t("nanmean"), _nan_samples,
   errors=lambda rng: [ErrorCase((ints(rng, 3),)), ErrorCase((rnd(rng, 2), 2))])
op("dist", _t("dist"), lambda rng: [
    Sample((rnd(rng, 3, 4), rnd(rng, 4))), Sample((rnd(rng, 3), rnd(rng, 3), 1)),
    Sample((rnd(rng, 3), rnd(rng, 3), 3)), Sample((rnd(rng, 3), rnd(rng, 3), 1.5)),
    Sample((distinct(rng, 4), distinct(rng, 4), float("inf"))),
    Sample((rnd(rng, 4), rnd(rng, 4), 0), forward_only=True),  # (torch's p=0 backward raises)
    Sample((rnd(rng, 4), rnd(rng, 4), 0.5)),
    Sample((rnd(rng, 2, 2), NoGrad(rnd(rng, 2, 2)))), Sample((ints(rng, 3), rnd(rng, 3))),
], errors=lambda rng: [ErrorCase((ints(rng, 3), ints(rng, 3))),
                       ErrorCase((rnd(rng, 3, 4), rnd(rng, 5)))])
op("cosine_similarity", _t("cosine_similarity"), lambda rng: [
    Sample((rnd(rng, 3, 4), rnd(rng, 3, 4))), Sample((rnd(rng, 3, 4), rnd(rng, 4), -1)),
    Sample((rnd(rng, 2, 3), rnd(rng, 2, 3), 0)),
], check_grad_fn=False, notes="the grad_fn is gradsum.nn.functional's (tested there)")
op("pairwise_distance", _t("pairwise_distance"), lambda rng: [
    Sample((rnd(rng, 3, 4), rnd(rng, 3, 4))), Sample((rnd(rng, 3, 4), rnd(rng, 4), 1.0)),
    Sample((rnd(rng, 2, 3), rnd(rng, 2, 3), 3.0, 1e-6, True)),
])


# -- std_mean / var_mean / aminmax ------------------------------------------------------------
def _stat_samples(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((rnd(rng, 2, 3),)), Sample((rnd(rng, 2, 3), 1)), Sample((rnd(rng, 2, 3), (0, 1))),
        Sample((rnd(rng, 2, 3, 4), 1, True, True)), Sample((rnd(rng, 3, 4),), {"correction": 0}),
        Sample((rnd(rng, 3, 4), 0), {"correction": 2, "keepdim": True}),
        Sample((rnd(rng, 4), False)),
    ]


op("std_mean", _t("std_mean"), _stat_samples, errors=lambda rng: [ErrorCase((ints(rng, 3),))])
op("var_mean", _t("var_mean"), _stat_samples, errors=lambda rng: [ErrorCase((ints(rng, 3),))])


op("aminmax", _t("aminmax"), lambda rng: [
    Sample((distinct(rng, 2, 3),)), Sample((distinct(rng, 3, 4),), {"dim": 1}),
    Sample((distinct(rng, 3, 4),), {"dim": 0, "keepdim": True}),
    Sample((distinct(rng, 2, 3),), {"keepdim": True}), Sample((rnd(rng),)),
    Sample((_ties(rng, 3, 4),), {"dim": -1}),
], errors=lambda rng: [ErrorCase((rnd(rng, 0),)), ErrorCase((rnd(rng, 2, 0),), {"dim": 1})])


# -- bincount / histc / searchsorted / bucketize -----------------------------------------------
op("bincount", _t("bincount"), lambda rng: [
    Sample((_ties(rng, 10),)), Sample((_ties(rng, 10),), {"minlength": 7}),
    Sample((idx(1, 1, 3), rnd(rng, 3))), Sample((idx(0, 2, 2, 2), None, 2)),
    Sample((Fixed(np.zeros(0, dtype=np.int64)),)),
    Sample((idx(1, 1, 3), Fixed(np.array([1, 2, 3])))),
], differentiable=False, errors=lambda rng: [
    ErrorCase((idx(-1, 2),)), ErrorCase((Fixed(np.array([[1, 2]])),)),
    ErrorCase((rnd(rng, 2),)), ErrorCase((idx(1, 2), rnd(rng, 1))),
    ErrorCase((idx(1, 2),), {"minlength": -1}),
])
op("histc", _t("histc"), lambda rng: [
    Sample((rnd(rng, 20),)), Sample((rnd(rng, 4, 5), 7)), Sample((rnd(rng, 30), 5, -1.0, 1.0)),
    Sample((Fixed(np.array([1.0, 2.0, 2.0, 5.0])), 4, 2, 2)),
    Sample((Fixed(np.array([1.0, 1.0])), 4)), Sample((rnd(rng, 0), 3)),
], differentiable=False, errors=lambda rng: [
    ErrorCase((ints(rng, 3), 3)), ErrorCase((rnd(rng, 3), -3)), ErrorCase((rnd(rng, 3), 3, 2, 1)),
])
