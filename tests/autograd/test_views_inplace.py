"""Side by side with torch: in-place rules of views (detach_ on a view, an in-place op through
a view twice, views following an in-place op on their base, deepcopy of a view, a view whose base
was detached in place or written without a record, no-grad views of bases that require grad),
``.data``'s own version counter, and a saved non-leaf detached in place."""

from __future__ import annotations

from typing import Any

import pytest

import gradsum
from autograd_helpers import same_exact
from diff_helpers import leaf, same_summary

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)


@pytest.mark.parametrize("case", ["leaf", "nonleaf", "requires_grad_false"])
def test_inplace_on_a_view_of_a_base_detached_in_place_raises(case: str) -> None:
    # seed 10042 of the wider program sweep: torch asks whether the view requires grad and
    # whether its base is a leaf (now), not whether the base requires grad
    def program(m: Any) -> Any:
        x = m.ones(3, requires_grad=True)
        base = x * 1 if case == "nonleaf" else x
        v = base[:2]
        if case == "requires_grad_false":
            x.requires_grad_(False)
        else:
            base.detach_()
        v.mul_(2)
        return v

    same_exact(program)


@pytest.mark.parametrize("case", ["read", "inplace", "follows_requires_grad_"])
def test_a_no_grad_view_requires_grad_while_its_base_does(case: str) -> None:
    # seed 10104 of the wider program sweep
    def program(m: Any) -> Any:
        x = m.ones(3, requires_grad=True)
        with m.no_grad():
            v = x[:1]
        before = v.requires_grad
        if case == "follows_requires_grad_":
            x.requires_grad_(False)
            mid = v.requires_grad
            x.requires_grad_(True)
            return before, mid, v.requires_grad
        x.detach_()
        if case == "inplace":
            v.mul_(2)
        return before, v.requires_grad, v.is_leaf, x._version

    same_exact(program)


def test_seed_10042_agrees_with_torch() -> None:
    from test_program_fuzz import check_seed

    assert check_seed(10042, allow_known=False) is None


def test_saved_non_leaf_detached_in_place_refuses_backward() -> None:
    # torch: a non-leaf saved as an input and detached in place since cannot be used; the
    # refused backward writes no .grad. Saved outputs and leaves are unaffected.
    def prog(m: Any) -> Any:
        x = m.ones(3, requires_grad=True)
        w = m.ones(3, requires_grad=True)
        y = x * 2
        z = (w * y).sum()
        y.detach_()
        with pytest.raises(RuntimeError, match="saved tensor that has been detached in-place"):
            z.backward()
        assert w.grad is None and x.grad is None
        y2 = x * 2
        e = y2.exp()
        s = (e * 1).sum()
        e.detach_()
        s.backward()  # (exp saved its output: still fine, as in torch)
        return x.grad.tolist()

    assert prog(torch) == pytest.approx(prog(gradsum), rel=1e-6)


def test_view_gets_a_new_grad_fn_after_an_unrecorded_write_to_its_base() -> None:
    # torch regenerates a grad-mode view's grad_fn once its base was written in no_grad
    # mode: the view is then outside graphs built before (autograd.grad finds it unused)
    def prog(m: Any) -> Any:
        x = m.ones(4, 2, dtype=m.float64, requires_grad=True)
        v = x.T
        y = v.pow(3)
        s = y.split(1, -1)[0]
        g0 = v.grad_fn
        with m.no_grad():
            x.zero_()
        r = m.autograd.grad(s, [v, y], m.ones(2, 1, dtype=m.float64), allow_unused=True)
        (v * 2).sum().backward()  # the new grad_fn still leads to x
        return v.grad_fn is g0, r[0] is None, r[1].tolist(), x.grad.tolist()

    assert prog(torch) == prog(gradsum)


# -- detach_ ------------------------------------------------------------------------------------
def test_detach_inplace_refuses_every_view():
    same_summary(lambda m: m.zeros(3)[0:2].detach_())  # (the base does not require grad)
    same_summary(lambda m: m.zeros(3).view(3).detach_())
    same_summary(lambda m: m.zeros(3).detach().detach_().is_leaf)


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

    assert same_summary(f) == ("raises", "RuntimeError")


def test_data_has_its_own_version_counter():
    def f(m):
        x = leaf(m, [1.0])
        y = x * x
        x.data.add_(1)  # unsafe, as in torch: the saved x is not seen to change
        y.backward()
        return x._version, x.grad

    same_summary(f)


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
