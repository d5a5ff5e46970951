"""Op-table entries for :mod:`gradsum.ops.linalg` (appended to :data:`OPINFOS` when the
package imports this module).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import gradsum

from .core import (
    _INF,
    _INT_SAMPLE,
    _NAN,
    DT,
    OPINFOS,
    ErrorCase,
    Fixed,
    NoGrad,
    OpInfo,
    Sample,
    _quiet,
    _t,
    _ts,
    _unary_samples,
    away,
    distinct,
    ints,
    op,
    pos,
    rnd,
    torch,
)

op("trace", _t("trace"), lambda rng: [
    Sample((rnd(rng, 3, 3),)), Sample((rnd(rng, 2, 4),)), Sample((rnd(rng, 4, 2),)),
    Sample((rnd(rng, 0, 3),)), Sample((ints(rng, 3, 3),)),
], np_ref=np.trace, errors=lambda rng: [ErrorCase((rnd(rng, 3),)), ErrorCase((rnd(rng, 2, 2, 2),))])
op("cross", _t("cross"), lambda rng: [
    Sample((rnd(rng, 4, 3), rnd(rng, 4, 3)), {"dim": 1}),
    Sample((rnd(rng, 3, 5), rnd(rng, 3, 5), 0)),
    Sample((rnd(rng, 1, 3), rnd(rng, 4, 3)), {"dim": -1}),
    Sample((rnd(rng, 3), rnd(rng, 3)), {"dim": 0}),
    Sample((rnd(rng, 2, 3), NoGrad(rnd(rng, 2, 3))), {"dim": 1}),
    Sample((ints(rng, 2, 3), ints(rng, 2, 3)), {"dim": 1}),
], errors=lambda rng: [
    ErrorCase((rnd(rng, 3, 4), rnd(rng, 3, 4)), {"dim": 1}),
    ErrorCase((rnd(rng, 2, 3), rnd(rng, 3, 3)), {"dim": 1}, shapes=()),
])
op("matrix_power", _t("matrix_power"), lambda rng: [
    Sample((rnd(rng, 3, 3), 2)), Sample((rnd(rng, 3, 3) / 2, 5)), Sample((rnd(rng, 2, 3, 3), 3)),
    Sample((rnd(rng, 3, 3), 1)), Sample((rnd(rng, 3, 3), 0)),
    Sample((np.eye(3) * 2 + rnd(rng, 3, 3) / 4, -2)), Sample((ints(rng, 2, 2), 4)),
], errors=lambda rng: [ErrorCase((rnd(rng, 3, 4), 2), shapes=()), ErrorCase((rnd(rng, 3), 2)),
                       ErrorCase((ints(rng, 2, 2), -1))])


def _lop(name: str, gfn: Any, tfn: Any, samples: Any, **kw: Any) -> OpInfo:
    info = OpInfo(name, gfn, tfn, samples, **kw)
    OPINFOS.append(info)
    return info


def _tl(name: str) -> Any:
    def call(*a: Any, **k: Any) -> Any:
        return getattr(torch.linalg, name)(*a, **k)

    call.__name__ = name
    return call


def _gl(name: str) -> Any:
    return getattr(gradsum.linalg, name)


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
OPINFOS[-1].op = _quiet(gradsum.triangular_solve)

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
     notes="L and U here (P does not require grad: compared in tests/ops/test_linalg.py)")
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
], notes="L and U here (P in tests/ops/test_linalg.py)")
OPINFOS[-1].op = lambda *a: gradsum.lu_unpack(*a)[1:]

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
], rtol32=1e-4, atol32=1e-4, notes="singular_values in tests/ops/test_linalg.py",
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
_SV = lambda rng, *s: _sv_input(rng, *s)


def _sv_input(rng: np.random.Generator, *shape: int) -> np.ndarray:
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
         "raises (checked in tests/ops/test_linalg.py)", errors=lambda rng: [
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
OPINFOS[-1].op = _quiet(gradsum.chain_matmul)


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
OPINFOS[-1].op = _on_tri(gradsum.cholesky_solve, 1)
op("cholesky_inverse", _on_tri(_t("cholesky_inverse"), 0), lambda rng: [
    Sample((_chol(rng, 3, 3),)), Sample((_cholT(rng, 2, 3, 3), True)),
], errors=lambda rng: [ErrorCase((rnd(rng, 2, 3),))],
   notes="a zero on the diagonal raises LinAlgError: checked in tests/ops/test_linalg.py")
OPINFOS[-1].op = _on_tri(gradsum.cholesky_inverse, 0)
op("renorm", _t("renorm"), lambda rng: [
    Sample((rnd(rng, 3, 4), 2, 0, 1.0)), Sample((rnd(rng, 3, 4), 1, 1, 1.5)),
    Sample((rnd(rng, 2, 3, 2), 3, -1, 0.8)), Sample((rnd(rng, 3, 4), 2, 0, 100.0)),
    Sample((distinct(rng, 3, 4), float("inf"), 0, 0.5)),
], errors=lambda rng: [
    ErrorCase((rnd(rng, 3, 4), 0, 0, 1.0)), ErrorCase((rnd(rng, 3, 4), 2, 0, -1.0)),
    ErrorCase((rnd(rng, 3), 2, 0, 1.0)), ErrorCase((ints(rng, 2, 2), 2, 0, 1.0)),
])

_ = DT


# -- linalg -----------------------------------------------------------------------------------
def _wcond(rng: np.random.Generator, *shape: int) -> np.ndarray:
    """Square matrices a step away from singular (identity * 2 + noise)."""
    n = shape[-1]
    return np.asarray(rng.uniform(-0.6, 0.6, shape) + 2.0 * np.eye(n) * rng.choice([-1, 1]))


_sq_errors = lambda rng: [ErrorCase((rnd(rng, 2, 3),)), ErrorCase((rnd(rng, 3),)),
                          ErrorCase((Fixed(np.ones((2, 2), dtype=np.int64)),))]
_det_samples = lambda rng: [
    Sample((rnd(rng, 3, 3),)), Sample((rnd(rng, 2, 4, 4),)), Sample((rnd(rng, 1, 1),)),
    Sample((_wcond(rng, 3, 2, 2),)),
]
op("det", _t("det"), _det_samples, errors=_sq_errors)
_lop("linalg.det", gradsum.linalg.det, _tl("det"), _det_samples, errors=_sq_errors)
_logdet_samples = lambda rng: [Sample((_spd(rng, 3, 3),)), Sample((_wcond(rng, 2, 3, 3),))]
op("slogdet", _t("slogdet"), _logdet_samples, errors=_sq_errors)
_lop("linalg.slogdet", gradsum.linalg.slogdet, _tl("slogdet"), _logdet_samples)
op("logdet", _t("logdet"), lambda rng: [Sample((_spd(rng, 3, 3),)), Sample((_spd(rng, 2, 2, 2),)),
                                        Sample((np.diag([-1.0, 2.0]),), forward_only=True)])
_inv_samples = lambda rng: [Sample((_wcond(rng, 3, 3),)), Sample((_wcond(rng, 2, 2, 2),)),
                            Sample((_wcond(rng, 0, 2, 2),))]
op("inverse", _t("inverse"), _inv_samples, errors=_sq_errors)
_lop("linalg.inv", gradsum.linalg.inv, _tl("inv"), _inv_samples, errors=_sq_errors)
_lop("linalg.solve", gradsum.linalg.solve, _tl("solve"), lambda rng: [
    Sample((_wcond(rng, 3, 3), rnd(rng, 3, 2))), Sample((_wcond(rng, 3, 3), rnd(rng, 3))),
    Sample((_wcond(rng, 2, 3, 3), rnd(rng, 2, 3))),           # a batch of vectors
    Sample((_wcond(rng, 2, 1, 3, 3), rnd(rng, 4, 3, 2))),     # broadcast batches
    Sample((_wcond(rng, 3, 3), rnd(rng, 2, 3)), {"left": False}),
    Sample((NoGrad(_wcond(rng, 3, 3)), rnd(rng, 3, 1))),
    Sample((_wcond(rng, 3, 3), NoGrad(rnd(rng, 3, 1)))),
], errors=lambda rng: [ErrorCase((_wcond(rng, 3, 3), rnd(rng, 4))),
                       ErrorCase((rnd(rng, 2, 3), rnd(rng, 2)))])
_lop("linalg.vector_norm", gradsum.linalg.vector_norm, _tl("vector_norm"), lambda rng: [
    Sample((away(rng, 2, 3),)), Sample((away(rng, 2, 3), 1)), Sample((away(rng, 2, 3), 3, 1)),
    Sample((away(rng, 2, 3), 0.5, (0, 1), True)), Sample((distinct(rng, 2, 3), float("inf"), 1)),
    Sample((distinct(rng, 2, 3), -float("inf"))), Sample((away(rng, 4), 0)),
    Sample((away(rng, 2, 3, 2), 2, (0, 2)), {"keepdim": True}), Sample((away(rng),)),
    Sample((np.zeros(3),), no_gradcheck="the 2-norm is not differentiable at 0 (torch: 0)"),
], errors=lambda rng: [ErrorCase((ints(rng, 3),)), ErrorCase((np.zeros((0,)), float("inf")))])


def _svd_input(rng: np.random.Generator, *shape: int) -> np.ndarray:
    """Matrices with well-separated singular values."""
    m, n = shape[-2:]
    k = min(m, n)
    u, _ = np.linalg.qr(rng.standard_normal(shape[:-2] + (m, m)))
    v, _ = np.linalg.qr(rng.standard_normal(shape[:-2] + (n, n)))
    s = np.zeros(shape)
    d = np.arange(k, 0, -1) * 1.2 + 0.5
    idx = np.arange(k)
    s[..., idx, idx] = d
    return np.asarray(u @ s @ v)


def _mn_samples(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((away(rng, 3, 4),)), Sample((away(rng, 2, 3, 3), "fro", (-1, -2), True)),
        Sample((_svd_input(rng, 3, 3), "nuc")), Sample((_svd_input(rng, 2, 3, 2), 2)),
        Sample((_svd_input(rng, 3, 3), -2)), Sample((distinct(rng, 3, 4) + 0.11, 1)),
        Sample((distinct(rng, 3, 4) + 0.11, -1)),
        Sample((distinct(rng, 4, 3) + 0.11, float("inf"))),
        Sample((distinct(rng, 2, 3, 4) + 0.11, -float("inf"), (0, 2), True)),
    ]


_lop("linalg.matrix_norm", gradsum.linalg.matrix_norm, _tl("matrix_norm"), _mn_samples,
     errors=lambda rng: [ErrorCase((rnd(rng, 3),)), ErrorCase((rnd(rng, 2, 2), 3)),
                         ErrorCase((rnd(rng, 2, 2), "abc"))])
_lop("linalg.norm", gradsum.linalg.norm, _tl("norm"), lambda rng: [
    Sample((away(rng, 3, 4),)), Sample((away(rng, 2, 3, 4),)), Sample((away(rng, 5), 3)),
    Sample((distinct(rng, 3, 4) + 0.11, 1)), Sample((away(rng, 2, 3, 4), None, (0, 2))),
    Sample((away(rng, 2, 3, 4), 3, 1, True)), Sample((_wcond(rng, 3, 3), "nuc")),
    Sample((away(rng, 2, 3, 4), "fro", (1, 2))),
], errors=lambda rng: [ErrorCase((rnd(rng, 2, 2, 2), 2)), ErrorCase((rnd(rng, 2, 2, 2), None,
                                                                     (0, 1, 2)))])


def _sym_input(fn: Any) -> Any:
    """``fn`` of the symmetrised input (gradcheck perturbs both triangles)."""

    def call(a: Any, *args: Any, **kwargs: Any) -> Any:
        return fn((a + a.mT) / 2, *args, **kwargs)

    return call


_lop("linalg.cholesky", _sym_input(gradsum.linalg.cholesky), _sym_input(_tl("cholesky")),
     lambda rng: [Sample((_spd(rng, 3, 3),)), Sample((_spd(rng, 2, 4, 4),)),
                  Sample((_spd(rng, 3, 3),), {"upper": True})],
     check_grad_fn=True)
op("cholesky", _t("cholesky"), lambda rng: [
    Sample((_spd(rng, 3, 3),), no_gradcheck="reads the lower triangle only (see linalg.cholesky)"),
    Sample((_spd(rng, 2, 2, 2), True), no_gradcheck="reads one triangle only"),
], errors=lambda rng: [ErrorCase((rnd(rng, 2, 3),))])


_lop("linalg.qr", gradsum.linalg.qr, _tl("qr"), lambda rng: [
    Sample((rnd(rng, 4, 3),)), Sample((rnd(rng, 3, 3),)), Sample((rnd(rng, 2, 4, 2),)),
    Sample((rnd(rng, 2, 4),)), Sample((rnd(rng, 3, 3), "complete")),
    Sample((rnd(rng, 3, 4), "complete")),
], errors=lambda rng: [ErrorCase((rnd(rng, 3, 3), "x")), ErrorCase((rnd(rng, 3),))])


def _gauge(vecs: Any, axis: int) -> Any:
    """Columns (axis=-2 reduces rows) scaled by the sign of their largest entry: a
    differentiable, gauge-free view of eigen/singular vectors (LAPACK builds may differ in
    signs)."""
    arr = vecs.detach().numpy() if hasattr(vecs, "detach") else vecs
    idx = np.argmax(np.abs(arr), axis=axis)
    big = np.take_along_axis(arr, np.expand_dims(idx, axis), axis)
    s = np.sign(big)
    mod = gradsum if isinstance(vecs, gradsum.Tensor) else torch
    return vecs * mod.tensor(s, dtype=vecs.dtype)


def _eigh(lib: str) -> Any:
    def call(a: Any, *args: Any, **kwargs: Any) -> Any:
        m = gradsum if lib == "g" else torch
        w, v = m.linalg.eigh((a + a.mT) / 2, *args, **kwargs)
        return w, _gauge(v, -2)

    return call


def _eig_in(rng: np.random.Generator, *shape: int) -> np.ndarray:
    """Symmetric matrices with well-separated eigenvalues."""
    n = shape[-1]
    q, _ = np.linalg.qr(rng.standard_normal(shape))
    w = np.arange(n) * 1.5 + rng.uniform(-0.3, 0.3, shape[:-1])
    return np.asarray(q @ (w[..., :, None] * np.swapaxes(q, -1, -2)))


_lop("linalg.eigh", _eigh("g"), _eigh("t"), lambda rng: [
    Sample((_eig_in(rng, 3, 3),)), Sample((_eig_in(rng, 2, 4, 4),)),
    Sample((_eig_in(rng, 3, 3), "U")),
], grad_fn_map={"MulBackward0": "MulBackward0"}, check_grad_fn=False,
   notes="eigenvectors compared up to sign (gauge); grad_fn names checked in "
         "test_special_ops.py", errors=lambda rng: [ErrorCase((rnd(rng, 2, 2), "X"))])


def _svd(lib: str) -> Any:
    def call(a: Any, full_matrices: bool = False) -> Any:
        m = gradsum if lib == "g" else torch
        U, S, Vh = m.linalg.svd(a, full_matrices=full_matrices)
        k = S.shape[-1]
        U, Vh = U[..., :, :k], Vh[..., :k, :]
        arr = U.detach().numpy()
        idx = np.argmax(np.abs(arr), axis=-2)
        s = np.sign(np.take_along_axis(arr, idx[..., None, :], -2))
        st = m.tensor(s, dtype=U.dtype)
        return U * st, S, Vh * m.tensor(np.swapaxes(s, -1, -2), dtype=U.dtype)

    return call


_lop("linalg.svd", _svd("g"), _svd("t"), lambda rng: [
    Sample((_svd_input(rng, 3, 3),)), Sample((_svd_input(rng, 4, 2),)),
    Sample((_svd_input(rng, 2, 4),)), Sample((_svd_input(rng, 2, 3, 3),)),
    Sample((_svd_input(rng, 4, 3), True)),
], check_grad_fn=False, notes="singular vectors compared up to sign (gauge)")
_lop("linalg.svdvals", gradsum.linalg.svdvals, _tl("svdvals"), lambda rng: [
    Sample((_svd_input(rng, 3, 3),)), Sample((_svd_input(rng, 2, 4, 3),)),
])
op("svd", lambda a, *args: (lambda r: (r.S,))(torch.svd(a, *args)),
   lambda rng: [Sample((_svd_input(rng, 3, 3),)), Sample((_svd_input(rng, 4, 2), False))],
   check_grad_fn=False, notes="S only here (gauge); U and V in test_special_ops.py")
OPINFOS[-1].op = lambda a, *args: (gradsum.svd(a, *args).S,)
_pinv_samples = lambda rng: [
    Sample((_svd_input(rng, 3, 3),)), Sample((_svd_input(rng, 4, 2),)),
    Sample((_svd_input(rng, 2, 4),)), Sample((_svd_input(rng, 2, 3, 2),)),
]
_lop("linalg.pinv", gradsum.linalg.pinv, _tl("pinv"), _pinv_samples)
op("pinverse", _t("pinverse"), _pinv_samples)
_mexp_samples = lambda rng: [Sample((rnd(rng, 3, 3) * 0.5,)), Sample((rnd(rng, 2, 2, 2),)),
                             Sample((rnd(rng, 3, 3) * 4,))]
op("matrix_exp", _t("matrix_exp"), _mexp_samples, errors=lambda rng: [
    ErrorCase((rnd(rng, 2, 3),))])
_lop("linalg.matrix_exp", gradsum.linalg.matrix_exp, _tl("matrix_exp"), _mexp_samples)


def _prob(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return np.asarray(rng.uniform(0.05, 0.95, shape))


def _wide(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return np.asarray(rng.uniform(-6.0, 6.0, shape))


def _unary(name: str, gen: Any, edges: list[float], **kw: Any) -> None:
    base = _unary_samples(gen)
    op(f"special_{name}", _ts(name), lambda rng: base(rng) + _INT_SAMPLE + [
        Sample((np.array(edges),), forward_only=True)], **kw)
_unary("entr", pos, [0.0, -1.0, _INF, _NAN, 1e-300])
_unary("erfcx", _wide, [-30.0, -26.0, 0.0, 2.0, 30.0, 1e10, _INF, -_INF, _NAN])
_unary("ndtri", _prob, [0.0, 1.0, -0.5, 1.5, 1e-300, 1e-20, _NAN])
_unary("log_ndtr", _wide, [-40.0, -1.0, 0.0, 10.0, _INF, -_INF, _NAN])
_unary("ndtr", _wide, [-40.0, 0.0, 10.0, _INF, -_INF, _NAN])
_unary("i0e", _wide, [0.0, 8.0, 100.0, -1e4, _INF, -_INF, _NAN])
_unary("i1", _wide, [0.0, 8.0, 100.0, -100.0, _INF, -_INF, _NAN])
_unary("i1e", _wide, [0.0, 8.0, 100.0, -1e4, _INF, -_INF, _NAN])
