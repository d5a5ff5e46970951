"""Op-table entries for :mod:`gradsum.ops.sorting` (appended to :data:`OPINFOS` when the
package imports this module).
"""

from __future__ import annotations

import numpy as np

from .core import ErrorCase, Fixed, NoGrad, Sample, _t, _ties, distinct, idx, ints, op, rnd

op("argsort", _t("argsort"), lambda rng: [
    Sample((distinct(rng, 2, 4),)), Sample((distinct(rng, 2, 4), 0)),
    Sample((distinct(rng, 5),), {"descending": True}), Sample((ints(rng, 6),), {"stable": True}),
], differentiable=False)
op("sort", _t("sort"), lambda rng: [
    Sample((distinct(rng, 2, 4),)), Sample((distinct(rng, 3, 2), 0)),
    Sample((distinct(rng, 5),), {"descending": True}),
])
op("topk", _t("topk"), lambda rng: [
    Sample((distinct(rng, 2, 5), 2)), Sample((distinct(rng, 4, 3), 2, 0)),
    Sample((distinct(rng, 6), 3), {"largest": False}),
], errors=lambda rng: [ErrorCase((rnd(rng, 3), 4))])
op("msort", _t("msort"), lambda rng: [
    Sample((distinct(rng, 4, 3),)), Sample((distinct(rng, 5),)),
    Sample((ints(rng, 3, 2),)),
])


def _float_ties(rng: np.random.Generator, *shape: int) -> Fixed:
    return Fixed(rng.integers(0, 3, shape).astype(np.float64))


# -- median / nanmedian / kthvalue / mode -----------------------------------------------------
def _median_samples(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((distinct(rng, 5),)), Sample((distinct(rng, 2, 3),)), Sample((distinct(rng, 4),)),
        Sample((distinct(rng, 3, 4), 1)), Sample((distinct(rng, 3, 4), 0, True)),
        Sample((distinct(rng, 2, 3, 4), -1)), Sample((rnd(rng), 0)), Sample((rnd(rng),)),
        Sample((_ties(rng, 3, 7), 1)), Sample((_ties(rng, 40), 0)), Sample((_ties(rng, 4, 5),)),
        Sample((_float_ties(rng, 5, 9), 1)),
        Sample((Fixed(np.array([[1.0, np.nan, 2.0], [3.0, 1.0, 2.0]])), 1)),
        Sample((Fixed(np.array([1.0, np.nan, 2.0])),)),
    ]


def _nan_median_samples(rng: np.random.Generator) -> list[Sample]:
    return [s for s in _median_samples(rng)] + [
        Sample((Fixed(np.array([[np.nan, np.nan], [np.nan, 1.0]])), 1)),
        Sample((Fixed(np.array([np.nan, 3.0, 1.0, np.nan, 2.0, 0.0])), 0)),
    ]


_median_errors = lambda rng: [
    ErrorCase((rnd(rng, 0, 3), 0)), ErrorCase((rnd(rng, 2, 3), 2)),
]
op("median", _t("median"), _median_samples, errors=_median_errors)
op("nanmedian", _t("nanmedian"), _nan_median_samples, errors=_median_errors)
op("kthvalue", _t("kthvalue"), lambda rng: [
    Sample((distinct(rng, 5), 2)), Sample((distinct(rng, 3, 4), 1, 0)),
    Sample((distinct(rng, 3, 4), 4, 1, True)), Sample((distinct(rng, 2, 3, 4), 3)),
    Sample((rnd(rng), 1)), Sample((_ties(rng, 30), 11)), Sample((_ties(rng, 4, 9), 5, 1)),
    Sample((_float_ties(rng, 6, 25), 13)),
    Sample((Fixed(np.array([[np.nan, 1.0, 2.0, np.nan], [0.0, 1.0, 1.0, 3.0]])), 3)),
], errors=lambda rng: [ErrorCase((rnd(rng, 3), 4)), ErrorCase((rnd(rng, 3), 0)),
                       ErrorCase((rnd(rng, 3), 1, 1))])
op("mode", _t("mode"), lambda rng: [
    Sample((distinct(rng, 5),)), Sample((distinct(rng, 3, 4), 0)),
    Sample((distinct(rng, 3, 4), 1, True)), Sample((rnd(rng),)),
    Sample((_ties(rng, 12),)), Sample((_ties(rng, 5, 40), 1)), Sample((_ties(rng, 60, 3), 0)),
    Sample((_float_ties(rng, 4, 33),)), Sample((_ties(rng, 3, 200, hi=7),)),
], errors=lambda rng: [ErrorCase((rnd(rng, 0),)), ErrorCase((rnd(rng, 2, 3), 3))])


# -- quantile / nanquantile -------------------------------------------------------------------
def _quantile_samples(rng: np.random.Generator) -> list[Sample]:
    out = [
        Sample((distinct(rng, 7), 0.3)), Sample((distinct(rng, 3, 4), 0.5, 1)),
        Sample((distinct(rng, 3, 4), 0.25, 0, True)),
        Sample((distinct(rng, 3, 4), NoGrad(np.array([0.1, 0.6, 1.0])), 1)),
        Sample((distinct(rng, 3, 4), NoGrad(np.array([0.0, 0.7])), 0, True)),
        Sample((distinct(rng, 2, 3, 4), NoGrad(np.array(0.4)))),
        Sample((distinct(rng, 2, 3), 0.9), {"keepdim": True}), Sample((rnd(rng), 0.5)),
        Sample((Fixed(np.array([[1.0, np.nan, 3.0], [1.0, 2.0, 4.0]])), 0.5, 1)),
    ]
    for interp in ("lower", "higher", "midpoint", "nearest"):
        out.append(Sample((distinct(rng, 3, 5), 0.35, 1), {"interpolation": interp}))
        out.append(Sample((distinct(rng, 6), NoGrad(np.array([0.2, 0.5]))),
                          {"interpolation": interp}))
    return out


