"""Side-by-side regressions against torch: autograd hooks and Functions, grad modes, indexing
and ``__setitem__`` with torch's index semantics, and a few Tensor API details.

Each test runs the same code with ``torch`` and with ``gradsum`` (passed in as ``m``) and
compares what comes out: values, shapes, dtypes, exception types, grad_fn names.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradsum

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)


def _summary(x: Any) -> Any:
    """What is compared: tensors as (shape, dtype name, values, requires_grad)."""
    if isinstance(x, (torch.Tensor, gradsum.Tensor)):
        return (tuple(x.shape), str(x.dtype).split(".")[-1],
                np.asarray(x.detach().tolist(), dtype=float).round(5).tolist(), x.requires_grad)
    if isinstance(x, (tuple, list)):
        return tuple(_summary(v) for v in x)
    if isinstance(x, str):
        return x.replace("torch::autograd::", "").replace("torch.", "").replace("gradsum.", "")
    return x


def _outcome(fn: Callable[[Any], Any], m: Any) -> Any:
    try:
        return "ok", _summary(fn(m))
    except Exception as e:  # the exception's type is part of the contract
        return "raises", type(e).__name__


def same(fn: Callable[[Any], Any]) -> Any:
    """Run ``fn(torch)`` and ``fn(gradsum)``; assert the outcomes match; return gradsum's."""
    want, got = _outcome(fn, torch), _outcome(fn, gradsum)
    assert got == want, f"gradsum: {got}\ntorch:   {want}"
    return got


def leaf(m: Any, data: Any) -> Any:
    return m.tensor(data, requires_grad=True)


# -- grad modes ---------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["no_grad", "enable_grad", "inference_mode"])
def test_grad_modes_decorate_without_parentheses(mode):
    def f(m):
        @getattr(m, mode)
        def g(t):
            return t * 2, m.is_grad_enabled()

        with m.no_grad() if mode == "enable_grad" else m.enable_grad():
            y, enabled = g(leaf(m, [1.0]))
        return y.requires_grad, enabled, m.is_grad_enabled()

    same(f)


# -- detach_ ------------------------------------------------------------------------------------
def test_detach_inplace_refuses_every_view():
    same(lambda m: m.zeros(3)[0:2].detach_())  # (the base does not require grad)
    same(lambda m: m.zeros(3).view(3).detach_())
    same(lambda m: m.zeros(3).detach().detach_().is_leaf)


# -- tensor hooks ---------------------------------------------------------------------------------
def test_tensor_hook_may_not_change_dtype():
    def f(m):
        x = leaf(m, [1.0, 2.0])
        x.register_hook(lambda g: g.double())
        (x * 3).sum().backward()

    assert same(f) == ("raises", "RuntimeError")


