"""Side by side with torch: the padding modules (reflection, replication, circular, zero and
constant padding in 1-3 dimensions), their classes and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from diff_helpers import as_np, same_error  # noqa: E402
from nn_helpers import gradsum_repr, lib_tensor  # noqa: E402

LIBS = [gradsum, torch]


def _tol(dtype: str) -> float:
    return 1e-12 if dtype == "float64" else 2e-6


# -- padding -------------------------------------------------------------------------------------
PADS = [
    ("ZeroPad1d", 2, (2, 3)), ("ZeroPad1d", (1, 0), (2, 4)),
    ("ZeroPad2d", 1, (1, 2, 3)), ("ZeroPad2d", (1, 0, 2, -1), (2, 1, 3, 4)),
    ("ZeroPad3d", (1, 0, 0, 2, 1, 1), (1, 2, 2, 3, 2)),
    ("ReflectionPad1d", 2, (2, 2, 4)), ("ReflectionPad1d", (0, 3), (3, 5)),
    ("ReflectionPad2d", (1, 2, 0, 1), (2, 3, 4)), ("ReflectionPad2d", 1, (1, 2, 3, 3)),
    ("ReflectionPad3d", 1, (1, 1, 2, 3, 3)),
    ("ReflectionPad3d", (1, 0, 2, 1, 0, 1), (2, 3, 3, 3)),
    ("ReplicationPad1d", (3, 1), (2, 2, 2)), ("ReplicationPad2d", (2, 0, 1, 3), (1, 2, 2, 3)),
    ("ReplicationPad3d", 2, (1, 2, 2, 2)),
    ("ReplicationPad3d", (0, 1, 1, 0, 2, 2), (1, 1, 2, 2, 3)),
    ("CircularPad1d", (2, 1), (2, 3, 3)), ("CircularPad1d", 1, (2, 3)),
    ("CircularPad2d", (1, 1, 2, 0), (1, 2, 3, 3)), ("CircularPad2d", (-1, 2, 1, 1), (2, 3, 4)),
    ("CircularPad3d", 1, (1, 1, 2, 2, 2)), ("CircularPad3d", (1, 0, 0, 1, 1, 1), (2, 2, 3, 3)),
]


def _pad_program(lib: Any, name: str, padding: Any, shape: tuple[int, ...], dtype: str,
                 value: float | None = None) -> list[Any]:
    arr = np.random.default_rng(len(shape) * 7 + sum(shape)).standard_normal(shape)
    x = lib_tensor(lib, arr, dtype)
    m = getattr(lib.nn, name)(padding) if value is None else getattr(lib.nn, name)(padding, value)
    y = m(x)
    w = lib_tensor(lib, np.linspace(-1.0, 2.0, y.numel()).reshape(tuple(y.shape)), dtype, False)
    (g,) = lib.autograd.grad((y * w).sum(), x)
    return [as_np(y), as_np(g), y.grad_fn.name().split("::")[-1], gradsum_repr(m), m.padding,
            list(m.state_dict()), str(y.dtype).split(".")[-1]]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name,padding,shape", PADS)
def test_padding_modules_match_torch(name: str, padding: Any, shape: tuple[int, ...],
                                     dtype: str) -> None:
    g = _pad_program(gradsum, name, padding, shape, dtype)
    t = _pad_program(torch, name, padding, shape, dtype)
    tol = _tol(dtype)
    np.testing.assert_allclose(g[0], t[0], rtol=tol, atol=tol)
    np.testing.assert_allclose(g[1], t[1], rtol=tol, atol=tol)
    assert g[2:] == t[2:]


@pytest.mark.parametrize("name,padding,value,shape", [
    ("ConstantPad1d", 2, 3.5, (2, 3)), ("ConstantPad1d", (1, -1), -2.0, (1, 2, 4)),
    ("ConstantPad2d", (1, 2, 0, 1), 1, (2, 2, 3)), ("ConstantPad3d", 1, 0.25, (1, 2, 2, 2)),
    ("ConstantPad3d", (2, 0, 1, 0, 0, 1), -1.5, (2, 1, 2, 2, 2)),
])
def test_constant_padding_modules_match_torch(name: str, padding: Any, value: float,
                                              shape: tuple[int, ...]) -> None:
    g = _pad_program(gradsum, name, padding, shape, "float64", value)
    t = _pad_program(torch, name, padding, shape, "float64", value)
    np.testing.assert_allclose(g[0], t[0])
    np.testing.assert_allclose(g[1], t[1])
    assert g[2:] == t[2:]


def test_padding_module_classes_and_errors_match_torch() -> None:
    for lib in LIBS:
        assert isinstance(lib.nn.ZeroPad2d(1), lib.nn.ConstantPad2d)
    for name, bad in [("CircularPad1d", (4,)), ("CircularPad2d", (2, 2)),
                      ("CircularPad3d", (2, 2, 2)), ("CircularPad3d", (1, 1, 1, 1, 1, 1))]:
        assert same_error(
            lambda lib, name=name, bad=bad: getattr(lib.nn, name)(1)(lib.ones(*bad))
        ) is ValueError
    same_error(lambda lib: lib.nn.ReflectionPad1d(3)(lib.ones(1, 2, 3)))
    same_error(lambda lib: lib.nn.ReflectionPad2d(1)(lib.ones(3)))
    same_error(lambda lib: lib.nn.ReplicationPad3d(1)(lib.ones(2, 2)))
