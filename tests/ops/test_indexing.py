"""Side by side with torch: __getitem__ / __setitem__ with torch's index semantics (values,
views, grad_fn names and graphs), a 0-d integer tensor index as a view."""

from __future__ import annotations

import numpy as np
import pytest

from diff_helpers import same_summary

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)


# -- indexing: torch's order (ints select first) and placement of advanced dims -----------------
_KEYS = [
    lambda m: (slice(None, None, 2), 0, None, m.tensor([-1, -2])),
    lambda m: (-1, None, m.tensor([-1, -1, -1])),
    lambda m: (0, slice(None), m.tensor([1, 0])),
    lambda m: (m.tensor(1), slice(None), -1),  # a 0-d int tensor is an int (a view)
    lambda m: (None, m.tensor([[1], [0]]), Ellipsis, m.tensor([1])),  # a 0-dim Ellipsis
    lambda m: (1, Ellipsis, m.tensor([True, False, True, True])),
    lambda m: m.tensor(True),
    lambda m: (0, m.tensor(False)),
    lambda m: m.tensor([1, 0], dtype=m.uint8),  # a byte tensor is a mask
]


@pytest.mark.filterwarnings("ignore:indexing with dtype torch.uint8")
@pytest.mark.parametrize("key", range(len(_KEYS)))
def test_getitem_follows_torch_index_semantics(key):
    def f(m):
        x = m.arange(24.0).reshape(2, 3, 4).requires_grad_()
        y = x[_KEYS[key](m)]
        (y * (m.arange(float(y.numel())).reshape(y.shape) + 1)).sum().backward()
        return y, x.grad, y.grad_fn.name()

    same_summary(f)


@pytest.mark.parametrize("key,name", [
    ((slice(1, 0),), "SliceBackward0"),  # an empty slice is recorded
    ((slice(-3, None),), "SliceBackward0"),  # a negative start is recorded
    ((0, slice(0, 100)), "SelectBackward0"),  # a stop past the end is skipped
    ((0, slice(None, 1)), "SliceBackward0"),
])
def test_basic_index_grad_fn_names(key, name):
    assert same_summary(lambda m: m.zeros(2, 3, requires_grad=True)[key].grad_fn.name())[1] == name


def test_zero_dim_int_tensor_index_is_a_view():
    def f(m):
        x = m.zeros(3)
        x[m.tensor(1)].add_(5)
        return x

    same_summary(f)


@pytest.mark.parametrize("value", ["scalar", "tensor", "requires_grad"])
@pytest.mark.parametrize("key", [
    lambda m: (1, slice(None), m.tensor([-1, 0, 1])),
    lambda m: (slice(None, None, 2), 0, None, m.tensor([-1, -2])),
    lambda m: (0, Ellipsis, m.tensor([1, 2]), None),
])
def test_setitem_follows_torch_index_semantics(key, value):
    def f(m):
        x = m.arange(24.0).reshape(2, 3, 4).requires_grad_()
        h = x * 1
        k = key(m)
        with m.no_grad():
            shape = h[k].shape
        v = 7.5 if value == "scalar" else (m.arange(float(np.prod(shape))).reshape(shape)
                                           + 100).requires_grad_(value == "requires_grad")
        h[k] = v
        (h * (m.arange(24.0).reshape(2, 3, 4) + 1)).sum().backward()
        return h, x.grad, v.grad if value == "requires_grad" else None, h.grad_fn.name()

    same_summary(f)
    same_summary(lambda m: m.zeros(2, 3, 4).__setitem__(key(m), 1.0))  # (not recorded)


@pytest.mark.parametrize("key", [
    (slice(None),), (Ellipsis,), (slice(0, 2),), (0,), ([0, 1],), (None, [0, 1]),
    (slice(None), [0, 1]), "mask", "bool0",
])
@pytest.mark.parametrize("value", ["scalar", "tensor0", "tensor"])
def test_setitem_graph_matches_torch(key, value):
    def f(m):
        x = m.ones(2, 3, requires_grad=True)
        h = x * 1
        k = {"mask": (m.tensor([True, False]),), "bool0": (m.tensor(True),)}.get(key, key)
        with m.no_grad():
            shape = h[k].shape
        while shape and shape[0] == 1:  # (torch views such a value without its leading
            shape = shape[1:]           # ones, a ViewBackward0 gradsum does not record)
        v = {"scalar": 2.0, "tensor0": m.tensor(5.0, requires_grad=True),
             "tensor": m.full(shape, 5.0, requires_grad=True)}[value]
        h[k] = v
        names = [None if n is None else n.name() for n, _ in h.grad_fn.next_functions]
        h.sum().backward()
        return h.grad_fn.name(), names, x.grad, None if value == "scalar" else v.grad

    same_summary(f)
