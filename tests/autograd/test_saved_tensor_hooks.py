"""Side by side with torch: saved tensor hooks (saved_tensors_hooks, save_on_cpu,
disable_saved_tensors_hooks): what pack and unpack see, nesting, errors, double backward and
custom Functions through them, and the toolkit reading graphs whose saved tensors were packed."""

from __future__ import annotations

import threading
from typing import Any

import pytest

torch = pytest.importorskip("torch", reason="the side-by-side tests compare with torch")

import gradsum  # noqa: E402
from autograd_helpers import same_rounded, tensor64  # noqa: E402


# -- saved_tensors_hooks -------------------------------------------------------------------
def test_pack_unpack_calls_and_what_they_see() -> None:
    def prog(lib: Any) -> Any:
        a = tensor64(lib, [1.0, 2.0, 3.0])
        log: list[Any] = []

        def pack(x: Any) -> Any:
            log.append(("pack", x is a, x.requires_grad, x.grad_fn is not None,
                        lib.is_grad_enabled()))
            return x

        def unpack(x: Any) -> Any:
            log.append(("unpack", lib.is_grad_enabled()))
            return x

        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            c = (a * a).exp()
        n_fwd = len(log)
        c.sum().backward()
        return log, n_fwd, a.grad

    out = same_rounded(prog)
    assert out[1] == 3


def test_nested_hooks_use_innermost_and_thread_local() -> None:
    def prog(lib: Any) -> Any:
        a = tensor64(lib, [1.0, 2.0])
        log: list[str] = []
        hooks = lib.autograd.graph.saved_tensors_hooks
        with hooks(lambda x: (log.append("outer"), x)[1], lambda x: x):
            y = a * 2.0 * a
            with hooks(lambda x: (log.append("inner"), x)[1], lambda x: x):
                z = y.sin()
            w = z * z
        seen: list[int] = []

        def other() -> None:  # another thread saves without this thread's hooks
            with hooks(lambda x: (seen.append(1), x)[1], lambda x: x):
                threading.Event().wait(0.0)

        th = threading.Thread(target=other)
        th.start()
        th.join()
        v = a.exp()
        w.sum().backward()
        return log, seen, a.grad, v.grad_fn is not None

    same_rounded(prog)


def test_packed_value_is_what_node_keeps_and_release() -> None:
    def prog(lib: Any) -> Any:
        x = tensor64(lib, [1.0, 2.0])
        packed: list[Any] = []

        def pack(t: Any) -> Any:
            p = t.detach().clone()
            packed.append(p)
            return p.tolist()

        with lib.autograd.graph.saved_tensors_hooks(pack, lambda p: lib.tensor(p,
                                                    dtype=lib.float64)):
            y = (x ** 3).sum()
        y.backward()
        try:
            y.backward()
        except RuntimeError as e:
            second = str(e)[:40]
        return x.grad, second

    same_rounded(prog)


def test_no_version_check_through_hooks() -> None:
    def prog(lib: Any) -> Any:
        x = tensor64(lib, [1.0, 2.0, 3.0])
        y = x * 1
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            z = y * y
        y.add_(1)
        z.sum().backward()
        return x.grad

    same_rounded(prog)


def test_unpack_errors() -> None:
    """An unpack hook returning a non-tensor or a tensor of another shape fails in backward with
    torch's exception types."""
    def not_tensor(lib: Any) -> Any:
        x = tensor64(lib, [1.0, 2.0])
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: 5):
            z = x * x
        z.sum().backward()

    assert same_rounded(not_tensor)[0] == "TypeError"

    def other_shape(lib: Any) -> Any:
        x = tensor64(lib, [1.0, 2.0, 3.0])
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: lib.ones(2)):
            z = x * x
        z.sum().backward()

    assert same_rounded(other_shape)[0] == "RuntimeError"

    def pack_inplace(lib: Any) -> Any:
        x = tensor64(lib, [1.0, 2.0])
        y = x * 1
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t.add_(1), lambda t: t):
            y * y

    assert same_rounded(pack_inplace) == ("RuntimeError",
                                          "A saved tensor pack hook is modifying it")


