"""Op-table entries for :mod:`gradsum.ops.comparison` (appended to :data:`OPINFOS` when the
package imports this module).
"""

from __future__ import annotations

import numpy as np

from .core import (
    ErrorCase,
    Fixed,
    NoGrad,
    Sample,
    _binary_samples,
    _bool,
    _broadcast_errors,
    _t,
    distinct,
    ints,
    mask,
    op,
    rnd,
)

op("maximum", _t("maximum"), _binary_samples(distinct), np_ref=np.maximum,
   errors=lambda rng: _broadcast_errors(rng) + [ErrorCase((rnd(rng, 2), 1.0))])
op("minimum", _t("minimum"), _binary_samples(distinct), np_ref=np.minimum,
   errors=lambda rng: _broadcast_errors(rng) + [ErrorCase((1.0, rnd(rng, 2)))])

# comparisons and logic (not differentiable) -----------------------------------------------------
for _name, _np in [("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                   ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal)]:
    op(_name, _t(_name), lambda rng: [
        Sample((ints(rng, 2, 3, lo=0, hi=3), ints(rng, 3, lo=0, hi=3))),
        Sample((rnd(rng, 2, 3).round(), 0.0)), Sample((ints(rng, 4), 1)),
        Sample((rnd(rng, 2, 1).round(), rnd(rng, 3).round())),
    ], differentiable=False, np_ref=_np, errors=_broadcast_errors)
for _name, _np in [("logical_and", np.logical_and), ("logical_or", np.logical_or),
                   ("logical_xor", np.logical_xor)]:
    op(_name, _t(_name), lambda rng: [
        Sample((mask(rng, 2, 3), mask(rng, 3))), Sample((ints(rng, 4, lo=0, hi=2), mask(rng, 4))),
        Sample((rnd(rng, 3).round(), ints(rng, 3, lo=0, hi=2))),
    ], differentiable=False, np_ref=_np, errors=_broadcast_errors)
op("logical_not", _t("logical_not"), lambda rng: [
    Sample((mask(rng, 2, 3),)), Sample((ints(rng, 4, lo=0, hi=2),)),
    Sample((rnd(rng, 3).round(),)),
], differentiable=False, np_ref=np.logical_not)
_SPECIAL = np.array([0.0, 1.5, np.inf, -np.inf, np.nan])
for _name, _np in [("isnan", np.isnan), ("isinf", np.isinf), ("isfinite", np.isfinite)]:
    op(_name, _t(_name), lambda rng: [Sample((NoGrad(_SPECIAL),)), Sample((ints(rng, 3),))],
       differentiable=False, np_ref=_np)
op("equal", _t("equal"), lambda rng: [
    Sample((NoGrad(np.ones((2, 3))), NoGrad(np.ones((2, 3))))),
    Sample((NoGrad(np.ones((2, 3))), NoGrad(np.ones(3)))),
    Sample((NoGrad(np.ones(3)), NoGrad(np.array([1.0, 2.0, 1.0])))),
], differentiable=False)
op("allclose", _t("allclose"), lambda rng: [
    Sample((NoGrad(np.ones(3)), NoGrad(np.ones(3) + 1e-9))),
    Sample((NoGrad(np.ones(3)), NoGrad(np.ones(3) + 1e-3))),
    Sample((NoGrad(np.ones(3)), NoGrad(np.ones(3) + 1e-3)), {"atol": 1e-2}),
], differentiable=False)
op("isclose", _t("isclose"), lambda rng: [
    Sample((NoGrad(np.ones(3)), NoGrad(np.array([1.0, 1.1, 1 + 1e-9])))),
    Sample((NoGrad(np.ones((2, 3))), NoGrad(np.ones(3)))),
], differentiable=False)
_fm_samples = lambda rng: [
    Sample((distinct(rng, 3, 4), distinct(rng, 3, 4))),
    Sample((distinct(rng, 3, 1), distinct(rng, 4))),
    Sample((distinct(rng), distinct(rng, 3))),
    Sample((Fixed(np.array([1.0, np.nan, np.nan, 2.0])),
            Fixed(np.array([np.nan, 1.0, np.nan, 2.0])))),
    Sample((ints(rng, 4), ints(rng, 4))), Sample((ints(rng, 4), rnd(rng, 4))),
    Sample((Fixed(np.array([True, False])), Fixed(np.array([False, False])))),
]
_fm_errors = lambda rng: [
    ErrorCase((rnd(rng, 3), rnd(rng, 2))), ErrorCase((rnd(rng, 3), 2.0)),
]
op("fmax", _t("fmax"), _fm_samples, errors=_fm_errors)
op("fmin", _t("fmin"), _fm_samples, errors=_fm_errors)
for _name in ("isposinf", "isneginf", "isreal"):
    op(_name, _t(_name), lambda rng: [
        Sample((NoGrad(_SPECIAL),)), Sample((ints(rng, 3),)), Sample((_bool,)),
    ], differentiable=False)


# -- special functions ------------------------------------------------------------------------
op("signbit", _t("signbit"), lambda rng: [
    Sample((rnd(rng, 2, 3),)), Sample((np.array([-0.0, 0.0, -1.0, np.inf, -np.inf]),)),
    Sample((ints(rng, 4),)), Sample((rnd(rng),)),
], differentiable=False, np_ref=np.signbit)
