"""gradsum.nn's error and warning texts live in ``gradsum/nn/_messages/`` (issue 19, point 8).

Checks that representative moved texts reach the caller through the public API, starting
with torch's words (many are compared with torch's elsewhere; the values and fixes that follow
are checked in tests/integration/test_misuse_messages.py). The count of texts
still written inline is tests/project/test_message_modules.py's, for every package.
"""

from __future__ import annotations

import pathlib
import warnings

import pytest

import gradsum
import gradsum.nn as nn
import gradsum.nn.functional as F
from gradsum.nn import _messages

NN = pathlib.Path(gradsum.__file__).parent / "nn"

def _raises(fn, exc):
    with pytest.raises(exc) as info:
        fn()
    return str(info.value)


def test_bad_reduction_string():
    x = gradsum.randn(3, 4)
    want = "bogus is not a valid value for reduction"
    assert _raises(lambda: F.mse_loss(x, x, reduction="bogus"), ValueError).startswith(want)
    assert _raises(lambda: F.l1_loss(x, x, reduction="bogus"), ValueError).startswith(want)
    assert _messages.loss_invalid_reduction("bogus").startswith(want)


def test_conv_input_rank():
    got = _raises(lambda: nn.LazyConv2d(4, 3)(gradsum.randn(3, 5)), RuntimeError)
    assert got.startswith(
        "Expected 3D (unbatched) or 4D (batched) input to LazyConv2d, but got input of size: "
        "gradsum.Size([3, 5])"
    )
    # F.conv2d's own check (in ops/conv.py) says the same with torch's function name
    got = _raises(lambda: F.conv2d(gradsum.randn(3, 5), gradsum.randn(4, 3, 3, 3)),
                  RuntimeError)
    assert got.startswith(
        "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [3, 5]"
    )


def test_load_state_dict_texts():
    lin = nn.Linear(2, 3)
    assert _raises(lambda: lin.load_state_dict({}), RuntimeError).startswith(
        'Error(s) in loading state_dict for Linear:\n\tMissing key(s) in state_dict: "weight", '
        '"bias". '
    )
    bad = {"weight": gradsum.zeros((3, 3)), "bias": gradsum.zeros((3,))}
    assert _raises(lambda: lin.load_state_dict(bad), RuntimeError).startswith(
        "Error(s) in loading state_dict for Linear:\n\tsize mismatch for weight: copying a "
        "param with shape (3, 3) from checkpoint, the shape in current model is (3, 2)."
    )
    extra = {**nn.Linear(2, 3).state_dict(), "extra": gradsum.zeros((1,))}
    assert _raises(lambda: lin.load_state_dict(extra), RuntimeError).startswith(
        'Error(s) in loading state_dict for Linear:\n\tUnexpected key(s) in state_dict: '
        '"extra". '
    )


@pytest.mark.parametrize("make, exc, want", [
    (lambda: F.dropout(gradsum.randn(2), p=1.5), ValueError,
     "dropout probability has to be between 0 and 1, but got 1.5"),
    (lambda: nn.BatchNorm1d(4)(gradsum.randn(2, 4, 3, 3)), ValueError,
     "expected 2D or 3D input (got 4D input)"),
    (lambda: nn.InstanceNorm2d(4)(gradsum.randn(2, 4)), ValueError,
     "expected 3D or 4D input (got 2D input)"),
    (lambda: nn.RNN(2.0, 3), TypeError, "input_size should be of type int, got: float"),
    (lambda: F.nll_loss(gradsum.randn(3, 4), gradsum.tensor([0, 1])), ValueError,
     "Expected input batch_size (3) to match target batch_size (2)."),
    (lambda: F.triplet_margin_loss(gradsum.randn(2, 3), gradsum.randn(2, 3, 1),
                                   gradsum.randn(2, 3)), RuntimeError,
     "The anchor, positive, and negative tensors are expected to have the same number of "
     "dimensions, but got: anchor 2D, positive 3D, and negative 2D inputs"),
    (lambda: nn.Module().register_buffer(1, None), TypeError,
     "buffer name should be a string. Got int"),
    (lambda: nn.Module().nope, AttributeError, "'Module' object has no attribute 'nope'"),
    (lambda: F.celu(gradsum.randn(2), alpha=0), RuntimeError,
     "ZeroDivisionError: alpha cannot be 0 for CELU (celu divides the input by alpha: pass a "
     "non-zero alpha)"),
    (lambda: F.glu(gradsum.randn(2), dim=3), IndexError,
     "Dimension out of range (expected to be in range of [-1, 0], but got 3)"),
    (lambda: F.hardshrink(gradsum.tensor([1, 2])), NotImplementedError,
     "\"hardshrink_cpu\" not implemented for 'Long': convert the input with .float()"),
])
def test_moved_texts_start_with_torchs_words(make, exc, want):
    assert _raises(make, exc).startswith(want)


def test_moved_warnings_word_for_word():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        F.upsample(gradsum.randn(1, 1, 2, 2), scale_factor=2)
        F.dropout2d(gradsum.randn(2, 3, 4, 5, 6))
    assert [str(w.message) for w in caught] == [
        "`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.",
        "dropout2d: Received a 5-D input to dropout2d, which is deprecated and will result in "
        "an error in a future release. To retain the behavior and silence this warning, please "
        "use dropout instead. Note that dropout2d exists to provide channel-wise dropout on "
        "inputs with 2 spatial dimensions, a channel dimension, and an optional batch "
        "dimension (i.e. 3D or 4D inputs).",
    ]
