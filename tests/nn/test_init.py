"""Side by side with torch: nn.init (eye, dirac, orthogonal, sparse, trunc_normal, the gains,
the deprecated aliases, shape and dtype errors)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from diff_helpers import (  # noqa: E402
    as_np,
    same_error,
)
from nn_helpers import floats  # noqa: E402


# -- nn.init: eye_, dirac_, orthogonal_, sparse_ -------------------------------------------------
@pytest.mark.parametrize("shape", [(2, 3), (3, 2), (3, 3)])
def test_init_eye(shape: tuple[int, ...]) -> None:
    """nn.init.eye_ gives torch's values."""
    got, want = (lib.nn.init.eye_(lib.empty(*shape)) for lib in (gradsum, torch))
    assert floats(got).tolist() == floats(want).tolist()


@pytest.mark.parametrize("shape,groups", [((4, 2, 3, 3), 1), ((4, 2, 3, 2), 2),
                                          ((2, 3, 3), 1), ((6, 2, 1, 3, 3), 3),
                                          ((4, 4, 3), 2)])
def test_init_dirac(shape: tuple[int, ...], groups: int) -> None:
    """nn.init.dirac_ (with groups) gives torch's values."""
    got, want = (lib.nn.init.dirac_(lib.empty(*shape), groups) for lib in (gradsum, torch))
    assert floats(got).tolist() == floats(want).tolist()


@pytest.mark.parametrize("fn,args", [
    ("eye_", ((3,), ())), ("eye_", ((2, 2, 2), ())), ("dirac_", ((2, 2), ())),
    ("dirac_", ((3, 2, 2), (2,))), ("orthogonal_", ((3,), ())), ("sparse_", ((2, 2, 2), (0.1,))),
])
def test_init_shape_errors(fn: str, args: tuple[Any, ...]) -> None:
    shape, extra = args
    assert same_error(lambda lib: getattr(lib.nn.init, fn)(lib.empty(*shape), *extra)) \
        is ValueError


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 2, 3), (0, 3)])
def test_init_orthogonal(shape: tuple[int, ...]) -> None:
    """nn.init.orthogonal_ fills in place with an orthogonal matrix scaled by the gain, as
    torch's."""
    gradsum.manual_seed(0)
    t = gradsum.empty(*shape)
    assert gradsum.nn.init.orthogonal_(t, gain=2.0) is t
    if not t.numel():
        return
    a = floats(t).reshape(shape[0], -1)
    gram = a @ a.T if shape[0] <= a.shape[1] else a.T @ a
    np.testing.assert_allclose(gram, 4 * np.eye(len(gram)), atol=1e-5)


def test_init_sparse() -> None:
    """nn.init.sparse_ zeroes torch's number of rows in each column."""
    got, want = (
        (lib.nn.init.sparse_(lib.empty(10, 4), sparsity=0.25) == 0).sum(0).tolist()
        for lib in (gradsum, torch)
    )
    assert got == want == [3, 3, 3, 3]


LIBS = [gradsum, torch]


# -- nn.init -------------------------------------------------------------------------------------
GAINS = [("linear", None), ("conv1d", None), ("conv2d", None), ("conv3d", None),
         ("conv_transpose1d", None), ("conv_transpose2d", None), ("conv_transpose3d", None),
         ("sigmoid", None), ("tanh", None), ("relu", None), ("leaky_relu", None),
         ("leaky_relu", 0.2), ("leaky_relu", 3), ("selu", None)]


def test_calculate_gain_matches_torch() -> None:
    for name, param in GAINS:
        g = gradsum.nn.init.calculate_gain(name, param)
        t = torch.nn.init.calculate_gain(name, param)
        assert g == t and type(g) is type(t), (name, param)
    for name, param in [("softmax", None), ("leaky_relu", True), ("leaky_relu", "0.1")]:
        assert same_error(
            lambda lib, name=name, param=param: lib.nn.init.calculate_gain(name, param)
        ) is ValueError


ALIASES = ["uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal",
           "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse"]


