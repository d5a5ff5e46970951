"""Op-table entries for :mod:`gradsum.ops.arithmetic` (appended to :data:`OPINFOS` when the
package imports this module).
"""

from __future__ import annotations

from collections.abc import Callable

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
    _unary,
    away,
    ints,
    mask,
    off_grid,
    op,
    pos,
    rnd,
)


# arithmetic -----------------------------------------------------------------------------------
def _add_samples(rng: np.random.Generator) -> list[Sample]:
    s = _binary_samples(rnd)(rng)
    return s + [
        Sample((rnd(rng, 2, 3), rnd(rng, 3)), {"alpha": 2.5}),
        Sample((rnd(rng, 2, 3), 1.5)),
        Sample((rnd(rng, 2, 3), 2), {"alpha": 3}),
        Sample((rnd(rng, 2, 3), ints(rng, 2, 3))),            # int tensor promotes
        Sample((rnd(rng, 2, 3), Fixed(rnd(rng, 3).astype(np.float32)))),
        Sample((Fixed(rnd(rng, 2).astype(np.float32)), rnd(rng, 2))),
        Sample((ints(rng, 2, 3), ints(rng, 3))),               # int + int stays int64
        Sample((ints(rng, 2, 3), 2.5)),                        # int + float -> float32
        Sample((Fixed(np.array([True, False])), Fixed(np.array([True, True])))),
        Sample((Fixed(np.array([1, 2], dtype=np.int32)), 3)),  # stays int32
        Sample((rnd(rng, 3), NoGrad(rnd(rng, 3)))),
    ]


op("add", _t("add"), _add_samples, np_ref=lambda a, b, alpha=1: a + alpha * b,
   errors=_broadcast_errors)
op("sub", _t("sub"), lambda rng: [s for s in _add_samples(rng)
                                  if not (isinstance(s.args[0], Fixed)
                                          and s.args[0].array.dtype == bool)],
   np_ref=lambda a, b, alpha=1: a - alpha * b,
   errors=lambda rng: _broadcast_errors(rng) + [
       ErrorCase((Fixed(np.array([True])), Fixed(np.array([False])))),
       ErrorCase((rnd(rng, 2), True)), ErrorCase((Fixed(np.array([True])), 1)),
       ErrorCase((ints(rng, 2), Fixed(np.array([True, False]))))])
op("mul", _t("mul"), lambda rng: _binary_samples(rnd)(rng) + [
    Sample((rnd(rng, 2, 3), 2.5)), Sample((rnd(rng, 3), 3)),
    Sample((rnd(rng, 2, 3), NoGrad(rnd(rng, 2, 3)))),
    Sample((NoGrad(rnd(rng, 2, 1)), rnd(rng, 3))),
    Sample((ints(rng, 3), rnd(rng, 3))),
    Sample((ints(rng, 3), ints(rng, 3))),
    Sample((Fixed(np.array([True, False])), 2.5)),
], aliases=("multiply",), np_ref=np.multiply, errors=_broadcast_errors)
op("div", _t("div"), lambda rng: _binary_samples(rnd, away)(rng) + [
    Sample((rnd(rng, 2, 3), 2.5)), Sample((rnd(rng, 3), 4)),
    Sample((rnd(rng, 3), NoGrad(away(rng, 3)))),
    Sample((NoGrad(rnd(rng, 3)), away(rng, 3))),
    Sample((ints(rng, 3), Fixed(np.array([2, 3, 4])))),   # int / int -> float32
    Sample((ints(rng, 3), 2)),
    Sample((off_grid(rng, 2, 3), away(rng, 3)), {"rounding_mode": "floor"}, forward_only=True),
    Sample((off_grid(rng, 2, 3), away(rng, 3)), {"rounding_mode": "trunc"}, forward_only=True),
    Sample((ints(rng, 4), Fixed(np.array([2, -3, 4, -5]))), {"rounding_mode": "floor"}),
    Sample((ints(rng, 4), Fixed(np.array([2, -3, 4, -5]))), {"rounding_mode": "trunc"}),
], aliases=("true_divide", "divide"), np_ref=None, errors=lambda rng: _broadcast_errors(rng) + [
    ErrorCase((rnd(rng, 2), rnd(rng, 2)), {"rounding_mode": "round"}),
    ErrorCase((ints(rng, 2), Fixed(np.array([0, 1]))), {"rounding_mode": "floor"}),
    ErrorCase((ints(rng, 2), 0), {"rounding_mode": "trunc"}),
    ErrorCase((Fixed(np.array([True])), Fixed(np.array([True]))), {"rounding_mode": "floor"}),
])


