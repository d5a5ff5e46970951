"""Op-table entries for :mod:`gradsum.ops.rearrange` (appended to :data:`OPINFOS` when the
package imports this module).
"""

from __future__ import annotations

import numpy as np

from .core import ErrorCase, Fixed, NoGrad, Sample, _method, _t, idx, ints, op, rnd

op("cat", _t("cat"), lambda rng: [
    Sample(([rnd(rng, 2, 3), rnd(rng, 1, 3)],)), Sample(([rnd(rng, 2, 3), rnd(rng, 2, 2)], 1)),
    Sample(([rnd(rng, 2, 3), rnd(rng, 2, 1), rnd(rng, 2, 2)], -1)),
    Sample(([rnd(rng, 2, 3), NoGrad(rnd(rng, 2, 3))],)),
    Sample(([rnd(rng, 2, 3), rnd(rng, 0)],)),
    Sample(([rnd(rng, 2, 3), ints(rng, 2, 3)],)),
    Sample(((rnd(rng, 3), rnd(rng, 2)),)),
], aliases=("concat", "concatenate"), errors=lambda rng: [
    ErrorCase(([rnd(rng, 2, 3), rnd(rng, 2, 2)],), shapes=()),
    ErrorCase(([],)), ErrorCase(([rnd(rng, 2), rnd(rng, 3)], 1)),
])
op("stack", _t("stack"), lambda rng: [
    Sample(([rnd(rng, 2, 3), rnd(rng, 2, 3)],)), Sample(([rnd(rng, 2, 3), rnd(rng, 2, 3)], -1)),
    Sample(([rnd(rng), rnd(rng), rnd(rng)],)),
], errors=lambda rng: [
    ErrorCase(([rnd(rng, 2, 3), rnd(rng, 3, 2)],))])
op("flip", _t("flip"), lambda rng: [
    Sample((rnd(rng, 2, 3), (0,))), Sample((rnd(rng, 2, 3), (0, -1))), Sample((rnd(rng, 4), [0])),
])
op("tril", _t("tril"), lambda rng: [
    Sample((rnd(rng, 3, 3),)), Sample((rnd(rng, 3, 4), 1)), Sample((rnd(rng, 2, 3, 3), -1)),
])
op("triu", _t("triu"), lambda rng: [
    Sample((rnd(rng, 3, 3),)), Sample((rnd(rng, 3, 4), 1)), Sample((rnd(rng, 2, 3, 3), -1)),
])
op("repeat", _method("repeat"), lambda rng: [
    Sample((rnd(rng, 2, 3), 2, 1)),
    Sample((rnd(rng, 3), (2, 2))), Sample((rnd(rng, 2, 1), 1, 3, 2)),
], errors=lambda rng: [ErrorCase((rnd(rng, 2, 3), 2))])
op("roll", _t("roll"), lambda rng: [
    Sample((rnd(rng, 2, 3), 1, 1)), Sample((rnd(rng, 2, 3), (1, -2), (0, 1))),
    Sample((rnd(rng, 2, 3), 4)), Sample((rnd(rng, 3), -1, 0)), Sample((rnd(rng), 2)),
    Sample((rnd(rng, 0, 2), 1, 1)), Sample((rnd(rng, 2, 3, 4), 5, -1)),
    Sample((rnd(rng, 2, 3), (1, 1), (1, 1))),
], np_ref=lambda a, shifts, dims=None: np.roll(a, shifts, dims),
   errors=lambda rng: [ErrorCase((rnd(rng, 2, 3), (1, 2), (0,))),
                       ErrorCase((rnd(rng, 2, 3), 1, 2)), ErrorCase((rnd(rng), 1, 0))])
op("rot90", _t("rot90"), lambda rng: [
    Sample((rnd(rng, 2, 3),)), Sample((rnd(rng, 2, 3), 2)), Sample((rnd(rng, 2, 3), -1)),
    Sample((rnd(rng, 2, 3), 3, (1, 0))), Sample((rnd(rng, 2, 3, 4), 1, (0, -1))),
    Sample((rnd(rng, 2, 3), 0)), Sample((rnd(rng, 2, 3), 5)),
], errors=lambda rng: [ErrorCase((rnd(rng, 3),)), ErrorCase((rnd(rng, 2, 3), 1, (0, 0))),
                       ErrorCase((rnd(rng, 2, 3), 1, (0,)))])
