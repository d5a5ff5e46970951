"""gradsum.nn.Module and layers: registration, traversal, weight tying, zero_grad, state_dict
round trip and load errors, hooks, repr, dtype conversion, containers, and each layer against
torch (weights copied from torch, forward and gradients compared)."""

from __future__ import annotations

import copy
import math
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from gradsum import nn  # noqa: E402
from gradsum.nn import init  # noqa: E402
from gradsum.nn.utils import (  # noqa: E402
    clip_grad_norm_,
    clip_grad_value_,
    parameters_to_vector,
    vector_to_parameters,
)
from nn_helpers import g_of, t_of, to_np  # noqa: E402

RNG = np.random.default_rng(99)


def copy_params(g_mod: nn.Module, t_mod: Any) -> None:
    """Give the gradsum module the torch module's values (names must match)."""
    sd = {k: gradsum.tensor(v.detach().numpy().copy()) for k, v in t_mod.state_dict().items()}
    g_mod.load_state_dict(sd)


def assert_grads_match(g_mod: nn.Module, t_mod: Any, rtol: float = 1e-5,
                       atol: float = 1e-6) -> None:
    tg = dict(t_mod.named_parameters())
    for name, p in g_mod.named_parameters():
        tp = tg[name]
        if tp.grad is None:
            assert p.grad is None, name
        else:
            np.testing.assert_allclose(to_np(p.grad), tp.grad.numpy(), rtol=rtol, atol=atol,
                                       err_msg=name)


class TinyLM(nn.Module):
    def __init__(self, vocab: int = 7, dim: int = 4) -> None:
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.ln = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.emb.weight  # tying

    def forward(self, idx: Any) -> Any:
        return self.head(self.ln(self.emb(idx)))


class TorchTinyLM(torch.nn.Module):
    def __init__(self, vocab: int = 7, dim: int = 4) -> None:
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, dim)
        self.ln = torch.nn.LayerNorm(dim)
        self.head = torch.nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.emb.weight

    def forward(self, idx: Any) -> Any:
        return self.head(self.ln(self.emb(idx)))


