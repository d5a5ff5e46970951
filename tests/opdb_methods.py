"""Op-table entries for ``ops/methods.py`` (appended to :data:`opdb.OPINFOS`; imported at the
end of ``opdb.py``)."""

from __future__ import annotations

import numpy as np

from opdb import ErrorCase, Fixed, NoGrad, Sample, _t, away, distinct, idx, ints, op, pos, rnd

_bool = Fixed(np.array([True, False]))


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
_SPECIAL = np.array([0.0, 1.5, np.inf, -np.inf, np.nan])
for _name in ("isposinf", "isneginf", "isreal"):
    op(_name, _t(_name), lambda rng: [
        Sample((NoGrad(_SPECIAL),)), Sample((ints(rng, 3),)), Sample((_bool,)),
    ], differentiable=False)
op("fix", _t("fix"), lambda rng: [
    Sample((away(rng, 2, 3) * 3,)), Sample((ints(rng, 3),)),
], no_gradgrad="zero derivative", errors=lambda rng: [ErrorCase((_bool,))])
op("msort", _t("msort"), lambda rng: [
    Sample((distinct(rng, 4, 3),)), Sample((distinct(rng, 5),)),
    Sample((ints(rng, 3, 2),)),
])
op("angle", _t("angle"), lambda rng: [
    Sample((away(rng, 2, 3),)), Sample((Fixed(np.array([-1.0, 0.0, 2.0, np.nan])),)),
    Sample((ints(rng, 4),)),
], no_gradgrad="zero derivative")
op("hardshrink", _t("hardshrink"), lambda rng: [
    Sample((away(rng, 2, 3) * 1.5,)), Sample((away(rng, 5), 0.1)),
], no_gradgrad="piecewise linear", errors=lambda rng: [ErrorCase((ints(rng, 3),))])
op("prelu", _t("prelu"), lambda rng: [
    Sample((away(rng, 2, 3), rnd(rng, 1))), Sample((away(rng, 2, 3, 2), rnd(rng, 3))),
    Sample((away(rng, 4), rnd(rng, 1))), Sample((away(rng), rnd(rng, 1))),
    Sample((away(rng, 3), rnd(rng))),
], no_gradgrad="piecewise linear", errors=lambda rng: [
    ErrorCase((rnd(rng, 2, 3), rnd(rng, 2))), ErrorCase((rnd(rng, 2, 3), rnd(rng, 3, 1))),
    ErrorCase((rnd(rng), rnd(rng, 2))),
])
op("addr", _t("addr"), lambda rng: [
    Sample((rnd(rng, 2, 3), rnd(rng, 2), rnd(rng, 3))),
    Sample((rnd(rng, 3), rnd(rng, 2), rnd(rng, 3)), {"beta": 0.5, "alpha": 2.0}),
    Sample((rnd(rng), rnd(rng, 2), rnd(rng, 2)), {"beta": 0}),
    Sample((NoGrad(rnd(rng, 2, 2)), rnd(rng, 2), NoGrad(rnd(rng, 2)))),
    Sample((ints(rng, 2, 2), ints(rng, 2), ints(rng, 2)), {"alpha": 3}),
    Sample((Fixed(np.array([[True, False]])), _bool, _bool)),
], errors=lambda rng: [
    ErrorCase((rnd(rng, 2, 2), rnd(rng, 2, 1), rnd(rng, 2))),
    ErrorCase((rnd(rng, 3, 3), rnd(rng, 2), rnd(rng, 2))),
    ErrorCase((ints(rng, 2, 2), ints(rng, 2), ints(rng, 2)), {"beta": 0.5}),
])
op("renorm", _t("renorm"), lambda rng: [
    Sample((rnd(rng, 3, 4), 2, 0, 1.0)), Sample((rnd(rng, 3, 4), 1, 1, 1.5)),
    Sample((rnd(rng, 2, 3, 2), 3, -1, 0.8)), Sample((rnd(rng, 3, 4), 2, 0, 100.0)),
    Sample((distinct(rng, 3, 4), float("inf"), 0, 0.5)),
], errors=lambda rng: [
    ErrorCase((rnd(rng, 3, 4), 0, 0, 1.0)), ErrorCase((rnd(rng, 3, 4), 2, 0, -1.0)),
    ErrorCase((rnd(rng, 3), 2, 0, 1.0)), ErrorCase((ints(rng, 2, 2), 2, 0, 1.0)),
])
op("mvlgamma", _t("mvlgamma"), lambda rng: [
    Sample((pos(rng, 2, 3) + 1, 1)), Sample((pos(rng, 4) + 1, 3)),
    Sample((np.asarray(pos(rng) + 1), 2)),
    Sample((Fixed(np.array([2, 3])), 2)), Sample((np.array([0.1, 0.2, 0.15]), 3)),
], errors=lambda rng: [ErrorCase((pos(rng, 3), 0))])
op("narrow_copy", _t("narrow_copy"), lambda rng: [
    Sample((rnd(rng, 4, 3), 0, 1, 2)),
    # (torch's own backward fails for a negative start: forward only)
    Sample((rnd(rng, 4, 3), -1, -2, 2), forward_only=True),
    Sample((rnd(rng, 4), 0, 0, 0)), Sample((ints(rng, 5), 0, 2, 3)),
], errors=lambda rng: [ErrorCase((rnd(rng, 4), 0, 3, 2)), ErrorCase((rnd(rng), 0, 0, 1))])
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
op("as_strided", _t("as_strided"), lambda rng: [
    Sample((rnd(rng, 6), (3, 2), (1, 1))), Sample((rnd(rng, 3, 4), (2, 2), (4, 1), 1)),
    Sample((rnd(rng, 5), (2, 2), (2, 0))), Sample((rnd(rng, 4), (), (), 3)),
    Sample((ints(rng, 6), (2, 3), (3, 1))), Sample((rnd(rng, 4), (0, 2), (1, 1))),
], errors=lambda rng: [
    ErrorCase((rnd(rng, 6), (3, 2), (2, 1), 1)), ErrorCase((rnd(rng, 6), (2, 2), (1,))),
    ErrorCase((rnd(rng, 6), (2,), (1,), -1)),
])
