"""grad_fn names and the graph structure users see through ``next_functions``, side by side
with torch: matmul of every rank combination (torch composes it of views around one
mm/mv/bmm), reshapes that alias or copy, the shuffles, pairwise_distance, attention (the
fused CPU node and the math backend), sort values and the multi-output split family."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402


def _tree(fn: Any, depth: int = 0) -> str:
    """A node and everything under it as ``Name(child, ...)``; leaves are ``Acc``."""
    if fn is None:
        return "None"
    name = fn.name() if hasattr(fn, "_next") else type(fn).__name__
    if name == "AccumulateGrad":
        return "Acc"
    if depth > 14:
        return name + "(...)"
    kids = [_tree(n, depth + 1) for n, _ in fn.next_functions]
    return name + ("(" + ", ".join(kids) + ")" if kids else "")


def _both(build: Callable[..., Any], arrays: list[np.ndarray], grad: str = "") -> list[Any]:
    """``build(lib, *tensors)`` for torch then gradsum, the tensors float64 and requiring grad
    where ``grad`` names their position (all when empty)."""
    res = []
    for lib in (torch, gradsum):
        ts = [lib.tensor(a, dtype=lib.float64,
                         requires_grad=(not grad or str(i) in grad))
              for i, a in enumerate(arrays)]
        res.append((build(lib, *ts), ts))
    return res


def _same_graph(build: Callable[..., Any], arrays: list[np.ndarray], grad: str = "",
                values: bool = True, math_ref: bool = False) -> None:
    """Same graph, values, first and second gradients. ``math_ref``: torch's fused
    attention node has no derivative of its own, so the second gradients are compared
    with its math backend's (whose forward and first gradients are the same function)."""
    (ty, tts), (gy, gts) = _both(build, arrays, grad)
    assert _tree(gy.grad_fn) == _tree(ty.grad_fn)
    if not values:
        return
    np.testing.assert_allclose(gy.detach().numpy(), ty.detach().numpy(), rtol=1e-10, atol=1e-12)
    tl = [t for t in tts if t.requires_grad]
    gl = [t for t in gts if t.requires_grad]
    tg = torch.autograd.grad((ty * ty).sum(), tl, create_graph=True)
    gg = gradsum.autograd.grad((gy * gy).sum(), gl, create_graph=True)
    for a, b in zip(gg, tg):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10,
                                   atol=1e-12)
    if math_ref:
        from torch.nn.attention import SDPBackend, sdpa_kernel

        with sdpa_kernel(SDPBackend.MATH):
            (ty, tts), _ = _both(build, arrays, grad)
        tl = [t for t in tts if t.requires_grad]
        tg = torch.autograd.grad((ty * ty).sum(), tl, create_graph=True)
    t2 = torch.autograd.grad(sum((g * g).sum() for g in tg), tl, allow_unused=True)
    g2 = gradsum.autograd.grad(sum((g * g).sum() for g in gg), gl, allow_unused=True)
    for a, b in zip(g2, t2):
        if b is None:
            assert a is None or not a.detach().numpy().any()
        else:
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-9,
                                       atol=1e-11)