# -- registration and traversal ------------------------------------------------------------------
def test_registration_and_traversal_order_like_torch() -> None:
    g = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Sequential(nn.Linear(4, 2), nn.Tanh()))
    t = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(),
                            torch.nn.Sequential(torch.nn.Linear(4, 2), torch.nn.Tanh()))
    assert [n for n, _ in g.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert [n for n, _ in g.named_modules()] == [n for n, _ in t.named_modules()]
    assert [n for n, _ in g.named_children()] == [n for n, _ in t.named_children()]
    assert list(g.state_dict()) == list(t.state_dict())
    assert len(list(g.modules())) == 6 and len(list(g.children())) == 3
    assert next(n for n, _ in g.named_parameters(prefix="net")) == "net.0.weight"
    assert [n for n, _ in g.named_parameters(recurse=False)] == []


def test_buffers_and_persistence() -> None:
    m = nn.Module()
    m.register_buffer("a", gradsum.zeros(2))
    m.register_buffer("b", gradsum.ones(1), persistent=False)
    m.register_buffer("c", None)
    assert [n for n, _ in m.named_buffers()] == ["a", "b"]
    assert list(m.state_dict()) == ["a"]
    m.a = gradsum.ones(2)  # assignment to a buffer name replaces the buffer
    assert m._buffers["a"].tolist() == [1.0, 1.0]
    with pytest.raises(TypeError, match="cannot assign"):
        m.a = 3
    with pytest.raises(KeyError, match="already exists"):
        m.register_buffer("training", gradsum.zeros(1))
    with pytest.raises(KeyError, match="contain"):
        m.register_buffer("x.y", gradsum.zeros(1))


def test_assignment_rules() -> None:
    lin = nn.Linear(2, 2)
    with pytest.raises(TypeError, match=r"cannot assign 'gradsum.Tensor' as parameter 'weight'"):
        lin.weight = gradsum.zeros(2, 2)
    lin.weight = None
    assert [n for n, _ in lin.named_parameters()] == ["bias"]
    with pytest.raises(TypeError, match=r"cannot assign 'gradsum\.Tensor' object to parameter"):
        lin.register_parameter("w2", nn.Parameter(gradsum.ones(1)) * 2)  # type: ignore[arg-type]
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'nope'"):
        _ = lin.nope
    m = nn.Module()
    m.sub = nn.Linear(1, 1)
    m.sub = nn.ReLU()  # replace
    assert isinstance(m.sub, nn.ReLU)
    del m.sub
    assert list(m.children()) == []

    class Early(nn.Module):
        def __init__(self) -> None:
            self.w = nn.Parameter(gradsum.ones(1))

    with pytest.raises(AttributeError, match=r"before Module\.__init__"):
        Early()


def test_parameter_basics() -> None:
    base = gradsum.ones(2)
    p = nn.Parameter(base)
    assert p.requires_grad and p.is_leaf and isinstance(p, gradsum.Tensor)
    assert repr(p) == "Parameter containing:\ntensor([1., 1.], requires_grad=True)"
    with gradsum.no_grad():
        p.mul_(3)
    assert base.tolist() == [3.0, 3.0]  # shares the buffer, like torch
    assert not nn.Parameter(gradsum.ones(1), requires_grad=False).requires_grad
    assert nn.Parameter().shape == (0,)
    q = copy.deepcopy(p)
    assert isinstance(q, nn.Parameter) and q is not p and q.tolist() == p.tolist()


# -- weight tying --------------------------------------------------------------------------------
def test_weight_tying_matches_torch() -> None:
    torch.manual_seed(0)
    t = TorchTinyLM()
    g = TinyLM()
    g.load_state_dict({k: gradsum.tensor(v.detach().numpy().copy())
                       for k, v in t.state_dict().items()})
    assert g.head.weight is g.emb.weight
    names = [n for n, _ in g.named_parameters()]
    assert names == [n for n, _ in t.named_parameters()]  # the shared weight listed once
    assert len(list(g.parameters())) == 3
    assert list(g.state_dict()) == list(t.state_dict())  # but saved under both names
    idx = np.array([[1, 2, 3], [4, 5, 6]])
    tgt = np.array([[2, 3, 4], [5, 6, 0]])
    lt = torch.nn.functional.cross_entropy(t(torch.tensor(idx)).reshape(-1, 7),
                                           torch.tensor(tgt).reshape(-1))
    lg = nn.functional.cross_entropy(g(g_of(idx)).reshape(-1, 7), g_of(tgt).reshape(-1))
    lt.backward()
    lg.backward()
    np.testing.assert_allclose(lg.item(), lt.item(), rtol=1e-5)
    assert_grads_match(g, t)


def test_tied_grad_is_sum_of_both_paths() -> None:
    gradsum.manual_seed(0)
    g = TinyLM()
    idx = gradsum.tensor([[1, 2, 3]])
    # path 1 only (output projection) and path 2 only (embedding), separately
    emb_out = g.ln(g.emb(idx))
    g.head(emb_out.detach()).sum().backward()
    head_only = g.emb.weight.grad.clone()
    g.zero_grad()
    w_detached = g.emb.weight.detach()
    (g.ln(g.emb(idx)) @ w_detached.t()).sum().backward()
    emb_only = g.emb.weight.grad.clone()
    g.zero_grad()
    g(idx).sum().backward()
    np.testing.assert_allclose(to_np(g.emb.weight.grad), to_np(head_only + emb_only),
                               rtol=1e-5, atol=1e-6)


# -- zero_grad -----------------------------------------------------------------------------------
def test_module_zero_grad_both_ways() -> None:
    lin = nn.Linear(3, 2)
    lin(gradsum.ones(1, 3)).sum().backward()
    held = lin.weight.grad
    lin.zero_grad(set_to_none=False)
    assert lin.weight.grad is held and held.tolist() == [[0.0] * 3] * 2
    lin(gradsum.ones(1, 3)).sum().backward()
    assert lin.weight.grad is held and held.tolist() == [[1.0] * 3] * 2  # accumulated in place
    lin.zero_grad()
    assert lin.weight.grad is None and lin.bias.grad is None


def test_zero_grad_detaches_a_grad_with_graph() -> None:
    lin = nn.Linear(2, 1)
    (lin(gradsum.ones(1, 2)) ** 2).sum().backward(create_graph=True)
    held = lin.weight.grad
    assert held.requires_grad and held.grad_fn is not None
    lin.zero_grad(set_to_none=False)
    assert lin.weight.grad is held and held.grad_fn is None and not held.requires_grad
    assert held.tolist() == [[0.0, 0.0]]


# -- state_dict ----------------------------------------------------------------------------------
def test_state_dict_round_trip_and_identity() -> None:
    src, dst = nn.Sequential(nn.Linear(3, 3), nn.LayerNorm(3)), nn.Sequential(
        nn.Linear(3, 3), nn.LayerNorm(3))
    w_obj = dst[0].weight
    res = dst.load_state_dict(src.state_dict())
    assert repr(res) == "<All keys matched successfully>"
    assert res.missing_keys == [] and res.unexpected_keys == []
    assert dst[0].weight is w_obj  # copied into the same Parameter
    for (_, a), (_, b) in zip(src.state_dict().items(), dst.state_dict().items()):
        assert gradsum.equal(a, b)
    sd = src.state_dict()
    assert not sd["0.weight"].requires_grad
    with gradsum.no_grad():
        sd["0.weight"].fill_(5.0)  # detached but sharing the buffer, like torch
    assert src[0].weight.tolist()[0][0] == 5.0
    assert src.state_dict(keep_vars=True)["0.weight"] is src[0].weight


def test_load_state_dict_errors_like_torch_and_loads_nothing() -> None:
    g = nn.Linear(2, 3)
    t = torch.nn.Linear(2, 3)
    before = {k: v.clone() for k, v in g.state_dict().items()}
    bad_g = {"weight": gradsum.zeros(3, 3), "foo": gradsum.zeros(1)}
    bad_t = {"weight": torch.zeros(3, 3), "foo": torch.zeros(1)}
    with pytest.raises(RuntimeError) as eg:
        g.load_state_dict(bad_g)
    with pytest.raises(RuntimeError) as et:
        t.load_state_dict(bad_t)
    msg_g, msg_t = str(eg.value), str(et.value)
    assert msg_g.startswith("Error(s) in loading state_dict for Linear:\n\t")
    assert 'Missing key(s) in state_dict: "bias". ' in msg_g
    assert 'Unexpected key(s) in state_dict: "foo". ' in msg_g
    assert "size mismatch for weight: copying a param with shape (3, 3) from checkpoint, the " \
           "shape in current model is (3, 2)." in msg_g
    # same lines, same order as torch (modulo how a shape prints)
    assert msg_g.split("\n\t")[:3] == msg_t.replace("torch.Size([3, 3])", "(3, 3)").replace(
        "torch.Size([3, 2])", "(3, 2)").split("\n\t")[:3]
    for k, v in g.state_dict().items():
        assert gradsum.equal(v, before[k]), "a failed load must leave the module unchanged"
    # strict=False: missing/unexpected are reported, shape errors still raise
    res = g.load_state_dict({"bias": gradsum.ones(3), "foo": gradsum.zeros(1)}, strict=False)
    assert res.missing_keys == ["weight"] and res.unexpected_keys == ["foo"]
    assert g.bias.tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(RuntimeError, match="size mismatch for bias"):
        g.load_state_dict({"bias": gradsum.ones(4), "weight": gradsum.zeros(3, 2)},
                          strict=False)
    assert not bool((g.weight == 0).all())  # the good key was not loaded either
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        g.load_state_dict([1, 2])  # type: ignore[arg-type]


def test_load_state_dict_casts_dtype_and_assign() -> None:
    lin = nn.Linear(2, 2)
    lin.load_state_dict({"weight": gradsum.ones(2, 2, dtype=gradsum.float64),
                         "bias": gradsum.zeros(2)})
    assert lin.weight.dtype == gradsum.float32 and lin.weight.tolist() == [[1.0, 1.0]] * 2
    new_w = gradsum.full((2, 2), 3.0)
    lin.load_state_dict({"weight": new_w, "bias": gradsum.zeros(2)}, assign=True)
    assert isinstance(lin.weight, nn.Parameter) and lin.weight.tolist() == [[3.0, 3.0]] * 2


# -- hooks, modes, apply, to ---------------------------------------------------------------------
def test_forward_hooks() -> None:
    lin = nn.Linear(2, 2)
    calls: list[str] = []
    h1 = lin.register_forward_pre_hook(lambda m, args: (calls.append("pre"), None)[1])
    h2 = lin.register_forward_hook(lambda m, args, out: out * 0)
    h3 = lin.register_forward_pre_hook(lambda m, args: calls.append("first"), prepend=True)
    out = lin(gradsum.ones(1, 2))
    assert calls == ["first", "pre"] and out.tolist() == [[0.0, 0.0]]
    h2.remove()
    h1.remove()
    h3.remove()
    assert lin(gradsum.ones(1, 2)).tolist() != [[0.0, 0.0]]
    h = lin.register_forward_pre_hook(lambda m, args, kwargs: ((args[0] * 0,), kwargs),
                                      with_kwargs=True)
    np.testing.assert_allclose(to_np(lin(gradsum.ones(1, 2)))[0], to_np(lin.bias))
    h.remove()
    h = lin.register_forward_hook(lambda m, a, k, out: out + 1, with_kwargs=True)
    assert lin(gradsum.zeros(1, 2)).tolist()[0] == pytest.approx((lin.bias + 1).tolist())
    h.remove()


def test_train_eval_apply_requires_grad() -> None:
    net = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5))
    assert net.training and net[1].training
    assert net.eval() is net and not net[1].training
    net.train()
    assert net[1].training
    seen: list[str] = []
    net.apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["Linear", "Dropout", "Sequential"]
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        net.train("yes")  # type: ignore[arg-type]
    with pytest.raises(NotImplementedError, match='missing the required "forward"'):
        nn.Module()(1)