def test_double_backward_through_hooks() -> None:
    def prog(lib: Any) -> Any:
        x = tensor64(lib, [1.0, 2.0])
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t.detach().clone(),
                                                    lambda t: t):
            y = x ** 3
            e = x.exp()
        (g,) = lib.autograd.grad((y + e).sum(), x, create_graph=True)
        (g2,) = lib.autograd.grad(g.sum(), x)
        return g, g2

    same_rounded(prog)


def test_custom_function_save_for_backward_hooks() -> None:
    def prog(lib: Any) -> Any:
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx: Any, a: Any) -> Any:
                out = a * 2
                ctx.save_for_backward(a, out)
                return out

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                a, out = ctx.saved_tensors
                return g * out / a

        x = tensor64(lib, [1.0, 3.0])
        log: list[Any] = []
        with lib.autograd.graph.saved_tensors_hooks(
                lambda t: (log.append(("p", t is x)), t)[1],
                lambda t: (log.append("u"), t)[1]):
            o = F.apply(x)
        o.grad_fn.saved_tensors
        o.sum().backward()
        return log, x.grad

    same_rounded(prog)


def test_save_on_cpu() -> None:
    def prog(lib: Any) -> Any:
        x = tensor64(lib, [1.0, 2.0, 3.0])
        y = x * 1
        with lib.autograd.graph.save_on_cpu():
            z = y * y
        with lib.autograd.graph.save_on_cpu(pin_memory=True):
            w = (y * 3).sin()
        y.mul_(0)  # (no copy on the CPU without pin_memory: torch sees the new values)
        (z.sum() + w.sum()).backward()
        return x.grad

    same_rounded(prog)


def test_disable_saved_tensors_hooks() -> None:
    def inside(lib: Any) -> Any:
        g = lib.autograd.graph
        with g.disable_saved_tensors_hooks("no hooks please"), \
                g.saved_tensors_hooks(lambda t: t, lambda t: t):
            pass

    assert same_rounded(inside) == ("RuntimeError", "no hooks please")

    def active(lib: Any) -> Any:
        g = lib.autograd.graph
        with g.saved_tensors_hooks(lambda t: t, lambda t: t), \
                g.disable_saved_tensors_hooks("already active"):
            pass

    assert same_rounded(active) == ("RuntimeError", "already active")

    def restored(lib: Any) -> Any:
        g = lib.autograd.graph
        with g.disable_saved_tensors_hooks("a"):
            with g.disable_saved_tensors_hooks("b"):
                pass
            try:
                with g.saved_tensors_hooks(lambda t: t, lambda t: t):
                    pass
            except RuntimeError as e:
                msg = str(e)
        with g.saved_tensors_hooks(lambda t: t, lambda t: t):
            pass
        return msg

    assert same_rounded(restored) == "a"


def test_hooks_state_clean_after_exception() -> None:
    from gradsum.autograd import saved

    with pytest.raises(ValueError), \
            gradsum.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        raise ValueError
    assert not saved.hooks_active and not saved.hooks_state.stack
    x = gradsum.ones(2, requires_grad=True)
    assert type((x * x).grad_fn._saved[0]) is saved.SavedTensor


def test_toolkit_reads_graphs_whose_saved_tensors_were_packed() -> None:
    # a pack hook may keep any object: the toolkit's memory accounting counts only arrays
    from gradsum.toolkit import dot
    from gradsum.toolkit._hub import saved_bytes

    x = gradsum.ones(3, requires_grad=True)
    with gradsum.autograd.graph.saved_tensors_hooks(
            lambda t: ("packed", t.detach().numpy().copy()), lambda p: gradsum.tensor(p[1])):
        y = (x * x).exp().sum()
    assert dot.to_dot(y).startswith("digraph")
    assert saved_bytes(y.grad_fn.next_functions[0][0]) == 0  # (exp's output: a tuple)
    y.backward()
    assert x.grad.tolist() == pytest.approx([2 * 2.718281828] * 3, rel=1e-6)
