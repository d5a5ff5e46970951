"""Side by side with torch: tensor hooks (dtype changes refused, run with None where no gradient
arrives, no replacing a None gradient), post-accumulate-grad hooks, node pre- and post-hooks
(their results checked, None slots, edges outside inputs) and AccumulateGrad's node hooks."""

from __future__ import annotations

import pytest

from diff_helpers import leaf, same_summary

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)


# -- tensor hooks ---------------------------------------------------------------------------------
def test_tensor_hook_may_not_change_dtype():
    def f(m):
        x = leaf(m, [1.0, 2.0])
        x.register_hook(lambda g: g.double())
        (x * 3).sum().backward()

    assert same_summary(f) == ("raises", "RuntimeError")


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

    same_summary(f)


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

    assert same_summary(f) == ("raises", "RuntimeError")


@pytest.mark.parametrize("ret", ["int", "tensor"])
def test_post_accumulate_grad_hook_must_return_none(ret):
    def f(m):
        x = leaf(m, [1.0, 2.0])
        x.register_post_accumulate_grad_hook(lambda t: 5 if ret == "int" else t * 2)
        (x * 3).sum().backward()

    same_summary(f)


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

    same_summary(f)


def test_node_post_hook_cannot_fill_a_none_slot():
    def f(m):
        x, w = leaf(m, [1.0, 2.0]), m.tensor([3.0, 4.0])
        h = x * w
        h.grad_fn.register_hook(lambda gi, go: (gi[0] * 10, gi[0]))
        h.sum().backward()

    assert same_summary(f) == ("raises", "RuntimeError")


def test_node_post_hook_sees_none_for_edges_outside_inputs():
    def f(m):
        x, w = leaf(m, [1.0, 2.0]), leaf(m, [3.0, 4.0])
        h = x * w
        seen = []
        h.grad_fn.register_hook(lambda gi, go: seen.append([g is None for g in gi]))
        h.sum().backward(inputs=[x])
        return seen, x.grad, w.grad

    same_summary(f)


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

    same_summary(f)
