"""Side by side with torch: EmbeddingBag and F.embedding_bag (modes, offsets, per-sample
weights, empty bags, errors)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradsum
import gradsum.nn.functional as GF
from gradsum import nn
from nn_helpers import close, copy_state, same_error_text

torch = pytest.importorskip("torch", reason="side-by-side checks need torch")


tnn = torch.nn


TF = torch.nn.functional


DT = {"float64": (gradsum.float64, torch.float64, 1e-10),
      "float32": (gradsum.float32, torch.float32, 1e-5)}


# -- EmbeddingBag ----------------------------------------------------------------------------------
BAGS = [
    # (input, offsets, kwargs)
    ([1, 2, 4, 5, 4, 3, 2, 9], [0, 4], {}),
    ([1, 2, 4, 5, 4, 3, 2, 9], [0, 4], {"mode": "sum"}),
    ([1, 2, 4, 5, 4, 3, 2, 9], [0, 4], {"mode": "max"}),
    ([1, 2, 4, 5, 4, 3, 2, 9], [0, 0, 3, 8], {"mode": "mean"}),
    ([1, 2, 4, 5, 4, 3, 2, 9], [0, 0, 3, 8], {"mode": "max"}),
    ([1, 2, 4, 5, 4, 3, 2, 9], [0, 3, 8], {"mode": "sum", "include_last_offset": True}),
    ([1, 2, 4, 5, 4, 3, 2, 9], [0, 3, 8], {"mode": "mean", "include_last_offset": True}),
    ([1, 2, 2, 5, 2, 3, 2, 9], [0, 2, 5], {"mode": "mean", "padding_idx": 2}),
    ([1, 2, 2, 5, 2, 3, 2, 9], [0, 1, 3], {"mode": "sum", "padding_idx": 2}),
    ([1, 2, 2, 5, 2, 3, 2, 9], [0, 1, 3], {"mode": "max", "padding_idx": -8}),
    ([[1, 2, 4], [5, 4, 3]], None, {"mode": "mean"}),
    ([[1, 2, 4], [5, 4, 3]], None, {"mode": "max"}),
    ([[1, 2, 4], [5, 4, 3]], None, {"mode": "sum", "max_norm": 1.0}),
]


@pytest.mark.parametrize("dt", list(DT))
@pytest.mark.parametrize("inp,offsets,kw", BAGS)
def test_embedding_bag_matches_torch(inp: Any, offsets: Any, kw: dict[str, Any],
                                     dt: str) -> None:
    gdt, tdt, tol = DT[dt]
    w = np.random.default_rng(0).standard_normal((10, 3))
    wg = gradsum.tensor(w, dtype=gdt, requires_grad=True)
    wt = torch.tensor(w, dtype=tdt, requires_grad=True)
    ig, it = gradsum.tensor(inp), torch.tensor(inp)
    og = gradsum.tensor(offsets, dtype=gradsum.int64) if offsets is not None else None
    ot = torch.tensor(offsets, dtype=torch.long) if offsets is not None else None
    yg = GF.embedding_bag(ig, wg, og, **kw)
    yt = TF.embedding_bag(it, wt, ot, **kw)
    close(yg, yt, tol)
    if yt.numel():
        r = np.random.default_rng(1).standard_normal(tuple(yt.shape))
        (yg * gradsum.tensor(r, dtype=gdt)).sum().backward()
        (yt * torch.tensor(r, dtype=tdt)).sum().backward()
        close(wg.grad, wt.grad, tol)
        if "max_norm" in kw:
            close(wg, wt, tol)


@pytest.mark.parametrize("dt", list(DT))
def test_embedding_bag_no_bags(dt: str) -> None:
    # (torch 2.13 gives (0, dim) here too, but crashes on it now and then: gradsum alone)
    gdt = DT[dt][0]
    w = gradsum.randn(5, 3, dtype=gdt, requires_grad=True)
    out = GF.embedding_bag(gradsum.tensor([1, 2, 4]), w, gradsum.tensor([], dtype=gradsum.int64))
    assert tuple(out.shape) == (0, 3) and out.dtype == gdt
    out = GF.embedding_bag(gradsum.tensor([1, 2]), w, gradsum.tensor([0]), mode="sum",
                           include_last_offset=True)
    assert tuple(out.shape) == (0, 3)


@pytest.mark.parametrize("dt", list(DT))
def test_embedding_bag_per_sample_weights(dt: str) -> None:
    gdt, tdt, tol = DT[dt]
    rng = np.random.default_rng(2)
    w, psw = rng.standard_normal((6, 4)), rng.standard_normal(7)
    inp, off = [0, 2, 2, 5, 1, 3, 2], [0, 3, 3, 6]
    for pad in (None, 2):
        wg = gradsum.tensor(w, dtype=gdt, requires_grad=True)
        wt = torch.tensor(w, dtype=tdt, requires_grad=True)
        pg = gradsum.tensor(psw, dtype=gdt, requires_grad=True)
        pt = torch.tensor(psw, dtype=tdt, requires_grad=True)
        yg = GF.embedding_bag(gradsum.tensor(inp), wg, gradsum.tensor(off), mode="sum",
                              per_sample_weights=pg, padding_idx=pad)
        yt = TF.embedding_bag(torch.tensor(inp), wt, torch.tensor(off), mode="sum",
                              per_sample_weights=pt, padding_idx=pad)
        close(yg, yt, tol)
        r = rng.standard_normal(tuple(yt.shape))
        (yg * gradsum.tensor(r, dtype=gdt)).sum().backward()
        (yt * torch.tensor(r, dtype=tdt)).sum().backward()
        close(wg.grad, wt.grad, tol)
        close(pg.grad, pt.grad, tol)


def test_embedding_bag_errors() -> None:
    wg, wt = gradsum.randn(5, 3), torch.randn(5, 3)
    ig, it = gradsum.tensor([0, 1, 2, 3, 4, 1]), torch.tensor([0, 1, 2, 3, 4, 1])
    cases = [
        ((ig, wg, gradsum.tensor([1, 3])), (it, wt, torch.tensor([1, 3])), {}),
        ((ig, wg, gradsum.tensor([0, 7])), (it, wt, torch.tensor([0, 7])), {}),
        ((gradsum.tensor([0, 9]), wg, gradsum.tensor([0])),
         (torch.tensor([0, 9]), wt, torch.tensor([0])), {}),
        ((ig, wg, gradsum.tensor([0])), (it, wt, torch.tensor([0])), {"mode": "foo"}),
        ((ig, wg, gradsum.tensor([0])), (it, wt, torch.tensor([0])), {"padding_idx": 7}),
        ((ig, wg, gradsum.tensor([0])), (it, wt, torch.tensor([0])),
         {"mode": "max", "scale_grad_by_freq": True}),
        ((ig.reshape(2, 3), wg, gradsum.tensor([0])), (it.view(2, 3), wt, torch.tensor([0])),
         {}),
        ((ig, wg), (it, wt), {}),
        ((ig, wg, gradsum.tensor([[0]])), (it, wt, torch.tensor([[0]])), {}),
        ((ig.reshape(1, 2, 3), wg), (it.view(1, 2, 3), wt), {}),
        ((ig, wg.reshape(-1), gradsum.tensor([0])), (it, wt.reshape(-1), torch.tensor([0])),
         {}),
        ((ig, wg, gradsum.tensor([0])), (it, wt, torch.tensor([0])),
         {"mode": "mean", "per_sample_weights": "ones"}),
        ((ig, wg, gradsum.tensor([0])), (it, wt, torch.tensor([0])),
         {"mode": "sum", "per_sample_weights": "ones5"}),
        ((ig, wg, gradsum.tensor([0])), (it, wt, torch.tensor([0])),
         {"mode": "sum", "per_sample_weights": "double"}),
    ]
    for ga, ta, kw in cases:
        kg, kt = dict(kw), dict(kw)
        psw = kw.get("per_sample_weights")
        if psw is not None:
            n, dtg, dtt = {"ones": (6, gradsum.float32, torch.float32),
                           "ones5": (5, gradsum.float32, torch.float32),
                           "double": (6, gradsum.float64, torch.float64)}[psw]
            kg["per_sample_weights"] = gradsum.ones(n, dtype=dtg)
            kt["per_sample_weights"] = torch.ones(n, dtype=dtt)
        exact = psw not in ("ones5",)
        same_error_text(lambda ga=ga, kg=kg: GF.embedding_bag(*ga, **kg),
                        lambda ta=ta, kt=kt: TF.embedding_bag(*ta, **kt), exact=exact)
    same_error_text(lambda: GF.embedding_bag(ig.float(), wg, gradsum.tensor([0])),
                    lambda: TF.embedding_bag(it.float(), wt, torch.tensor([0])))


def test_embedding_bag_module() -> None:
    for kw in [{}, {"mode": "sum"}, {"mode": "max", "padding_idx": 1},
               {"max_norm": 2.0, "norm_type": 1.0},
               {"padding_idx": -2, "include_last_offset": True}]:
        g, t = nn.EmbeddingBag(10, 3, **kw), tnn.EmbeddingBag(10, 3, **kw)
        assert repr(g) == repr(t)
        assert list(g.state_dict()) == list(t.state_dict())
        assert g.padding_idx == t.padding_idx
        if t.padding_idx is not None:
            assert not g.weight[g.padding_idx].detach().numpy().any()
        copy_state(g, t)
        inp, off = [1, 2, 4, 5, 4, 3, 2, 9], [0, 4, 8]
        if not kw.get("include_last_offset"):
            off = off[:2]
        yg = g(gradsum.tensor(inp), gradsum.tensor(off))
        yt = t(torch.tensor(inp), torch.tensor(off))
        close(yg, yt, 1e-5)
        yg.sum().backward()
        yt.sum().backward()
        close(g.weight.grad, t.weight.grad, 1e-5)
    same_error_text(lambda: nn.EmbeddingBag(3, 2, padding_idx=3),
                    lambda: tnn.EmbeddingBag(3, 2, padding_idx=3))
    same_error_text(lambda: nn.EmbeddingBag(3, 2, padding_idx=-4),
                    lambda: tnn.EmbeddingBag(3, 2, padding_idx=-4))
    w = np.random.default_rng(0).standard_normal((4, 2)).astype(np.float32)
    g = nn.EmbeddingBag.from_pretrained(gradsum.tensor(w), mode="sum")
    t = tnn.EmbeddingBag.from_pretrained(torch.tensor(w), mode="sum")
    assert repr(g) == repr(t) and g.weight.requires_grad == t.weight.requires_grad
    close(g(gradsum.tensor([[0, 3]])), t(torch.tensor([[0, 3]])), 1e-6)
    g = nn.EmbeddingBag(4, 2, dtype=gradsum.float64)
    assert g.weight.dtype == gradsum.float64
