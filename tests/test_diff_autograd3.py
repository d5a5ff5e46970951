"""Side by side with torch: saved tensor hooks (saved_tensors_hooks, save_on_cpu,
disable_saved_tensors_hooks), register_multi_grad_hook, GradientEdge/get_gradient_edge,
increment_version, anomaly mode, autograd.Variable and utils.hooks.RemovableHandle."""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the side-by-side tests compare with torch")

import gradsum  # noqa: E402


def _norm(x: Any) -> Any:
    if isinstance(x, (torch.Tensor, gradsum.Tensor)):
        return ("T", [round(v, 5) for v in x.detach().reshape(-1).tolist()], x.requires_grad)
    if isinstance(x, (list, tuple)):
        return type(x)(_norm(v) for v in x)
    if isinstance(x, dict):
        return {k: _norm(v) for k, v in x.items()}
    return x


def _run(lib: Any, program: Callable[[Any], Any]) -> Any:
    try:
        return _norm(program(lib))
    except Exception as e:  # (compared by type and first words)
        return (type(e).__name__, str(e)[:40])


def _same(program: Callable[[Any], Any]) -> Any:
    a, b = _run(gradsum, program), _run(torch, program)
    assert a == b, (a, b)
    return a


def _t(lib: Any, values: Any, rg: bool = True) -> Any:
    return lib.tensor(values, dtype=lib.float64, requires_grad=rg)


# -- saved_tensors_hooks -------------------------------------------------------------------
def test_pack_unpack_calls_and_what_they_see() -> None:
    def prog(lib: Any) -> Any:
        a = _t(lib, [1.0, 2.0, 3.0])
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

    out = _same(prog)
    assert out[1] == 3


def test_nested_hooks_use_innermost_and_thread_local() -> None:
    def prog(lib: Any) -> Any:
        a = _t(lib, [1.0, 2.0])
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

    _same(prog)


def test_packed_value_is_what_node_keeps_and_release() -> None:
    def prog(lib: Any) -> Any:
        x = _t(lib, [1.0, 2.0])
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

    _same(prog)


def test_no_version_check_through_hooks() -> None:
    def prog(lib: Any) -> Any:
        x = _t(lib, [1.0, 2.0, 3.0])
        y = x * 1
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            z = y * y
        y.add_(1)
        z.sum().backward()
        return x.grad

    _same(prog)


def test_unpack_errors() -> None:
    def not_tensor(lib: Any) -> Any:
        x = _t(lib, [1.0, 2.0])
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: 5):
            z = x * x
        z.sum().backward()

    assert _same(not_tensor)[0] == "TypeError"

    def other_shape(lib: Any) -> Any:
        x = _t(lib, [1.0, 2.0, 3.0])
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: lib.ones(2)):
            z = x * x
        z.sum().backward()

    assert _same(other_shape)[0] == "RuntimeError"

    def pack_inplace(lib: Any) -> Any:
        x = _t(lib, [1.0, 2.0])
        y = x * 1
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t.add_(1), lambda t: t):
            y * y

    assert _same(pack_inplace) == ("RuntimeError", "A saved tensor pack hook is modifying it")


def test_double_backward_through_hooks() -> None:
    def prog(lib: Any) -> Any:
        x = _t(lib, [1.0, 2.0])
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t.detach().clone(),
                                                    lambda t: t):
            y = x ** 3
            e = x.exp()
        (g,) = lib.autograd.grad((y + e).sum(), x, create_graph=True)
        (g2,) = lib.autograd.grad(g.sum(), x)
        return g, g2

    _same(prog)


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

        x = _t(lib, [1.0, 3.0])
        log: list[Any] = []
        with lib.autograd.graph.saved_tensors_hooks(
                lambda t: (log.append(("p", t is x)), t)[1],
                lambda t: (log.append("u"), t)[1]):
            o = F.apply(x)
        o.grad_fn.saved_tensors
        o.sum().backward()
        return log, x.grad

    _same(prog)


def test_save_on_cpu() -> None:
    def prog(lib: Any) -> Any:
        x = _t(lib, [1.0, 2.0, 3.0])
        y = x * 1
        with lib.autograd.graph.save_on_cpu():
            z = y * y
        with lib.autograd.graph.save_on_cpu(pin_memory=True):
            w = (y * 3).sin()
        y.mul_(0)  # (no copy on the CPU without pin_memory: torch sees the new values)
        (z.sum() + w.sum()).backward()
        return x.grad

    _same(prog)


