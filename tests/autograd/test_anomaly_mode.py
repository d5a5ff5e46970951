"""Side by side with torch: anomaly mode (nan checks and their flags, set_detect_anomaly, the
decorator, the backward error's traceback, its cost when off)."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

torch = pytest.importorskip("torch", reason="the side-by-side tests compare with torch")

import gradsum  # noqa: E402
from autograd_helpers import same_rounded, tensor64  # noqa: E402


# -- anomaly mode -----------------------------------------------------------------------------
def _anomaly_prog(lib: Any) -> Any:
    x = tensor64(lib, [0.0, 1.0])
    y = x.sqrt() * 0.0
    y.sum().backward()


def test_anomaly_nan_and_flags() -> None:
    def prog(lib: Any) -> Any:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with lib.autograd.detect_anomaly():
                flags = (lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled())
                try:
                    _anomaly_prog(lib)
                except RuntimeError as e:
                    err = str(e)
        msgs = [str(m.message) for m in w]
        return (flags, err, msgs[0], msgs[1].split("\n")[0],
                lib.is_anomaly_enabled(), any("y = x.sqrt()" in m for m in msgs))

    out = same_rounded(prog)
    assert out[1] == "Function 'SqrtBackward0' returned nan values in its 0th output."


def test_anomaly_check_nan_off_and_set_detect_anomaly() -> None:
    def prog(lib: Any) -> Any:
        with lib.autograd.set_detect_anomaly(True, check_nan=False):
            flags = (lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled())
            x = tensor64(lib, [0.0, 1.0])
            (x.sqrt() * 0.0).sum().backward()
        lib.autograd.set_detect_anomaly(False)
        return flags, lib.is_anomaly_enabled(), [str(v) for v in x.grad.tolist()]

    same_rounded(prog)


def test_anomaly_decorator_and_backward_error_traceback() -> None:
    def prog(lib: Any) -> Any:
        class Bad(lib.autograd.Function):
            @staticmethod
            def forward(ctx: Any, a: Any) -> Any:
                return a * 2

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                raise ValueError("boom")

        def run() -> Any:
            with lib.autograd.detect_anomaly(check_nan=False):
                x = tensor64(lib, [1.0])
                out = Bad.apply(x)  # the forward line the warning points to
                out.sum().backward()

        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                run()
            except ValueError as e:
                err = str(e)
        msgs = [str(m.message) for m in w if "Error detected" in str(m.message)]
        return (err, msgs[0].split("\n")[0], "out = Bad.apply(x)" in msgs[0],
                all(m.category is UserWarning for m in w), lib.is_anomaly_enabled())

    same_rounded(prog)


def test_detect_anomaly_is_not_a_decorator() -> None:
    def prog(lib: Any) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lib.autograd.detect_anomaly()(print)

    assert same_rounded(prog)[0] == "TypeError"


def test_anomaly_off_costs_nothing() -> None:
    from gradsum.autograd.graph import Node

    plain = Node.__init__
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with gradsum.autograd.detect_anomaly():
            assert Node.__init__ is not plain
            y = gradsum.ones(1, requires_grad=True) * 2
            assert "traceback_" in y.grad_fn.metadata
    assert Node.__init__ is plain
    z = gradsum.ones(1, requires_grad=True) * 2
    assert "traceback_" not in z.grad_fn.metadata
