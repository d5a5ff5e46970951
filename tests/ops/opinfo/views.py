"""Op-table entries for :mod:`gradsum.ops.views` (appended to :data:`OPINFOS` when the
package imports this module).
"""

from __future__ import annotations

import numpy as np

from .core import ErrorCase, Fixed, Sample, _method, _t, idx, ints, op, rnd

op("contiguous", _method("contiguous"), lambda rng: [
    Sample((rnd(rng, 2, 3),)),
], check_grad_fn=False, notes="on a contiguous tensor both return the input itself")


# shape ----------------------------------------------------------------------------------------
op("expand", _method("expand"), lambda rng: [
    Sample((rnd(rng, 3, 1), 3, 4)), Sample((rnd(rng, 3), (2, 3))), Sample((rnd(rng, 1), 2, -1)),
    Sample((rnd(rng), (2, 2))), Sample((rnd(rng, 3, 1), -1, 2)),
], aliases=("broadcast_to",), errors=lambda rng: [
    ErrorCase((rnd(rng, 3, 2), 3, 4), shapes=((3, 2), (3, 4))), ErrorCase((rnd(rng, 2, 3), 3))])
op("reshape", _t("reshape"), lambda rng: [
    Sample((rnd(rng, 2, 3), (3, 2))), Sample((rnd(rng, 2, 3), (-1,))),
    Sample((rnd(rng, 2, 3, 2), (2, -1))), Sample((rnd(rng), (1, 1))),
    Sample((rnd(rng, 0, 3), (3, 0))),
], errors=lambda rng: [ErrorCase((rnd(rng, 2, 3), (4,)), contains=("6",)),
                       ErrorCase((rnd(rng, 2, 3), (-1, -1)))])
op("view", _method("view"), lambda rng: [
    Sample((rnd(rng, 2, 3), 3, 2)), Sample((rnd(rng, 2, 3), -1)), Sample((rnd(rng, 2, 3), (6, 1))),
], errors=lambda rng: [ErrorCase((rnd(rng, 2, 3), 4))])
op("flatten", _t("flatten"), lambda rng: [
    Sample((rnd(rng, 2, 3, 2),)), Sample((rnd(rng, 2, 3, 2), 1)), Sample((rnd(rng, 2, 3, 2), 0, 1)),
    Sample((rnd(rng),)),
], check_grad_fn=True)
op("unflatten", _t("unflatten"), lambda rng: [
    Sample((rnd(rng, 2, 6), 1, (2, 3))), Sample((rnd(rng, 6), -1, (3, 2))),
])
op("squeeze", _t("squeeze"), lambda rng: [
    Sample((rnd(rng, 2, 1, 3, 1),)), Sample((rnd(rng, 2, 1, 3), 1)), Sample((rnd(rng, 2, 1, 3), 0)),
    Sample((rnd(rng, 1, 3, 1), (0, -1))), Sample((rnd(rng),)),
], check_grad_fn=False, notes="torch names squeeze() SqueezeBackward0, squeeze(dim) "
   "SqueezeBackward1 and squeeze(dims) SqueezeBackward2; gradsum has one SqueezeBackward0")
op("unsqueeze", _t("unsqueeze"), lambda rng: [
    Sample((rnd(rng, 2, 3), 0)), Sample((rnd(rng, 2, 3), -1)), Sample((rnd(rng), 0)),
], errors=lambda rng: [ErrorCase((rnd(rng, 2, 3), 3))])
op("permute", _t("permute"), lambda rng: [
    Sample((rnd(rng, 2, 3, 4), (2, 0, 1))), Sample((rnd(rng, 2, 3), (-1, 0))),
], errors=lambda rng: [ErrorCase((rnd(rng, 2, 3), (0,))), ErrorCase((rnd(rng, 2, 3), (0, 0)))])
op("transpose", _t("transpose"), lambda rng: [
    Sample((rnd(rng, 2, 3), 0, 1)), Sample((rnd(rng, 2, 3, 4), -1, 0)),
], aliases=("swapaxes",), errors=lambda rng: [ErrorCase((rnd(rng, 2, 3), 0, 2))])
op("t", _t("t"), lambda rng: [Sample((rnd(rng, 2, 3),)), Sample((rnd(rng, 3),))],
   check_grad_fn=False, notes="t() of a 1-D tensor returns it unchanged in gradsum; torch "
   "makes a TBackward0 view", errors=lambda rng: [ErrorCase((rnd(rng, 2, 2, 2),))])
