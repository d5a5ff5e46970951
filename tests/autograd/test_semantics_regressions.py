"""Side-by-side regressions against torch for the gradient contract (docs SEMANTICS 1-8):
what ``.grad`` holds after each call (values, ``None``-ness, object identity, ``grad_fn``),
``backward(inputs=...)``, ``autograd.grad`` arguments, and the exception type and opening
phrase of each misuse, with the state a refused call leaves behind.

Each test runs the same program with ``torch`` and with ``gradsum`` (passed in as ``m``) and
compares what it records.
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradsum

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

_PHRASE = 30  # how much of torch's message gradsum's must start with


def _summary(x: Any) -> Any:
    """Tensors as (shape, dtype, values, requires_grad, grad_fn name); the rest as is."""
    if isinstance(x, (torch.Tensor, gradsum.Tensor)):
        fn = x.grad_fn
        name = None if fn is None else fn.name().replace("torch::autograd::", "")
        return (tuple(x.shape), str(x.dtype).split(".")[-1],
                np.asarray(x.detach().tolist(), dtype=float).round(5).tolist(),
                x.requires_grad, name)
    if isinstance(x, dict):
        return {k: _summary(v) for k, v in x.items()}
    if isinstance(x, (tuple, list)):
        return tuple(_summary(v) for v in x)
    return x


class Log:
    """What a program observed: values, and for each call that raised, the exception type and
    the opening of its message."""

    def __init__(self) -> None:
        self.items: list[Any] = []

    def __call__(self, label: str, value: Any) -> None:
        self.items.append((label, _summary(value)))

    def call(self, label: str, fn: Callable[[], Any]) -> None:
        try:
            self.items.append((label, "ok", _summary(fn())))
        except Exception as e:
            msg = str(e).replace("torch.", "").replace("gradsum.", "")
            self.items.append((label, type(e).__name__, _Phrase(msg)))


class _Phrase(str):
    """An error message; equal to another when one starts with the other's opening (gradsum's
    messages go on with the values and the fix)."""

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, str):
            return NotImplemented
        n = min(_PHRASE, len(self), len(other))
        return self[:n] == other[:n]

    __hash__ = str.__hash__


def same(program: Callable[[Any, Log], None]) -> list[Any]:
    """Run ``program`` with torch and with gradsum; assert both logs match."""
    want, got = Log(), Log()
    program(torch, want)
    program(gradsum, got)
    assert got.items == want.items
    return got.items


# -- SEMANTICS 1: backward(inputs=...) ------------------------------------------------------------
def test_backward_inputs_calls_retain_grad_on_each_input():
    # torch calls retain_grad() on every tensor named in inputs: a non-leaf there then keeps
    # its .grad (accumulated out of place) in later plain backwards too.
    def program(m, log):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        h = x * 3
        (h * h).sum().backward(inputs=[h], retain_graph=True)
        log("retains", h.retains_grad)
        log("h", h.grad)
        log("x", x.grad)
        g = h.grad
        (h * h).sum().backward(inputs=[h], retain_graph=True)
        log("same object", g is h.grad)
        (h * 2).sum().backward()
        log("h after plain backward", h.grad)
        log("x", x.grad)
        log.call("input without grad",
                 lambda: (x * 2).sum().backward(inputs=[m.tensor([1.0])]))
        log("x unchanged", x.grad)

    same(program)


def test_backward_inputs_accepts_a_dict_and_refuses_other_mappings():
    def program(m, log):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        w = m.tensor([3.0, 4.0], requires_grad=True)
        z = (x * w).sum()
        z.backward(inputs={"w": w}, retain_graph=True)
        log("x", x.grad)
        log("w", w.grad)
        log.call("OrderedDict",
                 lambda: z.backward(inputs=collections.OrderedDict(w=w), retain_graph=True))
        log("w unchanged", w.grad)

    same(program)


def test_refused_backward_inputs_check_order_follows_torch():
    # a non-scalar root without gradient is reported before an input without grad
    def program(m, log):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        log.call("both wrong", lambda: (x * 2).backward(inputs=[m.tensor([1.0])]))
        log.call("count", lambda: m.autograd.backward([x * 2, x.sum()], [m.ones(2)]))
        log("x", x.grad)

    same(program)


# -- SEMANTICS 1 and 5: the .grad that create_graph stores ------------------------------------
@pytest.mark.filterwarnings("ignore:Using backward:UserWarning")
def test_first_grad_under_create_graph_is_a_recorded_copy():
    # torch's AccumulateGrad copies into a new tensor with grad mode on: CopyBackwards
    def program(m, log):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        (x ** 3).sum().backward(create_graph=True)
        g = x.grad
        log("grad", g)
        log("edges", [None if n is None else n.name().replace("torch::autograd::", "")
                      for n, _ in g.grad_fn.next_functions])
        (x ** 2).sum().backward(create_graph=True)
        log("out of place", g is x.grad)
        log("sum", x.grad)
        x.grad.sum().backward()
        log("double backward", x.grad)

    same(program)


@pytest.mark.filterwarnings("ignore:grad and param do not obey:UserWarning")
def test_accumulating_into_an_expanded_grad_raises_and_keeps_it():
    def program(m, log):
        x = m.zeros(2, 3, requires_grad=True)
        e = m.tensor([1.0, 2.0, 3.0]).expand(2, 3)
        x.grad = e
        log.call("backward", lambda: (x * 2).sum().backward())
        log("kept", x.grad is e)
        log("values", x.grad)
        x.grad = m.ones(3, 2).t()  # non-contiguous but not overlapping: added in place
        g = x.grad
        (x * 2).sum().backward()
        log("in place", g is x.grad)
        log("sum", x.grad)

    same(program)


# -- SEMANTICS 6: autograd.grad -----------------------------------------------------------------
def test_grad_materialized_zeros_join_the_graph_under_create_graph():
    def program(m, log):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        u = m.tensor([1.0, 2.0], requires_grad=True)
        for cg in (False, True):
            log(f"create_graph={cg}", m.autograd.grad((x * x).sum(), [x, u],
                                                      materialize_grads=True, create_graph=cg))

    same(program)


def test_grad_of_a_dict_of_inputs_is_a_dict():
    def program(m, log):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        w = m.tensor([3.0, 4.0], requires_grad=True)
        z = (x * w).sum()
        res = m.autograd.grad(z, {"x": x, "w": w}, retain_graph=True)
        log("type", type(res).__name__)
        log("grads", res)
        log.call("OrderedDict",
                 lambda: m.autograd.grad(z, collections.OrderedDict(x=x), retain_graph=True))
        log.call("empty", lambda: m.autograd.grad(z, []))

    same(program)


# -- SEMANTICS 8: misuse ------------------------------------------------------------------------
def test_gradient_of_the_wrong_kind_is_refused_with_torchs_phrase():
    def program(m, log):
        x = m.tensor([2.0], requires_grad=True)
        log.call("number", lambda: (x * 2).backward(2.0))
        log.call("list of numbers", lambda: (x * 2).backward([2.0]))
        log.call("grad_outputs number", lambda: m.autograd.grad(x * 2, x, [2.0]))
        log("x", x.grad)

    same(program)


@pytest.mark.parametrize("key", [0, slice(None), Ellipsis, [0], (0, [0]), None, (Ellipsis, 0),
                                 slice(0, 1), (slice(None), [0]), ([0], slice(None))])
def test_setitem_on_a_leaf_names_the_leaf_or_its_view(key):
    # torch writes through a view unless the basic part of the key selects everything
    def program(m, log):
        x = m.ones(2, 2, requires_grad=True)
        log.call("setitem", lambda: x.__setitem__(key, 5.0))
        log("x", x)
        log("version", x._version)

    same(program)


def test_backward_with_create_graph_warns_once_about_the_cycle(monkeypatch):
    # torch: a UserWarning once per process (TORCH_WARN_ONCE), for backward() only
    import warnings

    monkeypatch.setattr(gradsum.autograd, "_warned_create_graph", [])
    x = gradsum.tensor([1.0, 2.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gradsum.autograd.grad((x ** 2).sum(), x, create_graph=True)
        assert caught == []
        (x * 2).sum().backward(create_graph=True)
        (x ** 2).sum().backward(create_graph=True)
    assert [w.category for w in caught] == [UserWarning]
    assert str(caught[0].message).startswith(
        "Using backward() with create_graph=True will create a reference cycle")


def test_leaves_are_updated_in_a_fixed_order():
    """The leaves' sinks share one priority; ties run first-ready-first, so the order of
    .grad updates and post-accumulate hooks is the same on every run (edge order here;
    torch's own order among equal priorities is a heap artifact), and ``a * c`` updates a
    then c, as torch does."""
    seen = set()
    for _ in range(10):
        order: list = []
        xs = [gradsum.ones(2, requires_grad=True) for _ in range(4)]
        for i, x in enumerate(xs):
            x.register_post_accumulate_grad_hook(lambda p, i=i, o=order: o.append(i))
        gradsum.cat(xs).sum().backward()
        seen.add(tuple(order))
    assert seen == {(0, 1, 2, 3)}
    for lib in (torch, gradsum):
        order = []
        a, c = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
        a.register_post_accumulate_grad_hook(lambda p, o=order: o.append("a"))
        c.register_post_accumulate_grad_hook(lambda p, o=order: o.append("c"))
        (a * c).sum().backward()
        assert order == ["a", "c"]


def test_a_ready_sink_runs_before_the_node_made_ready_with_it():
    """A leaf's sink has the highest priority: made ready together with another node (the
    two inputs of ``h * w``), it runs first; a leaf used twice (``w``) waits for its second
    gradient. The order of tensor hooks and post-accumulate hooks is torch's."""
    orders = []
    for lib in (torch, gradsum):
        ev: list = []
        x, w, b = (lib.ones(3, requires_grad=True) for _ in range(3))
        for name, leaf in (("x", x), ("w", w), ("b", b)):
            leaf.register_post_accumulate_grad_hook(lambda p, n=name, e=ev: e.append(n))
        h = x * 2
        h.register_hook(lambda g, e=ev: e.append("h"))
        y = h * w + b
        y.register_hook(lambda g, e=ev: e.append("y"))
        ((y * w).sum() + y.sum()).backward()
        orders.append(ev)
        assert w.grad.tolist() == [7.0, 7.0, 7.0]
    assert orders[0] == orders[1] == ["y", "b", "w", "h", "x"]