op("fliplr", _t("fliplr"), lambda rng: [Sample((rnd(rng, 2, 3),)), Sample((rnd(rng, 2, 3, 4),))],
   np_ref=np.fliplr, errors=lambda rng: [ErrorCase((rnd(rng, 3),))])
op("flipud", _t("flipud"), lambda rng: [Sample((rnd(rng, 3),)), Sample((rnd(rng, 2, 3),))],
   np_ref=np.flipud, errors=lambda rng: [ErrorCase((rnd(rng),))])
op("diag", _t("diag"), lambda rng: [
    Sample((rnd(rng, 3),)), Sample((rnd(rng, 3), 1)), Sample((rnd(rng, 3), -2)),
    Sample((rnd(rng, 3, 4),)), Sample((rnd(rng, 3, 4), 1)), Sample((rnd(rng, 3, 4), -1)),
    Sample((rnd(rng, 0),)), Sample((ints(rng, 3),)),
], np_ref=np.diag, errors=lambda rng: [ErrorCase((rnd(rng, 2, 3, 4),)), ErrorCase((rnd(rng),))])
op("diag_embed", _t("diag_embed"), lambda rng: [
    Sample((rnd(rng, 3),)), Sample((rnd(rng, 2, 3),)), Sample((rnd(rng, 2, 3), 1)),
    Sample((rnd(rng, 2, 3), -1, 0, 2)), Sample((rnd(rng, 2, 3), 0, 1, 0)),
    Sample((rnd(rng, 2, 0),)), Sample((ints(rng, 2, 2),)),
], errors=lambda rng: [ErrorCase((rnd(rng, 2, 3), 0, 1, 1)), ErrorCase((rnd(rng, 3), 0, 0, 3))])
op("repeat_interleave", _t("repeat_interleave"), lambda rng: [
    Sample((rnd(rng, 2, 3), 2)), Sample((rnd(rng, 2, 3), 2, 0)), Sample((rnd(rng, 2, 3), 3, -1)),
    Sample((rnd(rng, 2, 3), idx(1, 0, 2), 1)), Sample((rnd(rng, 3), idx(2))),
    Sample((rnd(rng), 3)), Sample((rnd(rng, 2, 3), 0, 1)),
    Sample((rnd(rng, 3, 2), idx(2, 0, 1), 0), {"output_size": 3}),
    Sample((Fixed(np.array([1, 2, 0])),)), Sample((ints(rng, 2, 2), 2, 1)),
], errors=lambda rng: [
    ErrorCase((rnd(rng, 2, 3), -1)), ErrorCase((rnd(rng, 3, 2), idx(1, 2), 0)),
    ErrorCase((rnd(rng, 3, 2), idx(1, -2, 1), 0)),
    ErrorCase((rnd(rng, 3, 2), Fixed(np.array([1.0, 2.0, 1.0])), 0)),
    ErrorCase((rnd(rng, 3, 2), Fixed(np.ones((3, 1), dtype=np.int64)), 0)),
])


