"""Side by side with torch: TripletMarginWithDistanceLoss (values, gradients, errors)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradsum
import gradsum.nn.functional as GF
from gradsum import nn
from nn_helpers import close, same_error_text

torch = pytest.importorskip("torch", reason="side-by-side checks need torch")


tnn = torch.nn


TF = torch.nn.functional


DT = {"float64": (gradsum.float64, torch.float64, 1e-10),
      "float32": (gradsum.float32, torch.float32, 1e-5)}


@pytest.mark.parametrize("dt", list(DT))
@pytest.mark.parametrize("kw", [{}, {"margin": 2.0, "swap": True}, {"reduction": "sum"},
                                {"reduction": "none", "swap": True}, {"dist": "l1"},
                                {"dist": "cos", "margin": 0.3}])
def test_triplet_margin_with_distance_loss(kw: dict[str, Any], dt: str) -> None:
    gdt, tdt, tol = DT[dt]
    kw = dict(kw)
    dist = kw.pop("dist", None)
    kg: dict[str, Any] = dict(kw)
    kt: dict[str, Any] = dict(kw)
    if dist == "l1":
        kg["distance_function"] = lambda a, b: (a - b).abs().sum(-1)
        kt["distance_function"] = lambda a, b: (a - b).abs().sum(-1)
    elif dist == "cos":
        kg["distance_function"] = lambda a, b: 1.0 - GF.cosine_similarity(a, b)
        kt["distance_function"] = lambda a, b: 1.0 - TF.cosine_similarity(a, b)
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((5, 4)) for _ in range(3)]
    gs = [gradsum.tensor(a, dtype=gdt, requires_grad=True) for a in arrays]
    ts = [torch.tensor(a, dtype=tdt, requires_grad=True) for a in arrays]
    gm, tm = nn.TripletMarginWithDistanceLoss(**kg), tnn.TripletMarginWithDistanceLoss(**kt)
    assert repr(gm) == repr(tm)
    for lg, lt in [(gm(*gs), tm(*ts)),
                   (GF.triplet_margin_with_distance_loss(*gs, **kg),
                    TF.triplet_margin_with_distance_loss(*ts, **kt))]:
        close(lg, lt, tol)
        lg.sum().backward()
        lt.sum().backward()
    for a, b in zip(gs, ts):
        close(a.grad, b.grad, tol * 10)


def test_triplet_margin_with_distance_loss_errors() -> None:
    a = gradsum.ones(2, 3)
    ta = torch.ones(2, 3)
    same_error_text(lambda: nn.TripletMarginWithDistanceLoss(margin=0.0),
                    lambda: tnn.TripletMarginWithDistanceLoss(margin=0.0))
    same_error_text(lambda: GF.triplet_margin_with_distance_loss(a, a, a, margin=-1.0),
                    lambda: TF.triplet_margin_with_distance_loss(ta, ta, ta, margin=-1.0))
    same_error_text(lambda: GF.triplet_margin_with_distance_loss(a, a, a, reduction="x"),
                    lambda: TF.triplet_margin_with_distance_loss(ta, ta, ta, reduction="x"))
    same_error_text(lambda: GF.triplet_margin_with_distance_loss(a, a, a[0]),
                    lambda: TF.triplet_margin_with_distance_loss(ta, ta, ta[0]))