def test_disable_saved_tensors_hooks() -> None:
    def inside(lib: Any) -> Any:
        g = lib.autograd.graph
        with g.disable_saved_tensors_hooks("no hooks please"), \
                g.saved_tensors_hooks(lambda t: t, lambda t: t):
            pass

    assert _same(inside) == ("RuntimeError", "no hooks please")

    def active(lib: Any) -> Any:
        g = lib.autograd.graph
        with g.saved_tensors_hooks(lambda t: t, lambda t: t), \
                g.disable_saved_tensors_hooks("already active"):
            pass

    assert _same(active) == ("RuntimeError", "already active")

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

    assert _same(restored) == "a"


def test_hooks_state_clean_after_exception() -> None:
    from gradsum.autograd import saved

    with pytest.raises(ValueError), \
            gradsum.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        raise ValueError
    assert not saved.hooks_active and not saved.hooks_state.stack
    x = gradsum.ones(2, requires_grad=True)
    assert type((x * x).grad_fn._saved[0]) is saved.SavedTensor


# -- multi-grad hooks, gradient edges, increment_version ------------------------------------
def test_multi_grad_hook_all() -> None:
    def prog(lib: Any) -> Any:
        a = _t(lib, [1.0, 2.0])
        b = _t(lib, [3.0, 4.0])
        c = a * b
        d = a * b
        calls: list[Any] = []
        h = lib.autograd.graph.register_multi_grad_hook(
            (a, b, c, d), lambda gs: calls.append([None if g is None else g.tolist()
                                                   for g in gs]))
        c.sum().backward(retain_graph=True)
        c.sum().backward(inputs=(a,), retain_graph=True)
        (c + d).sum().backward(inputs=(b,), retain_graph=True)
        try:  # (torch refuses a leaf's sink in autograd.grad)
            lib.autograd.grad((c + d).sum(), (b,), retain_graph=True)
        except RuntimeError as e:
            calls.append(str(e)[:60])
        h.remove()
        c.sum().backward()
        return calls

    out = _same(prog)
    assert len(out) == 4


def test_multi_grad_hook_any_and_bad_mode() -> None:
    def prog(lib: Any) -> Any:
        a = _t(lib, [1.0, 2.0])
        b = _t(lib, [3.0, 4.0])
        calls: list[Any] = []
        lib.autograd.graph.register_multi_grad_hook(
            (a, b), lambda g: calls.append(g.tolist()), mode="any")
        (a * b).sum().backward()
        (a * 2).sum().backward()
        return calls

    _same(prog)

    def bad(lib: Any) -> Any:
        lib.autograd.graph.register_multi_grad_hook((_t(lib, [1.0]),), print, mode="some")

    _same(bad)


def test_gradient_edge() -> None:
    def prog(lib: Any) -> Any:
        x = _t(lib, [1.0, 2.0])
        h = x * 3
        y = (h * h).sum()
        G = lib.autograd.graph
        e = G.get_gradient_edge(h)
        (gh,) = lib.autograd.grad(y, e, retain_graph=True)
        (gx, gh2) = lib.autograd.grad(y, (G.get_gradient_edge(x), e), retain_graph=True)
        y.backward(inputs=G.get_gradient_edge(x), retain_graph=True)
        # an edge as an output, with its gradient given
        (gx2,) = lib.autograd.grad(e, x, grad_outputs=lib.ones(2, dtype=lib.float64))
        return (gh, gx, gh2, x.grad, gx2, e.node.name(), e.output_nr,
                G.get_gradient_edge(x).node.name().split("::")[-1])

    _same(prog)

    def no_grad(lib: Any) -> Any:
        lib.autograd.graph.get_gradient_edge(lib.ones(2))

    _same(no_grad)

    def materialize(lib: Any) -> Any:
        x = _t(lib, [1.0])
        z = _t(lib, [1.0])
        y = (x * 2).sum()
        lib.autograd.grad(y, (x, lib.autograd.graph.get_gradient_edge(z)),
                          materialize_grads=True)

    _same(materialize)


def test_increment_version() -> None:
    def prog(lib: Any) -> Any:
        x = _t(lib, [1.0, 2.0])
        y = x * 1
        z = y * y
        v0 = y._version
        lib.autograd.graph.increment_version(y)
        lib.autograd.graph.increment_version([y, x])
        try:
            z.sum().backward()
        except RuntimeError as e:
            err = str(e)[:50]
        return v0, y._version, x._version, err

    _same(prog)


# -- anomaly mode -----------------------------------------------------------------------------
def _anomaly_prog(lib: Any) -> Any:
    x = _t(lib, [0.0, 1.0])
    y = x.sqrt() * 0.0
    y.sum().backward()


