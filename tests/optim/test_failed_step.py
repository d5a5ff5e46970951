"""A step that raises leaves the parameters, their gradients and the optimizer state
bitwise as they were, for every optimizer.

torch checks as it updates: a string learning rate in a second group raises a TypeError after
the first group has moved, and a resumed state of the wrong shape raises part way through.
gradsum raises the same exception types before the first update (note "A failed step changes
nothing" in optim/optimizer.py).
"""

from __future__ import annotations

import numpy as np
import pytest

import gradsum

#: optimizer -> constructor options (Muon takes 2-D parameters only)
CASES = {
    "SGD": {"lr": 0.1, "momentum": 0.9}, "Adam": {"lr": 0.1}, "AdamW": {"lr": 0.1},
    "RMSprop": {"lr": 0.1, "momentum": 0.5}, "Adagrad": {"lr": 0.1}, "Adadelta": {"lr": 0.1},
    "Adamax": {"lr": 0.1}, "NAdam": {"lr": 0.1}, "RAdam": {"lr": 0.1}, "ASGD": {"lr": 0.1},
    "Rprop": {"lr": 0.1}, "Adafactor": {"lr": 0.1}, "Muon": {"lr": 0.1},
}
#: those whose state tensors all have their parameter's shape
ELEMENTWISE = [n for n in CASES if n not in ("Adafactor", "Muon")]


def _setup(lib, name):
    rng = np.random.default_rng(0)
    ws = [lib.tensor(rng.standard_normal((3, 4)).astype(np.float32), requires_grad=True)
          for _ in range(2)]
    opt = getattr(lib.optim, name)([{"params": [ws[0]]}, {"params": [ws[1]]}], **CASES[name])
    for _ in range(2):  # (two steps: every state exists, momentum buffers too)
        opt.zero_grad()
        ((ws[0] * 2).sum() + (ws[1] ** 2).sum()).backward()
        opt.step()
    opt.zero_grad()
    ((ws[0] * 3).sum() + (ws[1] ** 3).sum()).backward()
    return ws, opt


def _snapshot(ws, opt):
    params = [(w.detach().numpy().copy(), w.grad.numpy().copy()) for w in ws]
    state = {i: {k: (v.numpy().copy() if hasattr(v, "numpy") else v)
                 for k, v in opt.state[w].items()} for i, w in enumerate(ws)}
    return params, state


def _same(a, b) -> bool:
    (pa, sa), (pb, sb) = a, b
    if any(not (np.array_equal(x, y) and np.array_equal(gx, gy))
           for (x, gx), (y, gy) in zip(pa, pb, strict=True)):
        return False
    if sa.keys() != sb.keys():
        return False
    for i in sa:
        if sa[i].keys() != sb[i].keys():
            return False
        for k in sa[i]:
            x, y = sa[i][k], sb[i][k]
            if isinstance(x, np.ndarray) != isinstance(y, np.ndarray):
                return False
            if isinstance(x, np.ndarray) and not np.array_equal(x, y, equal_nan=True):
                return False
            if not isinstance(x, np.ndarray) and x != y:
                return False
    return True


def _torch_error(name, mutate):
    """The exception type torch's step raises after ``mutate``."""
    torch = pytest.importorskip("torch", reason="torch not installed: the reference run")
    if not hasattr(torch.optim, name):
        pytest.skip(f"torch 2.13 has no optim.{name}")
    ws, opt = _setup(torch, name)
    mutate(torch, ws, opt)
    with pytest.raises(Exception) as info:
        opt.step()
    return info.type


def _bad_lr(lib, ws, opt):
    opt.param_groups[1]["lr"] = "0.5"


@pytest.mark.parametrize("name", sorted(CASES))
def test_string_lr_in_a_later_group_moves_nothing(name):
    """torch raises TypeError (after updating group 0); gradsum raises TypeError first."""
    ws, opt = _setup(gradsum, name)
    _bad_lr(gradsum, ws, opt)
    before = _snapshot(ws, opt)
    with pytest.raises(TypeError, match=r"must be Number, not str.*param_groups\[1\]\['lr'\]"):
        opt.step()
    assert _same(before, _snapshot(ws, opt))
    if name != "Rprop":  # (torch's Rprop reads lr only at a parameter's first step, so it
        # takes the string there silently; gradsum refuses it in every optimizer)
        assert issubclass(_torch_error(name, _bad_lr), TypeError)
    opt.param_groups[1]["lr"] = 0.5  # (the fix the message gives: the step then runs)
    opt.step()
    assert not _same(before, _snapshot(ws, opt))


def _bad_state(lib, ws, opt):
    st = opt.state[ws[1]]
    key = next(k for k, v in st.items() if hasattr(v, "shape") and len(v.shape) > 0)
    st[key] = lib.zeros(5)


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_state_of_another_shape_moves_nothing(name):
    """A resumed state whose shape is not its parameter's: torch raises RuntimeError part way
    through the update; gradsum raises RuntimeError before it, naming the state."""
    ws, opt = _setup(gradsum, name)
    _bad_state(gradsum, ws, opt)
    before = _snapshot(ws, opt)
    with pytest.raises(RuntimeError, match=r"must match the size.*shape \(5,\).*\(3, 4\)"):
        opt.step()
    assert _same(before, _snapshot(ws, opt))
    assert issubclass(_torch_error(name, _bad_state), RuntimeError)


@pytest.mark.parametrize("name", ["Adam", "SGD", "RMSprop"])
def test_first_step_failing_drops_the_state_it_made(name):
    """A failing first step leaves no half-made state behind (optimizer.state stays empty)."""
    w0 = gradsum.ones(3, requires_grad=True)
    w1 = gradsum.ones(3, requires_grad=True)
    opt = getattr(gradsum.optim, name)([{"params": [w0]}, {"params": [w1]}], **CASES[name])
    (w0.sum() + w1.sum()).backward()
    opt.param_groups[1]["lr"] = None
    with pytest.raises(TypeError, match="must be Number, not NoneType"):
        opt.step()
    assert all(not opt.state.get(w) for w in (w0, w1))
    assert w0.tolist() == [1.0, 1.0, 1.0]


def test_betas_of_the_wrong_kind():
    w = gradsum.ones(2, requires_grad=True)
    opt = gradsum.optim.Adam([w])
    w.sum().backward()
    opt.param_groups[0]["betas"] = (0.9, "x")
    with pytest.raises(TypeError, match=r"tuple of 2 numbers.*'betas'"):
        opt.step()
    assert w.tolist() == [1.0, 1.0] and not opt.state.get(w)


def test_state_of_another_dtype_moves_nothing():
    ws, opt = _setup(gradsum, "Adam")
    st = opt.state[ws[1]]
    st["exp_avg"] = st["exp_avg"].double()
    before = _snapshot(ws, opt)
    with pytest.raises(RuntimeError, match=r"expected dtype Float.*got dtype Double"):
        opt.step()
    assert _same(before, _snapshot(ws, opt))