def _quantile_errors(rng: np.random.Generator) -> list[ErrorCase]:
    return [
        ErrorCase((rnd(rng, 3), 1.5)), ErrorCase((rnd(rng, 3), NoGrad(np.array([[0.5]])))),
        ErrorCase((ints(rng, 3), 0.5)), ErrorCase((rnd(rng, 3), 0.5), {"interpolation": "x"}),
        ErrorCase((rnd(rng, 0), 0.5)),
        ErrorCase((rnd(rng, 3), Fixed(np.array([0.5], dtype=np.float16)))),
    ]


op("quantile", _t("quantile"), _quantile_samples, errors=_quantile_errors)
op("nanquantile", _t("nanquantile"), lambda rng: _quantile_samples(rng) + [
    Sample((Fixed(np.array([[np.nan, np.nan], [np.nan, 2.0]])), 0.5, 1)),
    Sample((NoGrad(np.array([np.nan, 3.0, 1.0, 2.0])), NoGrad(np.array([0.0, 0.5, 1.0])))),
], errors=_quantile_errors)


# -- unique / unique_consecutive ---------------------------------------------------------------
def _unique_samples(rng: np.random.Generator) -> list[Sample]:
    t = _ties(rng, 3, 4)
    return [
        Sample((t,)), Sample((t,), {"return_inverse": True}),
        Sample((t,), {"return_counts": True, "return_inverse": True}),
        Sample((t,), {"sorted": False, "return_counts": True}),
        Sample((_float_ties(rng, 2, 5),), {"return_inverse": True, "return_counts": True}),
        Sample((Fixed(np.array([[1, 2], [1, 2], [0, 5]])),),
               {"dim": 0, "return_inverse": True, "return_counts": True}),
        Sample((Fixed(np.array([[1, 2, 1], [3, 4, 3]])),), {"dim": 1, "return_inverse": True}),
        Sample((Fixed(np.zeros(0, dtype=np.int64)),), {"return_counts": True}),
    ]


op("unique", _t("unique"), _unique_samples, differentiable=False,
   errors=lambda rng: [ErrorCase((rnd(rng, 2, 3),), {"dim": 2})])
op("unique_consecutive", _t("unique_consecutive"), lambda rng: [
    Sample((Fixed(np.array([1, 1, 2, 2, 3, 1, 1])),),
           {"return_inverse": True, "return_counts": True}),
    Sample((_ties(rng, 3, 4, hi=2),), {"return_inverse": True}),
    Sample((Fixed(np.array([[1, 1, 2], [1, 1, 2], [0, 0, 0]])),),
           {"dim": 0, "return_inverse": True, "return_counts": True}),
    Sample((Fixed(np.array([[1, 1, 2], [1, 1, 3]])),), {"dim": 1, "return_counts": True}),
    Sample((_float_ties(rng, 9),), {"return_counts": True}),
], differentiable=False)


def _sorted(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return np.sort(rng.integers(-4, 5, shape).astype(np.float64), axis=-1)


op("searchsorted", _t("searchsorted"), lambda rng: [
    Sample((_sorted(rng, 6), rnd(rng, 2, 3) * 3)),
    Sample((_sorted(rng, 6), Fixed(np.array([-4.0, 0.0, 4.0, 1.0]))), {"right": True}),
    Sample((_sorted(rng, 6), Fixed(np.array([-4.0, 0.0, 4.0]))), {"side": "right"}),
    Sample((_sorted(rng, 6), Fixed(np.array([-4.0, 0.0, 4.0]))), {"side": "left"}),
    Sample((_sorted(rng, 3, 5), rnd(rng, 3, 2) * 3), {"out_int32": True}),
    Sample((_sorted(rng, 5), 0.5)),
    Sample((Fixed(np.array([3.0, 1.0, 2.0])), Fixed(np.array([2.0, 0.5]))),
           {"sorter": idx(1, 2, 0)}),
    Sample((Fixed(np.array([1, 3, 5])), Fixed(np.array([3, 4])))),
], differentiable=False, errors=lambda rng: [
    ErrorCase((_sorted(rng, 1, 2), rnd(rng, 1))),
    ErrorCase((_sorted(rng, 2), rnd(rng, 1)), {"side": "left", "right": True}),
    ErrorCase((_sorted(rng, 2), rnd(rng, 1)), {"side": "foo"}),
])
op("bucketize", _t("bucketize"), lambda rng: [
    Sample((rnd(rng, 2, 3) * 3, _sorted(rng, 5))),
    Sample((Fixed(np.array([-4.0, 0.0, 4.0])), _sorted(rng, 6)), {"right": True}),
    Sample((Fixed(np.array([1, 5, 9])), Fixed(np.array([1, 5, 9]))), {"out_int32": True}),
    Sample((1.5, Fixed(np.array([1.0, 2.0])))),
], differentiable=False, errors=lambda rng: [ErrorCase((rnd(rng, 1), _sorted(rng, 1, 2)))])