@pytest.mark.parametrize("name", ALIASES)
def test_deprecated_init_aliases_warn_and_call_like_torch(name: str) -> None:
    args = {"constant": (0.5,), "sparse": (0.5,)}.get(name, ())
    shape = (4, 3, 3) if name == "dirac" else (4, 3)
    out = []
    for lib in LIBS:
        lib.manual_seed(0)
        w = lib.empty(*shape)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            r = getattr(lib.nn.init, name)(w, *args)
        out.append([[(type(m.message).__name__, str(m.message)) for m in rec], r is w,
                    getattr(lib.nn.init, name).__name__])
        if name in ("eye", "dirac", "constant"):
            out[-1].append(as_np(w).tolist())
    assert out[0] == out[1]


def test_eye_and_dirac_match_torch() -> None:
    for shape in [(3, 5), (4, 2), (3, 3)]:
        g = gradsum.nn.init.eye_(gradsum.empty(*shape, requires_grad=True))
        t = torch.nn.init.eye_(torch.empty(*shape, requires_grad=True))
        assert as_np(g).tolist() == as_np(t).tolist() and g.requires_grad
    for shape, groups in [((4, 2, 3), 1), ((6, 2, 3, 3), 2), ((4, 3, 2, 3, 3), 2),
                          ((6, 1, 2, 2), 3), ((2, 4, 5), 1)]:
        g = gradsum.nn.init.dirac_(gradsum.empty(*shape), groups)
        t = torch.nn.init.dirac_(torch.empty(*shape), groups)
        assert as_np(g).tolist() == as_np(t).tolist(), (shape, groups)
    same_error(lambda lib: lib.nn.init.eye_(lib.empty(2, 2, 2)))
    same_error(lambda lib: lib.nn.init.dirac_(lib.empty(2, 2)))
    same_error(lambda lib: lib.nn.init.dirac_(lib.empty(3, 2, 3), 2))


@pytest.mark.parametrize("shape,gain", [((5, 3), 1.0), ((3, 7), 2.0), ((4, 2, 3), 0.5),
                                        ((6, 6), 1.0)])
def test_orthogonal_is_orthogonal_and_distributed_like_torch(shape: tuple[int, ...],
                                                             gain: float) -> None:
    rows = shape[0]
    cols = int(np.prod(shape[1:]))
    stats = []
    for lib in LIBS:
        lib.manual_seed(0)
        samples = []
        for _ in range(300):
            w = lib.nn.init.orthogonal_(lib.empty(*shape, dtype=lib.float64), gain=gain)
            q = as_np(w).reshape(rows, cols)
            gram = q @ q.T if rows <= cols else q.T @ q
            np.testing.assert_allclose(gram, gain ** 2 * np.eye(min(rows, cols)), atol=1e-10)
            samples.append(q)
        s = np.stack(samples)
        # Haar-distributed: each entry has mean 0 and variance gain^2 / max(rows, cols)
        stats.append([s.mean(), (s ** 2).mean(axis=0).mean()])
    for m, v in stats:
        assert abs(m) < 0.03 * gain
        assert abs(v - gain ** 2 / max(rows, cols)) < 0.1 * gain ** 2 / max(rows, cols)
    same_error(lambda lib: lib.nn.init.orthogonal_(lib.empty(3)))
    for lib in LIBS:
        e = lib.empty(0, 3)
        assert lib.nn.init.orthogonal_(e) is e


def test_sparse_and_trunc_normal_match_torch_statistically() -> None:
    out = []
    for lib in LIBS:
        lib.manual_seed(0)
        w = lib.nn.init.sparse_(lib.empty(10, 400, dtype=lib.float64), sparsity=0.35, std=0.5)
        a = as_np(w)
        t = as_np(lib.nn.init.trunc_normal_(lib.empty(20000, dtype=lib.float64), mean=0.5,
                                            std=2.0, a=-1.0, b=1.5))
        out.append([(a == 0).sum(0).tolist(), a[a != 0].std(), t.min() >= -1.0,
                    t.max() <= 1.5, t.mean()])
    assert out[0][0] == out[1][0]
    assert abs(out[0][1] - out[1][1]) < 0.05
    assert out[0][2:4] == out[1][2:4] == [True, True]
    assert abs(out[0][4] - out[1][4]) < 0.05
    same_error(lambda lib: lib.nn.init.sparse_(lib.empty(2, 2, 2), 0.1))
