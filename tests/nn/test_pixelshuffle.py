"""Side by side with torch: pixel_shuffle / pixel_unshuffle."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

from diff_helpers import check_grads, same_error, same_repr  # noqa: E402
from nn_helpers import randn_arrays  # noqa: E402

RS = np.random.RandomState(4321)
_arr = randn_arrays(RS)


# -- pixel / channel shuffle, Unfold / Fold, Bilinear, Embedding ---------------------------------
def test_pixel_shuffle_and_unshuffle() -> None:
    check_grads(lambda lib, F, x: F.pixel_shuffle(x, 2), [_arr(2, 8, 3, 2)])
    check_grads(lambda lib, F, x: lib.nn.PixelShuffle(3)(x), [_arr(9, 2, 2)], second=False)
    check_grads(lambda lib, F, x: F.pixel_unshuffle(x, 2), [_arr(1, 2, 3, 4, 6)])
    check_grads(lambda lib, F, x: lib.nn.PixelUnshuffle(2)(x), [_arr(2, 2, 4, 2)], second=False)
    check_grads(lambda lib, F, x: lib.nn.ChannelShuffle(2)(x), [_arr(2, 6, 3)], second=False)
    check_grads(lambda lib, F, x: F.channel_shuffle(x, 3), [_arr(1, 6, 2, 2)], second=False)
    same_repr(lambda lib: lib.nn.PixelShuffle(2))
    same_repr(lambda lib: lib.nn.PixelUnshuffle(3))
    same_repr(lambda lib: lib.nn.ChannelShuffle(4))
    same_error(lambda lib: lib.nn.functional.pixel_shuffle(lib.ones(1, 5, 2, 2), 2))
    same_error(lambda lib: lib.nn.functional.pixel_shuffle(lib.ones(4, 2), 2))
    same_error(lambda lib: lib.nn.functional.pixel_unshuffle(lib.ones(1, 1, 3, 4), 2))
    same_error(lambda lib: lib.nn.ChannelShuffle(4)(lib.ones(1, 6, 2)))
