"""Every rule of SEMANTICS.md sections 1-8, run in torch and gradsum side by side.

Each test runs the same program on both libraries (``lib`` is the module, gradsum or torch)
and compares values and behaviour: None-ness of ``.grad``, object identity where the contract
says in place, exception types.
"""

from __future__ import annotations

import gc
import itertools
import weakref

import numpy as np
import pytest

import gradsum

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

LIBS = [gradsum, torch]


def arr(t):
    if t is None:
        return None
    return t.detach().numpy().copy()


def both(program):
    """Run ``program(lib)`` on gradsum and torch; return both results."""
    return program(gradsum), program(torch)


def assert_same(a, b, rtol=1e-6, atol=1e-7):
    """Compare nested results: tensors by value, None-ness, exceptions by type."""
    if isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            assert_same(x, y, rtol, atol)
        return
    if a is None or b is None:
        assert a is None and b is None, (a, b)
        return
    if isinstance(a, (bool, int, float, str, type)):
        assert a == b, (a, b)
        return
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)
        return
    np.testing.assert_allclose(arr(a), arr(b), rtol=rtol, atol=atol)


def raises_type(fn):
    try:
        fn()
    except Exception as e:
        return type(e)
    return None


# -- 1. Accumulation ---------------------------------------------------------------------------
def test_backward_adds_never_replaces():
    def prog(lib):
        w = lib.tensor([1.0], requires_grad=True)
        (w * 2).sum().backward()
        first = arr(w.grad)
        (w * 3).sum().backward()
        return first, arr(w.grad)

    assert_same(*both(prog))
    assert gradsum_result_equals(prog, [[2.0], [5.0]])


def gradsum_result_equals(prog, expected):
    got = prog(gradsum)
    return all(np.allclose(g, e) for g, e in zip(got, expected))


def test_first_grad_stored_then_added_in_place_same_object():
    for lib in LIBS:
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        (w * w).sum().backward()
        g = w.grad
        held = g  # a reference held elsewhere sees the sum
        (w * 3).sum().backward()
        assert w.grad is g
        np.testing.assert_allclose(arr(held), [5.0, 7.0])


def test_create_graph_accumulates_out_of_place():
    for lib in LIBS:
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        (w * w).sum().backward(create_graph=True)
        g1 = w.grad
        assert g1.requires_grad
        (w * w).sum().backward(create_graph=True)
        assert w.grad is not g1
        np.testing.assert_allclose(arr(w.grad), [4.0, 8.0])
        np.testing.assert_allclose(arr(g1), [2.0, 4.0])  # the old object is untouched
        w.grad = None


def test_user_gradient_buffer_not_taken_over():
    for lib in LIBS:
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        g = lib.ones(2)
        (w * 1).backward(g)
        assert w.grad is not g
        (w * 1).backward(g)  # in-place accumulation must not write into the user's tensor
        np.testing.assert_allclose(arr(g), [1.0, 1.0])
        np.testing.assert_allclose(arr(w.grad), [2.0, 2.0])


def test_fresh_parameter_gradients_are_taken_over_not_copied(monkeypatch):
    """Note "Taking over a gradient buffer": a leaf's first gradient is stored as is when
    nothing else holds its buffer. In an MLP's backward no sink copies, also when a fresh
    gradient reuses the id of a dead one that was passed through a node (which is shared
    while it lives)."""
    copies: list = []
    clone = gradsum.Tensor.clone
    monkeypatch.setattr(gradsum.Tensor, "clone",
                        lambda self, *a, **k: copies.append(self.shape) or clone(self, *a, **k))
    rng = np.random.default_rng(0)
    sizes = [64, 128, 128, 10]
    params = [(gradsum.tensor(rng.standard_normal((m, n)).astype(np.float32) * 0.1,
                              requires_grad=True),
               gradsum.tensor(np.zeros(n, np.float32), requires_grad=True))
              for m, n in itertools.pairwise(sizes)]
    x = gradsum.tensor(rng.standard_normal((32, 64)).astype(np.float32))
    y = gradsum.tensor(rng.integers(0, 10, 32))
    for _ in range(20):
        h = x
        for i, (w, b) in enumerate(params):
            h = h @ w + b
            h = h.relu() if i < 2 else h
        (-gradsum.log_softmax(h, 1).gather(1, y.unsqueeze(1)).mean()).backward()
        for w, b in params:
            w.grad = b.grad = None
    assert copies == []


