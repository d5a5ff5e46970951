"""Side by side with torch: anomaly mode (nan checks and their flags, set_detect_anomaly, the
decorator, the backward error's traceback, its cost when off)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import pytest

torch = pytest.importorskip("torch", reason="the side-by-side tests compare with torch")

import gradsum  # noqa: E402


def _norm(x: Any) -> Any:
    if isinstance(x, (torch.Tensor, gradsum.Tensor)):
        return ("T", [round(v, 5) for v in x.detach().reshape(-1).tolist()], x.requires_grad)
    if isinstance(x, (list, tuple)):
        return type(x)(_norm(v) for v in x)
    if isinstance(x, dict):
        return {k: _norm(v) for k, v in x.items()}
    return x


def _run(lib: Any, program: Callable[[Any], Any]) -> Any:
    try:
        return _norm(program(lib))
    except Exception as e:  # (compared by type and first words)
        return (type(e).__name__, str(e)[:40])


def _same(program: Callable[[Any], Any]) -> Any:
    a, b = _run(gradsum, program), _run(torch, program)
    assert a == b, (a, b)
    return a


def _t(lib: Any, values: Any, rg: bool = True) -> Any:
    return lib.tensor(values, dtype=lib.float64, requires_grad=rg)


# -- anomaly mode -----------------------------------------------------------------------------
def _anomaly_prog(lib: Any) -> Any:
    x = _t(lib, [0.0, 1.0])
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

    out = _same(prog)
    assert out[1] == "Function 'SqrtBackward0' returned nan values in its 0th output."


def test_anomaly_check_nan_off_and_set_detect_anomaly() -> None:
    def prog(lib: Any) -> Any:
        with lib.autograd.set_detect_anomaly(True, check_nan=False):
            flags = (lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled())
            x = _t(lib, [0.0, 1.0])
            (x.sqrt() * 0.0).sum().backward()
        lib.autograd.set_detect_anomaly(False)
        return flags, lib.is_anomaly_enabled(), [str(v) for v in x.grad.tolist()]

    _same(prog)


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
                x = _t(lib, [1.0])
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

    _same(prog)


def test_detect_anomaly_is_not_a_decorator() -> None:
    def prog(lib: Any) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lib.autograd.detect_anomaly()(print)

    assert _same(prog)[0] == "TypeError"


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
