"""Exact float32 GELU at +inf, as torch gives it on this machine: torch sends a contiguous
float32 tensor of more than one element to oneDNN's ``gelu_erf`` while oneDNN is enabled,
whose AVX-512 kernel gives nan at +inf and whose AVX2 kernel (and torch's native kernel,
used for one element, a strided tensor or with oneDNN off) gives inf."""

from __future__ import annotations

import math

import numpy as np
import pytest

import gradsum
from gradsum.backends import mkldnn

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]")

_X = [1.0, math.inf, -math.inf, math.nan, -2.0, 0.0]


def _both(enabled: bool, make: object) -> tuple[np.ndarray, np.ndarray]:
    with torch.backends.mkldnn.flags(enabled=enabled), gradsum.backends.mkldnn.flags(
            enabled=enabled):
        want = torch.nn.functional.gelu(make(torch)).numpy()  # type: ignore[operator]
        got = gradsum.nn.functional.gelu(make(gradsum)).numpy()  # type: ignore[operator]
    return got, want


@pytest.mark.parametrize("enabled", [True, False])
@pytest.mark.parametrize("layout", ["contiguous", "one element", "strided"])
def test_gelu_at_inf_as_torch(enabled: bool, layout: str) -> None:
    def make(lib: object) -> object:
        t = lib.tensor(_X * 2, dtype=lib.float32)  # type: ignore[attr-defined]
        if layout == "one element":
            return t[1:2]
        return t[::2] if layout == "strided" else t

    got, want = _both(enabled, make)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[np.isinf(want)], want[np.isinf(want)])
    # (the finite values to torch's rounding, which is coarser than gradsum's)
    np.testing.assert_allclose(got[np.isfinite(want)], want[np.isfinite(want)], rtol=1e-5)


def test_the_prediction_matches_torchs_kernel_here() -> None:
    x = torch.tensor([1.0, math.inf])
    with torch.backends.mkldnn.flags(enabled=True):
        nan = bool(torch.isnan(torch.nn.functional.gelu(x))[1])
    with gradsum.backends.mkldnn.flags(enabled=True):
        assert mkldnn.onednn_gelu_nan_at_inf() is nan
    with gradsum.backends.mkldnn.flags(enabled=False):
        assert mkldnn.onednn_gelu_nan_at_inf() is False


def test_onednn_isa_caps() -> None:
    for cap in ("", "ALL", "avx512_core", "AVX512_CORE_BF16", "AVX10_1_512", "default"):
        assert mkldnn._cap_admits_avx512(cap), cap
    for cap in ("AVX2", "avx2_vnni", "SSE41", "AVX"):
        assert not mkldnn._cap_admits_avx512(cap), cap