def test_pass_through_gradient_not_aliased_between_leaves():
    for lib in LIBS:
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        (a + b).sum().backward()
        (a * 2).sum().backward()  # in-place add into a.grad must not change b.grad
        np.testing.assert_allclose(arr(a.grad), [3.0, 3.0])
        np.testing.assert_allclose(arr(b.grad), [1.0, 1.0])


def test_grad_shape_and_dtype_follow_leaf_under_broadcast():
    def prog(lib):
        a = lib.ones(3, 1, dtype=lib.float64, requires_grad=True)
        b = lib.ones(4, dtype=lib.float64, requires_grad=True)
        c = lib.ones((), dtype=lib.float64, requires_grad=True)
        (a * b * c).sum().backward()
        return [tuple(x.grad.shape) for x in (a, b, c)], arr(a.grad), arr(b.grad), arr(c.grad)

    g, t = both(prog)
    assert g[0] == [tuple(s) for s in t[0]]
    assert_same(g[1:], t[1:])
    a = gradsum.ones(3, 1, dtype=gradsum.float64, requires_grad=True)
    (a * gradsum.ones(4)).sum().backward()
    assert a.grad.dtype is gradsum.float64


def test_multiple_paths_sum_weight_tying():
    def prog(lib):
        lib.manual_seed(0)
        emb = lib.tensor(np.arange(12.0).reshape(4, 3) / 10, requires_grad=True)
        tokens = lib.tensor([0, 2, 2, 1])
        h = emb[tokens]  # input embedding
        logits = h @ emb.T  # output projection with the same matrix
        loss = lib.log_softmax(logits, 1).sum()
        loss.backward()
        return arr(emb.grad)

    assert_same(*both(prog), rtol=1e-5, atol=1e-6)


def test_no_seam_between_one_and_two_backwards():
    for lib in LIBS:
        w = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        h = w.tanh()
        a = (h * h).sum()
        b = (h * 3).sum()
        a.backward(retain_graph=True)
        b.backward()
        two = arr(w.grad)
        w.grad = None
        h = w.tanh()
        ((h * h).sum() + (h * 3).sum()).backward()
        np.testing.assert_allclose(two, arr(w.grad), rtol=1e-6)


