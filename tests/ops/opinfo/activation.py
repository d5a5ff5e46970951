"""Op-table entries for :mod:`gradsum.ops.activation` (appended to :data:`OPINFOS` when the
package imports this module).
"""

from __future__ import annotations

import numpy as np

from .core import (
    _BOOL_ERROR,
    DT,
    ErrorCase,
    Sample,
    _t,
    _tf,
    _unary,
    _unary_samples,
    away,
    ints,
    mask,
    off_grid,
    op,
    rnd,
)

_unary("sigmoid", rnd, lambda a: 1 / (1 + np.exp(-a)))
_unary("relu", away, lambda a: np.maximum(a, 0), no_gradgrad="piecewise linear",
       **_BOOL_ERROR)
op("gelu", _tf("gelu"), lambda rng: _unary_samples(rnd)(rng) + [
    Sample((rnd(rng, 2, 3),), {"approximate": "tanh"}),
    Sample((rnd(rng, 5) * 4,), {"approximate": "none"}),
], errors=lambda rng: [ErrorCase((rnd(rng, 2),), {"approximate": "fast"}),
                       ErrorCase((ints(rng, 3),)), ErrorCase((mask(rng, 3),))])
# torch's activation kernels are floating only (NotImplementedError for integers and bools)
_INT_ERRORS = {"errors": lambda rng: [ErrorCase((ints(rng, 3),)), ErrorCase((mask(rng, 3),))]}
op("silu", _tf("silu"), _unary_samples(rnd), **_INT_ERRORS)
op("leaky_relu", _tf("leaky_relu"), lambda rng: _unary_samples(away)(rng) + [
    Sample((away(rng, 2, 3), 0.2)), Sample((away(rng, 2, 3),), {"negative_slope": 0.5}),
], no_gradgrad="piecewise linear", **_INT_ERRORS)
op("softplus", _tf("softplus"), lambda rng: _unary_samples(rnd)(rng) + [
    Sample((rnd(rng, 2, 3) * 3,), {"beta": 2.0}),
    Sample((off_grid(rng, 2, 3) * 4,), {"beta": 2.0, "threshold": 3.0}),
], **_INT_ERRORS)
op("softmax", _t("softmax"), lambda rng: [
    Sample((rnd(rng, 2, 3), 1)), Sample((rnd(rng, 2, 3), 0)), Sample((rnd(rng, 2, 3, 2), -1)),
    Sample((rnd(rng), 0)), Sample((rnd(rng, 3) * 50, 0)),
    Sample((rnd(rng, 2, 3), 1), {"dtype": DT("float64")}),
    Sample((rnd(rng, 2, 0), 1)), Sample((rnd(rng, 0, 3), 0)),
], errors=lambda rng: [ErrorCase((rnd(rng, 2, 3), 2)), ErrorCase((ints(rng, 3), 0)),
                       ErrorCase((ints(rng, 2, 3), 0))])
op("log_softmax", _t("log_softmax"), lambda rng: [
    Sample((rnd(rng, 2, 3), 1)), Sample((rnd(rng, 2, 3), 0)), Sample((rnd(rng, 2, 3, 2), -1)),
    Sample((rnd(rng), 0)), Sample((rnd(rng, 3) * 50, 0)), Sample((rnd(rng, 2, 0), -1)),
], errors=lambda rng: [ErrorCase((rnd(rng, 2, 3), -3)), ErrorCase((ints(rng, 3), 0))])
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