def test_to_double_float_keep_identity() -> None:
    lin = nn.Linear(2, 2)
    lin.register_buffer("count", gradsum.tensor([1, 2]))
    w = lin.weight
    lin(gradsum.ones(1, 2)).sum().backward()
    assert lin.double() is lin
    assert lin.weight is w and w.dtype == gradsum.float64 and w.grad.dtype == gradsum.float64
    assert lin.count.dtype == gradsum.int64  # integer buffers are left alone
    out = lin(gradsum.ones(1, 2, dtype=gradsum.float64))
    assert out.dtype == gradsum.float64
    lin.float()
    assert w.dtype == gradsum.float32
    lin.to(gradsum.float64)
    assert w.dtype == gradsum.float64
    with pytest.raises(TypeError, match="only accepts floating point"):
        lin.to(gradsum.int64)


def test_reprs_match_torch() -> None:
    pairs = [
        (nn.Linear(3, 4, bias=False), torch.nn.Linear(3, 4, bias=False)),
        (nn.Embedding(10, 3, padding_idx=0), torch.nn.Embedding(10, 3, padding_idx=0)),
        (nn.LayerNorm((4, 5)), torch.nn.LayerNorm((4, 5))),
        (nn.Dropout(0.1), torch.nn.Dropout(0.1)),
        (nn.Conv2d(3, 6, 3, stride=2, padding=1, bias=False),
         torch.nn.Conv2d(3, 6, 3, stride=2, padding=1, bias=False)),
        (nn.Conv2d(4, 4, (3, 1), dilation=2, groups=2), torch.nn.Conv2d(4, 4, (3, 1),
                                                                        dilation=2, groups=2)),
        (nn.ReLU(inplace=True), torch.nn.ReLU(inplace=True)),
        (nn.GELU(approximate="tanh"), torch.nn.GELU(approximate="tanh")),
        (nn.LeakyReLU(0.2), torch.nn.LeakyReLU(0.2)),
        (nn.Softplus(), torch.nn.Softplus()),
        (nn.Softmax(dim=1), torch.nn.Softmax(dim=1)),
        (nn.LogSoftmax(dim=-1), torch.nn.LogSoftmax(dim=-1)),
        (nn.Flatten(), torch.nn.Flatten()),
        (nn.Identity(), torch.nn.Identity()),
        (nn.CrossEntropyLoss(), torch.nn.CrossEntropyLoss()),
        (nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.SiLU(), nn.Sigmoid())),
         torch.nn.Sequential(torch.nn.Linear(2, 2),
                             torch.nn.Sequential(torch.nn.SiLU(), torch.nn.Sigmoid()))),
        (nn.ModuleList([nn.Linear(2, 2)] * 3 + [nn.Tanh()]),
         torch.nn.ModuleList([torch.nn.Linear(2, 2)] * 3 + [torch.nn.Tanh()])),
        (nn.ModuleDict({"a": nn.ReLU(), "b": nn.Tanh()}),
         torch.nn.ModuleDict({"a": torch.nn.ReLU(), "b": torch.nn.Tanh()})),
    ]
    for g, t in pairs:
        assert repr(g) == repr(t)