def _pow_samples(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((pos(rng, 2, 3), 2.0)), Sample((rnd(rng, 2, 3), 3)), Sample((pos(rng, 4), 0.5)),
        Sample((rnd(rng, 3), 0)), Sample((pos(rng, 3), -1.5)), Sample((rnd(rng, 0), 2)),
        Sample((pos(rng, 2, 3), rnd(rng, 3))), Sample((pos(rng, 2, 1), rnd(rng, 1, 2))),
        Sample((pos(rng, 3), NoGrad(rnd(rng, 3)))), Sample((NoGrad(pos(rng, 3)), rnd(rng, 3))),
        Sample((2.0, rnd(rng, 3))), Sample((0.5, rnd(rng, 2, 2))),
        Sample((ints(rng, 3, lo=0, hi=4), 2)),
        Sample((ints(rng, 3, lo=1, hi=4), 0.5)),
        Sample((ints(rng, 3, lo=1, hi=4), ints(rng, 3, lo=0, hi=3))),
    ]


op("pow", _t("pow"), _pow_samples, np_ref=None, errors=lambda rng: [
    ErrorCase((pos(rng, 2, 3), pos(rng, 4)), shapes=((2, 3), (4,))),
    ErrorCase((ints(rng, 3, lo=1, hi=3), -1)),
    ErrorCase((Fixed(np.array([True])), Fixed(np.array([False])))),
])
op("remainder", _t("remainder"), lambda rng: [
    Sample((off_grid(rng, 2, 3), 0.5)), Sample((off_grid(rng, 2, 3), -0.5)),
    Sample((ints(rng, 5), 3)), Sample((ints(rng, 4), Fixed(np.array([2, -3, 4, -5])))),
    Sample((off_grid(rng, 2, 3) * 3, NoGrad(np.full(3, 0.5)))),
], no_gradgrad="piecewise linear", errors=lambda rng: _broadcast_errors(rng) + [
    ErrorCase((ints(rng, 3), Fixed(np.array([1, 0, 2])))), ErrorCase((ints(rng, 3), 0)),
    ErrorCase((Fixed(np.array([True])), Fixed(np.array([True])))),
])
op("floor_divide", _t("floor_divide"), lambda rng: [
    Sample((off_grid(rng, 2, 3), 0.5)), Sample((ints(rng, 5), 3)),
    Sample((ints(rng, 4), Fixed(np.array([2, -3, 4, -5])))),
    Sample((off_grid(rng, 2, 3), away(rng, 3))),
], differentiable=False, np_ref=np.floor_divide, errors=lambda rng: _broadcast_errors(rng) + [
    ErrorCase((ints(rng, 3), 0)), ErrorCase((ints(rng, 2), Fixed(np.array([0, 3])))),
    ErrorCase((Fixed(np.array([True])), Fixed(np.array([True])))),
])


_unary("neg", rnd, np.negative, aliases=("negative",),
       errors=lambda rng: [ErrorCase((Fixed(np.array([True])),))])