def test_views_of_an_integer_tensor_follow_its_in_place_changes():
    """Views of an integer tensor (the targets a training step views: ``y.unsqueeze(1)``)
    are not remembered by their root, which can never get a history; they still see the
    root's in-place changes and its version, have no grad_fn, and refuse what torch
    refuses."""
    from diff_helpers import outcome

    logs = []
    for lib in (torch, gradsum):
        y = lib.arange(6).reshape(2, 3).clone()
        v, w = y.unsqueeze(1), y[0]
        y.add_(1)
        w.mul_(2)
        x = lib.ones(3, requires_grad=True)
        logs.append([y.tolist(), v.tolist(), v._version, w._version, v.grad_fn is None,
                     v.requires_grad, outcome(lambda w=w, x=x: w.add_(x)),
                     outcome(lambda v=v: v.requires_grad_()), y.tolist()])
    assert logs[0] == logs[1]


def test_requires_grad_takes_a_bool_only():
    for lib in (torch, gradsum):
        t = lib.ones(2)
        with pytest.raises(TypeError):
            t.requires_grad_(1)
        with pytest.raises(RuntimeError):
            t.requires_grad = 1
        assert t.requires_grad is False
        with pytest.raises(TypeError):
            lib.nn.Linear(2, 2).requires_grad_(0)


def test_hook_handles_carry_an_id():
    for lib in (torch, gradsum):
        x = lib.ones(2, requires_grad=True)
        h1, h2 = x.register_hook(lambda g: g), x.register_hook(lambda g: g)
        assert isinstance(h1.id, int) and h1.id != h2.id