# -- containers ----------------------------------------------------------------------------------
def test_sequential_and_lists() -> None:
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert len(seq) == 3 and isinstance(seq[-1], nn.Linear)
    assert isinstance(seq[:2], nn.Sequential) and len(seq[:2]) == 2
    seq.append(nn.Sigmoid())
    assert list(seq._modules) == ["0", "1", "2", "3"]
    del seq[1]
    assert list(seq._modules) == ["0", "1", "2"] and isinstance(seq[1], nn.Linear)
    seq.insert(1, nn.Tanh())
    assert [type(m).__name__ for m in seq] == ["Linear", "Tanh", "Linear", "Sigmoid"]
    with pytest.raises(IndexError, match="out of range"):
        seq[10]
    from collections import OrderedDict

    named = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 2)), ("act", nn.ReLU())]))
    assert [n for n, _ in named.named_parameters()] == ["fc.weight", "fc.bias"]
    ml = nn.ModuleList([nn.Linear(1, 1), nn.Linear(1, 1)])
    ml.append(nn.Linear(1, 1))
    ml.extend([nn.ReLU()])
    ml.insert(0, nn.Tanh())
    assert len(ml) == 5 and len(list(ml.parameters())) == 6
    assert isinstance(ml[0], nn.Tanh) and len(ml[1:3]) == 2
    ml += [nn.Sigmoid()]
    assert len(ml) == 6
    md = nn.ModuleDict({"b": nn.Linear(1, 1)})
    md["a"] = nn.ReLU()
    md.update([("c", nn.Tanh())])
    assert list(md) == ["b", "a", "c"] and "a" in md and len(md) == 3
    assert md.pop("a").__class__ is nn.ReLU and list(md.keys()) == ["b", "c"]
    with pytest.raises(NotImplementedError):
        ml(gradsum.ones(1))


