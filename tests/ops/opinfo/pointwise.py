"""Op-table entries for :mod:`gradsum.ops.pointwise` (appended to :data:`OPINFOS` when the
package imports this module).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .core import (
    _BOOL_ERROR,
    _INT_SAMPLE,
    ErrorCase,
    Fixed,
    NoGrad,
    Sample,
    _binary_samples,
    _bool,
    _broadcast_errors,
    _t,
    _unary,
    _unary_samples,
    _unary_sp,
    away,
    distinct,
    ints,
    off_grid,
    op,
    pos,
    rnd,
)

_unary("exp", rnd, np.exp)
_unary("log", pos, np.log)
_unary("log1p", pos, np.log1p)
_unary("sqrt", pos, np.sqrt)
_unary("rsqrt", pos, lambda a: 1 / np.sqrt(a))
_unary("abs", away, np.abs, aliases=("absolute",), **_BOOL_ERROR)
_unary("sin", rnd, np.sin)
_unary("cos", rnd, np.cos)
_unary("tanh", rnd, np.tanh)
_unary("sign", away, np.sign, no_gradgrad="zero derivative")
_unary("floor", off_grid, np.floor, no_gradgrad="zero derivative", **_BOOL_ERROR)
_unary("ceil", off_grid, np.ceil, no_gradgrad="zero derivative", **_BOOL_ERROR)
_unary("round", off_grid, np.round, no_gradgrad="zero derivative", **_BOOL_ERROR)
_unary("trunc", off_grid, np.trunc, no_gradgrad="zero derivative", **_BOOL_ERROR)


def _clamp_samples(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((off_grid(rng, 2, 3), -0.5, 0.5)),
        Sample((off_grid(rng, 2, 3),), {"min": 0.0}),
        Sample((off_grid(rng, 2, 3),), {"max": 0.0}),
        Sample((off_grid(rng,), -1.0, 1.0)),
        Sample((off_grid(rng, 0, 2), -1.0, 1.0)),
        Sample((distinct(rng, 2, 3), NoGrad(distinct(rng, 3) - 5.0), NoGrad(distinct(rng, 2, 1)))),
        Sample((distinct(rng, 2, 3) * 0.5, distinct(rng, 3) * 0.5 + 0.07)),
        Sample((ints(rng, 5), -2, 2)),
        Sample((ints(rng, 5), -1.5, 2.5)),
    ]


op("clamp", _t("clamp"), _clamp_samples, aliases=("clip",), no_gradgrad="piecewise linear",
   errors=lambda rng: [ErrorCase((rnd(rng, 2),)),
                       ErrorCase((rnd(rng, 3), NoGrad(rnd(rng, 3)), 0.5))])
op("clone", _t("clone"), _unary_samples(rnd))


# exp2, expm1, log2, log10, tan and the inverse trig/hyperbolic functions ---------------------
def within(rng: np.random.Generator, *shape: int) -> np.ndarray:
    """Values in [-0.9, 0.9]: inside asin/acos's domain, away from tan's poles."""
    return np.asarray(rng.uniform(-0.9, 0.9, shape))


def _in_float(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A NumPy reference giving integer inputs float32 results (torch's default float),
    computed in float64 and rounded once (NumPy's float32 kernels are 1-2 ulp off)."""
    def ref(a: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            if a.dtype.kind in "biu":
                return fn(a.astype(np.float64)).astype(np.float32)
            return fn(a)

    return ref


_NONFINITE = np.array([np.nan, np.inf, -np.inf, 1.5, -0.0])
_unary("expm1", rnd, _in_float(np.expm1))
_unary("exp2", rnd, _in_float(np.exp2))
_unary("log2", pos, _in_float(np.log2))
_unary("log10", pos, _in_float(np.log10))
_unary("tan", within, _in_float(np.tan))
_unary("atan", rnd, _in_float(np.arctan), aliases=("arctan",))
_unary("sinh", rnd, _in_float(np.sinh))
_unary("cosh", rnd, _in_float(np.cosh))
for _name, _np, _alias in [("asin", np.arcsin, "arcsin"), ("acos", np.arccos, "arccos")]:
    op(_name, _t(_name), lambda rng: _unary_samples(within)(rng) + _INT_SAMPLE + [
        Sample((np.array([1.0, 0.3]),), no_gradcheck="infinite derivative at 1"),
        Sample((np.array(-1.0),), no_gradcheck="infinite derivative at -1"),
    ], aliases=(_alias,), np_ref=_in_float(_np))
op("atan2", _t("atan2"), lambda rng: _binary_samples(away)(rng) + [
    Sample((rnd(rng, 3), NoGrad(away(rng, 3)))), Sample((NoGrad(away(rng, 2, 1)), rnd(rng, 3))),
    Sample((ints(rng, 3), ints(rng, 3))), Sample((ints(rng, 3), rnd(rng, 3))),
    Sample((np.array([0.0, 0.0, 1.0, -1.0]), np.array([0.0, -2.0, 0.0, 0.0])),
           no_gradcheck="not differentiable at the origin; torch's gradient there is 0"),
], aliases=("arctan2",), np_ref=np.arctan2, errors=lambda rng: _broadcast_errors(rng) + [
    ErrorCase((rnd(rng, 2), 2.0)), ErrorCase((1.0, rnd(rng, 2))),
])
op("nan_to_num", _t("nan_to_num"), lambda rng: _unary_samples(rnd)(rng) + _INT_SAMPLE + [
    Sample((_NONFINITE,)), Sample((_NONFINITE,), {"nan": 1.0, "posinf": 5.0, "neginf": -5.0}),
    Sample((_NONFINITE.reshape(5, 1), 2.0, None, -1.0)), Sample((np.array(np.nan),)),
    Sample((Fixed(np.array([True, False])),)),
], np_ref=None)


def _probs(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return np.asarray(rng.uniform(0.15, 0.85, shape))


# -- elementwise: logit, clamp_min/max, float_power, fmax/fmin ----------------------------------
op("logit", _t("logit"), lambda rng: [
    Sample((_probs(rng, 3, 4),)), Sample((_probs(rng, 5), 0.2)), Sample((_probs(rng),)),
    Sample((Fixed(np.array([0.0, 0.1, 1.0, 1.5, -0.2])),)),
    Sample((Fixed(np.array([0.0, 0.1, 0.95, 1.5, -0.2])), 0.05)),
    Sample((Fixed(np.array([0, 1])),)), Sample((_probs(rng, 4), -1.0)),
])
_clamp_cases = lambda rng: [
    Sample((away(rng, 3, 4), 0.1)), Sample((away(rng, 3, 4), away(rng, 4))),
    Sample((away(rng, 4), away(rng, 3, 1))), Sample((away(rng, 3), NoGrad(away(rng, 3)))),
    Sample((ints(rng, 5), 1.5)), Sample((ints(rng, 5), 2)),
    Sample((Fixed(np.array([1.0, np.nan])), 0.0)),
]
op("clamp_min", _t("clamp_min"), _clamp_cases)
op("clamp_max", _t("clamp_max"), _clamp_cases)


def _gt1(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return np.asarray(rng.uniform(1.2, 3.0, shape))


def _unit(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return np.asarray(rng.uniform(-0.8, 0.8, shape))


def _un(gen: object) -> object:
    return lambda rng: [Sample((gen(rng, 2, 3),)), Sample((gen(rng),)),  # type: ignore[operator]
                        Sample((gen(rng, 0, 2),)), Sample((Fixed(np.array([1, 2, 3])),))]


op("acosh", _t("acosh"), _un(_gt1), aliases=("arccosh",))
op("asinh", _t("asinh"), _un(rnd), aliases=("arcsinh",))
op("atanh", _t("atanh"), lambda rng: [
    Sample((_unit(rng, 2, 3),)), Sample((_unit(rng),)), Sample((Fixed(np.array([0, 1, -1])),)),
    Sample((Fixed(np.array([0.5, 1.0, -1.0, 2.0])),)),
], aliases=("arctanh",))
op("fix", _t("fix"), lambda rng: [
    Sample((away(rng, 2, 3) * 3,)), Sample((ints(rng, 3),)),
], no_gradgrad="zero derivative", errors=lambda rng: [ErrorCase((_bool,))])
op("angle", _t("angle"), lambda rng: [
    Sample((away(rng, 2, 3),)), Sample((Fixed(np.array([-1.0, 0.0, 2.0, np.nan])),)),
    Sample((ints(rng, 4),)),
], no_gradgrad="zero derivative")
_unary_sp("sinc", away)
_unary_sp("deg2rad", rnd, np_ref=np.deg2rad)
_unary_sp("rad2deg", rnd, np_ref=np.rad2deg)
op("frac", _t("frac"), _unary_samples(off_grid), no_gradgrad="piecewise linear",
   errors=lambda rng: [ErrorCase((ints(rng, 3),))])

op("hypot", _t("hypot"), lambda rng: _binary_samples(away)(rng) + [
    Sample((rnd(rng, 3), NoGrad(away(rng, 3)))),
], errors=lambda rng: _broadcast_errors(rng) + [
    ErrorCase((rnd(rng, 2), 2.0)), ErrorCase((ints(rng, 2), ints(rng, 2))),
])
for _name in ("logaddexp", "logaddexp2"):
    op(_name, _t(_name), lambda rng: _binary_samples(rnd)(rng) + [
        Sample((rnd(rng, 3), NoGrad(rnd(rng, 3)))),
        Sample((np.array([np.inf, -np.inf, 1.0]), np.array([np.inf, -np.inf, -np.inf])),
               forward_only=True),
    ], errors=lambda rng: _broadcast_errors(rng) + [ErrorCase((ints(rng, 2), ints(rng, 2)))])
op("nextafter", _t("nextafter"), lambda rng: [
    Sample((rnd(rng, 2, 3), rnd(rng, 2, 3))), Sample((rnd(rng, 2, 1), rnd(rng, 3))),
    Sample((rnd(rng, 3), NoGrad(rnd(rng, 3)))),
], no_gradgrad="the gradient is a constant pass-through",
   errors=lambda rng: [ErrorCase((rnd(rng, 2), 1.0)), ErrorCase((ints(rng, 2), ints(rng, 2)))])
op("heaviside", _t("heaviside"), lambda rng: [
    Sample((np.array([-1.0, 0.0, 2.0, np.nan]), np.array([0.5]))),
    Sample((rnd(rng, 2, 3), rnd(rng, 3))), Sample((ints(rng, 4), Fixed(np.array([7])))),
], differentiable=False, errors=lambda rng: [
    ErrorCase((rnd(rng, 2), 1.0)), ErrorCase((ints(rng, 2), rnd(rng, 2))),
])
op("copysign", _t("copysign"), lambda rng: _binary_samples(away)(rng) + [
    Sample((away(rng, 3), -1.5)), Sample((away(rng, 3), -0.0)),
    Sample((ints(rng, 3), ints(rng, 3))), Sample((away(rng, 2, 3), NoGrad(away(rng, 3)))),
    Sample((np.array([0.0, 1.0]), np.array([-1.0, -1.0])),
           no_gradcheck="kink at 0: torch's gradient there is 0"),
], no_gradgrad="the derivative is piecewise constant", errors=_broadcast_errors)
