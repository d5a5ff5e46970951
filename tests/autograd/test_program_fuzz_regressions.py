"""Regressions from the random-program sweep (tests/autograd/test_program_fuzz.py, seeds
10000-11999): each program, reduced to its cause, runs side by side in torch and gradsum."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from diff_helpers import outcome as _outcome  # noqa: E402


# ---- seed 10884
def test_backward_inputs_runs_the_node_of_a_named_non_leaf_as_torch() -> None:
    # seeds 10884, 10953, 11202: torch's backward(inputs=[y]) with y a non-leaf marks y's
    # grad_fn as needed and runs it (its post hooks fire with None for unneeded inputs, its
    # saved tensors are unpacked, so a modified one raises, and freed afterwards)
    def run(m: Any) -> list[Any]:
        log: list[Any] = []
        x = m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True)
        y = x * x
        y.grad_fn.register_hook(lambda gi, go: log.append(("post", [g is None for g in gi])))
        (y * 3).sum().backward(inputs=[y], retain_graph=True)
        log.append((y.grad.tolist(), x.grad))
        log.append(_outcome(lambda: (y * 3).sum().backward(inputs=[y])))
        log.append(_outcome(lambda: y.sum().backward()))  # y's node was freed: raises
        x = m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True)
        y = x * x
        with m.no_grad():
            x.mul_(2)
        log.append(_outcome(lambda: (y * 3).sum().backward(inputs=[y])))
        log.append(x.grad)  # (y.grad: torch's retain hook ran before the error, a known gap)
        log.append(m.autograd.grad((y * 3).sum(), [y])[0].tolist())  # (grad: not run)
        return log

    assert run(gradsum) == run(torch)


# ---- seed 10104
def test_a_no_grad_view_asks_its_root_base_whether_it_requires_grad() -> None:
    # seed 10104: a no_grad view of a grad-mode view whose base was detached in place since
    # (or of a leaf view that requires grad on its own) does not require grad in torch: it
    # asks the root base; gradsum recorded ops on it and refused in-place ops on it
    def run(m: Any) -> list[Any]:
        log: list[Any] = []
        x = m.tensor(1.0, dtype=m.float64, requires_grad=True)
        v = x.reshape(-1, 1)
        x.detach_()
        with m.no_grad():
            w = v.split(1, -2)[0]
        u = w.squeeze().reshape(-1)
        log.append((v.requires_grad, w.requires_grad, u.requires_grad, u.grad_fn is None))
        log.append((_outcome(lambda: u.unsqueeze_(0)), _outcome(lambda: u.mul_(2))))
        b = m.zeros(3, dtype=m.float64)
        v = b[:2].requires_grad_()
        with m.no_grad():
            w = v[:1]
        log.append((v.requires_grad, w.requires_grad, (w * 2).requires_grad))
        return log

    assert run(gradsum) == run(torch)


# ---- seed 11158
def test_a_leaf_given_a_history_in_place_refuses_its_gradient_as_torch() -> None:
    # seed 11158: x.detach_() (or requires_grad_(False)), then an in-place op with an operand
    # that requires grad gives x a grad_fn; a gradient reaching x's old AccumulateGrad raises
    # "leaf variable has been moved into the graph interior" in torch (gradsum dropped it)
    def run(m: Any, how: str) -> list[Any]:
        x = m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True)
        y = x * 3
        if how == "detach_":
            x.detach_()
        else:
            x.requires_grad_(False)
        x.add_(y)
        out = _outcome(lambda: y.sum().backward())
        return [out, x.is_leaf, x.requires_grad, x._base]

    for how in ("detach_", "requires_grad_"):
        assert run(gradsum, how) == run(torch, how)


# ---- seed 10611
def test_a_hooked_view_of_a_base_detached_in_place_keeps_requiring_grad() -> None:
    # seed 10611: the view has a tensor hook, so gradsum regenerates it in ops._core's
    # stale_views (not inplace.refresh_views); torch keeps a grad_fn whose edge leads nowhere
    def run(m: Any) -> list[Any]:
        x = m.ones(4, 2, dtype=m.float64, requires_grad=True)
        v = x.narrow(-1, 1, 1)
        with m.no_grad():
            x.detach_()
        v.register_hook(lambda g: g * 2)
        with m.no_grad():
            w = v.split(2, 1)[0]
        w.add_(1)
        out = [v.requires_grad, v.is_leaf, v.grad_fn.next_functions,
               _outcome(v.retain_grad), (v * 2).requires_grad]
        return out

    assert run(gradsum) == run(torch)


# ---- seed 10692
def test_a_no_grad_view_follows_its_base_detached_or_reattached_in_place() -> None:
    # seed 10692: a view made in no_grad mode of a tensor that requires grad asks its base in
    # torch; after base.detach_() it requires grad no more, so ops on it are not recorded and
    # an in-place write to it does not poison later ops (gradsum raised "A view was created
    # in no_grad mode ..." in the matmul, and recorded `e * 2`)
    def run(m: Any) -> list[Any]:
        x = m.tensor([-0.2, -0.4, 0.8], dtype=m.float64, requires_grad=True)
        with m.no_grad():
            e, e2 = x.expand(3), x[:2]
        x.detach_()
        out: list[Any] = [e.requires_grad, (e * 2).requires_grad, (e2 * 2).grad_fn is None]
        out.append(_outcome(lambda: e.clamp_(-0.5, 0.5)))
        a = m.ones(2, 3, dtype=m.float64)
        out.append(_outcome(lambda: a @ e))
        out.append(_outcome(lambda: e2 * 2))
        x.requires_grad_()
        out += [e.requires_grad, e2.requires_grad]
        return out

    assert run(gradsum) == run(torch)


# ---- seed 10444
@pytest.mark.parametrize(("op", "args"), [("unsqueeze_", (0,)), ("unsqueeze_", (1,)),
                                          ("transpose_", (0, 1)), ("t_", ())])
def test_a_shape_changed_in_place_under_no_grad_is_checked_in_backward_as_torch(
        op: str, args: tuple[int, ...]) -> None:
    # seeds 10444, 10911, 10266: torch's node keeps the shape its output had (input
    # metadata): a gradient of the new shape is summed back to it when the old shape expands
    # to it, else refused ("returned an invalid gradient"); a leaf's sink copies/adds the
    # gradient into the leaf's new shape. gradsum passed the new shape on (wrong shapes,
    # broadcast sums, or an error deep in a backward rule)
    import numpy as np

    def run(m: Any) -> list[Any]:
        log: list[Any] = []
        x = m.tensor(np.arange(6.0).reshape(3, 2), requires_grad=True)
        y = x * 2
        y1 = y * 3  # (a use before the change: a gradient of the old shape)
        with m.no_grad():
            getattr(y, op)(*args)
        w = m.tensor(np.arange(6.0).reshape(y.shape))
        log.append(_outcome(lambda: ((y * w).sum() + y1.sum()).backward()))
        log.append(None if x.grad is None else x.grad.tolist())
        x = m.tensor(np.arange(6.0).reshape(3, 2), requires_grad=True)
        y1 = x * 3
        with m.no_grad():
            getattr(x, op)(*args)
        log.append(_outcome(lambda: y1.sum().backward()))
        log.append(_outcome(lambda: (x * 2).sum().backward()))
        log.append(None if x.grad is None else x.grad.tolist())
        return log

    assert run(gradsum) == run(torch)


# ---- seed 10497
def test_a_failing_backward_raises_and_frees_as_torch_runs() -> None:
    # seeds 10497, 10376, 11050, 11132, 11835: torch runs nodes in decreasing sequence number
    # and raises at the first whose saved tensor cannot be unpacked, having freed the nodes it
    # ran; gradsum's up-front check raised for whichever node its sweep met first, and freed
    # nothing, so a second backward raised another error than torch's
    def run(m: Any) -> list[Any]:
        log: list[Any] = []
        x = m.tensor(0.7, dtype=m.float64, requires_grad=True)
        r = x.relu()
        d = r / x  # saves r (a non-leaf), detached in place below
        v = r.reshape(())
        r.detach_()
        lse = v.logsumexp(0)
        lse[...] = x  # (modifies the saved output of logsumexp: made later, torch meets it first)
        try:
            m.autograd.grad(d * 2 + lse * 3, [x], create_graph=True)
        except RuntimeError as e:
            log.append("modified by an inplace operation" in str(e))
        y = x.exp()
        h = y * 4  # (MulBackward0 saves y; runs before ExpBackward0)
        with m.no_grad():
            y.mul_(2)  # (ExpBackward0's saved output)
        loss = (h * h).sum()
        log.append(_outcome(loss.backward))
        try:
            loss.backward()
        except RuntimeError as e:
            log.append("backward through the graph a second time" in str(e))
        return log

    assert run(gradsum) == run(torch)


# ---- seed 11163
@pytest.mark.parametrize("write", ["transpose_", "mul_"])
def test_a_write_through_a_detached_alias_regenerates_the_views_of_its_origin(
        write: str) -> None:
    # seed 11163: v.detach() shares v's version counter; an unrecorded write through it
    # moves the version of v's root's views, so torch regenerates their grad_fn from the root
    # (a hook on an intermediate view no longer runs for them); gradsum kept the old chain
    def run(m: Any) -> list[Any]:
        x = m.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=m.float64, requires_grad=True)
        b = x.mean(1, keepdim=True)
        s = b.select(-1, 0)
        s.register_hook(lambda g: g * 0.5)
        v = s.view(2, -1)
        d = v.detach()
        if write == "transpose_":
            d.transpose_(-1, 0)
        else:
            d.mul_(1.0)
        (v * m.tensor([[1.0], [2.0]], dtype=m.float64)).sum().backward()
        return [b._version, x.grad.tolist()]

    assert run(gradsum) == run(torch)


# ---- seed 11821
@pytest.mark.parametrize("op", ["mul", "div"])
def test_mul_div_save_an_operand_only_for_an_input_with_an_edge(op: str) -> None:
    # seed 11821 (the mm case is in tests/autograd/test_program_fuzz.py): a view made in no_grad
    # mode requires grad but has no edge, so torch does not save the other operand for it
    def run(m: Any) -> list[Any]:
        a = m.tensor([[0.5], [0.25]], dtype=m.float64, requires_grad=True)
        base = m.ones(1, 3, dtype=m.float64, requires_grad=True)
        with m.no_grad():
            v = base.split(1, 0)[0]
        y = a * v if op == "mul" else a / v
        with m.no_grad():
            a.fill_(1.5)
        out = _outcome(lambda: y.sum().backward())
        return [out, None if a.grad is None else a.grad.tolist(), base.grad]

    assert run(gradsum) == run(torch)


def _both(program: Any) -> None:
    want: list[Any] = []
    got: list[Any] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch: masked_fill_ on expanded is deprecated)
        program(torch, want)
        program(gradsum, got)
    assert len(want) == len(got), (want, got)
    for w, g in zip(want, got):
        if isinstance(w, np.ndarray):
            np.testing.assert_allclose(g, w, equal_nan=True)
        else:
            assert w == g, (want, got)


def test_masked_fill_on_an_expanded_tensor_writes_the_shared_elements() -> None:
    # seeds 10151, 11417, 11946: torch's masked_fill_ does not check internal overlap (a
    # deprecation warning); a shared element masked anywhere takes the value. gradsum raised.
    def program(m: Any, log: list[Any]) -> None:
        y = m.tensor([[1.0], [2.0], [float("nan")]]).expand(3, 3)
        mask = m.tensor([[True, False, False], [False, False, False], [False, True, False]])
        v = y._version
        y.masked_fill_(mask, 5.0)
        log.append(np.array(y.tolist()))
        log.append(y._version - v)

    _both(program)


def test_a_recorded_masked_fill_on_an_expanded_view_fails_in_backward() -> None:
    # seed 11535: recorded, the forward works; the backward (CopySlices) refuses the region
    def program(m: Any, log: list[Any]) -> None:
        a = m.tensor([[1.0], [2.0]], requires_grad=True)
        b = a * 1
        y = b.expand(2, 3)
        y.masked_fill_(m.tensor([[True, False, False], [False, False, False]]), 5.0)
        log.append(np.array(y.tolist()))
        log.append(_outcome(lambda: y.sum().backward()))
        log.append(a.grad is None)

    _both(program)


def test_copy_of_the_same_elements_into_an_expanded_tensor_writes_nothing() -> None:
    # seeds 11633 (x.copy_(x)) and 10746 (x[...] = x): torch's copy_ returns early when source
    # and destination are the same elements, so an expanded tensor passes; gradsum raised
    def program(m: Any, log: list[Any]) -> None:
        x = m.tensor([[1.0], [2.0]]).expand(2, 3)
        v = x._version
        log.append(_outcome(lambda: x.copy_(x)))
        log.append(_outcome(lambda: x.__setitem__(Ellipsis, x)))
        log.append(_outcome(lambda: x.copy_(x.clone())))
        log.append(np.array(x.tolist()))
        log.append(x._version - v)

    _both(program)