_unary("reciprocal", away, np.reciprocal, ints_ok=False)
for _name, _np in [("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or),
                   ("bitwise_xor", np.bitwise_xor)]:
    op(_name, _t(_name), lambda rng: [
        Sample((mask(rng, 2, 3), mask(rng, 3))), Sample((ints(rng, 4), ints(rng, 4))),
        Sample((mask(rng, 4), ints(rng, 4))), Sample((ints(rng, 2, 3), 6)),
        Sample((mask(rng, 3), True)), Sample((Fixed(np.array([1, 2], np.uint8)), -3)),
    ], differentiable=False, np_ref=None, errors=lambda rng: [
        ErrorCase((mask(rng, 2, 3), mask(rng, 4)), shapes=((2, 3), (4,))),
        ErrorCase((rnd(rng, 3), ints(rng, 3)), contains=("not implemented for 'Float'",)),
        ErrorCase((ints(rng, 3), 1.5)),
    ])
op("bitwise_not", _t("bitwise_not"), lambda rng: [
    Sample((mask(rng, 2, 3),)), Sample((ints(rng, 4),)),
    Sample((Fixed(np.array([0, 3], np.uint8)),)),
], differentiable=False, np_ref=np.invert, errors=lambda rng: [ErrorCase((rnd(rng, 3),))])


# everyday composites ---------------------------------------------------------------------------
op("square", _t("square"), lambda rng: [Sample((rnd(rng, 2, 3),)), Sample((rnd(rng),))])
op("lerp", _t("lerp"), lambda rng: [
    Sample((rnd(rng, 2, 3), rnd(rng, 3), 0.3)), Sample((rnd(rng, 2, 1), rnd(rng, 3), 0.7)),
    Sample((rnd(rng, 3), rnd(rng, 3), 1.0)), Sample((rnd(rng), rnd(rng), -0.6)),
    Sample((rnd(rng, 2, 3), rnd(rng, 2, 3), rnd(rng, 2, 3))),
    Sample((rnd(rng, 2, 1), rnd(rng, 3), rnd(rng, 1, 3))),
    Sample((rnd(rng, 3), rnd(rng, 3), rnd(rng, 2, 3))),          # the weight enlarges
    Sample((rnd(rng, 3), NoGrad(rnd(rng, 3)), NoGrad(rnd(rng, 3)))),
    Sample((NoGrad(rnd(rng, 3)), rnd(rng, 3), 0.5)),
    Sample((rnd(rng), rnd(rng, 0, 2), rnd(rng))),
], np_ref=None, errors=lambda rng: [
    ErrorCase((rnd(rng, 2, 3), rnd(rng, 4), 0.5), shapes=((2, 3), (4,))),
    ErrorCase((rnd(rng, 3), rnd(rng, 3), rnd(rng, 2))),
    ErrorCase((ints(rng, 3), ints(rng, 3), 0.5)),
    ErrorCase((ints(rng, 3), ints(rng, 3), ints(rng, 3))),
    ErrorCase((rnd(rng, 3), Fixed(rnd(rng, 3)), 0.5)),
    ErrorCase((rnd(rng, 3), rnd(rng, 3), Fixed(rnd(rng, 3)))),
])


def _addc_samples(div: bool) -> Callable[[np.random.Generator], list[Sample]]:
    den = away if div else rnd

    def samples(rng: np.random.Generator) -> list[Sample]:
        return [
            Sample((rnd(rng, 2, 3), rnd(rng, 2, 3), den(rng, 2, 3))),
            Sample((rnd(rng, 3), rnd(rng, 2, 1), den(rng, 1, 3)), {"value": 0.5}),
            Sample((rnd(rng), rnd(rng, 2), den(rng)), {"value": -2}),
            Sample((rnd(rng, 2, 3), NoGrad(rnd(rng, 3)), NoGrad(den(rng, 3)))),
            Sample((NoGrad(rnd(rng, 3)), rnd(rng, 3), NoGrad(den(rng, 3)))),
            Sample((NoGrad(rnd(rng, 3)), NoGrad(rnd(rng, 3)), den(rng, 3))),
            Sample((rnd(rng, 0, 3), rnd(rng, 3), den(rng, 3))),
            Sample((ints(rng, 3), rnd(rng, 3), den(rng, 3))),
            Sample((ints(rng, 3), ints(rng, 3), Fixed(np.array([1.5, 2.0, -4.0]))),
                   {"value": 3}),
        ]

    return samples


_ADDC_BROADCAST = [
    lambda rng: ErrorCase((rnd(rng, 2, 3), rnd(rng, 4), rnd(rng, 3)), shapes=((4,),)),
    lambda rng: ErrorCase((rnd(rng, 3), rnd(rng, 3), away(rng, 2))),
]
op("addcmul", _t("addcmul"), lambda rng: _addc_samples(False)(rng) + [
    Sample((ints(rng, 3), ints(rng, 3), ints(rng, 3)), {"value": 2}),
], np_ref=lambda a, b, c, value=1: a + value * b * c,
   errors=lambda rng: [e(rng) for e in _ADDC_BROADCAST])
op("addcdiv", _t("addcdiv"), _addc_samples(True),
   np_ref=lambda a, b, c, value=1: a + value * (b / c),
   errors=lambda rng: [e(rng) for e in _ADDC_BROADCAST] + [
       ErrorCase((ints(rng, 3), ints(rng, 3), Fixed(np.array([1, 2, 3])))),
       ErrorCase((rnd(rng, 3), ints(rng, 3), Fixed(np.array([1, 2, 3])))),
   ])
op("float_power", _t("float_power"), lambda rng: [
    Sample((pos(rng, 3, 4), 2)), Sample((pos(rng, 3, 4), pos(rng, 4))), Sample((2.0, pos(rng, 3))),
    Sample((ints(rng, 4), 2)), Sample((pos(rng, 3), 0.5)),
    Sample((Fixed(np.array([1.0, 2.0], dtype=np.float32)), Fixed(np.array([2, 3])))),
], errors=lambda rng: [ErrorCase((pos(rng, 3), pos(rng, 2)))])

_shift_samples = lambda rng: [
    Sample((ints(rng, 2, 3), Fixed(np.array([0, 1, 3])))), Sample((ints(rng, 4), 2)),
    Sample((Fixed(np.array([-8, 8, 5])), Fixed(np.array([70, -1, 63])))),
    Sample((Fixed(np.array([3, 200], np.uint8)), 1)),
    Sample((Fixed(np.array([3, 7], np.int32)), Fixed(np.array([1, 2], np.int8)))),
    Sample((_bool, 1)),
]
_int_errors = lambda rng: [
    ErrorCase((rnd(rng, 3), ints(rng, 3))), ErrorCase((ints(rng, 3), 1.5)),
    ErrorCase((_bool, _bool)), ErrorCase((ints(rng, 2, 3), ints(rng, 4)), shapes=((2, 3), (4,))),
]
op("bitwise_left_shift", _t("bitwise_left_shift"), _shift_samples, differentiable=False,
   errors=_int_errors)
op("bitwise_right_shift", _t("bitwise_right_shift"), _shift_samples, differentiable=False,
   errors=_int_errors)
_gcd_samples = lambda rng: [
    Sample((ints(rng, 2, 3, lo=-20, hi=20), ints(rng, 3, lo=-20, hi=20))),
    Sample((Fixed(np.array([0, 0, 4, -6])), Fixed(np.array([0, 5, 6, 0])))),
    Sample((Fixed(np.array([12, 18], np.int32)), Fixed(np.array([8, 4], np.int16)))),
]
_gcd_errors = lambda rng: [e for e in _int_errors(rng) if not isinstance(e.args[1], float)] + [
    ErrorCase((ints(rng, 3), 2))]
op("gcd", _t("gcd"), _gcd_samples, differentiable=False, errors=_gcd_errors)
op("lcm", _t("lcm"), _gcd_samples, differentiable=False, errors=_gcd_errors)
op("ldexp", _t("ldexp"), lambda rng: [
    Sample((rnd(rng, 2, 3), ints(rng, 3, lo=-3, hi=4))), Sample((rnd(rng, 3), rnd(rng, 2, 1))),
    Sample((rnd(rng, 3), NoGrad(rnd(rng, 3)))), Sample((ints(rng, 3), ints(rng, 3, lo=0, hi=4))),
    Sample((rnd(rng), rnd(rng, 2))),
], errors=lambda rng: [ErrorCase((rnd(rng, 3), rnd(rng, 2)), shapes=((3,), (2,))),
                       ErrorCase((rnd(rng, 3), 2))])
op("frexp", _t("frexp"), lambda rng: [
    Sample((rnd(rng, 2, 3) * 10,)), Sample((rnd(rng),)),
    Sample((Fixed(np.array([0.0, 1.0, -0.75, np.inf, np.nan])),)),
], errors=lambda rng: [ErrorCase((ints(rng, 3),))], no_gradgrad="linear in the input")
op("fmod", _t("fmod"), lambda rng: [
    Sample((off_grid(rng, 2, 3) * 3, np.full((2, 3), 1.7))),
    Sample((off_grid(rng, 2, 3) * 3, 1.3)),
    Sample((off_grid(rng, 3) * 3, NoGrad(np.full(3, -1.7)))),
    Sample((ints(rng, 4), Fixed(np.array([2, -3, 4, 5])))), Sample((ints(rng, 4), 2.5)),
    Sample((np.array([-3.0, 3.0, -3.0]), np.array([2.0, -2.0, 0.0])), forward_only=True),
], no_gradgrad="the derivative is piecewise constant",
   errors=lambda rng: _broadcast_errors(rng) + [
       ErrorCase((Fixed(np.array([3])), Fixed(np.array([0]))))])
