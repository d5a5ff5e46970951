"""Op-table entries for :mod:`gradsum.ops.special` (appended to :data:`OPINFOS` when the
package imports this module).
"""

from __future__ import annotations

import numpy as np

from .core import (
    _INF,
    _NAN,
    ErrorCase,
    Fixed,
    NoGrad,
    Sample,
    _binary_samples,
    _broadcast_errors,
    _t,
    _ts,
    _unary,
    _unary_sp,
    ints,
    op,
    pos,
    rnd,
    torch,
)

_unary("erf", rnd, None)
op("mvlgamma", _t("mvlgamma"), lambda rng: [
    Sample((pos(rng, 2, 3) + 1, 1)), Sample((pos(rng, 4) + 1, 3)),
    Sample((np.asarray(pos(rng) + 1), 2)),
    Sample((Fixed(np.array([2, 3])), 2)), Sample((np.array([0.1, 0.2, 0.15]), 3)),
], errors=lambda rng: [ErrorCase((pos(rng, 3), 0))])


def _within(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return np.asarray(rng.uniform(-0.9, 0.9, shape))


def _gamma_dom(rng: np.random.Generator, *shape: int) -> np.ndarray:
    """Positive values and negative non-integers (away from the poles)."""
    v = rng.uniform(0.3, 4.0, shape)
    neg = rng.random(shape) < 0.3
    return np.asarray(np.where(neg, -np.floor(v) - rng.uniform(0.2, 0.8, shape), v))
_unary_sp("erfc", rnd)
_unary_sp("erfinv", _within)
_unary_sp("lgamma", _gamma_dom)
_unary_sp("digamma", _gamma_dom)
_unary_sp("i0", rnd)
op("polygamma", _t("polygamma"), lambda rng: [
    Sample((1, _gamma_dom(rng, 2, 3))), Sample((2, _gamma_dom(rng, 4))),
    Sample((3, pos(rng, 3))), Sample((0, pos(rng, 2))), Sample((1, _gamma_dom(rng))),
    Sample((2, Fixed(np.array([1, 2, 3])))),
], errors=lambda rng: [ErrorCase((-1, rnd(rng, 3)))])
op("xlogy", _t("xlogy"), lambda rng: _binary_samples(rnd, pos)(rng) + [
    Sample((rnd(rng, 3), 2.5)), Sample((2.0, pos(rng, 3))), Sample((ints(rng, 3), pos(rng, 3))),
    Sample((np.array([0.0, 0.0, 1.0]), np.array([0.5, 2.0, 1.5]))),
    Sample((np.array([0.0, 0.0, 0.0, 1.0]), NoGrad(np.array([0.0, np.nan, np.inf, 0.0]))),
           no_gradcheck="0 * log 0 = 0 rule at non-finite points"),
], errors=_broadcast_errors)

op("special_xlog1py", _ts("xlog1py"), lambda rng: _binary_samples(rnd, pos)(rng) + [
    Sample((rnd(rng, 3), 2.5)), Sample((2.0, pos(rng, 3))), Sample((ints(rng, 3), pos(rng, 3))),
    Sample((np.array([0.0, 0.0, 1.0]), np.array([-0.5, 2.0, 1.5]))),
    Sample((rnd(rng, 3), NoGrad(pos(rng, 3)))),
    Sample((np.array([0.0, 0.0, 0.0, 1.0, 2.0]),
            NoGrad(np.array([-1.0, _NAN, _INF, -1.0, -2.0]))),
           no_gradcheck="0 * log1p(-1) = 0 rule at non-finite points"),
], errors=_broadcast_errors)


def _zeta_samples(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((NoGrad(rng.uniform(1.5, 5.0, (2, 3))), pos(rng, 2, 3))),
        Sample((NoGrad(rng.uniform(1.5, 5.0, (3,))), pos(rng, 2, 1))),
        Sample((NoGrad(np.array(3.0)), pos(rng, 4))),
        Sample((2.5, pos(rng, 3))),
        Sample((NoGrad(pos(rng, 3) + 1.0), 2.0)),
        Sample((Fixed(np.array([2, 3])), Fixed(np.array([1, 2])))),
        Sample((np.array([2.0, 1.0, 0.5, 2.0, 3.0, 2.5, _INF, 40.0]),
                np.array([1.0, 1.0, 1.0, -1.0, -1.5, -1.5, 2.0, 0.5])), forward_only=True),
    ]


op("special_zeta", _ts("zeta"), _zeta_samples, errors=_broadcast_errors)


def _igamma_samples(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((NoGrad(rng.uniform(0.3, 6.0, (2, 3))), rng.uniform(0.2, 8.0, (2, 3)))),
        Sample((NoGrad(rng.uniform(0.3, 6.0, (3,))), rng.uniform(0.2, 8.0, (2, 1)))),
        Sample((NoGrad(np.array([30.0, 50.0, 0.5])), np.array([28.0, 70.0, 3.0]))),
        Sample((NoGrad(np.array(2.0)), pos(rng, 4))),
        Sample((np.array([0.0, 0.0, 1.0, -1.0, _INF, 2.0, _INF, 0.0]),
                np.array([1.0, 0.0, 0.0, 1.0, 1.0, _INF, _INF, -1.0])), forward_only=True),
    ]


def _igamma_errors(rng: np.random.Generator) -> list[ErrorCase]:
    return _broadcast_errors(rng) + [
        ErrorCase((ints(rng, 3), ints(rng, 3)), contains=("igamma",)),
        ErrorCase((rnd(rng, 3), 2.0)),
    ]


op("igamma", lambda a, x: torch.igamma(a, x), _igamma_samples, aliases=("special_gammainc",),
   errors=_igamma_errors)
op("igammac", lambda a, x: torch.igammac(a, x), _igamma_samples,
   aliases=("special_gammaincc",), errors=_igamma_errors)
