"""The backend seam's helpers: ``silenced`` (NumPy's floating-point warnings off for one call,
as ``np.errstate``) and ``dot`` (NumPy's product without its dispatcher)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gradsum
from gradsum import _backend


def _warns(x: np.ndarray) -> np.ndarray:
    return np.log(x - x) / (x - x) * np.float32(3e38) * x  # divide, invalid and over


@pytest.mark.parametrize("fallback", [False, True])
@pytest.mark.parametrize("user", ["warn", "raise", "ignore"])
def test_silenced_is_errstate_for_one_call(monkeypatch, fallback, user):
    if fallback:  # (NumPy 1.x, or changed internals: errstate's own decorator)
        monkeypatch.setattr(_backend, "_fp_state", None)
    x = np.array([np.inf, 1.0, 0.0], dtype=np.float32)
    quiet = _backend.silenced(_warns)
    with np.errstate(all=user, under="raise"), warnings.catch_warnings():
        warnings.simplefilter("error")
        before = np.geterr()
        for _ in range(3):  # (the cached state is reused)
            got = quiet(x)
            with np.errstate(all="ignore"):
                assert np.array_equal(got, _warns(x), equal_nan=True)
            assert np.geterr() == before  # restored
        with pytest.raises(ZeroDivisionError):  # restored when fn raises, too
            _backend.silenced(lambda: 1 / 0)()
        assert np.geterr() == before
        if user != "ignore":  # the caller's own state is in force outside
            with pytest.raises((FloatingPointError, RuntimeWarning)):
                _warns(x)
        # the underflow setting stays the caller's (errstate's decorator leaves it too),
        # unless asked for (errstate(all="ignore"), what the optimizers' steps run under)
        def tiny() -> np.ndarray:
            return np.array([1e-30], np.float32) * np.float32(1e-30)

        with pytest.raises(FloatingPointError):
            _backend.silenced(tiny)()
        assert _backend.silenced(tiny, underflow=True)()[0] == 0
        assert np.geterr() == before


def test_log_softmax_and_backward_warn_nothing_on_infinite_rows():
    x0 = np.array([[np.inf, 1.0], [-np.inf, -np.inf], [0.0, 1.0]], dtype=np.float32)
    with np.errstate(all="raise"), warnings.catch_warnings():
        warnings.simplefilter("error")
        x = gradsum.tensor(x0, requires_grad=True)
        y = gradsum.log_softmax(x, 1)
        y.sum().backward()
    assert np.isnan(y.detach().numpy()[:2]).all() and np.isfinite(y.detach().numpy()[2]).all()


def test_dot_is_numpys_dot():
    rng = np.random.default_rng(0)
    for dt in (np.float32, np.float64, np.int64):
        a = (rng.standard_normal((5, 7)) * 4).astype(dt)
        b = (rng.standard_normal((7, 3)) * 4).astype(dt)
        assert _backend.dot(a, b).tobytes() == np.dot(a, b).tobytes()
        assert _backend.dot(a.T.copy().T, b).tobytes() == np.dot(a, b).tobytes()
