"""gradsum.testing against torch.testing: assert_close (tolerances, error types, messages) and
make_tensor (argument checks, value ranges)."""

from __future__ import annotations

import math
import re
import warnings
from typing import Any

import numpy as np
import pytest

import gradsum
from gradsum.testing import assert_close, make_tensor

torch = pytest.importorskip("torch", reason="side-by-side checks need torch")
tt = torch.testing

_DT = {"float16": (gradsum.float16, torch.float16), "float32": (gradsum.float32, torch.float32),
       "float64": (gradsum.float64, torch.float64), "int64": (gradsum.int64, torch.int64),
       "int32": (gradsum.int32, torch.int32), "int16": (gradsum.int16, torch.int16),
       "int8": (gradsum.int8, torch.int8), "uint8": (gradsum.uint8, torch.uint8),
       "bool": (gradsum.bool, torch.bool)}


def _norm(msg: str) -> str:
    """torch's message in gradsum's terms (torch.Size([2, 3]) -> (2, 3), torch. -> gradsum.)."""
    def size(m: re.Match[str]) -> str:
        items = [s.strip() for s in m.group(1).split(",") if s.strip()]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"

    msg = re.sub(r"torch\.Size\(\[(.*?)\]\)", size, msg)
    msg = msg.replace("<class 'torch.Tensor'>", "<class 'gradsum._tensor.Tensor'>")
    return msg.replace("torch.", "gradsum.")


def _convert(x: Any, lib: str) -> Any:
    if isinstance(x, np.ndarray):
        return gradsum.tensor(x) if lib == "g" else torch.tensor(x)
    if isinstance(x, list):
        return [_convert(v, lib) for v in x]
    if isinstance(x, tuple):
        return tuple(_convert(v, lib) for v in x)
    if isinstance(x, dict):
        return {k: _convert(v, lib) for k, v in x.items()}
    return x


def _outcome(fn: Any) -> tuple[type | None, str]:
    try:
        fn()
    except Exception as e:  # (the outcome is what is compared)
        return type(e), str(e)
    return None, ""


def check(actual: Any, expected: Any, **kw: Any) -> tuple[type | None, str]:
    t = _outcome(lambda: tt.assert_close(_convert(actual, "t"), _convert(expected, "t"), **kw))
    g = _outcome(lambda: assert_close(_convert(actual, "g"), _convert(expected, "g"), **kw))
    assert g[0] is t[0], (g, t)
    assert g[1] == _norm(t[1]), f"\n{g[1]}\n---\n{_norm(t[1])}"
    return g


f32 = np.float32
f64 = np.float64

CASES = [
    (np.array([1.0, 2.0, 3.0], f32), np.array([1.0, 2.0, 3.0], f32), {}),
    (np.array([1.0, 2.0 + 1e-6, 3.0], f32), np.array([1.0, 2.0, 3.0], f32), {}),
    (np.array([[1.0, 2.5], [3.0, 0.1]], f32), np.array([[1.0, 2.0], [3.0, 0.0]], f32), {}),
    (np.array([1.0, 2.0, 3.0], f64), np.array([1.0, 2.0000001, 3.5], f64), {}),
    (np.array([1.0, 2.0, 3.0], f64), np.array([1.0, 2.0000001, 3.0], f64), {}),
    (np.array([1, 2, 3]), np.array([1, 5, 3]), {}),
    (np.array([1, 2, 3]), np.array([1, 5, 3]), {"rtol": 0.5, "atol": 1.0}),
    (np.array([1, 2, 7]), np.array([1, 5, 3]), {"rtol": 0.0, "atol": 1.0}),
    (np.array([True, False]), np.array([True, True]), {}),
    (np.array([1.0, np.nan], f32), np.array([1.0, np.nan], f32), {}),
    (np.array([1.0, np.nan], f32), np.array([1.0, np.nan], f32), {"equal_nan": True}),
    (np.array([np.inf, 1.0], f64), np.array([np.inf, 1.0], f64), {}),
    (np.array([np.inf, 1.0], f64), np.array([-np.inf, 1.0], f64), {}),
    (np.array([1.0, 2.0], f32), np.array([1.0, 2.1], f32), {"rtol": 0.1, "atol": 0.0}),
    (np.array([1.0, 2.0], f32), np.array([1.0, 2.1], f32), {"rtol": 0.0, "atol": 0.0}),
    (np.array(1.5, f32), np.array(1.0, f32), {}),
    (np.array(0.5, f64), np.array(0.0, f64), {}),
    (np.array([1.0, 2.0], f32), np.array([1.0, 2.0], f64), {}),
    (np.array([1.0, 2.0], f32), np.array([1.0, 2.0], f64), {"check_dtype": False}),
    (np.array([1.0, 2.0], f32), np.array([1.0, 2.5], f64), {"check_dtype": False}),
    (np.array([1.0, 2.0], f32), np.array([1.0, 2.0, 3.0], f32), {}),
    (np.zeros((2, 3), f32), np.zeros((3, 2), f32), {}),
    (np.array([1.0], f32), np.array([1.0], f32), {"rtol": 1e-3}),
    (np.array([1.0], f32), np.array([1.0], f32), {"atol": 1e-3}),
    (np.array([0.0, 1.0], f32), np.array([0.0, 0.0], f32), {}),
    (1.0, 1.0, {}),
    (1.0, 1.1, {}),
    (1, 2, {}),
    (1, 1.0, {}),
    (1, 1.0, {"check_dtype": False}),
    (0.0, 1e-8, {}),
    (1e-8, 0.0, {}),
    (float("nan"), float("nan"), {}),
    (float("nan"), float("nan"), {"equal_nan": True}),
    (True, True, {}),
    (True, False, {}),
    (None, None, {}),
    (None, 1, {}),
    ([1.0, 2.0], [1.0, 2.0], {}),
    ([1.0, 2.0], (1.0, 2.5), {}),
    ([1.0, 2.0], [1.0], {}),
    ({"a": 1.0, "b": [1, 2]}, {"a": 1.0, "b": [1, 3]}, {}),
    ({"a": 1.0}, {"b": 1.0}, {}),
    ({"a": 1.0, "c": 2}, {"b": 1.0, "c": 2}, {}),
    ([np.array([1.0, 2.0], f32), {"x": np.array([[1.0, 2.0]], f64)}],
     [np.array([1.0, 2.0], f32), {"x": np.array([[1.0, 2.5]], f64)}], {}),
    (np.array([1.0], f32), 1.0, {}),
    ("abc", "abc", {}),
    (np.array([0.1, 0.2, 0.3], f32) * 1000, np.array([100.0, 200.0, 300.03], f32), {}),
]