def test_only_leaves_get_grad_and_retain_grad():
    def prog(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3
        z = x * 4
        y.retain_grad()
        (y * z).sum().backward(retain_graph=True)
        first = arr(y.grad)
        g1 = y.grad
        (y * z).sum().backward()
        return (z.grad is None, y.retains_grad, z.retains_grad, x.is_leaf, y.is_leaf, first,
                arr(y.grad), y.grad is g1)

    g, t = both(prog)
    assert g[0] is True and t[0] is True
    assert g[1:5] == t[1:5]
    assert_same(g[5:7], t[5:7])
    assert g[7] == t[7]  # retained grads accumulate out of place in torch


def test_backward_inputs_selects_targets():
    def prog(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        unused = lib.tensor([1.0], requires_grad=True)
        h = a * b
        loss = (h * h).sum()
        loss.backward(inputs=[a, h, unused], retain_graph=True)
        return arr(a.grad), b.grad is None, arr(h.grad), unused.grad is None

    assert_same(*both(prog))


def test_backward_inputs_empty_raises():
    for lib in LIBS:
        a = lib.tensor([1.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="cannot be empty"):
            (a * 2).sum().backward(inputs=[])


# -- 2. Clearing -------------------------------------------------------------------------------
def test_grad_none_then_fresh_allocation():
    for lib in LIBS:
        w = lib.tensor([1.0], requires_grad=True)
        (w * 2).sum().backward()
        old = w.grad
        w.grad = None
        (w * 3).sum().backward()
        assert w.grad is not old
        np.testing.assert_allclose(arr(w.grad), [3.0])
        np.testing.assert_allclose(arr(old), [2.0])


def test_zero_keeps_identity():
    for lib in LIBS:
        w = lib.tensor([1.0], requires_grad=True)
        (w * 2).sum().backward()
        g = w.grad
        g.zero_()
        (w * 3).sum().backward()
        assert w.grad is g
        np.testing.assert_allclose(arr(g), [3.0])


def test_forgetting_to_clear_sums_steps():
    for lib in LIBS:
        w = lib.tensor([1.0], requires_grad=True)
        for k in range(1, 4):
            (w * k).sum().backward()
        np.testing.assert_allclose(arr(w.grad), [6.0])


# -- 4. retain_graph ---------------------------------------------------------------------------
def test_second_backward_through_freed_graph_raises():
    for lib in LIBS:
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        y.backward()
        with pytest.raises(RuntimeError, match="Trying to backward through the graph a second"):
            y.backward()


def test_retain_graph_allows_second_and_still_accumulates():
    for lib in LIBS:
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        y.backward(retain_graph=True)
        y.backward()
        np.testing.assert_allclose(arr(x.grad), [4.0, 8.0])


def test_graph_without_saved_tensors_can_rerun():
    for lib in LIBS:
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = (x + 1).sum()
        y.backward()
        y.backward()  # nothing was saved, nothing to free: torch allows it
        np.testing.assert_allclose(arr(x.grad), [2.0, 2.0])


def test_failed_second_backward_leaves_grads_untouched():
    x = gradsum.tensor([1.0, 2.0], requires_grad=True)
    w = gradsum.tensor([3.0, 4.0], requires_grad=True)
    y = (x * w).sum() + (x + 1).sum()
    y.backward()
    before_x, before_w = arr(x.grad), arr(w.grad)
    with pytest.raises(RuntimeError):
        y.backward()
    np.testing.assert_array_equal(arr(x.grad), before_x)
    np.testing.assert_array_equal(arr(w.grad), before_w)


def test_saved_tensors_freed_after_backward():
    x = gradsum.randn(1000, requires_grad=True)
    h = x.exp()
    node = h.grad_fn
    y = (h * h).sum()
    mul = y.grad_fn.next_functions[0][0]
    saved = mul._saved
    y.backward
    assert saved and all(s._tensor is not None for s in saved)
    y.backward()
    assert node._released and mul._released and mul._saved is None
    assert all(s._tensor is None and s._array is None for s in saved)


def test_graph_memory_released_tracemalloc():
    import tracemalloc

    x = gradsum.randn(200_000, requires_grad=True)
    tracemalloc.start()
    base, _ = tracemalloc.get_traced_memory()
    y = ((x.exp() * x).sin() * 2).sum()
    y.backward()
    del y
    gc.collect()
    after, _ = tracemalloc.get_traced_memory()
    # Only x.grad (800 KB) remains; the graph's saved arrays (several MB) are gone.
    assert after - base < 1_200_000, after - base
    x.grad_before = x.grad
    cur_before, _ = tracemalloc.get_traced_memory()
    y = ((x.exp() * x).sin() * 2).sum()
    y.backward()
    del y
    gc.collect()
    cur_after, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert x.grad is x.grad_before  # accumulated in place: no new gradient buffer kept
    assert cur_after - cur_before < 100_000


# -- 5. create_graph ---------------------------------------------------------------------------
def test_create_graph_second_derivative_and_hvp():
    def prog(lib):
        x = lib.tensor([0.3, -0.7, 1.1], dtype=lib.float64, requires_grad=True)
        y = (x.sin() * x * x).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        v = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)
        (hvp,) = lib.autograd.grad((g * v).sum(), x)
        return arr(g), arr(hvp), g.requires_grad

    g, t = both(prog)
    assert_same(g[:2], t[:2], rtol=1e-10, atol=1e-12)
    assert g[2] == t[2] is True


def test_create_graph_grad_carries_graph():
    for lib in LIBS:
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        (x.pow(3)).sum().backward(create_graph=True)
        assert x.grad.requires_grad and x.grad.grad_fn is not None
        (gg,) = lib.autograd.grad(x.grad.sum(), x)
        np.testing.assert_allclose(arr(gg), [6.0, 12.0])
        x.grad = None


def test_retain_graph_defaults_to_create_graph():
    for lib in LIBS:
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        y.backward(create_graph=True)
        y.backward()  # graph retained by create_graph=True
        np.testing.assert_allclose(arr(x.grad), [4.0, 8.0])
        x.grad = None


# -- 6. autograd.grad --------------------------------------------------------------------------
def test_autograd_grad_leaves_grad_untouched():
    for lib in LIBS:
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        (x * 5).sum().backward()
        before = x.grad
        snapshot = arr(before)
        (g,) = lib.autograd.grad((x * x).sum(), x)
        assert x.grad is before
        np.testing.assert_array_equal(arr(x.grad), snapshot)
        np.testing.assert_allclose(arr(g), [2.0, 4.0])
        y = lib.tensor([1.0], requires_grad=True)
        lib.autograd.grad((y * 2).sum(), y)
        assert y.grad is None


def test_autograd_grad_unused_inputs():
    def prog(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        z = lib.tensor([3.0], requires_grad=True)
        err = raises_type(lambda: lib.autograd.grad((x * 2).sum(), [x, z]))
        gx, gz = lib.autograd.grad((x * 2).sum(), [x, z], allow_unused=True)
        mx, mz = lib.autograd.grad((x * 2).sum(), [x, z], materialize_grads=True)
        return err, arr(gx), gz, arr(mx), arr(mz)

    g, t = both(prog)
    assert g[0] is RuntimeError and t[0] is RuntimeError
    assert_same(g[1:], t[1:])


def test_autograd_grad_nonleaf_input_and_grad_outputs():
    def prog(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        h = x * x
        y = h.exp()
        go = lib.tensor([1.0, 0.5, 0.25])
        gh, gx = lib.autograd.grad(y, [h, x], grad_outputs=go)
        return arr(gh), arr(gx), x.grad is None

    assert_same(*both(prog), rtol=1e-5)


def test_gradient_penalty_does_not_contaminate_grad():
    def prog(lib):
        w = lib.tensor([0.5, -0.25], requires_grad=True)
        x = lib.tensor([[1.0, 2.0], [3.0, -1.0]], requires_grad=True)
        out = (x @ w).tanh().sum()
        (gx,) = lib.autograd.grad(out, x, create_graph=True)
        penalty = (gx.norm() - 1) ** 2
        loss = out + penalty
        loss.backward()
        return arr(w.grad), arr(x.grad)

    assert_same(*both(prog), rtol=1e-5, atol=1e-6)


# -- 7. hooks, modes, in-place -----------------------------------------------------------------
def test_leaf_hook_sees_summed_grad_once_and_replacement_used():
    def prog(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        seen = []

        def hook(g):
            seen.append(arr(g))
            return g * 10

        h = x.register_hook(hook)
        (x * 2 + x * 3).sum().backward()
        (g,) = lib.autograd.grad((x * x).sum(), x)
        h.remove()
        (x * 1).sum().backward()
        return seen, arr(x.grad), arr(g)

    g, t = both(prog)
    assert len(g[0]) == len(t[0]) == 2
    assert_same(g[0], t[0])
    assert_same(g[1:], t[1:])


def test_nonleaf_hook_and_order():
    def prog(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        order = []
        y.register_hook(lambda g: order.append("first") or g + 1)
        y.register_hook(lambda g: order.append("second") or None)
        y.retain_grad()
        (y * y).sum().backward()
        return order, arr(y.grad), arr(x.grad)

    g, t = both(prog)
    assert g[0] == t[0]
    assert_same(g[1:], t[1:])


def test_post_accumulate_grad_hook():
    def prog(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.tensor([1.0, 2.0], requires_grad=True)
        calls = []
        x.register_post_accumulate_grad_hook(lambda t: calls.append(("x", arr(t.grad))))
        y.register_post_accumulate_grad_hook(lambda t: calls.append(("y", arr(t.grad))))
        (x * y).sum().backward(inputs=[x])
        lib.autograd.grad((x * 3).sum(), x)
        (x * 3).sum().backward()
        err = raises_type(lambda: (x * 2).register_post_accumulate_grad_hook(lambda t: None))
        return [c[0] for c in calls], [c[1] for c in calls], err

    g, t = both(prog)
    assert g[0] == t[0] == ["x", "x"]
    assert_same(g[1], t[1])
    assert g[2] is t[2] is RuntimeError


def test_hook_handle_remove():
    for lib in LIBS:
        x = lib.tensor([1.0], requires_grad=True)
        h = x.register_hook(lambda g: g * 100)
        h.remove()
        (x * 2).sum().backward()
        np.testing.assert_allclose(arr(x.grad), [2.0])


def test_grad_modes_context_and_decorator():
    for lib in LIBS:
        x = lib.tensor([1.0], requires_grad=True)
        with lib.no_grad():
            assert not (x * 2).requires_grad
            with lib.enable_grad():
                assert (x * 2).requires_grad
        with lib.set_grad_enabled(False):
            assert not (x * 2).requires_grad
        assert (x * 2).requires_grad

        @lib.no_grad()
        def f(t):
            return t * 2

        assert not f(x).requires_grad
        assert lib.is_grad_enabled()


def test_grad_mode_is_thread_local():
    import threading

    for lib in LIBS:
        seen = {}

        def worker(lib=lib, seen=seen):
            seen["enabled"] = lib.is_grad_enabled()

        with lib.no_grad():
            th = threading.Thread(target=worker)
            th.start()
            th.join()
        assert seen["enabled"] is True


def test_inplace_modified_saved_tensor_raises():
    for lib in LIBS:
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 1
        z = y * y
        y.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.sum().backward()


def test_inplace_error_names_versions():
    x = gradsum.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    z = y.exp()  # saves its output
    z.mul_(2)
    with pytest.raises(RuntimeError) as e:
        z.sum().backward()
    msg = str(e.value)
    assert "is at version 1; expected version 0" in msg and "ExpBackward0" in msg


def test_only_saved_tensors_trigger_version_error():
    def prog(lib):
        x = lib.tensor([1.0, 2.0])  # does not require grad: saved (needed for w's grad)
        w = lib.tensor([3.0, 4.0], requires_grad=True)
        w2 = w * 1
        y = (x * w2).sum()
        w2.add_(1)  # w2 is not saved (x's grad is not needed): no error
        y.backward()
        x2 = lib.tensor([1.0, 2.0])
        y2 = (x2 * w).sum()
        x2.add_(1)  # x2 is saved: error
        return arr(w.grad), raises_type(y2.backward)

    g, t = both(prog)
    assert_same(g[0], t[0])
    assert g[1] is t[1] is RuntimeError


def test_version_counter_bumps():
    def version(t):  # gradsum keeps the counter in a one-element list shared with views
        return t._version

    def prog(lib):
        x = lib.zeros(3)
        v = [version(x)]
        x.add_(1)
        v.append(version(x))
        x[0] = 2
        v.append(version(x))
        x.mul_(2).zero_()
        v.append(version(x))
        view = x[1:]
        view.fill_(1)
        v.append(version(x))
        v.append(version(view))
        return v

    g = prog(gradsum)
    t = prog(torch)
    assert g == t


def test_inplace_on_leaf_requiring_grad_raises_outside_no_grad():
    for lib in LIBS:
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            w.add_(1)
        with pytest.raises(RuntimeError, match="view of a leaf Variable"):
            w[0:1].mul_(2)
        with lib.no_grad():
            w.add_(1)
        np.testing.assert_allclose(arr(w), [2.0, 3.0])


# -- 8. errors ---------------------------------------------------------------------------------
ERROR_CASES = {
    "non_scalar_without_gradient": lambda lib: (
        lib.tensor([1.0, 2.0], requires_grad=True) * 2
    ).backward(),
    "no_requires_grad": lambda lib: lib.ones(2).sum().backward(),
    "gradient_shape_mismatch": lambda lib: (
        lib.tensor([1.0, 2.0], requires_grad=True) * 2
    ).backward(lib.ones(3)),
    "grad_outputs_shape_mismatch": lambda lib: lib.autograd.grad(
        lib.tensor([1.0, 2.0], requires_grad=True) * 2,
        [lib.tensor([1.0], requires_grad=True)], grad_outputs=[lib.ones(1)]),
    "input_not_requiring_grad": lambda lib: lib.autograd.grad(
        (lib.tensor([1.0], requires_grad=True) * 2).sum(), [lib.ones(1)]),
    "grad_assign_shape": lambda lib: setattr(
        lib.tensor([1.0, 2.0], requires_grad=True), "grad", lib.ones(3)),
    "grad_assign_dtype": lambda lib: setattr(
        lib.tensor([1.0, 2.0], requires_grad=True), "grad", lib.ones(2, dtype=lib.float64)),
    "int_requires_grad": lambda lib: lib.tensor([1, 2]).requires_grad_(),
    "nonleaf_requires_grad_false": lambda lib: setattr(
        lib.tensor([1.0], requires_grad=True) * 2, "requires_grad", False),
    "broadcast_mismatch": lambda lib: lib.ones(2, 3) + lib.ones(3, 2),
    "matmul_mismatch": lambda lib: lib.ones(2, 3) @ lib.ones(2, 3),
    "matmul_dtype": lambda lib: lib.ones(2, 3) @ lib.ones(3, 2, dtype=lib.float64),
    "inplace_cast": lambda lib: lib.ones(2, dtype=lib.int64).add_(lib.ones(2)),
    "numpy_requires_grad": lambda lib: lib.ones(2, requires_grad=True).numpy(),
    "item_many": lambda lib: lib.ones(2).item(),
    "bool_many": lambda lib: bool(lib.ones(2)),
    "dim_out_of_range": lambda lib: lib.ones(2, 3).sum(dim=2),
    "index_out_of_range": lambda lib: lib.ones(2, 3)[2],
    "view_non_contiguous": lambda lib: lib.ones(2, 3).t().view(6),
    "reshape_invalid": lambda lib: lib.ones(2, 3).reshape(4),
    "cat_mismatch": lambda lib: lib.cat([lib.ones(2, 3), lib.ones(2, 4)], 0),
    "scalar_out_grad_shape": lambda lib: (
        lib.tensor([1.0, 2.0], requires_grad=True).sum()
    ).backward(lib.ones(1)),
}


@pytest.mark.parametrize("case", sorted(ERROR_CASES))
def test_error_types_match_torch(case):
    prog = ERROR_CASES[case]
    g = raises_type(lambda: prog(gradsum))
    t = raises_type(lambda: prog(torch))
    assert t is not None, f"torch did not raise for {case}"
    assert g is t, f"{case}: gradsum raised {g}, torch raised {t}"


def test_error_messages_three_part():
    x = gradsum.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError) as e:
        (x * 2).backward()
    msg = str(e.value)
    assert msg.startswith("grad can be implicitly created only for scalar outputs")
    assert "(2,)" in msg and "gradient=" in msg
    with pytest.raises(RuntimeError) as e:
        gradsum.ones(2, 3) + gradsum.ones(3, 2)
    assert "(2, 3)" in str(e.value) and "(3, 2)" in str(e.value)


def test_failed_backward_changes_no_grad():
    x = gradsum.tensor([1.0, 2.0], requires_grad=True)
    w = gradsum.tensor([1.0, 1.0], requires_grad=True)
    (x * w).sum().backward()
    gx, gw = x.grad, w.grad
    snap = (arr(gx), arr(gw))
    y = x * 1
    z = (y * w).sum() + (x * 3).sum()
    y.add_(1)  # w's rule needs y: the version check fails before anything is written
    with pytest.raises(RuntimeError):
        z.backward()
    with pytest.raises(RuntimeError):
        (x * w).backward(gradsum.ones(3))
    assert x.grad is gx and w.grad is gw
    np.testing.assert_array_equal(arr(x.grad), snap[0])
    np.testing.assert_array_equal(arr(w.grad), snap[1])


def test_shape_one_output_is_fine():
    for lib in LIBS:
        x = lib.tensor([2.0], requires_grad=True)
        (x * 3).backward()
        np.testing.assert_allclose(arr(x.grad), [3.0])


# -- engine properties -------------------------------------------------------------------------
def test_deep_chain_no_recursion():
    x = gradsum.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.sum().backward()
    assert x.grad.tolist() == [1.0]


def test_each_node_runs_once():
    calls = []
    x = gradsum.tensor([1.0, 2.0], requires_grad=True)
    h = x.exp()
    h.grad_fn.register_hook(lambda gi, go: calls.append(1))
    (h * h + h * 2 + h.sin()).sum().backward()
    assert calls == [1]


def test_no_graph_leak_after_backward():
    x = gradsum.tensor([1.0, 2.0], requires_grad=True)
    y = (x.exp() * 2).sum()
    ref = weakref.ref(y.grad_fn)
    y.backward()
    del y
    gc.collect()
    assert ref() is None


def test_grad_fn_names_and_next_functions():
    def prog(lib):
        a = lib.tensor([1.0], requires_grad=True)
        y = (a * 2).sum()
        nf = y.grad_fn.next_functions
        return (type(y.grad_fn).__name__, type(nf[0][0]).__name__,
                type(nf[0][0].next_functions[0][0]).__name__, nf[0][0].next_functions[1][0])

    g = prog(gradsum)
    t = prog(torch)
    assert g == t


def test_repr_shows_grad_fn():
    x = gradsum.tensor([1.0, 2.0], requires_grad=True)
    assert repr(x) == "tensor([1., 2.], requires_grad=True)"
    assert repr(x * 2) == "tensor([2., 4.], grad_fn=<MulBackward0>)"
    assert repr(gradsum.tensor([1.5], dtype=gradsum.float64)) == (
        "tensor([1.5000], dtype=gradsum.float64)"
    )


def test_detach_and_data_share_storage():
    for lib in LIBS:
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        d = x.detach()
        assert not d.requires_grad and d.is_leaf
        with lib.no_grad():
            x.mul_(2)
        np.testing.assert_allclose(arr(d), [2.0, 4.0])
        x.data.add_(1)
        np.testing.assert_allclose(arr(x), [3.0, 5.0])
        y = x * 2
        y.detach_()
        assert y.is_leaf and not y.requires_grad


def test_function_custom_double_backward_and_needs_input_grad():
    class Cube(gradsum.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x)
            ctx.k = k
            return x**3 * k

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            assert ctx.needs_input_grad == (True, False)
            return g * 3 * x**2 * ctx.k, None

    class TCube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x)
            ctx.k = k
            return x**3 * k

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x**2 * ctx.k, None

    def prog(lib, fn):
        x = lib.tensor([1.0, -2.0], dtype=lib.float64, requires_grad=True)
        y = fn.apply(x, 2.0).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        return arr(g), arr(gg)

    assert_same(prog(gradsum, Cube), prog(torch, TCube))
    x = gradsum.tensor([1.0], dtype=gradsum.float64, requires_grad=True)
    assert gradsum.autograd.gradcheck(lambda t: Cube.apply(t, 1.5), (x,))
    assert gradsum.autograd.gradgradcheck(lambda t: Cube.apply(t, 1.5), (x,))


def test_hook_changing_size_raises():
    for lib in LIBS:
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        x.register_hook(lambda g, lib=lib: lib.ones(3))
        with pytest.raises(RuntimeError, match="has changed the size of value"):
            (x * 2).sum().backward()
        y = x * 1
        y.register_hook(lambda g, lib=lib: lib.ones(1))
        with pytest.raises(RuntimeError, match="has changed the size of value"):
            (y * 2).sum().backward()


def test_backward_inputs_retained_nonleaf_counted_once():
    def prog(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y.retain_grad()
        (y * y).sum().backward(inputs=[y])
        return arr(y.grad), x.grad is None

    assert_same(*both(prog))


def test_zero_dim_results_accumulate_in_place():
    """NumPy returns scalars from 0-d arithmetic; tensors must still hold writable buffers."""
    def prog(lib):
        x = lib.tensor(1.5, requires_grad=True)
        y = x.sin() * 2
        y.backward(retain_graph=True)
        g = x.grad
        y.backward()
        z = lib.tensor(1.0) * 2
        z.add_(1)
        return x.grad is g, arr(x.grad), arr(z)

    g, t = both(prog)
    assert g[0] is t[0] is True
    assert_same(g[1:], t[1:])


def test_function_returning_a_kept_tensor_is_not_aliased():
    def prog(lib):
        class Pass(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, w):
                ctx.save_for_backward(w)
                return x * 1

            @staticmethod
            def backward(ctx, g):
                (w,) = ctx.saved_tensors
                return w, None

        x = lib.tensor([1.0, 2.0], requires_grad=True)
        w = lib.tensor([5.0, 5.0])
        Pass.apply(x, w).sum().backward()
        (x * 1).sum().backward()
        return arr(x.grad), arr(w)

    assert_same(*both(prog))


def test_setitem_of_grad_value_into_plain_tensor_rebases_it():
    def prog(lib):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.zeros(3)
        b[1:] = w  # b becomes part of the graph (CopySlices)
        (b * lib.tensor([1.0, 2.0, 3.0])).sum().backward()
        c = lib.zeros(2, 2)
        c.t()[0].copy_(w)  # through a view of a view
        (c * lib.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
        return b.requires_grad, type(b.grad_fn).__name__, arr(w.grad)

    g, t = both(prog)
    assert g[:2] == t[:2]
    assert_same(g[2], t[2])


def test_function_node_class_names_dirty_inputs_and_invalid_gradients():
    def prog(lib):
        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.mul_(2)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 2

        class Bad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g[:1]

        a = lib.tensor([1.0, 2.0], requires_grad=True)
        x = a * 1
        y = Double.apply(x)
        y.sum().backward()
        err = raises_type(lambda: Bad.apply(a).sum().backward())
        leaf_err = raises_type(lambda: Double.apply(lib.tensor([1.0], requires_grad=True)))
        return type(y.grad_fn).__name__, y is x, arr(a.grad), err, leaf_err

    g, t = both(prog)
    assert g[0] == t[0] == "DoubleBackward" and g[1] is t[1] is True
    assert_same(g[2], t[2])
    assert g[3] is t[3] is RuntimeError
    assert g[4] is t[4] is RuntimeError


def test_backward_restores_the_cyclic_collector_state():
    import gc as _gc

    x = gradsum.ones(2, requires_grad=True)
    assert _gc.isenabled()
    (x * 2).sum().backward()
    assert _gc.isenabled()
    h = x.register_hook(lambda g: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        (x * 2).sum().backward()
    h.remove()
    assert _gc.isenabled()
    _gc.disable()
    try:
        (x * 2).sum().backward()
        assert not _gc.isenabled()  # a caller's choice is left alone
    finally:
        _gc.enable()


@pytest.mark.parametrize("values", [
    [float("nan"), float("inf"), 1.0], [-0.0, 1.0], [1e-10, 0.0], [-1.0, 2000.0],
    [0.0, 5000.0], [3.0], [1e9, -2e9], [[1.0, -20.0], [300.0, 4.0]], [float("nan"), 5.0],
    [0.5, -10.25], [1e-5, -2.0], [[True]], [True, False], [[1, 2], [3, 4]], [0.1, 0.2],
])
def test_repr_matches_torch(values):
    assert repr(gradsum.tensor(values)).replace("gradsum", "torch") == repr(torch.tensor(values))


def test_inputs_named_twice():
    def prog(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        g1, g2 = lib.autograd.grad((x * x).sum(), (x, x))
        y = (x * x).sum()
        y.backward(inputs=[x, x])
        return arr(g1), arr(g2), arr(x.grad)

    assert_same(*both(prog))


def test_negative_slice_steps_are_refused_like_torch():
    for lib in LIBS:
        with pytest.raises(ValueError, match="step must be greater than zero"):
            lib.arange(5.0)[::-1]
        x = lib.ones(3)
        with pytest.raises(ValueError, match="step must be greater than zero"):
            x[::-1] = 0.0


@pytest.mark.parametrize("call", [
    lambda t: t.clamp_(2.5), lambda t: t.sqrt_(), lambda t: t.exp_(), lambda t: t.pow_(0.5),
])
def test_inplace_result_that_does_not_fit_raises_and_changes_nothing(call):
    for lib in LIBS:
        x = lib.tensor([1, 5])
        v = x._version
        with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
            call(x)
        assert x.tolist() == [1, 5]
        assert x._version == v


@pytest.mark.parametrize("owner", ["optimizer", "module"])
def test_zero_grad_both_ways_side_by_side(owner):
    """SEMANTICS 2: set_to_none=True (default) drops .grad; False keeps the object, and a grad
    that carries a graph is detached first, then zeroed in place."""
    def prog(lib):
        m = lib.nn.Linear(2, 1)
        opt = lib.optim.SGD(m.parameters(), lr=0.1)
        clear = opt.zero_grad if owner == "optimizer" else m.zero_grad
        p = m.weight
        (m(lib.ones(1, 2)) * 2).sum().backward()
        held = p.grad
        clear(set_to_none=False)
        out = [p.grad is held, arr(held)]
        (m(lib.ones(1, 2)) ** 2).sum().backward(create_graph=True)
        g = p.grad
        out.append(g.grad_fn is not None)
        clear(set_to_none=False)
        out += [p.grad is g, g.grad_fn is None, g.requires_grad, arr(g)]
        clear()
        out.append(p.grad is None)
        return out

    g, t = both(prog)
    assert [x for x in g if isinstance(x, bool)] == [x for x in t if isinstance(x, bool)]
    assert_same([x for x in g if not isinstance(x, bool)],
                [x for x in t if not isinstance(x, bool)])
