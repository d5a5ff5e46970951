"""The NumPy floor (``numpy>=2.0``): NumPy 2's scalar promotion (NEP 50) is torch's rule, so
a Python scalar never widens a tensor's dtype. On NumPy 1.x ``(gradsum.tensor(2.0) * 0.5)``
was float64 and the demo's backward failed; these cases pin torch's dtypes (against torch
where it is installed, against the values torch 2.13 gives otherwise)."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import gradsum

#: name -> (program over the library ``m``, the dtype torch 2.13 gives)
CASES: dict[str, tuple[Callable[[Any], Any], str]] = {
    "0-d float32 * Python float": (lambda m: m.tensor(2.0) * 0.5, "float32"),
    "float32 * Python float": (lambda m: m.ones(2) * 0.5, "float32"),
    "Python float - 0-d float32": (lambda m: 1.5 - m.tensor(2.0), "float32"),
    "float32 / Python int": (lambda m: m.tensor(1.0) / 3, "float32"),
    "float32 ** Python float": (lambda m: m.tensor(2.0) ** 0.5, "float32"),
    "float16 * Python float": (lambda m: m.ones(2, dtype=m.float16) * 0.5, "float16"),
    "int64 * Python float": (lambda m: m.arange(3) * 0.5, "float32"),
    "int64 / int64": (lambda m: m.arange(3) / 2, "float32"),
    "int32 + Python int": (lambda m: m.arange(3, dtype=m.int32) + 5, "int32"),
    "int8 + Python int": (lambda m: m.arange(3, dtype=m.int8) + 1, "int8"),
    "uint8 * Python int": (lambda m: m.ones(2, dtype=m.uint8) * 3, "uint8"),
    "bool + Python int": (lambda m: m.tensor([True]) + 1, "int64"),
    "bool * Python float": (lambda m: m.tensor([True]) * 1.5, "float32"),
    "float32 + 0-d float64": (lambda m: m.ones(2) + m.tensor(1.0, dtype=m.float64), "float32"),
    "0-d float32 + 0-d float64": (
        lambda m: m.tensor(1.0) + m.tensor(1.0, dtype=m.float64), "float64"),
    "int32 + 0-d int64": (lambda m: m.ones(2, dtype=m.int32) + m.tensor(1), "int32"),
    "0-d int64 + float32": (lambda m: m.tensor(3) + m.ones(2), "float32"),
    "float32 * NumPy float64 scalar": (lambda m: m.tensor(2.0) * np.float64(0.5), "float32"),
    "where(cond, float32, Python float)": (
        lambda m: m.where(m.tensor([True, False]), m.ones(2), 0.5), "float32"),
    "clamp(float32, Python floats)": (lambda m: m.clamp(m.ones(2), 0.5, 2.5), "float32"),
}


def _dtype(t: Any) -> str:
    return str(t.dtype).split(".")[-1]


def test_the_issue_case() -> None:
    assert (gradsum.tensor(2.0) * 0.5).dtype == gradsum.float32


@pytest.mark.parametrize("case", list(CASES))
def test_scalar_promotion_gives_torchs_dtype(case: str) -> None:
    fn, want = CASES[case]
    assert _dtype(fn(gradsum)) == want


@pytest.mark.parametrize("case", list(CASES))
def test_scalar_promotion_matches_torch(case: str) -> None:
    torch = pytest.importorskip(
        "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]")
    fn, want = CASES[case]
    assert _dtype(fn(torch)) == want  # (the table above is torch's)
    assert _dtype(fn(gradsum)) == _dtype(fn(torch))


def test_the_float32_result_keeps_float32_through_backward() -> None:
    """The demo's failure on NumPy 1.x: a float64 activation met float32 weights."""
    w = gradsum.ones(3, 2, requires_grad=True)
    x = gradsum.ones(4, 3) * 0.5
    (x @ w).sum().backward()
    assert w.grad.dtype == gradsum.float32


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", text)[:2])


def test_the_installed_numpy_is_at_least_the_floor() -> None:
    assert _version(np.__version__) >= (2, 0)


def test_the_declared_floors_are_numpy_2_and_python_3_10() -> None:
    """pyproject.toml declares what these tests (and .ci/compat) check works."""
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    if not pyproject.exists():
        pytest.skip("not run from a source checkout (no pyproject.toml)")
    text = pyproject.read_text(encoding="utf-8")
    numpy_req = re.search(r'"numpy\s*>=\s*([0-9.]+)', text)
    python_req = re.search(r'requires-python\s*=\s*">=\s*([0-9.]+)"', text)
    assert numpy_req and _version(numpy_req.group(1)) >= (2, 0), numpy_req
    assert python_req and _version(python_req.group(1)) == (3, 10), python_req
    assert sys.version_info >= (3, 10)