def test_anomaly_nan_and_flags() -> None:
    def prog(lib: Any) -> Any:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with lib.autograd.detect_anomaly():
                flags = (lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled())
                try:
                    _anomaly_prog(lib)
                except RuntimeError as e:
                    err = str(e)
        msgs = [str(m.message) for m in w]
        return (flags, err, msgs[0], msgs[1].split("\n")[0],
                lib.is_anomaly_enabled(), any("y = x.sqrt()" in m for m in msgs))

    out = _same(prog)
    assert out[1] == "Function 'SqrtBackward0' returned nan values in its 0th output."


def test_anomaly_check_nan_off_and_set_detect_anomaly() -> None:
    def prog(lib: Any) -> Any:
        with lib.autograd.set_detect_anomaly(True, check_nan=False):
            flags = (lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled())
            x = _t(lib, [0.0, 1.0])
            (x.sqrt() * 0.0).sum().backward()
        lib.autograd.set_detect_anomaly(False)
        return flags, lib.is_anomaly_enabled(), [str(v) for v in x.grad.tolist()]

    _same(prog)


def test_anomaly_decorator_and_backward_error_traceback() -> None:
    def prog(lib: Any) -> Any:
        class Bad(lib.autograd.Function):
            @staticmethod
            def forward(ctx: Any, a: Any) -> Any:
                return a * 2

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                raise ValueError("boom")

        def run() -> Any:
            with lib.autograd.detect_anomaly(check_nan=False):
                x = _t(lib, [1.0])
                out = Bad.apply(x)  # the forward line the warning points to
                out.sum().backward()

        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                run()
            except ValueError as e:
                err = str(e)
        msgs = [str(m.message) for m in w if "Error detected" in str(m.message)]
        return (err, msgs[0].split("\n")[0], "out = Bad.apply(x)" in msgs[0],
                all(m.category is UserWarning for m in w), lib.is_anomaly_enabled())

    _same(prog)


def test_detect_anomaly_is_not_a_decorator() -> None:
    def prog(lib: Any) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lib.autograd.detect_anomaly()(print)

    assert _same(prog)[0] == "TypeError"


def test_anomaly_off_costs_nothing() -> None:
    from gradsum.autograd.graph import Node

    plain = Node.__init__
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with gradsum.autograd.detect_anomaly():
            assert Node.__init__ is not plain
            y = gradsum.ones(1, requires_grad=True) * 2
            assert "traceback_" in y.grad_fn.metadata
    assert Node.__init__ is plain
    z = gradsum.ones(1, requires_grad=True) * 2
    assert "traceback_" not in z.grad_fn.metadata


# -- Variable, RemovableHandle ----------------------------------------------------------------
def test_variable() -> None:
    def prog(lib: Any) -> Any:
        V = lib.autograd.Variable
        t = lib.ones(2)
        v = V(t, requires_grad=True)
        w = V(t)
        y = V(v * 2, requires_grad=True)
        v2 = V(t)
        v2.add_(1)
        return (type(v).__name__, v.requires_grad, v.is_leaf, w is t, w.requires_grad,
                y.is_leaf, y.grad_fn is None, isinstance(t, V), V().shape == (0,), t)

    _same(prog)

    def bad(lib: Any) -> Any:
        lib.autograd.Variable(3)

    _same(bad)


def test_removable_handle_alias() -> None:
    import torch.utils.hooks

    import gradsum.utils.hooks

    h = gradsum.ones(1, requires_grad=True).register_hook(lambda g: None)
    th = torch.ones(1, requires_grad=True).register_hook(lambda g: None)
    assert isinstance(h, gradsum.utils.hooks.RemovableHandle)
    assert isinstance(th, torch.utils.hooks.RemovableHandle)
    mh = gradsum.autograd.graph.register_multi_grad_hook(
        (gradsum.ones(1, requires_grad=True),), print)
    assert isinstance(mh, gradsum.utils.hooks.RemovableHandle)


def test_gradcheck_on_non_contiguous_and_overlapping_inputs() -> None:
    # a transposed leaf is perturbed in place element by element (no flat copy); an expanded
    # input (stride 0) is refused with torch's RuntimeError
    base = np.random.default_rng(0).standard_normal((3, 4))
    for m in (torch, gradsum):
        a = m.tensor(base).T.detach().requires_grad_()
        assert not a.is_contiguous()
        assert m.autograd.gradcheck(lambda t: (t * t).sum(0), (a,))
        assert m.autograd.gradgradcheck(lambda t: (t * t * t).sum(0), (a,))
        b = m.tensor([2.0], dtype=m.float64).expand(3).detach().requires_grad_()
        with pytest.raises(RuntimeError, match="has a dimension with stride 0"):
            m.autograd.gradcheck(lambda t: t * 2, (b,))


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
