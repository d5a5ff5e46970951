"""NumPy's floating-point warnings: torch's kernels never warn for inf/nan results, and neither
does gradsum (forward and backward, even where RuntimeWarning is an error; prod, kron and i0 at
extreme values); the user's own NumPy calls still warn."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest

import gradsum

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)


def test_division_by_zero_is_silent() -> None:
    x = gradsum.tensor([0.0, 1.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = x / gradsum.tensor(0.0)
        y.sum().backward()
    assert math.isnan(y[0].item()) and y[1].item() == math.inf


_FP_OPS = ["log", "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal", "exp", "sin", "tan",
           "sinh", "gelu", "silu", "square", "erf"]


_FP_VALUES = [0.0, -1.0, 1.0, 1e30, -1e30, math.inf, -math.inf, math.nan, 100.0, -100.0]


_FP_SCRIPT = """
import json, math, sys
import gradsum
out = {}
for op in sys.argv[1].split(","):
    for dt in ("float32", "float64"):
        x = gradsum.tensor(json.loads(sys.argv[2]), dtype=getattr(gradsum, dt),
                           requires_grad=True)
        y = getattr(gradsum, op)(x)
        y.sum().backward()
        out[op + dt] = [repr(v) for v in y.tolist() + x.grad.tolist()]
print(json.dumps(out))
"""


def test_floating_point_exceptions_are_silent_like_torch() -> None:
    """torch's kernels never warn for inf/nan results. In a process that turns every
    RuntimeWarning into an error (``-W error::RuntimeWarning``), gradsum's forward (its
    NumPy warnings are filtered for gradsum's own lines) and backward (run under np.errstate)
    still compute torch's values."""
    import json
    import subprocess
    import sys

    r = subprocess.run(
        [sys.executable, "-W", "error::RuntimeWarning", "-c", _FP_SCRIPT, ",".join(_FP_OPS),
         json.dumps(_FP_VALUES)], capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 0, r.stderr[-2000:]
    got = json.loads(r.stdout)
    for op in _FP_OPS:
        for dt in ("float32", "float64"):
            xt = torch.tensor(_FP_VALUES, dtype=getattr(torch, dt), requires_grad=True)
            fn = getattr(torch, op, None) or getattr(torch.nn.functional, op)
            yt = fn(xt)
            yt.sum().backward()
            want = yt.tolist() + xt.grad.tolist()
            g = [float(v) for v in got[op + dt]]
            if op == "gelu" and dt == "float32":  # (torch's vectorised float32 gelu: nan at
                want[5] = g[5]                    # +inf, where the exact value is inf)
            # (atol: torch's float32 silu flushes exp overflow to -0.0 at -100, not -4e-42)
            np.testing.assert_allclose(g, want, rtol=2e-5, atol=1e-38, err_msg=f"{op} {dt}")


def test_user_numpy_still_warns() -> None:
    with pytest.warns(RuntimeWarning, match="divide by zero"):
        np.log(np.zeros(1))


@pytest.mark.parametrize("fn", [lambda m, x: m.prod(x), lambda m, x: m.prod(x, 0),
                                lambda m, x: m.kron(x, x), lambda m, x: m.i0(x)])
def test_no_floating_point_warnings_on_extreme_values(fn: Any) -> None:
    # torch is silent on inf/nan/overflow; NumPy warns from its own modules (which gradsum's
    # import-time filter cannot name), so these ops compute quietly
    import warnings

    vals = [0.0, 1.0, 1e30, -1e30, float("inf"), float("-inf"), float("nan"), 800.0]
    for dt in ("float32", "float64"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fn(gradsum, gradsum.tensor(vals, dtype=getattr(gradsum, dt)))
        assert not [w for w in caught if issubclass(w.category, RuntimeWarning)]