# -- layers against torch ------------------------------------------------------------------------
LAYERS = [
    ("linear", lambda: (nn.Linear(4, 3), torch.nn.Linear(4, 3)), (5, 4), "float"),
    ("linear_nobias_3d", lambda: (nn.Linear(4, 3, bias=False),
                                  torch.nn.Linear(4, 3, bias=False)), (2, 5, 4), "float"),
    ("embedding_pad", lambda: (nn.Embedding(6, 3, padding_idx=2),
                               torch.nn.Embedding(6, 3, padding_idx=2)), (2, 4), "index"),
    ("layernorm", lambda: (nn.LayerNorm(4), torch.nn.LayerNorm(4)), (3, 4), "float"),
    ("layernorm_nobias", lambda: (nn.LayerNorm((2, 4), bias=False),
                                  torch.nn.LayerNorm((2, 4), bias=False)), (3, 2, 4), "float"),
    ("conv2d", lambda: (nn.Conv2d(2, 3, 3, padding=1, stride=2),
                        torch.nn.Conv2d(2, 3, 3, padding=1, stride=2)), (2, 2, 6, 5), "float"),
    ("conv2d_groups", lambda: (nn.Conv2d(4, 2, (2, 3), groups=2, dilation=(1, 2)),
                               torch.nn.Conv2d(4, 2, (2, 3), groups=2, dilation=(1, 2))),
     (1, 4, 5, 7), "float"),
    ("mlp", lambda: (nn.Sequential(nn.Linear(3, 5), nn.GELU(), nn.Linear(5, 5), nn.SiLU(),
                                   nn.Linear(5, 2), nn.LeakyReLU(0.1), nn.Flatten(0)),
                     torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.GELU(),
                                         torch.nn.Linear(5, 5), torch.nn.SiLU(),
                                         torch.nn.Linear(5, 2), torch.nn.LeakyReLU(0.1),
                                         torch.nn.Flatten(0))), (4, 3), "float"),
]


@pytest.mark.parametrize("name,make,shape,kind", LAYERS, ids=[x[0] for x in LAYERS])
def test_layer_matches_torch(name: str, make: Any, shape: tuple[int, ...], kind: str) -> None:
    torch.manual_seed(0)
    g, t = make()
    copy_params(g, t)
    if kind == "index":
        x = RNG.integers(0, 6, shape)
        xg, xt = g_of(x), t_of(torch, x)
    else:
        x = RNG.standard_normal(shape).astype(np.float32)
        xg, xt = g_of(x, True), t_of(torch, x, True)
    og, ot = g(xg), t(xt)
    np.testing.assert_allclose(to_np(og), ot.detach().numpy(), rtol=1e-4, atol=1e-5)
    r = RNG.standard_normal(tuple(ot.shape)).astype(np.float32)
    (og * g_of(r)).sum().backward()
    (ot * t_of(torch, r)).sum().backward()
    assert_grads_match(g, t, rtol=1e-4, atol=1e-5)
    if kind == "float":
        np.testing.assert_allclose(to_np(xg.grad), xt.grad.numpy(), rtol=1e-4, atol=1e-5)


