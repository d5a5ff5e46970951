"""Side by side with torch: the dropouts (integer inputs, the ``training`` flag, the channel-wise
and alpha dropouts' statistics and masks, identity paths, rank warnings, errors and modules)."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from diff_helpers import (  # noqa: E402  # noqa: E402
    as_np,
    same,
    same_error,
)
from nn_helpers import gradsum_repr  # noqa: E402


@pytest.mark.parametrize("dtype", ["int64", "bool"])
@pytest.mark.parametrize("p", [0.0, 0.5, 1.0])
def test_dropout_of_integer_tensors(dtype: str, p: float) -> None:
    def program(lib: Any) -> Any:
        return lib.nn.functional.dropout(lib.ones(3, dtype=getattr(lib, dtype)), p).tolist()

    if 0 < p < 1:
        assert same_error(program) is RuntimeError
    else:
        same(program)


# -- F.dropout: ``training`` must be a bool ---------------------------------------------------
@pytest.mark.parametrize("training", [None, 1, 0, 1.0])
def test_dropout_training_must_be_bool(training: Any) -> None:
    assert same_error(
        lambda lib: lib.nn.functional.dropout(lib.ones(2), 0.5, training=training)
    ) is TypeError


LIBS = [gradsum, torch]


# -- dropout variants ----------------------------------------------------------------------------
def _channel_masks(y: Any, x: Any, feature_dims: int) -> np.ndarray:
    """Per-channel keep flags of a feature dropout (asserting one draw per channel)."""
    ya, xa = as_np(y), as_np(x)
    lead = ya.reshape(ya.shape[:feature_dims] + (-1,))
    kept = lead != 0
    assert (kept.all(-1) | (~kept).all(-1)).all(), "mask is not channel-wise"
    ratio = lead[kept.all(-1)] / xa.reshape(lead.shape)[kept.all(-1)]
    return kept.all(-1), ratio


@pytest.mark.parametrize("fn,shape,lead", [
    ("dropout1d", (40, 30, 5), 2), ("dropout1d", (1500, 2), 1),
    ("dropout2d", (40, 30, 2, 3), 2), ("dropout2d", (40, 30, 4), 2),
    ("dropout3d", (40, 30, 2, 2, 2), 2), ("dropout3d", (1500, 1, 2, 1), 1),
])
def test_feature_dropout_statistics_and_masks(fn: str, shape: tuple[int, ...],
                                              lead: int) -> None:
    p = 0.3
    rates = []
    for lib in LIBS:
        lib.manual_seed(0)
        x = lib.rand(*shape, dtype=lib.float64) + 0.5
        x.requires_grad_(True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = getattr(lib.nn.functional, fn)(x, p)
        kept, ratio = _channel_masks(y, x, lead)
        np.testing.assert_allclose(ratio, 1 / (1 - p), rtol=1e-12)
        (g,) = lib.autograd.grad(y.sum(), x)
        np.testing.assert_allclose(as_np(g) * as_np(x), as_np(y), rtol=1e-12, atol=1e-12)
        rates.append(1 - kept.mean())
        assert y.grad_fn.name() in ("MulBackward0", "SqueezeBackward1")
    for r in rates:
        assert abs(r - p) < 0.06


def _dropout_grad_fn(lib: Any, fn: str, shape: tuple[int, ...], **kw: Any) -> Any:
    x = lib.ones(*shape, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = getattr(lib.nn.functional, fn)(x, **kw)
    return [y is x, None if y.grad_fn is None else y.grad_fn.name(), tuple(y.shape)]


@pytest.mark.parametrize("fn,shape,kw", [
    ("dropout1d", (2, 3), {}), ("dropout1d", (2, 3, 4), {}), ("dropout1d", (2, 3), {"p": 1.0}),
    ("dropout1d", (2, 3), {"training": False}), ("dropout1d", (2, 3, 4), {"training": False}),
    ("dropout2d", (2, 3, 2, 2), {}), ("dropout2d", (2, 3, 2, 2), {"p": 0.0}),
    ("dropout3d", (2, 3, 2, 2), {}), ("dropout3d", (1, 2, 3, 2, 2), {}),
    ("dropout3d", (2, 3, 2, 2), {"training": False}),
    ("alpha_dropout", (5, 4), {}), ("alpha_dropout", (5, 4), {"training": True}),
    ("alpha_dropout", (5, 4), {"training": True, "p": 1.0}),
    ("feature_alpha_dropout", (5, 4, 3), {"training": True}),
    ("feature_alpha_dropout", (0, 4, 3), {"training": True}),
])
def test_dropout_identity_paths_and_graph_match_torch(fn: str, shape: tuple[int, ...],
                                                      kw: dict[str, Any]) -> None:
    assert _dropout_grad_fn(gradsum, fn, shape, **kw) == _dropout_grad_fn(torch, fn, shape, **kw)


@pytest.mark.parametrize("fn,shape", [("dropout2d", (4, 5)), ("dropout2d", (2, 3, 4)),
                                      ("dropout2d", (1, 2, 3, 4, 5)), ("dropout3d", (2, 3, 4)),
                                      ("dropout3d", (1, 1, 2, 3, 4, 5)),
                                      ("dropout2d", (2, 3, 4, 5))])
def test_dropout_rank_warnings_match_torch(fn: str, shape: tuple[int, ...]) -> None:
    seen = []
    for lib in LIBS:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            getattr(lib.nn.functional, fn)(lib.ones(*shape), 0.5)
        seen.append([(type(m.message).__name__, str(m.message), m.filename) for m in w])
    assert [s[:2] for s in seen[0]] == [s[:2] for s in seen[1]]
    assert all(s[2] == __file__ for s in seen[0])  # (stacklevel points at the caller)


def test_dropout_errors_match_torch() -> None:
    for fn in ("dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"):
        for p in (-0.1, 1.5):
            assert same_error(lambda lib, fn=fn, p=p: getattr(lib.nn.functional, fn)(
                lib.ones(2, 3, 4), p)) is ValueError
    assert same_error(lambda lib: lib.nn.functional.dropout1d(lib.ones(2, 3, 4, 5))) \
        is RuntimeError
    assert same_error(lambda lib: lib.nn.functional.dropout1d(lib.ones(4))) is RuntimeError
    assert same_error(
        lambda lib: lib.nn.functional.feature_alpha_dropout(lib.ones(4), 0.5, True)
    ) is RuntimeError
    for name in ("Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"):
        assert same_error(lambda lib, name=name: getattr(lib.nn, name)(1.2)) is ValueError


@pytest.mark.parametrize("name", ["Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
                                  "FeatureAlphaDropout"])
def test_dropout_modules_repr_train_eval_and_inplace(name: str) -> None:
    shape = {"Dropout1d": (4, 6, 3), "Dropout2d": (4, 6, 3, 3), "Dropout3d": (4, 6, 2, 2, 2),
             "AlphaDropout": (4, 6), "FeatureAlphaDropout": (4, 6, 3)}[name]
    out = []
    for lib in LIBS:
        m = getattr(lib.nn, name)(0.25, inplace=True)
        m2 = getattr(lib.nn, name)()
        x = lib.ones(*shape)
        y_eval = m.eval()(x)
        m.train()
        x2 = lib.ones(*shape)
        y_train = m(x2)
        out.append([gradsum_repr(m), gradsum_repr(m2), y_eval is x, list(m.state_dict()),
                    y_train is x2 if "Alpha" not in name else None,
                    bool((as_np(x2) != 1).any()) if "Alpha" not in name else None])
    assert out[0] == out[1]


@pytest.mark.parametrize("feature", [False, True])
def test_alpha_dropout_keeps_mean_and_variance_like_torch(feature: bool) -> None:
    p, stats = 0.2, []
    for lib in LIBS:
        lib.manual_seed(1)
        x = lib.randn(400, 50, 4, dtype=lib.float64)
        F = lib.nn.functional
        fn = F.feature_alpha_dropout if feature else F.alpha_dropout
        y = fn(x, p, True)
        ya, xa = as_np(y), as_np(x)
        # y is a * x + b(mask): two affine maps, one per mask value
        a = 1.0 / math.sqrt((1.7580993408473766 ** 2 * p + 1) * (1 - p))
        kept = np.isclose(ya, a * xa + 1.7580993408473766 * a * p)
        dropped = np.isclose(ya, 1.7580993408473766 * a * (p - 1))
        assert (kept | dropped).all()
        if feature:
            assert (kept.all(-1) | dropped.all(-1)).all()
        stats.append([ya.mean(), ya.std(), dropped.mean()])
    for s in stats:
        assert abs(s[0]) < 0.03 and abs(s[1] - 1) < 0.03 and abs(s[2] - p) < 0.03


def test_alpha_dropout_inplace_and_float32_match_torch_formula() -> None:
    p = 0.4
    for lib in LIBS:
        x = lib.linspace(-2.0, 2.0, 50)
        y = lib.nn.functional.alpha_dropout(x, p, True, inplace=True)
        assert y is x and y.dtype == lib.float32