@pytest.mark.parametrize("actual,expected,kw", CASES)
def test_assert_close_matches_torch(actual: Any, expected: Any, kw: dict[str, Any]) -> None:
    check(actual, expected, **kw)


def test_assert_close_messages_in_detail() -> None:
    kind, msg = check(np.array([[1.0, 2.5], [3.0, 0.1]], f32),
                      np.array([[1.0, 2.0], [3.0, 0.0]], f32))
    assert kind is AssertionError
    assert msg.splitlines()[0] == "Tensor-likes are not close!"
    assert "Mismatched elements: 2 / 4 (50.0%)" in msg
    assert "Greatest absolute difference: 0.5 at index (0, 1)" in msg
    assert "Greatest relative difference: inf at index (1, 1)" in msg
    kind, msg = check([1.0, {"k": 2.0}], [1.0, {"k": 3.0}])
    assert msg.endswith("The failure occurred for item [1]['k']")


@pytest.mark.parametrize("msg", ["custom", lambda m: "<" + m.splitlines()[0] + ">"])
def test_assert_close_custom_msg(msg: Any) -> None:
    check([np.array([1.0], f32)], [np.array([2.0], f32)], msg=msg)
    check(1.0, 2.0, msg=msg)


def test_assert_close_stride_and_subclasses() -> None:
    a = np.arange(6.0).reshape(2, 3)
    g = gradsum.tensor(a)
    t = torch.tensor(a)
    tk = _outcome(lambda: tt.assert_close(t.t(), t.t().contiguous(), check_stride=True))
    gk = _outcome(lambda: assert_close(g.t(), g.t().contiguous(), check_stride=True))
    assert gk[0] is tk[0] is AssertionError
    assert gk[1] == _norm(tk[1])
    assert_close(g.t(), g.t().contiguous())
    p = gradsum.nn.Parameter(gradsum.ones(2))
    tp = torch.nn.Parameter(torch.ones(2))
    assert_close(p, gradsum.ones(2))
    tt.assert_close(tp, torch.ones(2))
    tk = _outcome(lambda: tt.assert_close(tp, torch.ones(2), allow_subclasses=False))
    gk = _outcome(lambda: assert_close(p, gradsum.ones(2), allow_subclasses=False))
    assert gk[0] is tk[0] is TypeError
    assert "No comparison pair was able to handle inputs of type" in gk[1]


def test_assert_close_numpy_arrays() -> None:
    a, b = np.array([1.0, 2.0]), np.array([1.0, 2.5])
    check_t = _outcome(lambda: tt.assert_close(a, b))
    check_g = _outcome(lambda: assert_close(a, b))
    assert check_g[0] is check_t[0] is AssertionError
    assert check_g[1] == _norm(check_t[1])


def test_assert_close_default_tolerances_edges() -> None:
    # float32: atol 1e-5, rtol 1.3e-6 -> 1 + 1.05e-5 passes at 1.0, 1 + 1.2e-5 fails
    for delta in (1.05e-5, 1.2e-5, 9e-6, 2e-5):
        check(np.array([1.0 + delta], f32), np.array([1.0], f32))
        check(np.array([1.0 + delta], f64), np.array([1.0], f64))
    check(np.array([1.0 + 2e-7], f64), np.array([1.0], f64))
    check(np.array([1.0 + 1.9e-7], f64), np.array([1.0], f64))
    check(np.array([1.0, 2.0], np.float16), np.array([1.0, 2.002], np.float16))