LOSSES = [
    ("mse", nn.MSELoss(), torch.nn.MSELoss(), "float"),
    ("l1_sum", nn.L1Loss(reduction="sum"), torch.nn.L1Loss(reduction="sum"), "float"),
    ("nll", nn.NLLLoss(ignore_index=1), torch.nn.NLLLoss(ignore_index=1), "index"),
    ("ce", nn.CrossEntropyLoss(weight=gradsum.tensor([1.0, 2.0, 0.5]), label_smoothing=0.1),
     torch.nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0, 0.5]), label_smoothing=0.1),
     "index"),
    ("bce", nn.BCELoss(), torch.nn.BCELoss(), "prob"),
    ("bcelogits", nn.BCEWithLogitsLoss(pos_weight=gradsum.tensor([2.0, 1.0, 0.5])),
     torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor([2.0, 1.0, 0.5])), "float"),
]


@pytest.mark.parametrize("name,gl,tl,kind", LOSSES, ids=[x[0] for x in LOSSES])
def test_loss_modules_match_torch(name: str, gl: Any, tl: Any, kind: str) -> None:
    x = RNG.standard_normal((4, 3)).astype(np.float32)
    if kind == "prob":
        x = 1 / (1 + np.exp(-x))
    if kind == "index":
        t = RNG.integers(0, 3, (4,))
    else:
        t = RNG.uniform(0, 1, (4, 3)).astype(np.float32)
    xg, xt = g_of(x, True), t_of(torch, x, True)
    lg, lt = gl(xg, g_of(t)), tl(xt, t_of(torch, t))
    np.testing.assert_allclose(lg.item(), lt.item(), rtol=1e-5)
    lg.backward()
    lt.backward()
    np.testing.assert_allclose(to_np(xg.grad), xt.grad.numpy(), rtol=1e-5, atol=1e-6)
    assert [n for n, _ in gl.named_buffers()] == [n for n, _ in tl.named_buffers()]


def test_dropout_module_train_eval() -> None:
    d = nn.Dropout(0.25)
    x = gradsum.ones(50_000)
    gradsum.manual_seed(1)
    y = d(x)
    assert abs((y.numpy() == 0).mean() - 0.25) < 0.015
    d.eval()
    assert d(x) is x


# -- initialisation ------------------------------------------------------------------------------
def test_default_init_distributions_like_torch() -> None:
    gradsum.manual_seed(0)
    lin = nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)
    w = lin.weight.numpy(force=True)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound  # U(-b, b)
    assert abs(w.std() - bound / math.sqrt(3)) < 0.02 * bound
    assert np.abs(lin.bias.numpy(force=True)).max() <= bound
    emb = nn.Embedding(500, 200)
    e = emb.weight.numpy(force=True)
    assert abs(e.mean()) < 0.01 and abs(e.std() - 1.0) < 0.01
    ln = nn.LayerNorm(5)
    assert ln.weight.tolist() == [1.0] * 5 and ln.bias.tolist() == [0.0] * 5
    conv = nn.Conv2d(8, 4, 3)
    cb = 1 / math.sqrt(8 * 9)
    assert np.abs(conv.weight.numpy(force=True)).max() <= cb
    assert not lin.weight.grad_fn and lin.weight.is_leaf


