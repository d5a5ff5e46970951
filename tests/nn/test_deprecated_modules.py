"""Side by side with torch: the deprecated nn.Container and nn.NLLLoss2d warn as torch's."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gradsum
from gradsum import nn
from nn_helpers import close

torch = pytest.importorskip("torch", reason="side-by-side checks need torch")


tnn = torch.nn


def test_container_and_nllloss2d_warn() -> None:
    for g_cls, t_cls, args in [(nn.Container, tnn.Container, {"a": "lin"}),
                               (nn.NLLLoss2d, tnn.NLLLoss2d, {})]:
        with warnings.catch_warnings(record=True) as wg:
            warnings.simplefilter("always")
            g = g_cls(**({"a": nn.Linear(2, 2)} if args else {}))
        with warnings.catch_warnings(record=True) as wt:
            warnings.simplefilter("always")
            t = t_cls(**({"a": tnn.Linear(2, 2)} if args else {}))
        assert [(w.category, str(w.message)) for w in wg] == [
            (w.category, str(w.message)) for w in wt]
        assert repr(g) == repr(t)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = nn.NLLLoss2d(ignore_index=1, reduction="sum")
        t = tnn.NLLLoss2d(ignore_index=1, reduction="sum")
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 4))
    y = np.random.default_rng(1).integers(0, 3, (2, 4, 4))
    close(g(gradsum.tensor(x).log_softmax(1), gradsum.tensor(y)),
          t(torch.tensor(x).log_softmax(1), torch.tensor(y)), 1e-10)
    assert isinstance(g, nn.NLLLoss)
