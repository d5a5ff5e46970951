"""Backwards in several threads: no contribution to a shared leaf is lost.

torch locks each leaf's AccumulateGrad, so two threads running backward into one leaf give
exactly the sum of their contributions. NumPy lets go of the interpreter inside ``arr += g``,
so without a lock two updates can read the same old values and one is lost (gradsum gave
178-197 instead of 200 in some elements). Bounded stress tests: a few seconds each.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import gradsum
from gradsum.autograd import graph_task


def _run_threads(n_threads: int, fn) -> None:
    errors: list[BaseException] = []
    start = threading.Barrier(n_threads)

    def body() -> None:
        try:
            start.wait()
            fn()
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=body) for _ in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


@pytest.mark.parametrize("size", [1 << 18, 1 << 20])
def test_two_threads_into_one_leaf_lose_nothing(size):
    """torch: two threads x 100 ``(w * 1.0).sum().backward()`` give exactly 200 everywhere."""
    steps = 100 if size == 1 << 18 else 25
    for _ in range(2):
        w = gradsum.zeros(size, requires_grad=True)

        def work(w=w) -> None:
            for _ in range(steps):
                (w * 1.0).sum().backward()

        _run_threads(2, work)
        got = w.grad.numpy()
        assert np.count_nonzero(got != 2 * steps) == 0, (got.min(), got.max())


def test_first_gradients_of_many_threads_all_land():
    """The first accumulation takes over the incoming buffer; two threads seeing ``.grad``
    None at once must not keep only one of the two gradients."""
    for _ in range(30):
        w = gradsum.zeros(1 << 16, requires_grad=True)
        _run_threads(4, lambda w=w: (w * 2.0).sum().backward())
        assert float(w.grad.min()) == 8.0 and float(w.grad.max()) == 8.0


def test_retained_grad_accumulates_under_threads():
    """retain_grad's out-of-place sum is made under the same lock."""
    w = gradsum.zeros(1 << 16, requires_grad=True)
    h = w * 1.0
    h.retain_grad()

    def work() -> None:
        for _ in range(20):
            (h * 1.0).sum().backward(retain_graph=True)

    _run_threads(2, work)
    assert float(h.grad.min()) == 40.0 and float(h.grad.max()) == 40.0
    assert float(w.grad.min()) == 40.0


def test_each_thread_has_its_own_task_stack():
    """The running backward (``current_graph_task_id``, multi-grad hooks) is per thread, as
    torch's current graph task: another thread's backward is not this one's."""
    seen: dict[str, list[int]] = {"a": [], "b": []}
    inside = threading.Barrier(2, timeout=10)

    def run(name: str) -> None:
        x = gradsum.ones(3, requires_grad=True)
        y = x * 2

        def hook(g):
            seen[name].append(graph_task.running_depth())
            inside.wait()  # both threads are inside a backward here
            seen[name].append(graph_task.running_depth())
            return g

        y.register_hook(hook)
        y.sum().backward()

    ta = threading.Thread(target=run, args=("a",))
    tb = threading.Thread(target=run, args=("b",))
    ta.start()
    tb.start()
    ta.join()
    tb.join()
    assert seen == {"a": [1, 1], "b": [1, 1]}
    assert graph_task.running_depth() == 0


def test_torch_gives_exact_sums_too():
    """The reference behaviour the tests above hold gradsum to."""
    torch = pytest.importorskip("torch", reason="torch not installed: the reference run")
    w = torch.zeros(1 << 18, requires_grad=True)

    def work() -> None:
        for _ in range(50):
            (w * 1.0).sum().backward()

    _run_threads(2, work)
    assert int((w.grad != 100).sum()) == 0


def test_toolkit_frames_are_per_thread():
    """Two threads inside a backward at once, a Ledger on: each thread's backward closes its
    own frame (one stack for both would close the other thread's)."""
    from gradsum import toolkit
    from gradsum.toolkit._hub import HUB

    ws = [gradsum.ones(3, requires_grad=True) for _ in range(2)]
    inside = threading.Barrier(2, timeout=10)
    depths: list[int] = []

    def run(w) -> None:
        y = w * 2

        def hook(g):
            inside.wait()  # both threads are inside a backward here
            depths.append(len(HUB.stack))
            return g

        y.register_hook(hook)
        y.sum().backward()

    with toolkit.Ledger({"a": ws[0], "b": ws[1]}) as ledger:
        threads = [threading.Thread(target=run, args=(w,)) for w in ws]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert depths == [1, 1] and HUB.stack == []
        assert len(ledger.contributions(ws[0])) == 1 and len(ledger.contributions(ws[1])) == 1
    assert ws[0].grad.tolist() == [2.0, 2.0, 2.0]
