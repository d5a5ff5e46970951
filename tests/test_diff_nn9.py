"""Side by side with torch: lazy modules (UninitializedParameter/Buffer), EmbeddingBag and
F.embedding_bag, DataParallel (CPU), SyncBatchNorm, Container, NLLLoss2d and
TripletMarginWithDistanceLoss."""

from __future__ import annotations

import copy
import warnings
from typing import Any

import numpy as np
import pytest

import gradsum
import gradsum.nn.functional as GF
from gradsum import nn

torch = pytest.importorskip("torch", reason="side-by-side checks need torch")
tnn = torch.nn
TF = torch.nn.functional

DT = {"float64": (gradsum.float64, torch.float64, 1e-10),
      "float32": (gradsum.float32, torch.float32, 1e-5)}


def _np(t: Any) -> np.ndarray:
    return np.array(t.detach().numpy())


def close(g: Any, t: Any, tol: float) -> None:
    np.testing.assert_allclose(_np(g), _np(t), rtol=tol, atol=tol)


def outcome(fn: Any) -> tuple[type | None, str]:
    try:
        fn()
    except Exception as e:  # (the outcome is what is compared)
        return type(e), str(e)
    return None, ""


def same_error(fg: Any, ft: Any, exact: bool = True) -> None:
    g, t = outcome(fg), outcome(ft)
    assert g[0] is not None and t[0] is not None, (g, t)
    assert issubclass(g[0], t[0]) or g[0] is t[0], (g, t)
    if exact:
        # (torch's C++ errors may end with a line naming the tensor type)
        expected = t[1].split("\n[ torch.")[0].replace("torch.", "gradsum.")
        # (legacy type names are torch's in both: Tensor.type() says 'torch.FloatTensor')
        got = g[1].replace("gradsum._tensor.Tensor", "gradsum.Tensor").replace("torch.",
                                                                              "gradsum.")
        assert got == expected, (g, t)


def copy_state(gm: Any, tm: Any) -> None:
    """torch's values into gradsum's module (same keys)."""
    sd = {k: gradsum.tensor(v.detach().numpy().copy()) for k, v in tm.state_dict().items()}
    gm.load_state_dict(sd)


# -- lazy modules ----------------------------------------------------------------------------------
LAZY = [
    ("LazyLinear", (4,), {}, (3, 5)),
    ("LazyLinear", (4,), {"bias": False}, (2, 3, 5)),
    ("LazyConv1d", (4, 3), {"padding": 1}, (2, 3, 7)),
    ("LazyConv2d", (4, 3), {"stride": 2, "groups": 2}, (2, 4, 7, 7)),
    ("LazyConv2d", (3, 2), {"bias": False, "padding_mode": "reflect", "padding": 1},
     (3, 5, 5)),
    ("LazyConv3d", (2, 2), {}, (1, 3, 4, 4, 4)),
    ("LazyConvTranspose1d", (4, 3), {"stride": 2}, (2, 3, 5)),
    ("LazyConvTranspose2d", (2, 3), {"output_padding": 1, "stride": 2}, (1, 3, 4, 4)),
    ("LazyConvTranspose3d", (2, 2), {"bias": False}, (1, 2, 3, 3, 3)),
    ("LazyBatchNorm1d", (), {}, (6, 3)),
    ("LazyBatchNorm1d", (), {"affine": False}, (6, 3, 4)),
    ("LazyBatchNorm2d", (), {"momentum": None}, (4, 3, 2, 2)),
    ("LazyBatchNorm3d", (), {"track_running_stats": False}, (2, 3, 2, 2, 2)),
    ("LazyInstanceNorm1d", (), {}, (2, 3, 6)),
    ("LazyInstanceNorm2d", (), {"affine": False}, (2, 3, 4, 4)),
    ("LazyInstanceNorm3d", (), {"bias": False}, (2, 3, 3, 3, 3)),
]