def test_init_functions() -> None:
    t = gradsum.empty(64, 32)
    for fn, kw in [(init.xavier_uniform_, {}), (init.xavier_normal_, {"gain": 2.0}),
                   (init.kaiming_uniform_, {"mode": "fan_out", "nonlinearity": "relu"}),
                   (init.kaiming_normal_, {}), (init.uniform_, {"a": -1, "b": 1}),
                   (init.normal_, {"std": 0.02}), (init.trunc_normal_, {"std": 0.5})]:
        assert fn(t, **kw) is t
        assert np.isfinite(t.numpy()).all()
    a = math.sqrt(6 / (64 + 32))
    init.xavier_uniform_(t)
    assert np.abs(t.numpy()).max() <= a
    init.trunc_normal_(t, mean=0.0, std=1.0, a=-0.5, b=0.5)
    assert np.abs(t.numpy()).max() <= 0.5
    init.constant_(t, 0.3)
    assert set(t.numpy().ravel().tolist()) == {np.float32(0.3).item()}
    assert init.zeros_(t).sum().item() == 0 and init.ones_(t).sum().item() == 64 * 32
    p = nn.Parameter(gradsum.empty(3, 3))
    init.normal_(p)  # works on leaves that require grad (runs under no_grad)
    for name, param in [("linear", None), ("tanh", None), ("relu", None), ("leaky_relu", 0.2),
                        ("selu", None), ("conv2d", None), ("sigmoid", None)]:
        assert init.calculate_gain(name, param) == pytest.approx(
            torch.nn.init.calculate_gain(name, param))
    assert init._calculate_fan_in_and_fan_out(gradsum.empty(5, 3, 2, 2)) == (12, 20)
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.xavier_uniform_(gradsum.empty(3))
    with pytest.raises(ValueError, match="Unsupported nonlinearity"):
        init.calculate_gain("swish")
    with pytest.raises(ValueError, match="Mode fan_x not supported"):
        init.kaiming_uniform_(t, mode="fan_x")


# -- utils ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("norm_type", [2.0, 1.0, math.inf, 3.0])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm_matches_torch(norm_type: float, max_norm: float) -> None:
    grads = [RNG.standard_normal(s).astype(np.float32) for s in [(3, 2), (4,), (2,)]]
    gp = [nn.Parameter(gradsum.zeros(*g.shape)) for g in grads]
    tp = [torch.nn.Parameter(torch.zeros(*g.shape)) for g in grads]
    for i, g in enumerate(grads[:2]):  # the third parameter has no gradient
        gp[i].grad = g_of(g)
        tp[i].grad = t_of(torch, g)
    held = gp[0].grad
    tg = clip_grad_norm_(gp, max_norm, norm_type)
    tt = torch.nn.utils.clip_grad_norm_(tp, max_norm, norm_type)
    assert isinstance(tg, gradsum.Tensor) and tg.dtype == gradsum.float32
    np.testing.assert_allclose(tg.item(), tt.item(), rtol=1e-5)
    for a, b in zip(gp, tp):
        if b.grad is None:
            assert a.grad is None
        else:
            np.testing.assert_allclose(to_np(a.grad), b.grad.numpy(), rtol=1e-5, atol=1e-7)
    assert gp[0].grad is held  # in place


def test_clip_grad_edge_cases() -> None:
    p = nn.Parameter(gradsum.zeros(2))
    assert clip_grad_norm_([p], 1.0).item() == 0.0  # no gradients at all
    p.grad = gradsum.tensor([float("inf"), 1.0])
    with pytest.raises(RuntimeError, match=r"The total norm of order 2\.0 for gradients"):
        clip_grad_norm_(p, 1.0, error_if_nonfinite=True)
    assert p.grad.tolist() == [float("inf"), 1.0]  # unchanged on error
    q = nn.Parameter(gradsum.zeros(3))
    q.grad = gradsum.tensor([-3.0, 0.1, 3.0])
    clip_grad_value_([q, nn.Parameter(gradsum.zeros(1))], 0.5)
    np.testing.assert_allclose(q.grad.numpy(), [-0.5, 0.1, 0.5], rtol=1e-6)


def test_parameters_vector_round_trip() -> None:
    lin = nn.Linear(3, 2)
    v = parameters_to_vector(lin.parameters())
    assert v.shape == (8,) and v.requires_grad
    v.sum().backward()
    assert lin.weight.grad.tolist() == [[1.0] * 3] * 2
    w_obj = lin.weight
    vector_to_parameters(gradsum.arange(8.0), lin.parameters())
    assert lin.weight is w_obj and lin.weight.tolist() == [[0, 1, 2], [3, 4, 5]]
    assert lin.bias.tolist() == [6.0, 7.0]
    with pytest.raises(TypeError, match=r"expected gradsum\.Tensor"):
        vector_to_parameters([1.0], lin.parameters())  # type: ignore[arg-type]