op("narrow", _t("narrow"), lambda rng: [
    Sample((rnd(rng, 3, 4), 0, 1, 2)), Sample((rnd(rng, 3, 4), -1, 0, 3)),
    Sample((rnd(rng, 3, 4), 1, -3, 2)),  # a negative start counts from the end
], check_grad_fn=False, notes="torch: SliceBackward0 as gradsum", errors=lambda rng: [
    ErrorCase((rnd(rng, 3, 4), 0, 1, 3)), ErrorCase((rnd(rng, 3, 4), 0, -4, 1)),
    ErrorCase((rnd(rng, 3, 4), 0, 0, -1)), ErrorCase((rnd(rng), 0, 0, 1))])
op("select", _t("select"), lambda rng: [
    Sample((rnd(rng, 3, 4), 0, 1)), Sample((rnd(rng, 3, 4), -1, -2)),
], errors=lambda rng: [ErrorCase((rnd(rng, 3, 4), 0, 3))])
op("split", _t("split"), lambda rng: [
    Sample((rnd(rng, 5, 2), 2)), Sample((rnd(rng, 5, 2), [1, 4])), Sample((rnd(rng, 2, 5), 3, 1)),
    Sample((rnd(rng, 2, 5),), {"split_size_or_sections": 2, "dim": -1}),
], notes="one SplitBackward0 / SplitWithSizesBackward0 node for all pieces, as torch's",
   errors=lambda rng: [ErrorCase((rnd(rng, 5, 2), [1, 2]))])
op("chunk", _t("chunk"), lambda rng: [
    Sample((rnd(rng, 5, 2), 2)), Sample((rnd(rng, 2, 6), 3, 1)), Sample((rnd(rng, 2, 6), 4, -1)),
], notes="as split")
op("unbind", _t("unbind"), lambda rng: [Sample((rnd(rng, 3, 2),)), Sample((rnd(rng, 3, 2), 1))],
   notes="one UnbindBackward0 node for all slices, as torch's")
op("diagonal", _t("diagonal"), lambda rng: [
    Sample((rnd(rng, 3, 4),)), Sample((rnd(rng, 3, 4), 1)), Sample((rnd(rng, 3, 4), -2)),
    Sample((rnd(rng, 2, 3, 4), 0, 1, 2)), Sample((rnd(rng, 2, 3, 4), 1, -1, 0)),
    Sample((rnd(rng, 3, 4), 5)), Sample((rnd(rng, 0, 3),)), Sample((ints(rng, 3, 3),)),
], np_ref=lambda a, offset=0, dim1=0, dim2=1: np.diagonal(a, offset, dim1, dim2),
   errors=lambda rng: [ErrorCase((rnd(rng, 3, 4), 0, 1, 1)), ErrorCase((rnd(rng, 3),))])
op("movedim", _t("movedim"), lambda rng: [
    Sample((rnd(rng, 2, 3, 4), 0, 2)), Sample((rnd(rng, 2, 3, 4), (0, 1), (2, 0))),
    Sample((rnd(rng, 2, 3, 4), -1, 0)), Sample((rnd(rng, 2, 3), 1, 1)),
    Sample((rnd(rng, 2, 3, 4), [2, 0], [-3, -1])),
], aliases=("moveaxis",), np_ref=np.moveaxis, errors=lambda rng: [
    ErrorCase((rnd(rng, 2, 3, 4), (0, 0), (1, 2))), ErrorCase((rnd(rng, 2, 3, 4), (0, 1), (1,))),
    ErrorCase((rnd(rng, 2, 3), 2, 0)),
])
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
op("as_strided", _t("as_strided"), lambda rng: [
    Sample((rnd(rng, 6), (3, 2), (1, 1))), Sample((rnd(rng, 3, 4), (2, 2), (4, 1), 1)),
    Sample((rnd(rng, 5), (2, 2), (2, 0))), Sample((rnd(rng, 4), (), (), 3)),
    Sample((ints(rng, 6), (2, 3), (3, 1))), Sample((rnd(rng, 4), (0, 2), (1, 1))),
], errors=lambda rng: [
    ErrorCase((rnd(rng, 6), (3, 2), (2, 1), 1)), ErrorCase((rnd(rng, 6), (2, 2), (1,))),
    ErrorCase((rnd(rng, 6), (2,), (1,), -1)),
])