# -- shapes: tile, stacks, splits, ravel --------------------------------------------------------
op("tile", _t("tile"), lambda rng: [
    Sample((rnd(rng, 2, 3), (2,))), Sample((rnd(rng, 2, 3), (2, 1, 2))),
    Sample((rnd(rng), (3,))), Sample((rnd(rng, 3), ())), Sample((ints(rng, 2, 2), (2, 2))),
])
_stack_samples = lambda rng: [
    Sample(([rnd(rng, 2, 3), rnd(rng, 2, 3)],)), Sample(([rnd(rng, 3), rnd(rng, 2)],)),
    Sample(([rnd(rng), rnd(rng)],)), Sample(([rnd(rng, 2, 3, 2), rnd(rng, 2, 3, 2)],)),
    Sample(([ints(rng, 2, 3), rnd(rng, 2, 3)],)),
]
_stack_errors = lambda rng: [ErrorCase(([],))]
op("hstack", _t("hstack"), _stack_samples, errors=_stack_errors)
op("vstack", _t("vstack"), lambda rng: [
    Sample(([rnd(rng, 3), rnd(rng, 2, 3)],)), Sample(([rnd(rng), rnd(rng)],)),
    Sample(([rnd(rng, 2, 3), ints(rng, 1, 3)],)),
], aliases=("row_stack",), errors=_stack_errors)
op("dstack", _t("dstack"), lambda rng: [
    Sample(([rnd(rng, 3), rnd(rng, 3)],)), Sample(([rnd(rng, 2, 3), rnd(rng, 2, 3, 2)],)),
    Sample(([rnd(rng), rnd(rng)],)),
], errors=_stack_errors)
op("column_stack", _t("column_stack"), lambda rng: [
    Sample(([rnd(rng, 3), rnd(rng, 3, 2)],)), Sample(([rnd(rng), rnd(rng, 1)],)),
    Sample(([rnd(rng, 2), rnd(rng, 2)],)),
], errors=lambda rng: [ErrorCase(([rnd(rng, 3), rnd(rng, 4, 2)],))])
op("diagflat", _t("diagflat"), lambda rng: [
    Sample((rnd(rng, 3),)), Sample((rnd(rng, 2, 2), 1)), Sample((rnd(rng), -2)),
    Sample((ints(rng, 2),)),
])
op("block_diag", _t("block_diag"), lambda rng: [
    Sample((rnd(rng, 2, 2), rnd(rng, 3))), Sample((rnd(rng), rnd(rng, 2, 3), rnd(rng, 1, 1))),
    Sample((rnd(rng, 2, 3),)), Sample((ints(rng, 2), rnd(rng, 2, 2))), Sample(()),
    Sample((rnd(rng, 0, 2), rnd(rng, 2))),
], errors=lambda rng: [ErrorCase((rnd(rng, 2, 2, 2),))])
op("cartesian_prod", _t("cartesian_prod"), lambda rng: [
    Sample((rnd(rng, 3), rnd(rng, 2))), Sample((rnd(rng, 2), rnd(rng, 2), rnd(rng, 3))),
    Sample((rnd(rng, 3),)), Sample((ints(rng, 2), ints(rng, 3))),
], errors=lambda rng: [ErrorCase((rnd(rng, 2, 2),)), ErrorCase(()),
                       ErrorCase((ints(rng, 2), rnd(rng, 2)))])
op("combinations", _t("combinations"), lambda rng: [
    Sample((rnd(rng, 4),)), Sample((rnd(rng, 4), 3)), Sample((rnd(rng, 3), 2, True)),
    Sample((rnd(rng, 3), 1)), Sample((rnd(rng, 3), 5)),
    Sample((rnd(rng, 3), 0), forward_only=True),  # (torch: no grad_fn for r = 0)
    Sample((ints(rng, 4), 2)),
], errors=lambda rng: [ErrorCase((rnd(rng, 2, 2),)), ErrorCase((rnd(rng, 3), -1))])
op("narrow_copy", _t("narrow_copy"), lambda rng: [
    Sample((rnd(rng, 4, 3), 0, 1, 2)),
    # (torch's own backward fails for a negative start: forward only)
    Sample((rnd(rng, 4, 3), -1, -2, 2), forward_only=True),
    Sample((rnd(rng, 4), 0, 0, 0)), Sample((ints(rng, 5), 0, 2, 3)),
], errors=lambda rng: [ErrorCase((rnd(rng, 4), 0, 3, 2)), ErrorCase((rnd(rng), 0, 0, 1))])


# -- meshgrid / take / scatter_reduce ----------------------------------------------------------
op("meshgrid", _t("meshgrid"), lambda rng: [
    Sample((rnd(rng, 2), rnd(rng, 3)), {"indexing": "ij"}),
    Sample((rnd(rng, 2), rnd(rng, 3)), {"indexing": "xy"}),
    Sample((rnd(rng, 2), rnd(rng, 3), rnd(rng, 4)), {"indexing": "xy"}),
    Sample(([rnd(rng, 2), rnd(rng)],), {"indexing": "ij"}),
    Sample((rnd(rng, 3),), {"indexing": "xy"}),
    Sample((rnd(rng, 2), NoGrad(rnd(rng, 2))), {"indexing": "ij"},
           no_gradcheck="the second grid is a constant"),
], errors=lambda rng: [
    ErrorCase((rnd(rng, 2, 2), rnd(rng, 2)), {"indexing": "ij"}),
    ErrorCase((rnd(rng, 2), rnd(rng, 2)), {"indexing": "foo"}),
])
