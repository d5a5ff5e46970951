"""Op-table entries for ops/linalg2.py (triangular and LU solves, the ``_ex`` variants,
lstsq, cond, the products, the legacy cholesky/triangular solves, index_reduce).

Imported at the end of ``opdb.py``; appends to ``opdb.OPINFOS``. Inputs are well conditioned:
triangular matrices with a dominant diagonal, SPD matrices ``A A^T + n I`` (their Cholesky
factors for cholesky_solve/cholesky_inverse), full-rank least-squares problems, distinct
eigenvalues. Ops that read one triangle only are called on that triangle (as torch's own
gradcheck wrappers do), so gradcheck's perturbations of the other one stay consistent.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

import gradsum
import opdb
from opdb import ErrorCase, Fixed, NoGrad, OpInfo, Sample, _t, distinct, op, pos, rnd

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None  # type: ignore[assignment]


def _lop(name: str, gfn: Any, tfn: Any, samples: Any, **kw: Any) -> OpInfo:
    info = OpInfo(name, gfn, tfn, samples, **kw)
    opdb.OPINFOS.append(info)
    return info


def _tl(name: str) -> Any:
    def call(*a: Any, **k: Any) -> Any:
        return getattr(torch.linalg, name)(*a, **k)

    call.__name__ = name
    return call


def _gl(name: str) -> Any:
    return getattr(gradsum.linalg, name)


def _quiet(fn: Any) -> Any:
    """``fn`` with its (deprecation / beta) warnings silenced."""

    def call(*a: Any, **k: Any) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*a, **k)

    return call


def _tri(rng: np.random.Generator, *shape: int, upper: bool = False) -> np.ndarray:
    n = shape[-1]
    a = rng.uniform(-0.5, 0.5, shape) + np.eye(n) * rng.uniform(2.0, 3.0, shape[:-1])[..., None]
    return np.asarray(np.triu(a) if upper else np.tril(a))


def _wellcond(rng: np.random.Generator, *shape: int) -> np.ndarray:
    n = shape[-1]
    return np.asarray(rng.uniform(-0.6, 0.6, shape) + 2.0 * np.eye(n))


def _spd(rng: np.random.Generator, *shape: int) -> np.ndarray:
    a = rng.standard_normal(shape)
    return np.asarray(a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1]))


def _chol(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return np.asarray(np.linalg.cholesky(_spd(rng, *shape)))


def _cholT(rng: np.random.Generator, *shape: int) -> np.ndarray:
    """An upper Cholesky factor (C-contiguous: gradcheck perturbs the buffer in place)."""
    return np.ascontiguousarray(np.swapaxes(_chol(rng, *shape), -1, -2))


def _eig_input(rng: np.random.Generator, *shape: int) -> np.ndarray:
    n = shape[-1]
    q, _ = np.linalg.qr(rng.standard_normal(shape))
    w = np.arange(n) * 1.5 + rng.uniform(-0.3, 0.3, shape[:-1])
    return np.asarray(q @ (w[..., :, None] * np.swapaxes(q, -1, -2)))


def _sym(fn: Any) -> Any:
    def call(a: Any, *args: Any, **kwargs: Any) -> Any:
        return fn((a + a.mT) / 2, *args, **kwargs)

    return call


def _on_tri(fn: Any, pos_: int, upper_kw: str = "upper", default_upper: bool = False) -> Any:
    """``fn`` with argument ``pos_`` replaced by its triangle (the one the op reads)."""

    def call(*args: Any, **kwargs: Any) -> Any:
        args = list(args)
        up = kwargs.get(upper_kw, args[pos_ + 1] if len(args) > pos_ + 1 and isinstance(
            args[pos_ + 1], bool) else default_upper)
        args[pos_] = args[pos_].triu() if up else args[pos_].tril()
        return fn(*args, **kwargs)

    return call


def _lu_pair(rng: np.random.Generator, *shape: int) -> tuple[np.ndarray, Fixed]:
    LU, piv = gradsum.linalg.lu_factor(gradsum.tensor(_wellcond(rng, *shape),
                                                      dtype=gradsum.float64))
    return LU.numpy(), Fixed(piv.numpy())


# -- solve_triangular / triangular_solve -------------------------------------------------------
_lop("linalg.solve_triangular", _gl("solve_triangular"), _tl("solve_triangular"), lambda rng: [
    Sample((_tri(rng, 3, 3), rnd(rng, 3, 2)), {"upper": False}),
    Sample((_tri(rng, 3, 3, upper=True), rnd(rng, 3, 2)), {"upper": True}),
    Sample((_tri(rng, 3, 3, upper=True), rnd(rng, 2, 3)), {"upper": True, "left": False}),
    Sample((_tri(rng, 3, 3), rnd(rng, 3, 1)), {"upper": False, "unitriangular": True}),
    Sample((_tri(rng, 2, 1, 3, 3), rnd(rng, 4, 3, 2)), {"upper": False}),
    Sample((NoGrad(_tri(rng, 3, 3)), rnd(rng, 3, 2)), {"upper": False}),
], errors=lambda rng: [
    ErrorCase((rnd(rng, 3, 3), rnd(rng, 2, 3)), {"upper": True}),
    ErrorCase((rnd(rng, 3, 3), rnd(rng, 3)), {"upper": True}),
    ErrorCase((rnd(rng, 2, 3), rnd(rng, 3, 1)), {"upper": True}),
])
op("triangular_solve", _quiet(_t("triangular_solve")), lambda rng: [
    Sample((rnd(rng, 3, 2), _tri(rng, 3, 3, upper=True))),
    Sample((rnd(rng, 3, 2), _tri(rng, 3, 3), False)),
    Sample((rnd(rng, 2, 3, 2), _tri(rng, 3, 3), False, True)),
    Sample((rnd(rng, 3, 1), _tri(rng, 3, 3, upper=True)), {"unitriangular": True}),
], errors=lambda rng: [ErrorCase((rnd(rng, 3), rnd(rng, 3, 3))),
                       ErrorCase((rnd(rng, 2, 2), rnd(rng, 3, 3)))])
opdb.OPINFOS[-1].op = _quiet(gradsum.triangular_solve)

# -- the _ex variants --------------------------------------------------------------------------
_lop("linalg.cholesky_ex", _sym(_gl("cholesky_ex")), _sym(_tl("cholesky_ex")), lambda rng: [
    Sample((_spd(rng, 3, 3),)), Sample((_spd(rng, 2, 3, 3),)),
    Sample((_spd(rng, 3, 3),), {"upper": True}),
])
_lop("linalg.inv_ex", _gl("inv_ex"), _tl("inv_ex"), lambda rng: [
    Sample((_wellcond(rng, 3, 3),)), Sample((_wellcond(rng, 2, 2, 2),)),
    Sample((np.array([[1.0, 2.0], [2.0, 4.0]]),), forward_only=True),
], errors=lambda rng: [ErrorCase((rnd(rng, 2, 3),))])
_lop("linalg.solve_ex", _gl("solve_ex"), _tl("solve_ex"), lambda rng: [
    Sample((_wellcond(rng, 3, 3), rnd(rng, 3, 2))), Sample((_wellcond(rng, 3, 3), rnd(rng, 3))),
    Sample((_wellcond(rng, 2, 3, 3), rnd(rng, 2, 1, 3)), {"left": False}),
    Sample((np.array([[1.0, 2.0], [2.0, 4.0]]), np.ones((2, 1))), forward_only=True),
])

# -- LU ----------------------------------------------------------------------------------------
_lu_samples = lambda rng: [
    Sample((_wellcond(rng, 3, 3),)), Sample((rnd(rng, 2, 4, 3),)), Sample((rnd(rng, 3, 5),)),
]
_lop("linalg.lu_factor", _gl("lu_factor"), _tl("lu_factor"), _lu_samples,
     errors=lambda rng: [ErrorCase((np.array([[1.0, 2.0], [2.0, 4.0]]),)),
                         ErrorCase((rnd(rng, 3, 3),), {"pivot": False})])
_lop("linalg.lu_factor_ex", _gl("lu_factor_ex"), _tl("lu_factor_ex"), lambda rng: [
    *_lu_samples(rng), Sample((np.array([[1.0, 2.0], [2.0, 4.0]]),), forward_only=True),
])


def _lu_LU(lib: str) -> Any:
    def call(*a: Any, **k: Any) -> Any:
        P, L, U = (gradsum if lib == "g" else torch).linalg.lu(*a, **k)
        return L, U

    return call


_lop("linalg.lu", _lu_LU("g"), _lu_LU("t"), _lu_samples,
     notes="L and U here (P does not require grad: compared in test_linalg2.py)")
_lop("linalg.lu_solve", _gl("lu_solve"), _tl("lu_solve"), lambda rng: [
    Sample((*_lu_pair(rng, 3, 3), rnd(rng, 3, 2))),
    Sample((*_lu_pair(rng, 3, 3), rnd(rng, 3, 2)), {"adjoint": True}),
    Sample((*_lu_pair(rng, 3, 3), rnd(rng, 2, 3)), {"left": False}),
    Sample((*_lu_pair(rng, 3, 3), rnd(rng, 2, 3)), {"left": False, "adjoint": True}),
    Sample((*_lu_pair(rng, 2, 3, 3), rnd(rng, 4, 1, 3, 2))),
], errors=lambda rng: [ErrorCase((*_lu_pair(rng, 3, 3), rnd(rng, 3)))])
op("lu_unpack", lambda *a: _t("lu_unpack")(*a)[1:], lambda rng: [
    Sample(_lu_pair(rng, 3, 3)), Sample(_lu_pair(rng, 2, 3, 3)),
    Sample((rnd(rng, 4, 3), Fixed(np.array([2, 3, 3], dtype=np.int32)))),
    Sample((rnd(rng, 3, 5), Fixed(np.array([1, 3, 3], dtype=np.int32)))),
    Sample(_lu_pair(rng, 3, 3) + (False,), forward_only=True),
    Sample(_lu_pair(rng, 3, 3) + (True, False)),
], notes="L and U here (P in test_linalg2.py)")
opdb.OPINFOS[-1].op = lambda *a: gradsum.lu_unpack(*a)[1:]

# -- lstsq, rank, cond, eigvalsh ---------------------------------------------------------------


def _lstsq(lib: str) -> Any:
    def call(*a: Any, **k: Any) -> Any:
        return tuple((gradsum if lib == "g" else torch).linalg.lstsq(*a, **k))[:3]

    return call


_lop("linalg.lstsq", _lstsq("g"), _lstsq("t"), lambda rng: [
    Sample((rnd(rng, 5, 3), rnd(rng, 5, 2)), {"driver": "gelsd"}),
    Sample((rnd(rng, 5, 3), rnd(rng, 5, 2))),
    Sample((_wellcond(rng, 3, 3), rnd(rng, 3, 2)), {"driver": "gelss"}),
    Sample((rnd(rng, 2, 5, 3), rnd(rng, 2, 5)), {"driver": "gelsd"}),
    Sample((rnd(rng, 2, 4), rnd(rng, 2, 2)), {"driver": "gelsd"}),
    Sample((rnd(rng, 5, 3), rnd(rng, 5, 1)), {"driver": "gels"}),
], rtol32=1e-4, atol32=1e-4, notes="singular_values in test_linalg2.py",
   errors=lambda rng: [
    ErrorCase((rnd(rng, 5, 3), rnd(rng, 5, 2)), {"driver": "xyz"}),
    ErrorCase((rnd(rng, 5, 3), rnd(rng, 4, 2))),
])
_lop("linalg.matrix_rank", _gl("matrix_rank"), _tl("matrix_rank"), lambda rng: [
    Sample((rnd(rng, 3, 3),)), Sample((np.ones((2, 3, 4)),)),
    Sample((_spd(rng, 3, 3),), {"hermitian": True}),
    Sample((_spd(rng, 3, 3),), {"atol": 1.0, "rtol": 0.5}),
    Sample((np.diag([1.0, 1e-3, 0.0]),), {"atol": 1e-2}),
    Sample((np.diag([1.0, 1e-3, 0.0]),), {"rtol": 1e-4}),
], differentiable=False)
_SV = lambda rng, *s: opdb_special_svd(rng, *s)


def opdb_special_svd(rng: np.random.Generator, *shape: int) -> np.ndarray:
    """Matrices with well-separated singular values."""
    m, n = shape[-2:]
    k = min(m, n)
    u, _ = np.linalg.qr(rng.standard_normal(shape[:-2] + (m, m)))
    v, _ = np.linalg.qr(rng.standard_normal(shape[:-2] + (n, n)))
    s = np.zeros(shape)
    idx = np.arange(k)
    s[..., idx, idx] = np.arange(k, 0, -1) * 1.2 + 0.5
    return np.asarray(u @ s @ v)


_lop("linalg.cond", _gl("cond"), _tl("cond"), lambda rng: [
    Sample((_SV(rng, 3, 3),)), Sample((_SV(rng, 2, 4, 3), 2)), Sample((_SV(rng, 3, 3), -2)),
    Sample((_SV(rng, 3, 3), "nuc")),
    *[Sample((_wellcond(rng, 3, 3), p), forward_only=True)
      for p in ("fro", float("inf"), -float("inf"), 1, -1)],
    Sample((np.array([[1.0, 2.0], [2.0, 4.0]]), 1), forward_only=True),
], notes="'fro'/±1/±inf: torch's composite fills the inverse in place, so its backward "
         "raises (checked in test_linalg2.py)", errors=lambda rng: [
    ErrorCase((rnd(rng, 2, 3), 1)), ErrorCase((rnd(rng, 3, 3), 3))])
_lop("linalg.eigvalsh", _sym(_gl("eigvalsh")), _sym(_tl("eigvalsh")), lambda rng: [
    Sample((_eig_input(rng, 3, 3),)), Sample((_eig_input(rng, 2, 4, 4), "U")),
])

# -- products ----------------------------------------------------------------------------------
_lop("linalg.diagonal", _gl("diagonal"), _tl("diagonal"), lambda rng: [
    Sample((rnd(rng, 3, 4),)), Sample((rnd(rng, 2, 3, 4),), {"offset": 1, "dim1": 0, "dim2": 2}),
])
_lop("linalg.matmul", _gl("matmul"), _tl("matmul"), lambda rng: [
    Sample((rnd(rng, 2, 3), rnd(rng, 3, 4))), Sample((rnd(rng, 2, 2, 3), rnd(rng, 3))),
])
_lop("linalg.matrix_power", _gl("matrix_power"), _tl("matrix_power"), lambda rng: [
    Sample((rnd(rng, 3, 3) * 0.5, 3)), Sample((_wellcond(rng, 2, 3, 3), -2)),
    Sample((rnd(rng, 3, 3), 0)),
])
_lop("linalg.multi_dot", lambda *ts: gradsum.linalg.multi_dot(list(ts)),
     lambda *ts: torch.linalg.multi_dot(list(ts)), lambda rng: [
         Sample((rnd(rng, 2, 3), rnd(rng, 3, 4))),
         Sample((rnd(rng, 3), rnd(rng, 3, 4), rnd(rng, 4, 2))),
         Sample((rnd(rng, 2, 3), rnd(rng, 3, 4), rnd(rng, 4))),
         Sample((rnd(rng, 2, 3), rnd(rng, 3, 4), rnd(rng, 4, 5), rnd(rng, 5, 1))),
         Sample((rnd(rng, 3), rnd(rng, 3))),
     ], errors=lambda rng: [ErrorCase((rnd(rng, 2, 3), rnd(rng, 4, 2)), shapes=((2, 3), (4, 2))),
                            ErrorCase((rnd(rng, 2, 2, 3), rnd(rng, 3, 2)))])
op("chain_matmul", _quiet(_t("chain_matmul")), lambda rng: [
    Sample((rnd(rng, 2, 3), rnd(rng, 3, 4), rnd(rng, 4, 2))), Sample((rnd(rng, 3, 3),)),
], errors=lambda rng: [ErrorCase((rnd(rng, 3),))])
opdb.OPINFOS[-1].op = _quiet(gradsum.chain_matmul)


def _tinv_input(rng: np.random.Generator) -> np.ndarray:
    return np.asarray(_wellcond(rng, 6, 6).reshape(6, 2, 3))


_lop("linalg.tensorinv", _gl("tensorinv"), _tl("tensorinv"), lambda rng: [
    Sample((_tinv_input(rng),), {"ind": 1}), Sample((_wellcond(rng, 4, 4).reshape(2, 2, 2, 2),)),
], errors=lambda rng: [
    ErrorCase((rnd(rng, 4, 2, 3),), {"ind": 1}), ErrorCase((rnd(rng, 6, 2, 3),), {"ind": 0})])
_lop("linalg.tensorsolve", _gl("tensorsolve"), _tl("tensorsolve"), lambda rng: [
    Sample((_wellcond(rng, 6, 6).reshape(2, 3, 6), rnd(rng, 2, 3))),
    Sample((np.ascontiguousarray(np.moveaxis(_wellcond(rng, 6, 6).reshape(2, 3, 6), 2, 0)),
            rnd(rng, 2, 3)), {"dims": (0,)}),
])
_lop("linalg.vander", _gl("vander"), _tl("vander"), lambda rng: [
    Sample((pos(rng, 3),)), Sample((pos(rng, 2, 3),), {"N": 4}),
    Sample((Fixed(np.array([1, 2, 3])),)),
], errors=lambda rng: [ErrorCase((rnd(rng, 1),))])
_lop("linalg.vecdot", _gl("vecdot"), _tl("vecdot"), lambda rng: [
    Sample((rnd(rng, 2, 3), rnd(rng, 2, 3))), Sample((rnd(rng, 3, 2), rnd(rng, 3, 1)),
                                                     {"dim": 0}),
], errors=lambda rng: [ErrorCase((Fixed(np.ones(3, dtype=np.int64)),
                                  Fixed(np.ones(3, dtype=np.int64))))])

# -- cholesky_solve / cholesky_inverse ---------------------------------------------------------
op("cholesky_solve", _on_tri(_t("cholesky_solve"), 1), lambda rng: [
    Sample((rnd(rng, 3, 2), _chol(rng, 3, 3))),
    Sample((rnd(rng, 2, 3, 2), _cholT(rng, 3, 3), True)),
    Sample((rnd(rng, 3, 1), _chol(rng, 2, 3, 3))),
], errors=lambda rng: [ErrorCase((rnd(rng, 3), rnd(rng, 3, 3)))])
opdb.OPINFOS[-1].op = _on_tri(gradsum.cholesky_solve, 1)
op("cholesky_inverse", _on_tri(_t("cholesky_inverse"), 0), lambda rng: [
    Sample((_chol(rng, 3, 3),)), Sample((_cholT(rng, 2, 3, 3), True)),
], errors=lambda rng: [ErrorCase((rnd(rng, 2, 3),))],
   notes="a zero on the diagonal raises LinAlgError: checked in test_linalg2.py")
opdb.OPINFOS[-1].op = _on_tri(gradsum.cholesky_inverse, 0)


# -- index_reduce ------------------------------------------------------------------------------
def _ir_samples(rng: np.random.Generator) -> list[Sample]:
    idx = Fixed(np.array([0, 2, 0, 4]))
    out = []
    for red in ("prod", "mean", "amax", "amin"):
        gen = pos if red == "prod" else distinct
        for inc in (True, False):
            out.append(Sample((gen(rng, 5, 3), 0, idx, gen(rng, 4, 3), red),
                              {"include_self": inc}))
    out.append(Sample((pos(rng, 3, 5), 1, idx, pos(rng, 3, 4), "mean")))
    out.append(Sample((Fixed(np.arange(6).reshape(3, 2)), 0, Fixed(np.array([0, 0])),
                       Fixed(np.array([[3, 4], [5, 7]])), "mean")))
    return out


op("index_reduce", _quiet(_t("index_reduce")), _ir_samples, errors=lambda rng: [
    ErrorCase((rnd(rng, 3, 2), 0, Fixed(np.array([0])), rnd(rng, 1, 2), "sum")),
    ErrorCase((rnd(rng, 3, 2), 0, Fixed(np.array([0, 1])), rnd(rng, 1, 2), "prod")),
    ErrorCase((rnd(rng, 3, 2), 0, Fixed(np.array([0.0])), rnd(rng, 1, 2), "prod")),
])
opdb.OPINFOS[-1].op = _quiet(gradsum.index_reduce)