@pytest.mark.parametrize("dt", list(DT))
@pytest.mark.parametrize("name,args,kw,shape", LAZY)
def test_lazy_module_matches_torch(name: str, args: tuple[Any, ...], kw: dict[str, Any],
                                   shape: tuple[int, ...], dt: str) -> None:
    gdt, tdt, tol = DT[dt]
    gm = getattr(nn, name)(*args, **kw, dtype=gdt)
    tm = getattr(tnn, name)(*args, **kw, dtype=tdt)
    assert repr(gm) == repr(tm)
    assert list(gm.state_dict()) == list(tm.state_dict())
    assert [repr(v) for v in gm.state_dict().values()] == [
        repr(v) if "Uninitialized" in type(v).__name__ else repr(gradsum.tensor(0))
        for v in tm.state_dict().values()]
    assert [n for n, _ in gm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert gm.has_uninitialized_params() == tm.has_uninitialized_params()
    x = np.random.default_rng(0).standard_normal(shape)
    xg = gradsum.tensor(x, dtype=gdt, requires_grad=True)
    xt = torch.tensor(x, dtype=tdt, requires_grad=True)
    params_before = list(gm.parameters())
    yg = gm(xg)
    yt = tm(xt)
    # the class changed in place, the Parameter objects survived
    assert type(gm).__name__ == type(tm).__name__
    assert all(a is b for a, b in zip(params_before, gm.parameters()))
    assert repr(gm) == repr(tm)
    assert [(n, tuple(p.shape), p.dtype.name) for n, p in gm.named_parameters()] == [
        (n, tuple(p.shape), str(p.dtype).split(".")[1]) for n, p in tm.named_parameters()]
    assert [(n, tuple(b.shape)) for n, b in gm.named_buffers()] == [
        (n, tuple(b.shape)) for n, b in tm.named_buffers()]
    assert all(type(p) is nn.Parameter for p in gm.parameters())
    assert not gm.__dict__.get("_forward_pre_hooks")
    # the default initialisation ran: norms give ones/zeros, the others the fan-in bounds
    w = getattr(gm, "weight", None)
    fan_in = int(np.prod(tuple(w.shape)[1:])) if w is not None and w.ndim > 1 else 1
    for (_n, p), (_, q) in zip(gm.named_parameters(), tm.named_parameters()):
        if "Norm" in name:
            close(p, q, 0)
        else:  # kaiming_uniform_(a=sqrt(5)) and the bias: both within 1/sqrt(fan_in)
            assert float(p.detach().abs().max()) <= 1 / np.sqrt(fan_in) + 1e-6
    # same values from here on: copy torch's and compare outputs and gradients
    copy_state(gm, tm)
    yg = gm(xg)
    yt = tm(xt)
    close(yg, yt, tol)
    r = np.random.default_rng(1).standard_normal(tuple(yt.shape))
    (yg * gradsum.tensor(r, dtype=gdt)).sum().backward()
    (yt * torch.tensor(r, dtype=tdt)).sum().backward()
    close(xg.grad, xt.grad, tol * 10)
    for (_n, p), (_, q) in zip(gm.named_parameters(), tm.named_parameters()):
        close(p.grad, q.grad, tol * 10)
    for (_n, b), (_, c) in zip(gm.named_buffers(), tm.named_buffers()):
        close(b, c, tol)


def test_uninitialized_parameter_behaviour() -> None:
    from gradsum.nn.parameter import UninitializedBuffer, UninitializedParameter, is_lazy

    g, t = UninitializedParameter(), tnn.parameter.UninitializedParameter()
    assert repr(g) == repr(t) == "<UninitializedParameter>"
    assert g.requires_grad and g.is_leaf and g.size() == tuple(t.size())
    assert g.dtype == gradsum.float32 and isinstance(g, nn.Parameter)
    same_error(lambda: g.shape, lambda: t.shape)
    ge, te = outcome(lambda: g + 1), outcome(lambda: t + 1)
    assert ge[0] is te[0] is ValueError
    assert ge[1].startswith("Attempted to use an uninitialized parameter in ")
    assert outcome(lambda: g.numel())[0] is ValueError
    gb, tb = UninitializedBuffer(), tnn.parameter.UninitializedBuffer()
    assert repr(gb) == repr(tb) and gb.persistent is tb.persistent is True
    assert not gb.requires_grad and gb._is_buffer
    assert is_lazy(g) and is_lazy(gb) and not is_lazy(gradsum.zeros(1))
    g2 = copy.deepcopy(UninitializedParameter(requires_grad=False, dtype=gradsum.float64))
    assert type(g2) is UninitializedParameter and not g2.requires_grad
    assert g2.dtype == gradsum.float64
    g.materialize((2, 3))
    t.materialize((2, 3))
    assert type(g) is nn.Parameter and tuple(g.shape) == tuple(t.shape) == (2, 3)
    gb.materialize(4)
    assert type(gb) is gradsum.Tensor and tuple(gb.shape) == (4,)
    same_error(lambda: UninitializedParameter().share_memory_(),
               lambda: tnn.parameter.UninitializedParameter().share_memory_())


def test_lazy_dtype_conversion_and_errors() -> None:
    gm, tm = nn.LazyLinear(3).double(), tnn.LazyLinear(3).double()
    assert gm.weight.dtype == gradsum.float64 and tm.weight.dtype == torch.float64
    gb, tb = nn.LazyBatchNorm1d().double(), tnn.LazyBatchNorm1d().double()
    assert type(gb.running_mean).__name__ == type(tb.running_mean).__name__
    assert gb.running_mean.dtype == gradsum.float64
    assert gb.num_batches_tracked.dtype == gradsum.int64
    gb(gradsum.randn(4, 2, dtype=gradsum.float64))
    assert gb.running_mean.dtype == gradsum.float64
    # a forward that the inferred shape does not fit: the layer's own error
    g, t = nn.LazyLinear(4), tnn.LazyLinear(4)
    g(gradsum.ones(2, 5))
    t(torch.ones(2, 5))
    assert outcome(lambda: g(gradsum.ones(2, 3)))[0] is outcome(lambda: t(torch.ones(2, 3)))[0]
    same_error(lambda: nn.LazyConv2d(4, 3)(gradsum.ones(2, 3)),
               lambda: tnn.LazyConv2d(4, 3)(torch.ones(2, 3)), exact=False)
    same_error(lambda: nn.LazyConv2d(4, 3, groups=2)(gradsum.ones(1, 3, 5, 5)),
               lambda: tnn.LazyConv2d(4, 3, groups=2)(torch.ones(1, 3, 5, 5)))
    same_error(lambda: nn.LazyBatchNorm2d()(gradsum.ones(2, 3)),
               lambda: tnn.LazyBatchNorm2d()(torch.ones(2, 3)))
    g = nn.LazyBatchNorm2d()
    outcome(lambda: g(gradsum.ones(2, 3)))
    assert type(g) is nn.BatchNorm2d  # (torch too: the hook ran before the check)


def test_lazy_state_dict_round_trips() -> None:
    # initialized checkpoint into a lazy module: materialized with its shapes
    t_lin = tnn.Linear(5, 3)
    g = nn.LazyLinear(3)
    t = tnn.LazyLinear(3)
    sd = {k: gradsum.tensor(v.detach().numpy()) for k, v in t_lin.state_dict().items()}
    assert repr(g.load_state_dict(sd)) == repr(t.load_state_dict(t_lin.state_dict()))
    assert type(g).__name__ == type(t).__name__ == "LazyLinear"
    assert tuple(g.weight.shape) == tuple(t.weight.shape) == (3, 5)
    close(g.weight, t.weight, 0)
    g(gradsum.ones(1, 5))
    t(torch.ones(1, 5))
    assert repr(g) == repr(t)
    # uninitialized into uninitialized: fine, nothing changes
    g2, t2 = nn.LazyLinear(3), tnn.LazyLinear(3)
    assert repr(g2.load_state_dict(nn.LazyLinear(3).state_dict())) == repr(
        t2.load_state_dict(tnn.LazyLinear(3).state_dict()))
    assert g2.has_uninitialized_params() and t2.has_uninitialized_params()
    # uninitialized into initialized: torch's RuntimeError about the shape
    same_error(lambda: nn.Linear(2, 3).load_state_dict(nn.LazyLinear(3).state_dict()),
               lambda: tnn.Linear(2, 3).load_state_dict(tnn.LazyLinear(3).state_dict()))
    # keep_vars and nested modules
    gs = nn.Sequential(nn.LazyLinear(2), nn.ReLU(), nn.LazyBatchNorm1d())
    ts = tnn.Sequential(tnn.LazyLinear(2), tnn.ReLU(), tnn.LazyBatchNorm1d())
    assert list(gs.state_dict(keep_vars=True)) == list(ts.state_dict(keep_vars=True))
    gs(gradsum.ones(3, 4))
    ts(torch.ones(3, 4))
    assert repr(gs) == repr(ts)
    assert list(gs.state_dict()) == list(ts.state_dict())
    # deepcopy of a lazy module stays lazy
    gc = copy.deepcopy(nn.LazyConv1d(2, 3))
    assert gc.has_uninitialized_params() and type(gc).__name__ == "LazyConv1d"
    gc(gradsum.ones(1, 4, 5))
    assert tuple(gc.weight.shape) == (2, 4, 3)


def test_optimizers_with_uninitialized_params() -> None:
    g, t = nn.LazyLinear(2), tnn.LazyLinear(2)
    # torch's Adagrad builds its state at construction: it cannot with uninitialized ones
    ge = outcome(lambda: gradsum.optim.Adagrad(g.parameters(), lr=0.1))
    te = outcome(lambda: torch.optim.Adagrad(t.parameters(), lr=0.1))
    assert ge[0] is te[0] is ValueError
    # SGD/Adam accept them; the step after materialization updates the same objects
    og = gradsum.optim.SGD(g.parameters(), lr=0.1, momentum=0.9)
    ot = torch.optim.SGD(t.parameters(), lr=0.1, momentum=0.9)
    og.step()
    ot.step()
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    g(gradsum.tensor(x))
    t(torch.tensor(x))
    copy_state(g, t)
    for _ in range(2):
        og.zero_grad()
        ot.zero_grad()
        (g(gradsum.tensor(x)) ** 2).sum().backward()
        (t(torch.tensor(x)) ** 2).sum().backward()
        og.step()
        ot.step()
    close(g.weight, t.weight, 1e-6)
    ga = gradsum.optim.Adam(nn.LazyLinear(2).parameters())
    ga.step()


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
        same_error(lambda ga=ga, kg=kg: GF.embedding_bag(*ga, **kg),
                   lambda ta=ta, kt=kt: TF.embedding_bag(*ta, **kt), exact=exact)
    same_error(lambda: GF.embedding_bag(ig.float(), wg, gradsum.tensor([0])),
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
    same_error(lambda: nn.EmbeddingBag(3, 2, padding_idx=3),
               lambda: tnn.EmbeddingBag(3, 2, padding_idx=3))
    same_error(lambda: nn.EmbeddingBag(3, 2, padding_idx=-4),
               lambda: tnn.EmbeddingBag(3, 2, padding_idx=-4))
    w = np.random.default_rng(0).standard_normal((4, 2)).astype(np.float32)
    g = nn.EmbeddingBag.from_pretrained(gradsum.tensor(w), mode="sum")
    t = tnn.EmbeddingBag.from_pretrained(torch.tensor(w), mode="sum")
    assert repr(g) == repr(t) and g.weight.requires_grad == t.weight.requires_grad
    close(g(gradsum.tensor([[0, 3]])), t(torch.tensor([[0, 3]])), 1e-6)
    g = nn.EmbeddingBag(4, 2, dtype=gradsum.float64)
    assert g.weight.dtype == gradsum.float64


# -- DataParallel, SyncBatchNorm, deprecated aliases, TripletMarginWithDistanceLoss ----------------
def test_data_parallel_cpu() -> None:
    g = nn.DataParallel(nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2)), device_ids=[0])
    t = tnn.DataParallel(tnn.Sequential(tnn.Linear(3, 2), tnn.BatchNorm1d(2)), device_ids=[0])
    assert repr(g) == repr(t)
    assert list(g.state_dict()) == list(t.state_dict())
    assert g.device_ids == t.device_ids == []
    assert hasattr(g, "dim") == hasattr(t, "dim")
    copy_state(g, t)
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    yg, yt = g(gradsum.tensor(x)), t(torch.tensor(x))
    close(yg, yt, 1e-6)
    # (a weighted sum: through the batch norm a plain sum, or a sum of squares, has zero
    # gradient up to rounding noise; the Linear bias's stays zero in exact arithmetic, so it is
    # compared at the noise's scale)
    c = np.random.default_rng(1).standard_normal((5, 2)).astype(np.float32)
    (yg * gradsum.tensor(c)).sum().backward()
    (yt * torch.tensor(c)).sum().backward()
    for (n, p), (_, q) in zip(g.named_parameters(), t.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5,
                                   atol=1e-5 if n == "module.0.bias" else 1e-6)
    assert g.module[0] is next(iter(g.children()))[0]
    # a state_dict of the wrapper loads into the wrapper, not into the bare module
    same_error(lambda: nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2)).load_state_dict(
        g.state_dict()), lambda: tnn.Sequential(tnn.Linear(3, 2), tnn.BatchNorm1d(2))
        .load_state_dict(t.state_dict()), exact=False)


