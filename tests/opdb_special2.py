"""Op-table entries for ops/special2.py (torch.special's entr, erfcx, ndtr/ndtri/log_ndtr,
i0e/i1/i1e, xlog1py, zeta, gammainc/gammaincc = igamma/igammac).

Imported at the end of ``opdb.py``; appends to ``opdb.OPINFOS``. ``zeta`` and ``igamma``/
``igammac`` are differentiable in their second argument only (torch raises for the first), so
their first operand is a :class:`NoGrad` sample; ``entr`` and ``ndtri`` sample inside their
domain (``x > 0``, ``0 < p < 1``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from opdb import (
    _INT_SAMPLE,
    ErrorCase,
    Fixed,
    NoGrad,
    Sample,
    _binary_samples,
    _broadcast_errors,
    _unary_samples,
    ints,
    op,
    pos,
    rnd,
)

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None  # type: ignore[assignment]


def _ts(name: str) -> Callable[..., Any]:
    """``torch.special.<name>`` looked up lazily."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(torch.special, name)(*args, **kwargs)

    call.__name__ = name
    return call


def _prob(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return np.asarray(rng.uniform(0.05, 0.95, shape))


def _wide(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return np.asarray(rng.uniform(-6.0, 6.0, shape))


def _unary(name: str, gen: Any, edges: list[float], **kw: Any) -> None:
    base = _unary_samples(gen)
    op(f"special_{name}", _ts(name), lambda rng: base(rng) + _INT_SAMPLE + [
        Sample((np.array(edges),), forward_only=True)], **kw)


_INF = float("inf")
_NAN = float("nan")
_unary("entr", pos, [0.0, -1.0, _INF, _NAN, 1e-300])
_unary("erfcx", _wide, [-30.0, -26.0, 0.0, 2.0, 30.0, 1e10, _INF, -_INF, _NAN])
_unary("ndtri", _prob, [0.0, 1.0, -0.5, 1.5, 1e-300, 1e-20, _NAN])
_unary("log_ndtr", _wide, [-40.0, -1.0, 0.0, 10.0, _INF, -_INF, _NAN])
_unary("ndtr", _wide, [-40.0, 0.0, 10.0, _INF, -_INF, _NAN])
_unary("i0e", _wide, [0.0, 8.0, 100.0, -1e4, _INF, -_INF, _NAN])
_unary("i1", _wide, [0.0, 8.0, 100.0, -100.0, _INF, -_INF, _NAN])
_unary("i1e", _wide, [0.0, 8.0, 100.0, -1e4, _INF, -_INF, _NAN])

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
