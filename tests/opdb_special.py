"""Op-table entries for ops/special.py (special functions) and ops/decomp.py (linalg).

Imported at the end of ``opdb.py``; appends to ``opdb.OPINFOS``. Gradcheck samples avoid the
non-differentiable points: 0 for ``sinc`` (its derivative is defined there, but the
where-guarded formula's second derivative is not) and ``copysign`` (a kink), the poles of
lgamma/digamma/polygamma, ``|y| = 1`` for erfinv, multiples of the divisor for ``fmod``,
ties of ``|x|`` for the inf-norms, singular / indefinite matrices, repeated eigenvalues and
singular values (eigh/svd gradients are undefined there, as torch documents).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import gradsum
import opdb
from opdb import (
    _INT_SAMPLE,
    DT,
    ErrorCase,
    Fixed,
    NoGrad,
    OpInfo,
    Sample,
    _binary_samples,
    _broadcast_errors,
    _t,
    _unary_samples,
    away,
    distinct,
    ints,
    off_grid,
    op,
    pos,
    rnd,
)

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None  # type: ignore[assignment]

_ = DT


def _within(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return np.asarray(rng.uniform(-0.9, 0.9, shape))


def _gamma_dom(rng: np.random.Generator, *shape: int) -> np.ndarray:
    """Positive values and negative non-integers (away from the poles)."""
    v = rng.uniform(0.3, 4.0, shape)
    neg = rng.random(shape) < 0.3
    return np.asarray(np.where(neg, -np.floor(v) - rng.uniform(0.2, 0.8, shape), v))


def _unary(name: str, gen: Any, ints_ok: bool = True, **kw: Any) -> OpInfo:
    base = _unary_samples(gen)
    return op(name, _t(name), lambda rng: base(rng) + (_INT_SAMPLE if ints_ok else []), **kw)


# -- special functions ------------------------------------------------------------------------
op("signbit", _t("signbit"), lambda rng: [
    Sample((rnd(rng, 2, 3),)), Sample((np.array([-0.0, 0.0, -1.0, np.inf, -np.inf]),)),
    Sample((ints(rng, 4),)), Sample((rnd(rng),)),
], differentiable=False, np_ref=np.signbit)
_unary("erfc", rnd)
_unary("erfinv", _within)
_unary("lgamma", _gamma_dom)
_unary("digamma", _gamma_dom)
_unary("i0", rnd)
_unary("sinc", away)
_unary("deg2rad", rnd, np_ref=np.deg2rad)
_unary("rad2deg", rnd, np_ref=np.rad2deg)
op("frac", _t("frac"), _unary_samples(off_grid), no_gradgrad="piecewise linear",
   errors=lambda rng: [ErrorCase((ints(rng, 3),))])
op("polygamma", _t("polygamma"), lambda rng: [
    Sample((1, _gamma_dom(rng, 2, 3))), Sample((2, _gamma_dom(rng, 4))),
    Sample((3, pos(rng, 3))), Sample((0, pos(rng, 2))), Sample((1, _gamma_dom(rng))),
    Sample((2, Fixed(np.array([1, 2, 3])))),
], errors=lambda rng: [ErrorCase((-1, rnd(rng, 3)))])

op("hypot", _t("hypot"), lambda rng: _binary_samples(away)(rng) + [
    Sample((rnd(rng, 3), NoGrad(away(rng, 3)))),
], errors=lambda rng: _broadcast_errors(rng) + [
    ErrorCase((rnd(rng, 2), 2.0)), ErrorCase((ints(rng, 2), ints(rng, 2))),
])
for _name in ("logaddexp", "logaddexp2"):
    op(_name, _t(_name), lambda rng: _binary_samples(rnd)(rng) + [
        Sample((rnd(rng, 3), NoGrad(rnd(rng, 3)))),
        Sample((np.array([np.inf, -np.inf, 1.0]), np.array([np.inf, -np.inf, -np.inf])),
               forward_only=True),
    ], errors=lambda rng: _broadcast_errors(rng) + [ErrorCase((ints(rng, 2), ints(rng, 2)))])
op("nextafter", _t("nextafter"), lambda rng: [
    Sample((rnd(rng, 2, 3), rnd(rng, 2, 3))), Sample((rnd(rng, 2, 1), rnd(rng, 3))),
    Sample((rnd(rng, 3), NoGrad(rnd(rng, 3)))),
], no_gradgrad="the gradient is a constant pass-through",
   errors=lambda rng: [ErrorCase((rnd(rng, 2), 1.0)), ErrorCase((ints(rng, 2), ints(rng, 2)))])
op("heaviside", _t("heaviside"), lambda rng: [
    Sample((np.array([-1.0, 0.0, 2.0, np.nan]), np.array([0.5]))),
    Sample((rnd(rng, 2, 3), rnd(rng, 3))), Sample((ints(rng, 4), Fixed(np.array([7])))),
], differentiable=False, errors=lambda rng: [
    ErrorCase((rnd(rng, 2), 1.0)), ErrorCase((ints(rng, 2), rnd(rng, 2))),
])
op("copysign", _t("copysign"), lambda rng: _binary_samples(away)(rng) + [
    Sample((away(rng, 3), -1.5)), Sample((away(rng, 3), -0.0)),
    Sample((ints(rng, 3), ints(rng, 3))), Sample((away(rng, 2, 3), NoGrad(away(rng, 3)))),
    Sample((np.array([0.0, 1.0]), np.array([-1.0, -1.0])),
           no_gradcheck="kink at 0: torch's gradient there is 0"),
], no_gradgrad="the derivative is piecewise constant", errors=_broadcast_errors)
op("xlogy", _t("xlogy"), lambda rng: _binary_samples(rnd, pos)(rng) + [
    Sample((rnd(rng, 3), 2.5)), Sample((2.0, pos(rng, 3))), Sample((ints(rng, 3), pos(rng, 3))),
    Sample((np.array([0.0, 0.0, 1.0]), np.array([0.5, 2.0, 1.5]))),
    Sample((np.array([0.0, 0.0, 0.0, 1.0]), NoGrad(np.array([0.0, np.nan, np.inf, 0.0]))),
           no_gradcheck="0 * log 0 = 0 rule at non-finite points"),
], errors=_broadcast_errors)
op("fmod", _t("fmod"), lambda rng: [
    Sample((off_grid(rng, 2, 3) * 3, np.full((2, 3), 1.7))),
    Sample((off_grid(rng, 2, 3) * 3, 1.3)),
    Sample((off_grid(rng, 3) * 3, NoGrad(np.full(3, -1.7)))),
    Sample((ints(rng, 4), Fixed(np.array([2, -3, 4, 5])))), Sample((ints(rng, 4), 2.5)),
    Sample((np.array([-3.0, 3.0, -3.0]), np.array([2.0, -2.0, 0.0])), forward_only=True),
], no_gradgrad="the derivative is piecewise constant",
   errors=lambda rng: _broadcast_errors(rng) + [
       ErrorCase((Fixed(np.array([3])), Fixed(np.array([0]))))])


# -- linalg -----------------------------------------------------------------------------------
def _wellcond(rng: np.random.Generator, *shape: int) -> np.ndarray:
    """Square matrices a step away from singular (identity * 2 + noise)."""
    n = shape[-1]
    return np.asarray(rng.uniform(-0.6, 0.6, shape) + 2.0 * np.eye(n) * rng.choice([-1, 1]))


def _spd(rng: np.random.Generator, *shape: int) -> np.ndarray:
    a = rng.standard_normal(shape)
    return np.asarray(a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1]))


def _lop(name: str, gfn: Any, tfn: Any, samples: Any, **kw: Any) -> OpInfo:
    info = OpInfo(name, gfn, tfn, samples, **kw)
    opdb.OPINFOS.append(info)
    return info


def _tl(name: str) -> Any:
    def call(*a: Any, **k: Any) -> Any:
        return getattr(torch.linalg, name)(*a, **k)

    call.__name__ = name
    return call


_sq_errors = lambda rng: [ErrorCase((rnd(rng, 2, 3),)), ErrorCase((rnd(rng, 3),)),
                          ErrorCase((Fixed(np.ones((2, 2), dtype=np.int64)),))]
_det_samples = lambda rng: [
    Sample((rnd(rng, 3, 3),)), Sample((rnd(rng, 2, 4, 4),)), Sample((rnd(rng, 1, 1),)),
    Sample((_wellcond(rng, 3, 2, 2),)),
]
op("det", _t("det"), _det_samples, errors=_sq_errors)
_lop("linalg.det", gradsum.linalg.det, _tl("det"), _det_samples, errors=_sq_errors)
_logdet_samples = lambda rng: [Sample((_spd(rng, 3, 3),)), Sample((_wellcond(rng, 2, 3, 3),))]
op("slogdet", _t("slogdet"), _logdet_samples, errors=_sq_errors)
_lop("linalg.slogdet", gradsum.linalg.slogdet, _tl("slogdet"), _logdet_samples)
op("logdet", _t("logdet"), lambda rng: [Sample((_spd(rng, 3, 3),)), Sample((_spd(rng, 2, 2, 2),)),
                                        Sample((np.diag([-1.0, 2.0]),), forward_only=True)])
_inv_samples = lambda rng: [Sample((_wellcond(rng, 3, 3),)), Sample((_wellcond(rng, 2, 2, 2),)),
                            Sample((_wellcond(rng, 0, 2, 2),))]
op("inverse", _t("inverse"), _inv_samples, errors=_sq_errors)
_lop("linalg.inv", gradsum.linalg.inv, _tl("inv"), _inv_samples, errors=_sq_errors)
_lop("linalg.solve", gradsum.linalg.solve, _tl("solve"), lambda rng: [
    Sample((_wellcond(rng, 3, 3), rnd(rng, 3, 2))), Sample((_wellcond(rng, 3, 3), rnd(rng, 3))),
    Sample((_wellcond(rng, 2, 3, 3), rnd(rng, 2, 3))),           # a batch of vectors
    Sample((_wellcond(rng, 2, 1, 3, 3), rnd(rng, 4, 3, 2))),     # broadcast batches
    Sample((_wellcond(rng, 3, 3), rnd(rng, 2, 3)), {"left": False}),
    Sample((NoGrad(_wellcond(rng, 3, 3)), rnd(rng, 3, 1))),
    Sample((_wellcond(rng, 3, 3), NoGrad(rnd(rng, 3, 1)))),
], errors=lambda rng: [ErrorCase((_wellcond(rng, 3, 3), rnd(rng, 4))),
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
    Sample((away(rng, 2, 3, 4), 3, 1, True)), Sample((_wellcond(rng, 3, 3), "nuc")),
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


def _eig_input(rng: np.random.Generator, *shape: int) -> np.ndarray:
    """Symmetric matrices with well-separated eigenvalues."""
    n = shape[-1]
    q, _ = np.linalg.qr(rng.standard_normal(shape))
    w = np.arange(n) * 1.5 + rng.uniform(-0.3, 0.3, shape[:-1])
    return np.asarray(q @ (w[..., :, None] * np.swapaxes(q, -1, -2)))


_lop("linalg.eigh", _eigh("g"), _eigh("t"), lambda rng: [
    Sample((_eig_input(rng, 3, 3),)), Sample((_eig_input(rng, 2, 4, 4),)),
    Sample((_eig_input(rng, 3, 3), "U")),
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
opdb.OPINFOS[-1].op = lambda a, *args: (gradsum.svd(a, *args).S,)
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
