"""Op-table entries for :mod:`gradsum.ops.scan` (appended to :data:`OPINFOS` when the
package imports this module).
"""

from __future__ import annotations

import numpy as np

from .core import DT, ErrorCase, Fixed, Sample, _t, distinct, ints, mask, op, rnd

op("cumsum", _t("cumsum"), lambda rng: [
    Sample((rnd(rng, 2, 3), 1)), Sample((rnd(rng, 2, 3), 0)), Sample((rnd(rng, 4), -1)),
    Sample((rnd(rng), 0)), Sample((ints(rng, 2, 3), 1)), Sample((mask(rng, 4), 0)),
], np_ref=None, errors=lambda rng: [ErrorCase((rnd(rng, 2, 3), 2))])


_ZEROS_LINE = np.array([[1.5, 0.0, 2.0, -0.5], [0.0, 1.2, 0.0, 3.0], [0.7, -1.1, 0.9, 0.0]])
op("cumprod", _t("cumprod"), lambda rng: [
    Sample((rnd(rng, 2, 3), 1)), Sample((rnd(rng, 2, 3), -2)), Sample((rnd(rng, 4), 0)),
    Sample((rnd(rng), 0)), Sample((rnd(rng, 0, 3), 1)), Sample((rnd(rng, 3, 1), 1)),
    Sample((_ZEROS_LINE, 1)), Sample((_ZEROS_LINE, 0)), Sample((np.zeros((2, 3)), 1)),
    Sample((ints(rng, 2, 3), 1)), Sample((rnd(rng, 2, 3), 1), {"dtype": DT("float64")}),
], np_ref=lambda a, dim, dtype=None: np.cumprod(a, axis=dim),
   errors=lambda rng: [ErrorCase((rnd(rng, 2, 3), 2))])
op("logcumsumexp", _t("logcumsumexp"), lambda rng: [
    Sample((rnd(rng, 2, 3), 1)), Sample((rnd(rng, 2, 3), -2)), Sample((rnd(rng), 0)),
    Sample((rnd(rng, 0, 3), 0)), Sample((rnd(rng, 3, 4, 2), 1)),
    Sample((rnd(rng, 5) * 30, 0)),
], np_ref=lambda a, dim: np.logaddexp.accumulate(a, axis=dim) if a.ndim else a,
   errors=lambda rng: [ErrorCase((ints(rng, 3), 0)), ErrorCase((rnd(rng, 3), 1))])
for _name in ("cummax", "cummin"):
    op(_name, _t(_name), lambda rng: [
        Sample((distinct(rng, 2, 5), 1)), Sample((distinct(rng, 3, 4), 0)),
        Sample((distinct(rng, 6), -1)), Sample((distinct(rng), 0)), Sample((rnd(rng, 0, 3), 0)),
        Sample((ints(rng, 3, 6, lo=0, hi=3), 1)),
        Sample((np.array([1.0, np.nan, 0.5, np.nan, 2.0]), 0), forward_only=True),
    ], errors=lambda rng: [ErrorCase((rnd(rng, 2, 3), 2))])

# -- composites of ops/__init__.py that torch also has at top level ---------------------------
op("diff", _t("diff"), lambda rng: [
    Sample((rnd(rng, 5),)), Sample((rnd(rng, 3, 4), 2, 0)),
    Sample((rnd(rng, 3, 4), 1, -1, rnd(rng, 3, 1))),
    Sample((rnd(rng, 3, 4),), {"append": rnd(rng, 3, 2)}), Sample((ints(rng, 5),)),
    Sample((Fixed(np.array([True, False, False])),)),
], errors=lambda rng: [ErrorCase((rnd(rng),)), ErrorCase((rnd(rng, 3), -1))])