# -- make_tensor ---------------------------------------------------------------------------------
def _make_outcome(lib: str, *shape: Any, dtype: str, **kw: Any) -> tuple[type | None, str]:
    if lib == "t":
        return _outcome(lambda: tt.make_tensor(*shape, dtype=_DT[dtype][1], device="cpu", **kw))
    return _outcome(lambda: make_tensor(*shape, dtype=_DT[dtype][0], **kw))


@pytest.mark.parametrize("dtype,kw", [
    ("int64", {"requires_grad": True}),
    ("bool", {"requires_grad": True}),
    ("float32", {"low": 1.0, "high": 0.0}),
    ("int64", {"low": 5, "high": 5}),
    ("float32", {"low": float("nan")}),
    ("float64", {"high": float("nan")}),
    ("uint8", {"low": 300, "high": 400}),
    ("int8", {"low": -300, "high": -200}),
    ("bool", {"low": 3, "high": 5}),
])
def test_make_tensor_errors_match_torch(dtype: str, kw: dict[str, Any]) -> None:
    t = _make_outcome("t", 3, dtype=dtype, **kw)
    g = _make_outcome("g", 3, dtype=dtype, **kw)
    assert g[0] is t[0] is not None
    assert g[1] == _norm(t[1])


@pytest.mark.parametrize("dtype", list(_DT))
@pytest.mark.parametrize("kw", [{}, {"low": -3, "high": 4}, {"low": 0.5, "high": 2.5},
                                {"low": -1e6, "high": 1e6}])
def test_make_tensor_ranges(dtype: str, kw: dict[str, Any]) -> None:
    g = make_tensor(200, dtype=_DT[dtype][0], **kw)
    t = tt.make_tensor(200, dtype=_DT[dtype][1], device="cpu", **kw)
    assert g.dtype == _DT[dtype][0] and tuple(g.shape) == (200,)
    ga = g.numpy().astype(np.float64)
    ta = t.numpy().astype(np.float64)
    # the same support: every torch bound holds for gradsum, and the ranges overlap fully
    assert ga.min() >= min(ta.min(), ga.min()) and ga.max() <= max(ta.max(), ga.max())
    lo = {"bool": 0, "uint8": 0}.get(dtype, -9)
    hi = {"bool": 2}.get(dtype, 10 if dtype in ("uint8", "int8", "int16", "int32", "int64")
                         else 9)
    low, high = kw.get("low", lo), kw.get("high", hi)
    if dtype in ("bool", "uint8", "int8", "int16", "int32", "int64"):
        info = (0, 1) if dtype == "bool" else (np.iinfo(dtype).min, np.iinfo(dtype).max)
        low = math.ceil(min(max(low, info[0]), info[1] + 1))
        high = math.ceil(min(max(high, info[0]), info[1] + 1))
        assert ga.min() >= low and ga.max() < high
        assert ta.min() >= low and ta.max() < high
    else:
        assert ga.min() >= low and ga.max() <= high
        assert ta.min() >= low and ta.max() <= high


def test_make_tensor_shapes_flags() -> None:
    for shape in [(), (3,), ((2, 3),), ([2, 3],), (2, 3), (0, 2)]:
        g = make_tensor(*shape, dtype=gradsum.float32)
        t = tt.make_tensor(*shape, dtype=torch.float32, device="cpu")
        assert tuple(g.shape) == tuple(t.shape)
    g = make_tensor(2, 3, dtype=gradsum.float32, noncontiguous=True)
    t = tt.make_tensor(2, 3, dtype=torch.float32, device="cpu", noncontiguous=True)
    assert g.is_contiguous() == t.is_contiguous() is False
    assert g.stride() == t.stride()
    g = make_tensor(1, dtype=gradsum.float32, noncontiguous=True)
    assert g.is_contiguous()
    g = make_tensor(500, dtype=gradsum.int64, low=-1, high=2, exclude_zero=True)
    assert not (g == 0).any()
    g = make_tensor(500, dtype=gradsum.bool, exclude_zero=True)
    assert bool(g.all())
    g = make_tensor(3, dtype=gradsum.float64, requires_grad=True)
    assert g.requires_grad and g.is_leaf
    assert not make_tensor(3, dtype=gradsum.float64).requires_grad
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        g = make_tensor(3, dtype=gradsum.float32, low=2.0, high=2.0)
    assert any(issubclass(x.category, FutureWarning) for x in w)
    assert g.tolist() == [2.0, 2.0, 2.0]


def test_make_tensor_uses_gradsum_generator() -> None:
    gradsum.manual_seed(3)
    a = make_tensor(5, dtype=gradsum.float32)
    gradsum.manual_seed(3)
    b = make_tensor(5, dtype=gradsum.float32)
    assert a.tolist() == b.tolist()
    g = make_tensor(3, dtype=gradsum.float64, low=-1e308, high=1e308)
    assert np.isfinite(g.numpy()).all()