def _rnd(seed: int, *shape: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


# -- matmul: every rank combination, every operand requiring grad or not ----------------------
MATMUL_SHAPES = [
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
    ((5, 2, 3), (3,)), ((5, 2, 3), (3, 4)), ((3,), (5, 3, 4)), ((2, 3), (5, 3, 4)),
    ((5, 2, 3), (5, 3, 4)), ((5, 2, 3), (1, 3, 4)), ((1, 2, 3), (5, 3, 4)),
    ((1, 2, 3), (1, 3, 4)), ((6, 5, 2, 3), (5, 3, 4)), ((6, 1, 2, 3), (5, 3, 4)),
    ((6, 5, 2, 3), (3, 4)), ((6, 5, 2, 3), (3,)), ((3,), (6, 5, 3, 4)),
    ((2, 3), (6, 5, 3, 4)), ((6, 5, 2, 3), (6, 5, 3, 4)), ((1, 1, 2, 3), (6, 5, 3, 4)),
    ((6, 5, 2, 3), (1, 1, 3, 4)), ((1, 5, 2, 3), (6, 1, 3, 4)), ((1, 2, 3), (3,)),
    ((3,), (1, 3, 4)), ((0, 2, 3), (3, 4)), ((2, 3), (1, 3, 4)), ((2, 0, 3), (3, 4)),
]


@pytest.mark.parametrize("grad", ["01", "0", "1"])
@pytest.mark.parametrize(("sa", "sb"), MATMUL_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_matmul_graph(sa: tuple[int, ...], sb: tuple[int, ...], grad: str) -> None:
    _same_graph(lambda lib, a, b: lib.matmul(a, b), [_rnd(1, *sa), _rnd(2, *sb)], grad)


@pytest.mark.parametrize("grad", ["01", "0", "1"])
@pytest.mark.parametrize("case", ["mT@2d", "2d@mT", "tr01@2d", "tr01@1d"])
def test_matmul_graph_strided(case: str, grad: str) -> None:
    """torch folds a batched operand into a matrix only when that needs no copy."""
    def build(lib: Any, a: Any, b: Any) -> Any:
        if case == "mT@2d":
            return lib.matmul(a.transpose(-1, -2), b)
        if case == "2d@mT":
            return lib.matmul(a, b.transpose(-1, -2))
        return lib.matmul(a.transpose(0, 1), b)

    arrays = {"mT@2d": [_rnd(1, 5, 3, 2), _rnd(2, 3, 4)],
              "2d@mT": [_rnd(1, 2, 3), _rnd(2, 5, 4, 3)],
              "tr01@2d": [_rnd(1, 3, 5, 2), _rnd(2, 2, 4)],
              "tr01@1d": [_rnd(1, 3, 5, 2), _rnd(2, 2)]}[case]
    _same_graph(build, arrays, grad)


def test_matmul_family_nodes() -> None:
    for build, arrays in [
        (lambda lib, a, b: lib.mm(a, b), [_rnd(1, 2, 3), _rnd(2, 3, 4)]),
        (lambda lib, a, b: lib.bmm(a, b), [_rnd(1, 5, 2, 3), _rnd(2, 5, 3, 4)]),
        (lambda lib, a, b: lib.mv(a, b), [_rnd(1, 2, 3), _rnd(2, 3)]),
        (lambda lib, a, b: lib.dot(a, b), [_rnd(1, 3), _rnd(2, 3)]),
        (lambda lib, a, b: a @ b, [_rnd(1, 4, 2, 3), _rnd(2, 3, 2)]),
        (lambda lib, a: lib.linalg.matrix_power(a, 3), [_rnd(1, 2, 3, 3)]),
    ]:
        _same_graph(build, arrays)


def test_matmul_no_grad_mode_records_nothing() -> None:
    a = gradsum.tensor(_rnd(1, 5, 2, 3), requires_grad=True)
    with gradsum.no_grad():
        y = a @ gradsum.tensor(_rnd(2, 3))
    assert y.grad_fn is None and not y.requires_grad


# -- reshape: view, alias of a strided tensor, copy --------------------------------------------
RESHAPES: list[tuple[str, Callable[[Any], Any], tuple[int, ...]]] = [
    ("contiguous", lambda x: x.reshape(4, 3), (3, 4)),
    ("t-alias", lambda x: x.t().reshape(4, 1, 3), (3, 4)),
    ("t-copy", lambda x: x.t().reshape(12), (3, 4)),
    ("t-flatten", lambda x: x.t().flatten(), (3, 4)),
    ("slice-alias", lambda x: x[:, ::2].reshape(3, 1, 2), (3, 4)),
    ("slice-copy", lambda x: x[:, :2].reshape(6), (3, 4)),
    ("view-strided", lambda x: x.transpose(0, 1).view(3, 2, 2, 2), (2, 3, 4)),
    ("expand-copy", lambda x: x.expand(2, 3, 4).reshape(6, 4), (3, 4)),
]


@pytest.mark.parametrize(("name", "fn", "shape"), RESHAPES, ids=[r[0] for r in RESHAPES])
def test_reshape_graph(name: str, fn: Callable[[Any], Any], shape: tuple[int, ...]) -> None:
    _same_graph(lambda lib, x: fn(x), [_rnd(3, *shape)])


# -- composites and ops whose node gradsum names as torch ---------------------------------------
NAMED: list[tuple[str, Callable[..., Any], list[tuple[int, ...]]]] = [
    ("pixel_shuffle", lambda lib, x: lib.nn.functional.pixel_shuffle(x, 2), [(1, 8, 2, 3)]),
    ("pixel_shuffle_3d", lambda lib, x: lib.nn.functional.pixel_shuffle(x, 2), [(8, 2, 3)]),
    ("pixel_unshuffle", lambda lib, x: lib.nn.functional.pixel_unshuffle(x, 2),
     [(1, 2, 4, 6)]),
    ("channel_shuffle", lambda lib, x: lib.nn.functional.channel_shuffle(x, 2),
     [(2, 4, 2, 3)]),
    ("pairwise_distance", lambda lib, a, b: lib.nn.functional.pairwise_distance(a, b),
     [(3, 4), (3, 4)]),
    ("pairwise_distance_p1", lambda lib, a, b: lib.pairwise_distance(a, b, 1.0, 1e-6, True),
     [(3, 4), (4,)]),
    ("msort", lambda lib, x: lib.msort(x), [(4, 3)]),
    ("tensorinv", lambda lib, x: lib.linalg.tensorinv(x + lib.eye(6).reshape(6, 2, 3) * 4,
                                                      ind=1), [(6, 2, 3)]),
    ("sdpa_4d", lambda lib, q, k, v: lib.nn.functional.scaled_dot_product_attention(q, k, v),
     [(1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 4)]),
    ("sdpa_causal", lambda lib, q, k, v: lib.nn.functional.scaled_dot_product_attention(
        q, k, v, is_causal=True), [(2, 2, 3, 4), (2, 2, 3, 4), (2, 2, 3, 4)]),
    ("sdpa_gqa", lambda lib, q, k, v: lib.nn.functional.scaled_dot_product_attention(
        q, k, v, enable_gqa=True), [(1, 4, 3, 4), (1, 2, 3, 4), (1, 2, 3, 4)]),
    ("sdpa_mask", lambda lib, q, k, v: lib.nn.functional.scaled_dot_product_attention(
        q, k, v, attn_mask=lib.tensor(np.tril(np.ones((3, 3), bool)))),
     [(1, 2, 3, 4), (1, 2, 3, 4), (1, 2, 3, 4)]),
    ("sdpa_3d_math", lambda lib, q, k, v: lib.nn.functional.scaled_dot_product_attention(
        q, k, v), [(2, 3, 4), (2, 3, 4), (2, 3, 4)]),
    ("sdpa_2d_math", lambda lib, q, k, v: lib.nn.functional.scaled_dot_product_attention(
        q, k, v, scale=0.3), [(3, 4), (3, 4), (3, 4)]),
    ("sdpa_head_dims_differ", lambda lib, q, k, v: lib.nn.functional.scaled_dot_product_attention(
        q, k, v), [(1, 2, 3, 4), (1, 2, 3, 4), (1, 2, 3, 5)]),
    ("outer", lambda lib, a, b: lib.outer(a, b), [(3,), (4,)]),
    ("einsum_mm_top", lambda lib, a, b: lib.mm(a, b).sum(0), [(2, 3), (3, 4)]),
]


@pytest.mark.parametrize(("name", "build", "shapes"), NAMED, ids=[n[0] for n in NAMED])
def test_named_graph(name: str, build: Callable[..., Any], shapes: list[tuple[int, ...]]
                     ) -> None:
    fused = name in ("sdpa_4d", "sdpa_causal", "sdpa_gqa", "sdpa_mask")
    _same_graph(build, [_rnd(i + 5, *s) for i, s in enumerate(shapes)], math_ref=fused)


@pytest.mark.parametrize("grad", ["0", "2", "01"])
def test_sdpa_fused_node_partial(grad: str) -> None:
    """The fused node's edges are None where an operand does not require grad."""
    _same_graph(lambda lib, q, k, v: lib.nn.functional.scaled_dot_product_attention(q, k, v),
                [_rnd(1, 1, 2, 3, 4), _rnd(2, 1, 2, 3, 4), _rnd(3, 1, 2, 3, 4)], grad,
                math_ref=True)


# -- the split family: one node, many outputs ---------------------------------------------------
SPLITS: list[tuple[str, Callable[[Any], Any]]] = [
    ("split", lambda x: x.split(2)),
    ("split_sizes", lambda x: x.split([1, 4])),
    ("split_with_sizes", lambda x: x.split_with_sizes([2, 3])),
    ("chunk", lambda x: x.chunk(3)),
    ("unbind", lambda x: x.unbind(0)),
    ("unbind_1", lambda x: x.unbind(1)),
]


@pytest.mark.parametrize(("name", "fn"), SPLITS, ids=[s[0] for s in SPLITS])
def test_split_family(name: str, fn: Callable[[Any], Any]) -> None:
    arr = _rnd(4, 5, 2)
    res = []
    for lib in (torch, gradsum):
        x = lib.tensor(arr, requires_grad=True)
        pieces = fn(x)
        nodes = [p.grad_fn for p in pieces]
        assert all(n is nodes[0] for n in nodes)  # one node for all pieces
        names = [_tree(p.grad_fn) for p in pieces]
        nrs = [p.output_nr if lib is torch else p._output_nr for p in pieces]
        # a gradient through only some pieces: zeros for the others
        (g,) = lib.autograd.grad((pieces[-1] * 3).sum() + (pieces[0] ** 2).sum(), [x],
                                 create_graph=True)
        (g2,) = lib.autograd.grad((g * g).sum(), [x])
        res.append((names, nrs, g.detach().numpy(), g2.detach().numpy()))
    (tn, tnr, tg, tg2), (gn, gnr, gg, gg2) = res
    assert gn == tn and gnr == tnr
    np.testing.assert_allclose(gg, tg, rtol=1e-12)
    np.testing.assert_allclose(gg2, tg2, rtol=1e-12)


def test_split_hooks_per_output() -> None:
    """A hook on one piece sees that piece's gradient only (hooks keyed by output_nr)."""
    seen: dict[str, list[Any]] = {}
    for lib in (torch, gradsum):
        x = lib.tensor(np.arange(6.0), requires_grad=True)
        a, b, c = x.split(2)
        log: list[Any] = []
        b.register_hook(lambda g, log=log: log.append(g.tolist()))
        (a.sum() + 2 * b.sum() + 3 * c.sum()).backward()
        seen[lib.__name__] = [log, x.grad.tolist()]
    assert seen["gradsum"] == seen["torch"]


# -- ops whose top node is named as torch (a broad list) ----------------------------------------
TOP: list[tuple[str, Callable[..., Any], list[tuple[int, ...]]]] = [
    ("add", lambda lib, a, b: a + b, [(2, 3), (3,)]),
    ("mul", lambda lib, a, b: a * b, [(2, 3), (2, 3)]),
    ("relu", lambda lib, a: a.relu(), [(2, 3)]),
    ("log_softmax", lambda lib, a: lib.log_softmax(a, 1), [(2, 3)]),
    ("softmax", lambda lib, a: lib.softmax(a, 1), [(2, 3)]),
    ("cross_entropy", lambda lib, a: lib.nn.functional.cross_entropy(
        a, lib.tensor([0, 2])), [(2, 3)]),
    ("linear_2d", lambda lib, x, w, b: lib.nn.functional.linear(x, w, b),
     [(2, 3), (4, 3), (4,)]),
    ("sum_dim", lambda lib, a: a.sum(1), [(2, 3)]),
    ("mean", lambda lib, a: a.mean(), [(2, 3)]),
    ("transpose", lambda lib, a: a.transpose(0, 1), [(2, 3)]),
    ("permute", lambda lib, a: a.permute(1, 0), [(2, 3)]),
    ("expand", lambda lib, a: a.expand(4, 3), [(1, 3)]),
    ("squeeze_dim", lambda lib, a: a.squeeze(0), [(1, 3)]),
    ("unsqueeze", lambda lib, a: a.unsqueeze(0), [(2, 3)]),
    ("index", lambda lib, a: a[lib.tensor([0, 1, 1])], [(2, 3)]),
    ("cat", lambda lib, a, b: lib.cat([a, b]), [(2, 3), (1, 3)]),
    ("stack", lambda lib, a, b: lib.stack([a, b]), [(2, 3), (2, 3)]),
    ("where", lambda lib, a, b: lib.where(a > 0, a, b), [(2, 3), (2, 3)]),
    ("norm", lambda lib, a: a.norm(), [(2, 3)]),
    ("layer_norm", lambda lib, a: lib.nn.functional.layer_norm(a, (3,)), [(2, 3)]),
    ("gelu", lambda lib, a: lib.nn.functional.gelu(a), [(2, 3)]),
    ("tanh", lambda lib, a: a.tanh(), [(2, 3)]),
    ("exp", lambda lib, a: a.exp(), [(2, 3)]),
    ("pow", lambda lib, a: a ** 3, [(2, 3)]),
    ("clone", lambda lib, a: a.clone(), [(2, 3)]),
    ("contiguous_t", lambda lib, a: a.t().contiguous(), [(2, 3)]),
    ("conv2d", lambda lib, x, w: lib.nn.functional.conv2d(x, w), [(1, 2, 5, 5), (3, 2, 2, 2)]),
    ("max_pool2d", lambda lib, x: lib.nn.functional.max_pool2d(x, 2), [(1, 2, 4, 4)]),
]


@pytest.mark.parametrize(("name", "build", "shapes"), TOP, ids=[t[0] for t in TOP])
def test_top_node_names(name: str, build: Callable[..., Any], shapes: list[tuple[int, ...]]
                        ) -> None:
    (ty, _), (gy, _) = _both(build, [_rnd(i + 9, *s) for i, s in enumerate(shapes)])
    assert gy.grad_fn.name() == type(ty.grad_fn).__name__