@pytest.mark.parametrize("kw", [{}, {"affine": False}, {"momentum": None},
                                {"track_running_stats": False}, {"bias": False}])
def test_sync_batch_norm_cpu(kw: dict[str, Any]) -> None:
    g = nn.SyncBatchNorm(3, **kw, dtype=gradsum.float64)
    t = tnn.SyncBatchNorm(3, **kw, dtype=torch.float64)
    assert repr(g) == repr(t)
    assert list(g.state_dict()) == list(t.state_dict())
    assert g.process_group is t.process_group is None
    copy_state(g, t)
    x = np.random.default_rng(0).standard_normal((4, 3, 5))
    for train in (True, True, False):
        g.train(train)
        t.train(train)
        xg = gradsum.tensor(x, requires_grad=True)
        xt = torch.tensor(x, requires_grad=True)
        yg, yt = g(xg), t(xt)
        close(yg, yt, 1e-10)
        (yg ** 2).sum().backward()
        (yt ** 2).sum().backward()
        close(xg.grad, xt.grad, 1e-9)
        for (_n, b), (_, c) in zip(g.named_buffers(), t.named_buffers()):
            close(b, c, 1e-10)
    same_error(lambda: g(gradsum.ones(4)), lambda: t(torch.ones(4)))
    same_error(lambda: g(gradsum.ones(4, 0)), lambda: t(torch.ones(4, 0)))


