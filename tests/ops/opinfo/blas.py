"""Op-table entries for :mod:`gradsum.ops.blas` (appended to :data:`OPINFOS` when the
package imports this module).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .core import (
    ErrorCase,
    Fixed,
    NoGrad,
    Sample,
    _bool,
    _t,
    _tf,
    distinct,
    ints,
    mask,
    op,
    rnd,
    torch,
)


# linalg ---------------------------------------------------------------------------------------
def _matmul_samples(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((rnd(rng, 2, 3), rnd(rng, 3, 4))), Sample((rnd(rng, 3), rnd(rng, 3))),
        Sample((rnd(rng, 2, 3), rnd(rng, 3))), Sample((rnd(rng, 3), rnd(rng, 3, 2))),
        Sample((rnd(rng, 2, 2, 3), rnd(rng, 3, 2))),
        Sample((rnd(rng, 2, 1, 2, 3), rnd(rng, 3, 3, 1))),
        Sample((rnd(rng, 2, 2, 3), rnd(rng, 3))),
        Sample((rnd(rng, 2, 3), NoGrad(rnd(rng, 3, 2)))),
        Sample((NoGrad(rnd(rng, 2, 3)), rnd(rng, 3))),
        Sample((rnd(rng, 0, 3), rnd(rng, 3, 2))), Sample((rnd(rng, 2, 0), rnd(rng, 0, 2))),
        Sample((ints(rng, 2, 3), ints(rng, 3, 2))),
    ]


op("matmul", _t("matmul"), _matmul_samples, np_ref=np.matmul,
   notes="other ranks than 1/1, 2/1, 2/2 are composed as torch's (tests/test_grad_fn_names.py)",
   errors=lambda rng: [
       ErrorCase((rnd(rng, 2, 3), rnd(rng, 4, 2)), shapes=((2, 3), (4, 2))),
       ErrorCase((rnd(rng, 3), rnd(rng, 4))),
       ErrorCase((rnd(rng, 2, 2, 3), rnd(rng, 3, 3, 2)), shapes=((2, 2, 3), (3, 3, 2))),
       ErrorCase((rnd(rng), rnd(rng, 2))),
       ErrorCase((rnd(rng, 2, 3), Fixed(rnd(rng, 3, 2)))),  # float32 @ float64
       ErrorCase((mask(rng, 2, 3), mask(rng, 3, 2))),
       # a shape error before the bool dtype's NotImplementedError, as in torch
       ErrorCase((mask(rng, 2, 3), mask(rng, 2, 3)), contains=("cannot be multiplied",)),
       ErrorCase((mask(rng, 3), mask(rng, 4))),
       ErrorCase((mask(rng, 2, 2, 3), mask(rng, 3, 3, 2))),
       ErrorCase((mask(rng, 3), mask(rng, 2, 3, 2)), contains=('"bmm"',)),
       ErrorCase((mask(rng, 2, 3), mask(rng, 3)), contains=('"addmv_impl_cpu"',)),
       ErrorCase((mask(rng, 3), mask(rng, 3)), contains=('"dot"',)),
   ])
# mm/bmm/mv/dot: matmul restricted to one pair of ranks each, with torch's argument checks
op("mm", _t("mm"), lambda rng: [
    Sample((rnd(rng, 2, 3), rnd(rng, 3, 4))), Sample((rnd(rng, 2, 3), NoGrad(rnd(rng, 3, 2)))),
    Sample((rnd(rng, 0, 3), rnd(rng, 3, 2))), Sample((ints(rng, 2, 3), ints(rng, 3, 2))),
], np_ref=np.matmul, errors=lambda rng: [
    ErrorCase((rnd(rng, 3), rnd(rng, 3, 2)), contains=("self must be a matrix",)),
    ErrorCase((rnd(rng, 2, 3), rnd(rng, 3)), contains=("mat2 must be a matrix",)),
    ErrorCase((rnd(rng, 2, 2, 3), rnd(rng, 3, 2))), ErrorCase((rnd(rng), rnd(rng, 2, 2))),
    ErrorCase((rnd(rng, 2, 3), rnd(rng, 4, 2)), shapes=((2, 3), (4, 2))),
    ErrorCase((rnd(rng, 2, 3), Fixed(rnd(rng, 3, 2)))),
    ErrorCase((mask(rng, 2, 3), mask(rng, 3, 2))), ErrorCase((mask(rng, 2, 3), mask(rng, 2, 3))),
    ErrorCase((rnd(rng, 2, 3), [[1.0]] * 3)),
])
op("bmm", _t("bmm"), lambda rng: [
    Sample((rnd(rng, 2, 2, 3), rnd(rng, 2, 3, 4))),
    Sample((NoGrad(rnd(rng, 3, 2, 3)), rnd(rng, 3, 3, 1))),
    Sample((rnd(rng, 0, 2, 3), rnd(rng, 0, 3, 2))),
    Sample((ints(rng, 2, 2, 3), ints(rng, 2, 3, 2))),
], np_ref=np.matmul, errors=lambda rng: [
    ErrorCase((rnd(rng, 2, 3), rnd(rng, 2, 3, 2)), contains=("batch1 must be a 3D tensor",)),
    ErrorCase((rnd(rng, 2, 2, 3), rnd(rng, 3, 2)), contains=("batch2 must be a 3D tensor",)),
    ErrorCase((rnd(rng, 1, 2, 2, 3), rnd(rng, 1, 2, 3, 2))),
    ErrorCase((rnd(rng, 1, 2, 3), rnd(rng, 3, 3, 2)), contains=("[1, 3] but got: [3, 3]",)),
    ErrorCase((rnd(rng, 2, 2, 3), rnd(rng, 2, 4, 2))),
    ErrorCase((rnd(rng, 2, 2, 3), Fixed(rnd(rng, 2, 3, 2)))),
    ErrorCase((mask(rng, 2, 2, 3), mask(rng, 2, 3, 2)), contains=('"bmm"',)),
    ErrorCase((mask(rng, 2, 2, 3), mask(rng, 2, 4, 2))),
])
op("mv", _t("mv"), lambda rng: [
    Sample((rnd(rng, 2, 3), rnd(rng, 3))), Sample((NoGrad(rnd(rng, 2, 3)), rnd(rng, 3))),
    Sample((rnd(rng, 2, 0), rnd(rng, 0))), Sample((ints(rng, 2, 3), ints(rng, 3))),
], np_ref=np.matmul, errors=lambda rng: [
    ErrorCase((rnd(rng, 3), rnd(rng, 3))), ErrorCase((rnd(rng, 2, 3), rnd(rng, 3, 1))),
    ErrorCase((rnd(rng, 2, 2, 3), rnd(rng, 3))), ErrorCase((rnd(rng, 2, 3), rnd(rng))),
    ErrorCase((rnd(rng), rnd(rng, 3))),  # IndexError in torch
    ErrorCase((rnd(rng, 2, 3), rnd(rng, 4)), contains=("size mismatch",)),
    ErrorCase((rnd(rng, 2, 3), Fixed(rnd(rng, 3)))),
    ErrorCase((mask(rng, 2, 3), mask(rng, 3)), contains=('"addmv_impl_cpu"',)),
    ErrorCase((mask(rng, 2, 3), mask(rng, 4))),
])
op("dot", _t("dot"), lambda rng: [
    Sample((rnd(rng, 3), rnd(rng, 3))), Sample((rnd(rng, 3), NoGrad(rnd(rng, 3)))),
    Sample((rnd(rng, 0), rnd(rng, 0))), Sample((ints(rng, 4), ints(rng, 4))),
], np_ref=np.dot, errors=lambda rng: [
    ErrorCase((rnd(rng, 2, 3), rnd(rng, 3, 2)), contains=("1D tensors expected",)),
    ErrorCase((rnd(rng, 3), rnd(rng, 3, 1))), ErrorCase((rnd(rng), rnd(rng))),
    ErrorCase((rnd(rng, 3), rnd(rng, 4)), contains=("inconsistent tensor size",)),
    ErrorCase((rnd(rng, 3), Fixed(rnd(rng, 3)))), ErrorCase((rnd(rng, 3), ints(rng, 3))),
    ErrorCase((mask(rng, 3), mask(rng, 3)), contains=('"dot"',)),
    ErrorCase((mask(rng, 3), mask(rng, 4))),
])
op("linear", _tf("linear"), lambda rng: [
    Sample((rnd(rng, 4, 3), rnd(rng, 2, 3), rnd(rng, 2))),
    Sample((rnd(rng, 4, 3), rnd(rng, 2, 3))),
    Sample((rnd(rng, 2, 4, 3), rnd(rng, 2, 3), rnd(rng, 2))),
    Sample((rnd(rng, 3), rnd(rng, 2, 3), rnd(rng, 2))),
    Sample((NoGrad(rnd(rng, 4, 3)), rnd(rng, 2, 3), rnd(rng, 2))),
    Sample((rnd(rng, 4, 3), NoGrad(rnd(rng, 2, 3)), rnd(rng, 2))),
    Sample((rnd(rng, 0, 3), rnd(rng, 2, 3), rnd(rng, 2))),
    Sample((rnd(rng, 1), rnd(rng, 0, 1), rnd(rng, 0))),      # no output features
], grad_fn_map={"ViewBackward0": "LinearBackward0", "SqueezeBackward4": "AddBackward0"},
   grad_fn_note="torch reshapes N-D inputs around addmm (the output shows a view node); "
   "gradsum records one LinearBackward0; a 1-D input goes through matmul + add",
   errors=lambda rng: [
       ErrorCase((rnd(rng, 4, 3), rnd(rng, 2, 4), rnd(rng, 2)), shapes=((2, 4),)),
   ])
op("outer", _t("outer"), lambda rng: [
    Sample((rnd(rng, 3), rnd(rng, 2))), Sample((rnd(rng, 3), NoGrad(rnd(rng, 0)))),
], aliases=("ger",), check_grad_fn=True)



# einsum, tensordot, kron, cdist and the add*mm family (ops/blas) ----------------------------
def _t_cdist(x1: Any, x2: Any, p: float = 2.0) -> Any:
    """torch.cdist's values and errors with a twice-differentiable gradient: torch's own
    CdistBackward0 has no double backward (tests/ops/test_cdist.py compares its first gradient,
    including at zero distance, and its grad_fn name)."""
    torch.cdist(x1.detach(), x2.detach(), p)  # (raises torch's errors)
    return torch.linalg.vector_norm(x1.unsqueeze(-2) - x2.unsqueeze(-3), ord=p, dim=-1)
op("einsum", _t("einsum"), lambda rng: [
    Sample(("ij,jk->ik", rnd(rng, 2, 3), rnd(rng, 3, 4))),
    Sample(("ij,jk", rnd(rng, 2, 3), rnd(rng, 3, 4))),
    Sample(("ii", rnd(rng, 3, 3))), Sample(("ii->i", rnd(rng, 3, 3))),
    Sample(("ij->ji", rnd(rng, 2, 3))), Sample(("ji", rnd(rng, 2, 3))),
    Sample(("ij->", rnd(rng, 2, 3))), Sample(("iij->j", rnd(rng, 3, 3, 2))),
    Sample(("bij,bjk->bik", rnd(rng, 2, 3, 4), rnd(rng, 2, 4, 2))),
    Sample(("...ij,...jk->...ik", rnd(rng, 2, 3, 4), rnd(rng, 4, 5))),
    Sample(("...ij,jk", rnd(rng, 2, 3, 4), rnd(rng, 4, 5))),
    Sample(("bij,bjk->bik", rnd(rng, 1, 3, 4), rnd(rng, 2, 4, 2))),
    Sample(("i,j->ij", rnd(rng, 3), rnd(rng, 4))), Sample(("i,i->", rnd(rng, 3), rnd(rng, 3))),
    Sample(("ij,kl->", rnd(rng, 2, 2), rnd(rng, 3, 1))),
    Sample(("ij,jk,kl->il", rnd(rng, 2, 3), rnd(rng, 3, 4), rnd(rng, 4, 2))),
    Sample(("i,i,i->i", rnd(rng, 3), rnd(rng, 3), rnd(rng, 3))),
    Sample(("ij,jk->ik", [rnd(rng, 2, 3), rnd(rng, 3, 4)])),
    Sample(("ij,jk->ik", rnd(rng, 2, 3), NoGrad(rnd(rng, 3, 4)))),
    Sample(("iji,j->", rnd(rng, 2, 3, 2), rnd(rng, 3))),
    Sample(("Ab,bA->A", rnd(rng, 2, 3), rnd(rng, 3, 2))), Sample(("...", rnd(rng, 2, 3))),
    Sample(("i j , j -> i", rnd(rng, 2, 3), rnd(rng, 3))),
    Sample(("ij->j", ints(rng, 2, 3))), Sample(("ij,jk->ik", rnd(rng, 0, 3), rnd(rng, 3, 2))),
], grad_fn="EinsumBackward0",
   grad_fn_note="torch's einsum is a composite (its grad_fn is its last step's: ViewBackward0, "
                "SumBackward1, MulBackward0, ...); gradsum's is one node",
   errors=lambda rng: [
       ErrorCase(("ij,jk->ik", rnd(rng, 2, 3))), ErrorCase(("ij", rnd(rng, 2, 3), rnd(rng, 3))),
       ErrorCase(("ijk->", rnd(rng, 2, 3))),
       ErrorCase(("ij,jk->ik", rnd(rng, 2, 3), rnd(rng, 2, 3))),
       ErrorCase(("ij->k", rnd(rng, 2, 3))), ErrorCase(("ij->ii", rnd(rng, 2, 3))),
       ErrorCase(("i1->", rnd(rng, 3))), ErrorCase(("ii->i", rnd(rng, 3, 4))),
       ErrorCase(("...i...->", rnd(rng, 3))), ErrorCase(("i,i->", rnd(rng, 3), ints(rng, 3))),
   ])
op("tensordot", _t("tensordot"), lambda rng: [
    Sample((rnd(rng, 2, 3, 4), rnd(rng, 3, 4, 5))), Sample((rnd(rng, 2, 3), rnd(rng, 3, 4), 1)),
    Sample((rnd(rng, 2, 3), rnd(rng, 4), 0)),
    Sample((rnd(rng, 2, 3, 4), rnd(rng, 4, 2, 3), ([1, 2], [2, 0]))),
    Sample((rnd(rng, 2, 3), rnd(rng, 3, 2), ([-1], [0]))),
    Sample((rnd(rng, 2, 3), NoGrad(rnd(rng, 2, 3)), 2)),
], errors=lambda rng: [
    ErrorCase((rnd(rng, 3, 4), rnd(rng, 3, 4), ([1], [0]))),
    ErrorCase((rnd(rng, 3, 4), rnd(rng, 3, 4), ([1], [0, 1]))),
    ErrorCase((rnd(rng, 3, 4), rnd(rng, 3, 4), -1)), ErrorCase((rnd(rng, 3, 4), rnd(rng, 3), 2)),
])
op("kron", _t("kron"), lambda rng: [
    Sample((rnd(rng, 2, 3), rnd(rng, 2, 2))), Sample((rnd(rng, 3), rnd(rng, 2, 2))),
    Sample((rnd(rng, 2, 1, 2), rnd(rng, 3, 2))), Sample((rnd(rng, 2, 3), NoGrad(rnd(rng, 2)))),
    Sample((ints(rng, 2), ints(rng, 2, 2))), Sample((rnd(rng, 0, 2), rnd(rng, 2))),
], np_ref=np.kron)
op("cdist", _t_cdist, lambda rng: [
    Sample((rnd(rng, 3, 4), rnd(rng, 2, 4))), Sample((rnd(rng, 3, 4), rnd(rng, 2, 4), 1.0)),
    Sample((rnd(rng, 3, 2), rnd(rng, 4, 2), 3.0)),
    Sample((distinct(rng, 3, 2), distinct(rng, 2, 2), float("inf"))),
    Sample((rnd(rng, 2, 3, 4), rnd(rng, 2, 2, 4))), Sample((rnd(rng, 1, 3, 2), rnd(rng, 2, 2, 2))),
    Sample((rnd(rng, 3, 2), NoGrad(rnd(rng, 2, 2)))), Sample((rnd(rng, 0, 2), rnd(rng, 2, 2))),
], grad_fn="CdistBackward0",
   grad_fn_note="the reference is a twice-differentiable composite (torch's CdistBackward0 "
                "has no double backward); tests/ops/test_cdist.py checks the name against torch",
   errors=lambda rng: [
       ErrorCase((rnd(rng, 3), rnd(rng, 3))), ErrorCase((rnd(rng, 3, 4), rnd(rng, 2, 5))),
       ErrorCase((rnd(rng, 3, 2), rnd(rng, 3, 2), -1.0)),
       ErrorCase((ints(rng, 3, 2), ints(rng, 3, 2))),
   ])
op("addmm", _t("addmm"), lambda rng: [
    Sample((rnd(rng, 2, 4), rnd(rng, 2, 3), rnd(rng, 3, 4))),
    Sample((rnd(rng, 4), rnd(rng, 2, 3), rnd(rng, 3, 4)), {"beta": 0.5, "alpha": 2}),
    Sample((rnd(rng), rnd(rng, 2, 3), rnd(rng, 3, 4)), {"alpha": -1.5}),
    Sample((rnd(rng, 1, 4), rnd(rng, 2, 3), NoGrad(rnd(rng, 3, 4))), {"beta": 0}),
    Sample((NoGrad(rnd(rng, 2, 4)), rnd(rng, 2, 3), rnd(rng, 3, 4))),
    Sample((rnd(rng, 2, 4), NoGrad(rnd(rng, 2, 3)), NoGrad(rnd(rng, 3, 4))), {"beta": 3}),
    Sample((rnd(rng, 2, 4), rnd(rng, 2, 0), rnd(rng, 0, 4))),
], errors=lambda rng: [
    ErrorCase((rnd(rng, 3, 4), rnd(rng, 3, 4), rnd(rng, 3, 4))),
    ErrorCase((rnd(rng, 5), rnd(rng, 3, 4), rnd(rng, 4, 4))),
])
op("addmv", _t("addmv"), lambda rng: [
    Sample((rnd(rng, 2), rnd(rng, 2, 3), rnd(rng, 3))),
    Sample((rnd(rng), rnd(rng, 2, 3), rnd(rng, 3)), {"beta": 2, "alpha": 0.5}),
    Sample((rnd(rng, 1), NoGrad(rnd(rng, 2, 3)), rnd(rng, 3)), {"beta": 0}),
    Sample((NoGrad(rnd(rng, 2)), rnd(rng, 2, 3), NoGrad(rnd(rng, 3)))),
], errors=lambda rng: [ErrorCase((rnd(rng, 3), rnd(rng, 3, 4), rnd(rng, 5)))])
op("addbmm", _t("addbmm"), lambda rng: [
    Sample((rnd(rng, 2, 4), rnd(rng, 3, 2, 5), rnd(rng, 3, 5, 4))),
    Sample((rnd(rng, 4), rnd(rng, 3, 2, 5), rnd(rng, 3, 5, 4)), {"beta": -1, "alpha": 2.5}),
    Sample((rnd(rng, 2, 4), NoGrad(rnd(rng, 3, 2, 5)), rnd(rng, 3, 5, 4))),
    Sample((NoGrad(rnd(rng, 2, 4)), rnd(rng, 3, 2, 5), NoGrad(rnd(rng, 3, 5, 4))), {"beta": 0}),
], errors=lambda rng: [ErrorCase((rnd(rng, 3, 4), rnd(rng, 2, 3, 4), rnd(rng, 2, 3, 4)))])
op("baddbmm", _t("baddbmm"), lambda rng: [
    Sample((rnd(rng, 3, 2, 4), rnd(rng, 3, 2, 5), rnd(rng, 3, 5, 4))),
    Sample((rnd(rng, 2, 4), rnd(rng, 3, 2, 5), rnd(rng, 3, 5, 4)), {"beta": 0.5, "alpha": 3}),
    Sample((rnd(rng, 1, 1, 4), rnd(rng, 3, 2, 5), NoGrad(rnd(rng, 3, 5, 4))), {"beta": 0}),
], errors=lambda rng: [ErrorCase((rnd(rng, 2, 3, 4), rnd(rng, 2, 3, 4), rnd(rng, 2, 3, 4)))])

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
