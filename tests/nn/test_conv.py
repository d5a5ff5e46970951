"""Side by side with torch: Conv2d's argument handling (one-element sequences, strides and
dilations, padding modes and their messages, asymmetric 'same' padding's warning, the module's
attributes). The N-D layers: test_conv_nd.py; the array paths: test_conv_layout.py."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
import gradsum.nn.functional as F  # noqa: E402
from diff_helpers import (  # noqa: E402
    as_np,
    same_error,
)
from nn_helpers import (  # noqa: E402
    floats,
    wide_randn_arrays,
)


def test_conv2d_unknown_padding_mode_message() -> None:
    with pytest.raises(ValueError, match=r"^padding_mode must be one of"):
        gradsum.nn.Conv2d(1, 1, 1, padding_mode="foo")
    # the padding string is checked first, like torch
    with pytest.raises(ValueError, match=r"^Invalid padding string"):
        gradsum.nn.Conv2d(1, 1, 1, padding="foo", padding_mode="foo")


# -- conv2d ------------------------------------------------------------------------------------
def test_conv2d_takes_one_element_sequences() -> None:
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((1, 2, 5, 5)), rng.standard_normal((3, 2, 3, 3))
    outs = [floats(lib.nn.functional.conv2d(lib.tensor(x.tolist()), lib.tensor(w.tolist()),
                                            stride=(2,), padding=[1], dilation=(1,)))
            for lib in (gradsum, torch)]
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-5, atol=1e-5)


def test_conv2d_asymmetric_same_padding_warns_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # torch: TORCH_WARN_ONCE, i.e. the first such call of the process warns
    monkeypatch.setattr(F, "_warned_asymmetric_same", False)
    x, w = gradsum.ones(1, 1, 4, 4), gradsum.ones(1, 1, 2, 2)
    with pytest.warns(UserWarning, match="padding='same' with even kernel lengths"):
        y = F.conv2d(x, w, padding="same")
    assert y.shape == (1, 1, 4, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.conv2d(x, w, padding="same")  # (once only)
        F.conv2d(x, gradsum.ones(1, 1, 3, 3), padding="same")  # symmetric: never


def test_conv2d_module_attributes() -> None:
    for kw in [dict(padding=(1, 2)), dict(padding="same", dilation=(1, 2)),
               dict(padding="same"), dict(padding="valid"), dict(padding=0)]:
        mods = [lib.nn.Conv2d(2, 4, (2, 3), **kw) for lib in (gradsum, torch)]
        for attr in ("transposed", "output_padding", "_reversed_padding_repeated_twice"):
            got, want = (getattr(m, attr) for m in mods)
            assert got == want, (kw, attr)


RS = np.random.RandomState(1234)
_arr = wide_randn_arrays(RS)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("padding", [1, (2, 1), "same"])
def test_conv2d_padding_modes(mode: str, padding: Any) -> None:
    x = _arr(2, 3, 6, 5)
    outs = []
    for lib in (torch, gradsum):
        lib.manual_seed(0)
        conv = lib.nn.Conv2d(3, 4, (3, 2) if padding != "same" else 3, padding=padding,
                             padding_mode=mode, dtype=lib.float64)
        with (torch.no_grad() if lib is torch else gradsum.no_grad()):
            conv.weight.copy_(lib.tensor(np.linspace(-1, 1, conv.weight.numel()).reshape(
                tuple(conv.weight.shape)), dtype=lib.float64))
            conv.bias.fill_(0.25)
        xt = lib.tensor(x, dtype=lib.float64, requires_grad=True)
        y = conv(xt)
        y.pow(2).sum().backward()
        outs.append((as_np(y), as_np(xt.grad), as_np(conv.weight.grad), repr(conv)))
    for a, b in zip(outs[0][:3], outs[1][:3]):
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-10)
    assert outs[0][3] == outs[1][3]


def test_conv2d_bad_padding_mode() -> None:
    same_error(lambda lib: lib.nn.Conv2d(1, 1, 3, padding_mode="mirror"))