def test_convert_sync_batchnorm() -> None:
    def nets(lib: Any) -> Any:
        return lib.Sequential(lib.Linear(2, 3), lib.BatchNorm1d(3, momentum=0.2),
                              lib.Sequential(lib.BatchNorm2d(3, affine=False)),
                              lib.InstanceNorm1d(3))

    gn, tn = nets(nn).eval(), nets(tnn).eval()
    gw, gbuf = gn[1].weight, gn[1].running_mean
    gs = nn.SyncBatchNorm.convert_sync_batchnorm(gn)
    ts = tnn.SyncBatchNorm.convert_sync_batchnorm(tn)
    assert repr(gs) == repr(ts)
    assert gs is gn and gs[1].weight is gw and gs[1].running_mean is gbuf
    assert gs[1].training is ts[1].training is False
    assert list(gs.state_dict()) == list(ts.state_dict())
    gb = nn.SyncBatchNorm.convert_sync_batchnorm(nn.BatchNorm3d(2, eps=1e-3), "pg")
    tb = tnn.SyncBatchNorm.convert_sync_batchnorm(tnn.BatchNorm3d(2, eps=1e-3), "pg")
    assert repr(gb) == repr(tb) and gb.process_group == tb.process_group == "pg"


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
    same_error(lambda: nn.TripletMarginWithDistanceLoss(margin=0.0),
               lambda: tnn.TripletMarginWithDistanceLoss(margin=0.0))
    same_error(lambda: GF.triplet_margin_with_distance_loss(a, a, a, margin=-1.0),
               lambda: TF.triplet_margin_with_distance_loss(ta, ta, ta, margin=-1.0))
    same_error(lambda: GF.triplet_margin_with_distance_loss(a, a, a, reduction="x"),
               lambda: TF.triplet_margin_with_distance_loss(ta, ta, ta, reduction="x"))
    same_error(lambda: GF.triplet_margin_with_distance_loss(a, a, a[0]),
               lambda: TF.triplet_margin_with_distance_loss(ta, ta, ta[0]))
