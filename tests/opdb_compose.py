"""Op-table entries for ``ops/compose.py`` and the composites it registers at top level
(appended to :data:`opdb.OPINFOS`; imported at the end of ``opdb.py``)."""

from __future__ import annotations

import numpy as np

from opdb import DT, ErrorCase, Fixed, NoGrad, Sample, _t, away, distinct, idx, ints, op, pos, rnd


def _probs(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return np.asarray(rng.uniform(0.15, 0.85, shape))


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
op("tensor_split", _t("tensor_split"), lambda rng: [
    Sample((rnd(rng, 5), 2)), Sample((rnd(rng, 3, 4), 3, 1)), Sample((rnd(rng, 3, 4), [1, 3])),
    Sample((rnd(rng, 3, 4), [3, 1], -1)), Sample((rnd(rng, 2, 7), idx(2, 5), 1)),
    Sample((rnd(rng, 2, 7), Fixed(np.array(3)), 1)), Sample((rnd(rng, 2), 4)),
    Sample((rnd(rng, 6, 2),), {"indices": [-2]}), Sample((rnd(rng, 6, 2),), {"sections": 4}),
], errors=lambda rng: [
    ErrorCase((rnd(rng, 3), 0)), ErrorCase((rnd(rng), 2)), ErrorCase((rnd(rng, 3), 2, 1)),
    ErrorCase((rnd(rng, 3), Fixed(np.array([1.0])))),
    ErrorCase((rnd(rng, 3), Fixed(np.array([[1]])))),
])
op("hsplit", _t("hsplit"), lambda rng: [
    Sample((rnd(rng, 3, 4), 2)), Sample((rnd(rng, 4), [1, 3])), Sample((rnd(rng, 2, 4, 2), 4)),
], errors=lambda rng: [ErrorCase((rnd(rng, 3, 4), 3)), ErrorCase((rnd(rng), 1)),
                       ErrorCase((rnd(rng, 3, 4), 0))])
op("vsplit", _t("vsplit"), lambda rng: [
    Sample((rnd(rng, 4, 3), 2)), Sample((rnd(rng, 4, 3), [1])),
], errors=lambda rng: [ErrorCase((rnd(rng, 4), 2)), ErrorCase((rnd(rng, 3, 2), 2))])
op("dsplit", _t("dsplit"), lambda rng: [
    Sample((rnd(rng, 2, 2, 4), 2)), Sample((rnd(rng, 1, 2, 4), [1, 2])),
], errors=lambda rng: [ErrorCase((rnd(rng, 2, 4), 2)), ErrorCase((rnd(rng, 2, 2, 3), 2))])
op("swapdims", _t("swapdims"), lambda rng: [
    Sample((rnd(rng, 2, 3), 0, 1)), Sample((rnd(rng, 2, 3, 4), -1, 0)),
], errors=lambda rng: [ErrorCase((rnd(rng, 2, 3), 0, 2))])
op("ravel", _t("ravel"), lambda rng: [
    Sample((rnd(rng, 2, 3),)), Sample((rnd(rng),)), Sample((rnd(rng, 0, 3),)),
])
op("diagflat", _t("diagflat"), lambda rng: [
    Sample((rnd(rng, 3),)), Sample((rnd(rng, 2, 2), 1)), Sample((rnd(rng), -2)),
    Sample((ints(rng, 2),)),
])

# -- reductions with nan ------------------------------------------------------------------------
def _with_nan(rng: np.random.Generator, *shape: int) -> Fixed:
    a = rng.standard_normal(shape)
    a[rng.random(shape) < 0.3] = np.nan
    return Fixed(a)


_nan_samples = lambda rng: [
    Sample((rnd(rng, 3, 4),)), Sample((rnd(rng, 3, 4), 1)), Sample((rnd(rng, 3, 4), (0, 1), True)),
    Sample((rnd(rng, 2, 3, 2), -1, True)), Sample((rnd(rng),)), Sample((_with_nan(rng, 4, 5), 1)),
    Sample((_with_nan(rng, 6),)), Sample((Fixed(np.array([[np.nan, np.nan], [1.0, 2.0]])), 1)),
    Sample((rnd(rng, 2, 3),), {"dtype": DT("float64")}),
]
op("nansum", _t("nansum"), lambda rng: [
    *_nan_samples(rng), Sample((ints(rng, 3, 4), 0)), Sample((Fixed(np.array([True, True])),)),
], errors=lambda rng: [ErrorCase((rnd(rng, 2), 1))])
op("nanmean", _t("nanmean"), _nan_samples,
   errors=lambda rng: [ErrorCase((ints(rng, 3),)), ErrorCase((rnd(rng, 2), 2))])


# -- elementwise: logit, clamp_min/max, float_power, fmax/fmin ----------------------------------
op("logit", _t("logit"), lambda rng: [
    Sample((_probs(rng, 3, 4),)), Sample((_probs(rng, 5), 0.2)), Sample((_probs(rng),)),
    Sample((Fixed(np.array([0.0, 0.1, 1.0, 1.5, -0.2])),)),
    Sample((Fixed(np.array([0.0, 0.1, 0.95, 1.5, -0.2])), 0.05)),
    Sample((Fixed(np.array([0, 1])),)), Sample((_probs(rng, 4), -1.0)),
])
_clamp_samples = lambda rng: [
    Sample((away(rng, 3, 4), 0.1)), Sample((away(rng, 3, 4), away(rng, 4))),
    Sample((away(rng, 4), away(rng, 3, 1))), Sample((away(rng, 3), NoGrad(away(rng, 3)))),
    Sample((ints(rng, 5), 1.5)), Sample((ints(rng, 5), 2)),
    Sample((Fixed(np.array([1.0, np.nan])), 0.0)),
]
op("clamp_min", _t("clamp_min"), _clamp_samples)
op("clamp_max", _t("clamp_max"), _clamp_samples)
op("float_power", _t("float_power"), lambda rng: [
    Sample((pos(rng, 3, 4), 2)), Sample((pos(rng, 3, 4), pos(rng, 4))), Sample((2.0, pos(rng, 3))),
    Sample((ints(rng, 4), 2)), Sample((pos(rng, 3), 0.5)),
    Sample((Fixed(np.array([1.0, 2.0], dtype=np.float32)), Fixed(np.array([2, 3])))),
], errors=lambda rng: [ErrorCase((pos(rng, 3), pos(rng, 2)))])
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

# -- products and distances ---------------------------------------------------------------------
op("inner", _t("inner"), lambda rng: [
    Sample((rnd(rng, 3, 4), rnd(rng, 4))), Sample((rnd(rng, 4), rnd(rng, 4))),
    Sample((rnd(rng, 2, 3), rnd(rng, 4, 3))), Sample((rnd(rng, 2, 3), rnd(rng))),
    Sample((ints(rng, 2, 3), ints(rng, 3))),
], errors=lambda rng: [ErrorCase((rnd(rng, 3, 4), rnd(rng, 5)), shapes=((3, 4), (5,))),
                       ErrorCase((ints(rng, 3), rnd(rng, 3)))])
op("vdot", _t("vdot"), lambda rng: [
    Sample((rnd(rng, 4), rnd(rng, 4))), Sample((rnd(rng, 3), NoGrad(rnd(rng, 3)))),
    Sample((ints(rng, 3), ints(rng, 3))), Sample((rnd(rng, 0), rnd(rng, 0))),
], errors=lambda rng: [ErrorCase((rnd(rng, 3, 4), rnd(rng, 4))),
                       ErrorCase((rnd(rng, 4), rnd(rng, 3))),
                       ErrorCase((ints(rng, 3), rnd(rng, 3)))])
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
op("matrix_power", _t("matrix_power"), lambda rng: [
    Sample((rnd(rng, 3, 3), 2)), Sample((rnd(rng, 3, 3) / 2, 5)), Sample((rnd(rng, 2, 3, 3), 3)),
    Sample((rnd(rng, 3, 3), 1)), Sample((rnd(rng, 3, 3), 0)),
    Sample((np.eye(3) * 2 + rnd(rng, 3, 3) / 4, -2)), Sample((ints(rng, 2, 2), 4)),
], errors=lambda rng: [ErrorCase((rnd(rng, 3, 4), 2), shapes=()), ErrorCase((rnd(rng, 3), 2)),
                       ErrorCase((ints(rng, 2, 2), -1))])
op("dist", _t("dist"), lambda rng: [
    Sample((rnd(rng, 3, 4), rnd(rng, 4))), Sample((rnd(rng, 3), rnd(rng, 3), 1)),
    Sample((rnd(rng, 3), rnd(rng, 3), 3)), Sample((rnd(rng, 3), rnd(rng, 3), 1.5)),
    Sample((distinct(rng, 4), distinct(rng, 4), float("inf"))),
    Sample((rnd(rng, 4), rnd(rng, 4), 0), forward_only=True),  # (torch's p=0 backward raises)
    Sample((rnd(rng, 4), rnd(rng, 4), 0.5)),
    Sample((rnd(rng, 2, 2), NoGrad(rnd(rng, 2, 2)))), Sample((ints(rng, 3), rnd(rng, 3))),
], errors=lambda rng: [ErrorCase((ints(rng, 3), ints(rng, 3))),
                       ErrorCase((rnd(rng, 3, 4), rnd(rng, 5)))])
op("cosine_similarity", _t("cosine_similarity"), lambda rng: [
    Sample((rnd(rng, 3, 4), rnd(rng, 3, 4))), Sample((rnd(rng, 3, 4), rnd(rng, 4), -1)),
    Sample((rnd(rng, 2, 3), rnd(rng, 2, 3), 0)),
], check_grad_fn=False, notes="the grad_fn is gradsum.nn.functional's (tested there)")
op("pairwise_distance", _t("pairwise_distance"), lambda rng: [
    Sample((rnd(rng, 3, 4), rnd(rng, 3, 4))), Sample((rnd(rng, 3, 4), rnd(rng, 4), 1.0)),
    Sample((rnd(rng, 2, 3), rnd(rng, 2, 3), 3.0, 1e-6, True)),
])

# -- the *_scatter family -----------------------------------------------------------------------
op("select_scatter", _t("select_scatter"), lambda rng: [
    Sample((rnd(rng, 3, 4), rnd(rng, 4), 0, 1)), Sample((rnd(rng, 3, 4), rnd(rng, 3), 1, -1)),
    Sample((rnd(rng, 3), rnd(rng), 0, 2)), Sample((rnd(rng, 2, 3), NoGrad(rnd(rng, 3)), 0, 0)),
], errors=lambda rng: [ErrorCase((rnd(rng, 3, 4), rnd(rng, 3), 0, 1)),
                       ErrorCase((rnd(rng, 3, 4), rnd(rng, 4), 0, 3))])
op("slice_scatter", _t("slice_scatter"), lambda rng: [
    Sample((rnd(rng, 3, 4), rnd(rng, 3, 2), 1, 0, 4, 2)), Sample((rnd(rng, 3, 4), rnd(rng, 3, 4))),
    Sample((rnd(rng, 3, 4), rnd(rng, 3, 1), 1, -1)), Sample((rnd(rng, 5), rnd(rng, 2), 0, 1, 3)),
    Sample((rnd(rng, 4, 2), rnd(rng, 0, 2), 0, 3, 1)),
], errors=lambda rng: [ErrorCase((rnd(rng, 3, 4), rnd(rng, 3, 3), 1, 0, 4, 2))])
op("diagonal_scatter", _t("diagonal_scatter"), lambda rng: [
    Sample((rnd(rng, 3, 4), rnd(rng, 3))), Sample((rnd(rng, 3, 4), rnd(rng, 3), 1)),
    Sample((rnd(rng, 3, 4), rnd(rng, 2), -1)), Sample((rnd(rng, 2, 3, 3), rnd(rng, 3, 2), 0, 0, 2)),
], errors=lambda rng: [ErrorCase((rnd(rng, 3, 4), rnd(rng, 3), 2))])

# -- composites of ops/__init__.py that torch also has at top level ---------------------------
op("diff", _t("diff"), lambda rng: [
    Sample((rnd(rng, 5),)), Sample((rnd(rng, 3, 4), 2, 0)),
    Sample((rnd(rng, 3, 4), 1, -1, rnd(rng, 3, 1))),
    Sample((rnd(rng, 3, 4),), {"append": rnd(rng, 3, 2)}), Sample((ints(rng, 5),)),
    Sample((Fixed(np.array([True, False, False])),)),
], errors=lambda rng: [ErrorCase((rnd(rng),)), ErrorCase((rnd(rng, 3), -1))])
op("argwhere", _t("argwhere"), lambda rng: [
    Sample((ints(rng, 3, 4, lo=0, hi=2),)), Sample((Fixed(np.array(2.0)),)),
], differentiable=False)
op("index_copy", _t("index_copy"), lambda rng: [
    Sample((rnd(rng, 3, 4), 0, idx(2, 0), rnd(rng, 2, 4))),
    Sample((rnd(rng, 3, 4), 1, idx(3), rnd(rng, 3, 1))),
    Sample((rnd(rng, 3, 4), -1, idx(1, 1), rnd(rng, 3, 2)), no_gradcheck="a repeated index: "
           "torch hands g to every copy, not the numerical (last-wins) derivative"),
    Sample((rnd(rng, 4), 0, idx(3), rnd(rng))), Sample((rnd(rng), 0, idx(0), rnd(rng, 1))),
    Sample((rnd(rng, 3, 2), 0, idx(1), NoGrad(rnd(rng, 1, 2)))),
    Sample((ints(rng, 3), 0, idx(0, 2), ints(rng, 2))),
], errors=lambda rng: [
    ErrorCase((rnd(rng, 3, 4), 0, idx(3), rnd(rng, 1, 4))),
    ErrorCase((rnd(rng, 3, 4), 0, idx(0), rnd(rng, 1, 3))),
    ErrorCase((rnd(rng, 3, 4), 0, idx(0, 1), rnd(rng, 1, 4))),
    ErrorCase((rnd(rng, 3, 4), 0, Fixed(np.array([0], np.int32)), rnd(rng, 1, 4))),
])
op("index_fill", _t("index_fill"), lambda rng: [
    Sample((rnd(rng, 3, 4), 0, idx(2, 0), 1.5)), Sample((rnd(rng, 3, 4), -1, idx(1), -2.0)),
    Sample((rnd(rng, 3, 4), 1, idx(0, 2, 0), rnd(rng))),
    Sample((rnd(rng, 3, 4), 0, idx(1), NoGrad(rnd(rng)))),
    Sample((NoGrad(rnd(rng, 3, 4)), 1, idx(3, 1), rnd(rng))),
    Sample((rnd(rng), 0, idx(0), rnd(rng))), Sample((rnd(rng, 2, 3), 1, idx(-1), 0.5)),
    Sample((ints(rng, 4), 0, idx(1, 3), 7)),
], errors=lambda rng: [
    ErrorCase((rnd(rng, 3, 4), 0, idx(3), 1.0)),
    ErrorCase((rnd(rng, 3, 4), 0, idx(0), rnd(rng, 1))),
    ErrorCase((rnd(rng, 3, 4), 0, Fixed(np.array([0], np.int32)), 1.0)),
])
