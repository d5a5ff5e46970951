"""``copy.copy`` of a tensor, side by side with torch 2.13 (which rebuilds the tensor from its
storage through ``__reduce_ex__``): a new leaf of the same class over the same memory, with
the same ``requires_grad`` (a non-leaf's copy is a leaf that requires grad), no ``grad``,
no ``grad_fn``, no hooks, its own version counter, and the original's Python attributes.

Each case runs one program with ``torch`` and with ``gradsum`` (passed in as ``m``) and
compares what it records.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradsum

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)


def _values(t: Any) -> list[Any]:
    return np.asarray(t.detach().tolist(), dtype=float).tolist()


def _record(m: Any, t: Any) -> dict[str, Any]:
    """What copy.copy(t) gives, and what a write through the copy (and through the
    original) shows on the other side."""
    c = copy.copy(t)
    rec: dict[str, Any] = {
        "new object": c is not t,
        "class": type(c).__name__,
        "dtype": str(c.dtype).split(".")[-1],
        "shape": tuple(c.shape),
        "values": _values(c),
        "requires_grad": c.requires_grad,
        "is_leaf": c.is_leaf,
        "grad_fn is None": c.grad_fn is None,
        "grad is None": c.grad is None,
        "retains_grad": c.retains_grad,
        "version": c._version,
        "attributes": {k: v for k, v in vars(c).items() if not k.startswith("_")}
        if type(c).__name__ != "Parameter" else {},
    }
    with m.no_grad():
        c.view(-1)[0] = 7  # a write through the copy...
        rec["original sees the copy's write"] = _values(t)
        t.view(-1)[-1] = 5  # ... and through the original
        rec["copy sees the original's write"] = _values(c)
    rec["versions after"] = (t._version, c._version)
    return rec


def _leaf(m: Any) -> Any:
    return m.tensor([1.0, 2.0, 3.0])


def _leaf_requiring_grad(m: Any) -> Any:
    t = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (t * 2).sum().backward()  # it has a grad, which the copy leaves behind
    return t


def _non_leaf(m: Any) -> Any:
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    return y


def _parameter(m: Any) -> Any:
    p = m.nn.Parameter(m.tensor([1.0, 2.0, 3.0]))
    p.grad = m.ones(3)
    return p


def _frozen_parameter(m: Any) -> Any:
    return m.nn.Parameter(m.tensor([1.0, 2.0]), requires_grad=False)


def _view(m: Any) -> Any:
    return m.arange(6.0).view(2, 3)[:, 1]


def _integer(m: Any) -> Any:
    return m.arange(4)


def _scalar(m: Any) -> Any:
    return m.tensor(1.5)


def _with_attribute(m: Any) -> Any:
    t = m.ones(2)
    t.note = ["shared"]
    return t


def _buffer(m: Any) -> Any:
    return m.nn.Buffer(m.ones(2))


CASES: dict[str, Callable[[Any], Any]] = {
    "leaf": _leaf, "leaf requiring grad": _leaf_requiring_grad, "non-leaf": _non_leaf,
    "Parameter": _parameter, "Parameter(requires_grad=False)": _frozen_parameter,
    "view": _view, "integer": _integer, "0-d": _scalar, "with attribute": _with_attribute,
    "nn.Buffer": _buffer,
}


@pytest.mark.parametrize("case", list(CASES))
def test_copy_matches_torch(case: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # neither warns here (no hooks)
        want = _record(torch, CASES[case](torch))
        got = _record(gradsum, CASES[case](gradsum))
    assert got == want


@pytest.mark.parametrize("m", [torch, gradsum], ids=["torch", "gradsum"])
def test_copy_shares_python_attribute_objects_in_a_new_dict(m: Any) -> None:
    t = _with_attribute(m)
    c = copy.copy(t)
    assert c.note is t.note
    c.other = 1
    assert not hasattr(t, "other")


@pytest.mark.parametrize("m", [torch, gradsum], ids=["torch", "gradsum"])
def test_copy_of_a_non_leaf_is_a_leaf_that_accumulates(m: Any) -> None:
    x = m.tensor([1.0, 2.0], requires_grad=True)
    c = copy.copy(x * 2)
    (c * 3).sum().backward()
    assert c.grad.tolist() == [3.0, 3.0]
    assert x.grad is None  # the copy starts a new graph: nothing reaches x


@pytest.mark.parametrize("make", ["leaf", "non-leaf"])
def test_copy_drops_hooks_with_a_user_warning_as_torch(make: str) -> None:
    def run(m: Any) -> tuple[int, list[float] | None]:
        calls = []
        x = m.tensor([1.0, 2.0], requires_grad=True)
        t = x if make == "leaf" else x * 1
        t.register_hook(lambda g: calls.append(1))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            c = copy.copy(t)
        assert [w.category for w in caught] == [UserWarning]
        assert "backward hook" in str(caught[0].message)
        c.sum().backward()
        return len(calls), c.grad.tolist()

    assert run(gradsum) == run(torch) == (0, [1.0, 1.0])


@pytest.mark.parametrize("m", [torch, gradsum], ids=["torch", "gradsum"])
def test_copy_of_a_parameter_drops_hooks_silently(m: Any) -> None:
    p = m.nn.Parameter(m.ones(2))
    p.register_hook(lambda g: g)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        c = copy.copy(p)
    assert type(c) is m.nn.Parameter


@pytest.mark.parametrize("m", [torch, gradsum], ids=["torch", "gradsum"])
def test_copy_of_a_removed_hook_does_not_warn(m: Any) -> None:
    x = m.ones(2, requires_grad=True)
    x.register_hook(lambda g: g).remove()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        copy.copy(x)


def test_copy_of_an_uninitialized_parameter_is_a_new_uninitialized_one() -> None:
    from gradsum.nn.parameter import UninitializedBuffer, UninitializedParameter

    p = UninitializedParameter(requires_grad=False)
    c = copy.copy(p)
    assert type(c) is UninitializedParameter and c is not p and not c.requires_grad
    b = copy.copy(UninitializedBuffer(persistent=False))
    assert type(b) is UninitializedBuffer and b.persistent is False
    tp = copy.copy(torch.nn.UninitializedParameter(requires_grad=False))
    assert type(tp) is torch.nn.UninitializedParameter and not tp.requires_grad


def test_copy_of_a_module_shares_its_parameters() -> None:
    """copy.copy of a module (the common use): the same Parameter objects, as torch's."""
    for m in (torch, gradsum):
        lin = m.nn.Linear(2, 3)
        c = copy.copy(lin)
        assert c is not lin and c.weight is lin.weight