def test_tensor_hooks_run_with_none_when_no_gradient_arrives():
    def f(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                return a * b

            @staticmethod
            def backward(ctx, g):
                return None, g

        x, w = leaf(m, [1.0, 2.0]), leaf(m, [3.0, 4.0])
        seen = []
        h = x * 1
        h.register_hook(lambda g: seen.append(("h", g is None)))
        x.register_hook(lambda g: seen.append(("x", g is None)))
        F.apply(h, w).sum().backward()
        return seen, x.grad is None

    same(f)


def test_tensor_hook_cannot_replace_a_none_gradient():
    def f(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                return a * b

            @staticmethod
            def backward(ctx, g):
                return None, g

        x, w = leaf(m, [1.0, 2.0]), leaf(m, [3.0, 4.0])
        x.register_hook(lambda g: m.ones(2))
        F.apply(x, w).sum().backward()

    assert same(f) == ("raises", "RuntimeError")


@pytest.mark.parametrize("ret", ["int", "tensor"])
def test_post_accumulate_grad_hook_must_return_none(ret):
    def f(m):
        x = leaf(m, [1.0, 2.0])
        x.register_post_accumulate_grad_hook(lambda t: 5 if ret == "int" else t * 2)
        (x * 3).sum().backward()

    same(f)


# -- node hooks -----------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["pre", "post"])
@pytest.mark.parametrize("result", ["list", "short", "long", "size", "dtype", "ok"])
def test_node_hook_results_are_checked(kind, result):
    def f(m):
        x, w = leaf(m, [1.0, 2.0]), leaf(m, [3.0, 4.0])
        h = x * w

        def hook(*args):
            gs = args[0]
            return {"list": list(gs), "short": gs[:1] if len(gs) > 1 else (),
                    "long": (*gs, gs[0]), "size": tuple(g[:1] for g in gs),
                    "dtype": tuple(g.double() for g in gs),
                    "ok": tuple(g * 10 for g in gs)}[result]

        getattr(h.grad_fn, "register_prehook" if kind == "pre" else "register_hook")(hook)
        h.sum().backward()
        return x.grad, w.grad

    same(f)


def test_node_post_hook_cannot_fill_a_none_slot():
    def f(m):
        x, w = leaf(m, [1.0, 2.0]), m.tensor([3.0, 4.0])
        h = x * w
        h.grad_fn.register_hook(lambda gi, go: (gi[0] * 10, gi[0]))
        h.sum().backward()

    assert same(f) == ("raises", "RuntimeError")


def test_node_post_hook_sees_none_for_edges_outside_inputs():
    def f(m):
        x, w = leaf(m, [1.0, 2.0]), leaf(m, [3.0, 4.0])
        h = x * w
        seen = []
        h.grad_fn.register_hook(lambda gi, go: seen.append([g is None for g in gi]))
        h.sum().backward(inputs=[x])
        return seen, x.grad, w.grad

    same(f)


def test_accumulate_grad_node_hooks_run():
    def f(m):
        x = leaf(m, [1.0, 2.0])
        acc = (x * 1).grad_fn.next_functions[0][0]
        seen = []
        acc.register_prehook(lambda go: seen.append(("pre", len(go))))
        acc.register_hook(lambda gi, go: seen.append(("post", len(gi), len(go))))
        x.register_post_accumulate_grad_hook(lambda t: seen.append("acc"))
        (x * 2).sum().backward()
        m.autograd.grad((x * 2).sum(), x)  # captured, the sink does not run
        return seen, x.grad

    same(f)


# -- autograd.Function --------------------------------------------------------------------------
def _fn(m: Any, backward: Callable[..., Any], forward: Any = None) -> Any:
    class Fn(m.autograd.Function):
        @staticmethod
        def forward(ctx, a, k):
            return a * k if forward is None else forward(ctx, a, k)

    Fn.backward = staticmethod(backward)
    return Fn


@pytest.mark.parametrize("bad", [[1.0], 3.0])
def test_function_backward_returning_a_non_tensor_raises_runtime_error(bad):
    def f(m):
        x = leaf(m, [1.0, 2.0])
        _fn(m, lambda ctx, g: (bad, None)).apply(x, 2.0).sum().backward()

    assert same(f) == ("raises", "RuntimeError")


def test_function_gradient_for_a_non_tensor_argument_raises():
    def f(m):
        x = leaf(m, [1.0, 2.0])
        _fn(m, lambda ctx, g: (g * 2, g)).apply(x, 2.0).sum().backward()

    assert same(f) == ("raises", "RuntimeError")


def test_function_non_tensor_output_gets_none_gradient():
    def f(m):
        seen = []

        class Fn(m.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a.clone(), 3

            @staticmethod
            def backward(ctx, g, g2):
                seen.append(g2)
                return g

        x = leaf(m, [1.0, 2.0])
        y, k = Fn.apply(x)
        y.sum().backward()
        return seen, k, x.grad

    same(f)


def test_function_save_for_backward_refuses_non_tensors():
    def f(m):
        def forward(ctx, a, k):
            ctx.save_for_backward(a, None, 3)
            return a * k

        _fn(m, lambda ctx, g: (g, None), forward).apply(leaf(m, [1.0]), 2.0)

    assert same(f) == ("raises", "TypeError")


def test_function_mark_dirty_bumps_the_version():
    def f(m):
        def forward(ctx, a, k):
            a.mul_(k)
            ctx.mark_dirty(a)
            return a

        x = leaf(m, [1.0, 2.0])
        h = x * 1
        y = _fn(m, lambda ctx, g: (g * 2, None), forward).apply(h, 2.0)
        v = h._version
        y.sum().backward()
        return y is h, v, x.grad

    same(f)


def test_function_setup_context_style():
    def f(m):
        class Fn(m.autograd.Function):
            @staticmethod
            def forward(a, k):
                return a * k

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.k = inputs[1]

            @staticmethod
            def backward(ctx, g):
                return g * ctx.k, None

        x = leaf(m, [1.0, 2.0])
        Fn.apply(x, 3.0).sum().backward()
        return x.grad

    same(f)


@pytest.mark.filterwarnings("ignore:.*should not be instantiated")
def test_function_instance_call_raises():
    same(lambda m: _fn(m, lambda ctx, g: g)()(m.ones(2), 2.0))


# -- indexing: torch's order (ints select first) and placement of advanced dims -----------------
_KEYS = [
    lambda m: (slice(None, None, 2), 0, None, m.tensor([-1, -2])),
    lambda m: (-1, None, m.tensor([-1, -1, -1])),
    lambda m: (0, slice(None), m.tensor([1, 0])),
    lambda m: (m.tensor(1), slice(None), -1),  # a 0-d int tensor is an int (a view)
    lambda m: (None, m.tensor([[1], [0]]), Ellipsis, m.tensor([1])),  # a 0-dim Ellipsis
    lambda m: (1, Ellipsis, m.tensor([True, False, True, True])),
    lambda m: m.tensor(True),
    lambda m: (0, m.tensor(False)),
    lambda m: m.tensor([1, 0], dtype=m.uint8),  # a byte tensor is a mask
]


@pytest.mark.filterwarnings("ignore:indexing with dtype torch.uint8")
@pytest.mark.parametrize("key", range(len(_KEYS)))
def test_getitem_follows_torch_index_semantics(key):
    def f(m):
        x = m.arange(24.0).reshape(2, 3, 4).requires_grad_()
        y = x[_KEYS[key](m)]
        (y * (m.arange(float(y.numel())).reshape(y.shape) + 1)).sum().backward()
        return y, x.grad, y.grad_fn.name()

    same(f)


@pytest.mark.parametrize("key,name", [
    ((slice(1, 0),), "SliceBackward0"),  # an empty slice is recorded
    ((slice(-3, None),), "SliceBackward0"),  # a negative start is recorded
    ((0, slice(0, 100)), "SelectBackward0"),  # a stop past the end is skipped
    ((0, slice(None, 1)), "SliceBackward0"),
])
def test_basic_index_grad_fn_names(key, name):
    assert same(lambda m: m.zeros(2, 3, requires_grad=True)[key].grad_fn.name())[1] == name


def test_zero_dim_int_tensor_index_is_a_view():
    def f(m):
        x = m.zeros(3)
        x[m.tensor(1)].add_(5)
        return x

    same(f)


@pytest.mark.parametrize("value", ["scalar", "tensor", "requires_grad"])
@pytest.mark.parametrize("key", [
    lambda m: (1, slice(None), m.tensor([-1, 0, 1])),
    lambda m: (slice(None, None, 2), 0, None, m.tensor([-1, -2])),
    lambda m: (0, Ellipsis, m.tensor([1, 2]), None),
])
def test_setitem_follows_torch_index_semantics(key, value):
    def f(m):
        x = m.arange(24.0).reshape(2, 3, 4).requires_grad_()
        h = x * 1
        k = key(m)
        with m.no_grad():
            shape = h[k].shape
        v = 7.5 if value == "scalar" else (m.arange(float(np.prod(shape))).reshape(shape)
                                           + 100).requires_grad_(value == "requires_grad")
        h[k] = v
        (h * (m.arange(24.0).reshape(2, 3, 4) + 1)).sum().backward()
        return h, x.grad, v.grad if value == "requires_grad" else None, h.grad_fn.name()

    same(f)
    same(lambda m: m.zeros(2, 3, 4).__setitem__(key(m), 1.0))  # (not recorded)


@pytest.mark.parametrize("key", [
    (slice(None),), (Ellipsis,), (slice(0, 2),), (0,), ([0, 1],), (None, [0, 1]),
    (slice(None), [0, 1]), "mask", "bool0",
])
@pytest.mark.parametrize("value", ["scalar", "tensor0", "tensor"])
def test_setitem_graph_matches_torch(key, value):
    def f(m):
        x = m.ones(2, 3, requires_grad=True)
        h = x * 1
        k = {"mask": (m.tensor([True, False]),), "bool0": (m.tensor(True),)}.get(key, key)
        with m.no_grad():
            shape = h[k].shape
        while shape and shape[0] == 1:  # (torch views such a value without its leading
            shape = shape[1:]           # ones, a ViewBackward0 gradsum does not record)
        v = {"scalar": 2.0, "tensor0": m.tensor(5.0, requires_grad=True),
             "tensor": m.full(shape, 5.0, requires_grad=True)}[value]
        h[k] = v
        names = [None if n is None else n.name() for n, _ in h.grad_fn.next_functions]
        h.sum().backward()
        return h.grad_fn.name(), names, x.grad, None if value == "scalar" else v.grad

    same(f)


def test_inplace_through_view_twice_needs_retain_graph():
    def f(m):
        x = leaf(m, [1.0, 2.0, 3.0])
        h = x * 1
        h[0:2].mul_(x[1:3])
        out = h.sum()
        out.backward(retain_graph=True)
        out.backward()
        first = x.grad.clone()
        h2 = x * 1
        h2[0:2].mul_(x[1:3])
        out2 = h2.sum()
        out2.backward()
        out2.backward()
        return first

    assert same(f) == ("raises", "RuntimeError")


# -- shape ops and Tensor API -----------------------------------------------------------------
def test_expand_refuses_minus_one_in_a_new_dimension():
    same(lambda m: m.zeros(3, 1).expand(-1, 3, 4))


def test_chunk_of_an_empty_dimension_gives_chunks_pieces():
    same(lambda m: [t.shape for t in m.zeros(0, 2).chunk(3)])


def test_tile():
    """Tensor.tile as torch's: an int repeat, more repeats than dims (leading dims added), the
    gradient summed back."""
    def f(m):
        x = leaf(m, [[1.0, 2.0]])
        y = x.tile(2)
        y.sum().backward()
        return y, x.grad, x.tile((2, 1, 2)).shape

    same(f)


def test_python_scalar_conversions_of_many_elements_raise_value_error():
    same(lambda m: float(m.zeros(2)))
    same(lambda m: int(m.zeros(2, dtype=m.int64)))


def test_comparison_with_unsupported_object_is_python_identity():
    same(lambda m: (m.zeros(2) == "a", m.zeros(2) != "a"))


def test_legacy_type_name():
    same(lambda m: [m.zeros(1, dtype=d).type() for d in (m.float32, m.float64, m.int64,
                                                        m.bool)])


def test_data_has_its_own_version_counter():
    def f(m):
        x = leaf(m, [1.0])
        y = x * x
        x.data.add_(1)  # unsafe, as in torch: the saved x is not seen to change
        y.backward()
        return x._version, x.grad

    same(f)


@pytest.mark.parametrize("case", ["index tensor", "bool mask", "tensor after slice",
                                  "nll_loss", "cross_entropy", "embedding", "x * 2", "x / 2",
                                  "x + 2", "mse_loss", "where"])
def test_second_backward_raises_where_torch_saved_something(case):
    """Nodes that keep an index, a mask or a wrapped number raise on a second backward
    without retain_graph, as torch's do (they saved variables); others run again."""
    calls = {
        "index tensor": lambda L, x: x[L.tensor([0, 2])],
        "bool mask": lambda L, x: x[L.tensor([True, False, True, False])],
        "tensor after slice": lambda L, x: x.reshape(2, 2)[:, L.tensor([1])],
        "nll_loss": lambda L, x: L.nn.functional.nll_loss(x.reshape(2, 2), L.tensor([0, 1])),
        "cross_entropy": lambda L, x: L.nn.functional.cross_entropy(x.reshape(2, 2),
                                                                     L.tensor([0, 1])),
        "embedding": lambda L, x: L.nn.functional.embedding(L.tensor([1, 1]), x.reshape(2, 2)),
        "x * 2": lambda L, x: x * 2,
        "x / 2": lambda L, x: x / 2,
        "x + 2": lambda L, x: x + 2,
        "mse_loss": lambda L, x: L.nn.functional.mse_loss(x, L.ones(4)),
        "where": lambda L, x: L.where(x > 0, x, L.zeros(4)),
    }
    outcome = []
    for lib in (torch, gradsum):
        x = lib.tensor([0.5, -1.0, 2.0, 3.0], requires_grad=True)
        y = calls[case](lib, x).sum()
        y.backward()
        try:
            y.backward()
            outcome.append("runs")
        except RuntimeError:
            outcome.append("raises")
    assert outcome[1] == outcome[0]


@pytest.mark.parametrize("expr", ["7 % x", "7 // x", "7.5 // i", "7.5 % i", "7 % i", "True // i",
                                  "-7 % y", "7 // z", "2 % b"])
def test_number_on_the_left_of_floordiv_and_mod(expr):
    """``number // t`` and ``number % t`` compute like torch (wrapped-number promotion, the
    integer division-by-zero error); with a tensor requiring grad the result carries torch's
    ``NotImplemented`` node, whose backward raises."""
    results = []
    for lib in (torch, gradsum):
        env = {"x": lib.tensor([2.0, 3.0], requires_grad=True), "i": lib.tensor([2, 3]),
               "y": lib.tensor([2.0, -3.0]), "z": lib.tensor([0, 3]), "b": lib.tensor([True])}
        try:
            r = eval(expr, {}, env)
        except RuntimeError:
            results.append("RuntimeError")
            continue
        name = type(r.grad_fn).__name__ if r.grad_fn is not None else None
        backward = None
        if r.requires_grad:
            try:
                r.sum().backward()
                backward = "runs"
            except RuntimeError as e:
                backward = "derivative" in str(e) and "not implemented" in str(e)
        results.append((r.tolist(), str(r.dtype).split(".")[-1], name, backward))
    assert results[1] == results[0]


def test_zero_dim_tensors_format_as_numbers():
    for lib in (torch, gradsum):
        assert f"{lib.tensor(0.1):.3f}" == "0.100"
        assert f"{lib.tensor(3):d}" == "3"
        assert f"{lib.tensor([1, 2])}" == "tensor([1, 2])"
        with pytest.raises(TypeError):
            f"{lib.tensor([0.1]):.3f}"


@pytest.mark.parametrize("name", ["zeros", "ones", "empty", "rand", "randn"])
def test_creation_functions_require_a_size(name):
    for lib in (torch, gradsum):
        with pytest.raises(TypeError):
            getattr(lib, name)()
        assert tuple(getattr(lib, name)(()).shape) == ()


@pytest.mark.parametrize("fill", ["normal_", "uniform_", "exponential_", "bernoulli_",
                                  "random_"])
@pytest.mark.parametrize("dtype", ["int64", "bool", "float32"])
def test_random_fills_on_integer_tensors(fill, dtype):
    outcome = []
    for lib in (torch, gradsum):
        t = lib.zeros(3, dtype=getattr(lib, dtype))
        try:
            getattr(t, fill)()
            outcome.append("ok")
        except (NotImplementedError, RuntimeError) as e:
            outcome.append(type(e).__name__)
    assert outcome[1] == outcome[0]


VIEW_PROGRAMS = {
    # an in-place op on the base: the view's gradient goes through it
    "base mul_": lambda L, x: (lambda y: (y[:2], y.mul_(2))[0])(x * 1),
    "base relu_": lambda L, x: (lambda y: (y[0:2] * 5, y.relu_())[0])(x * 1),
    # an in-place op through a sibling view
    "sibling mul_": lambda L, x: (lambda y: (y[1:], y[:2].mul_(3))[0])(x * 1),
    # a plain tensor's view written with a value that requires grad: the sibling follows
    "sibling copy_": lambda L, x: (lambda y: (y[1:], y[:2].copy_(x[:2]))[0])(L.zeros(3)),
    "two views, base add_": lambda L, x: (lambda y: (lambda a, b: (y.add_(x), a * b)[1])(
        y[:2], y[1:]))(x * 2),
}


@pytest.mark.parametrize("name", list(VIEW_PROGRAMS))
def test_views_follow_an_inplace_op_on_their_base(name):
    """Note "Views after an in-place op": a view made before an in-place op on its base (or
    on a sibling view) reads its values through the new history, so its gradient includes
    the in-place op, as torch's regenerated view does (torch names the node
    AsStridedBackward0; gradsum replays the view op)."""
    results = []
    for lib in (torch, gradsum):
        x = lib.tensor([-1.0, 2.0, 3.0], requires_grad=True)
        v = VIEW_PROGRAMS[name](lib, x)
        results.append(v.requires_grad)
        v.sum().backward()
        results.append(x.grad.tolist())
    assert results[2:] == results[:2]


def test_deepcopy_is_no_view_and_leaves_the_originals_views_alone():
    """A deep copy owns a new buffer: it is not a view of the original's base, and writing
    into it (recorded) does not touch the history of views of the original."""
    import copy

    for lib in (torch, gradsum):
        base = lib.zeros(4)
        v = base[:2]
        v2 = copy.deepcopy(v)
        assert v2._base is None
        v2.add_(1)
        assert base.tolist() == [0.0, 0.0, 0.0, 0.0]
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = lib.zeros(3)
        a = y[1:]
        y2 = copy.deepcopy(y)
        y2[:2].copy_(x[:2] * 5)  # recorded: y2 now requires grad
        assert y2.requires_grad and not a.requires_grad and a.grad_fn is None
