"""Side by side with torch: the Unfold / Fold modules."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

from diff_helpers import check_grads, same_repr  # noqa: E402
from nn_helpers import randn_arrays  # noqa: E402

RS = np.random.RandomState(4321)
_arr = randn_arrays(RS)


def test_unfold_fold_modules() -> None:
    check_grads(lambda lib, F, x: lib.nn.Unfold((2, 3), padding=1, stride=(1, 2))(x),
                [_arr(2, 3, 4, 5)], second=False)
    check_grads(lambda lib, F, x: lib.nn.Fold((4, 5), 2, stride=1)(x), [_arr(2, 12, 12)],
                second=False)
    same_repr(lambda lib: lib.nn.Unfold((2, 3), dilation=2, padding=1, stride=(1, 2)))
    same_repr(lambda lib: lib.nn.Fold(output_size=(4, 5), kernel_size=2))
