"""Side by side with torch: the lazy modules (UninitializedParameter / UninitializedBuffer,
dtype conversion, state dicts, optimizers given uninitialized parameters)."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest

import gradsum
from gradsum import nn
from nn_helpers import close, copy_state, raised, same_error_text

torch = pytest.importorskip("torch", reason="side-by-side checks need torch")


tnn = torch.nn


DT = {"float64": (gradsum.float64, torch.float64, 1e-10),
      "float32": (gradsum.float32, torch.float32, 1e-5)}


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
    same_error_text(lambda: g.shape, lambda: t.shape)
    ge, te = raised(lambda: g + 1), raised(lambda: t + 1)
    assert ge[0] is te[0] is ValueError
    assert ge[1].startswith("Attempted to use an uninitialized parameter in ")
    assert raised(lambda: g.numel())[0] is ValueError
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
    same_error_text(lambda: UninitializedParameter().share_memory_(),
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
    assert raised(lambda: g(gradsum.ones(2, 3)))[0] is raised(lambda: t(torch.ones(2, 3)))[0]
    same_error_text(lambda: nn.LazyConv2d(4, 3)(gradsum.ones(2, 3)),
                    lambda: tnn.LazyConv2d(4, 3)(torch.ones(2, 3)), exact=False)
    same_error_text(lambda: nn.LazyConv2d(4, 3, groups=2)(gradsum.ones(1, 3, 5, 5)),
                    lambda: tnn.LazyConv2d(4, 3, groups=2)(torch.ones(1, 3, 5, 5)))
    same_error_text(lambda: nn.LazyBatchNorm2d()(gradsum.ones(2, 3)),
                    lambda: tnn.LazyBatchNorm2d()(torch.ones(2, 3)))
    g = nn.LazyBatchNorm2d()
    raised(lambda: g(gradsum.ones(2, 3)))
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
    same_error_text(lambda: nn.Linear(2, 3).load_state_dict(nn.LazyLinear(3).state_dict()),
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
    ge = raised(lambda: gradsum.optim.Adagrad(g.parameters(), lr=0.1))
    te = raised(lambda: torch.optim.Adagrad(t.parameters(), lr=0.1))
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
