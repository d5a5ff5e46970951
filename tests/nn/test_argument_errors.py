"""Side by side with torch: nn's argument errors and their types for layer_norm, conv2d's
strides and dilations, Embedding's padding_idx and weights, one_hot of an empty tensor,
trunc_normal_ of integers, Sequential's + and * and ModuleList.insert, get_buffer and
clip_grad_norm_ of an empty gradient."""

from __future__ import annotations

import math
from typing import Any

import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)


import gradsum  # noqa: E402
from nn_helpers import (  # noqa: E402
    both_raise,
    same_values,
)


# -- layer_norm, conv2d, embedding, one_hot -----------------------------------------------------
def test_layer_norm_argument_errors() -> None:
    both_raise(lambda lib, f: f.layer_norm(lib.zeros(2, 5), 5))  # TypeError: a tuple is needed
    both_raise(lambda lib, f: f.layer_norm(lib.ones(2, 5, dtype=lib.int64), (5,)))
    both_raise(lambda lib, f: f.layer_norm(lib.ones(2, 5, dtype=lib.float64), (5,),
                                           lib.ones(5)))


@pytest.mark.parametrize("kw", [{"stride": 0}, {"stride": (1, 0)}, {"dilation": 0}])
def test_conv2d_non_positive_stride_dilation(kw: dict[str, Any]) -> None:
    both_raise(lambda lib, f: f.conv2d(lib.ones(1, 1, 4, 4), lib.ones(1, 1, 2, 2), **kw))


@pytest.mark.parametrize("padding_idx", [3, -4])
def test_embedding_padding_idx_out_of_range_asserts(padding_idx: int) -> None:
    both_raise(lambda lib, f: f.embedding(lib.tensor([0]), lib.zeros(3, 2),
                                          padding_idx=padding_idx))
    both_raise(lambda lib, f: lib.nn.Embedding(3, 2, padding_idx=padding_idx))
    with pytest.raises(ValueError):  # (and still the ValueError gradsum raised before)
        gradsum.nn.Embedding(3, 2, padding_idx=padding_idx)


def test_embedding_argument_errors() -> None:
    both_raise(lambda lib, f: f.embedding(lib.tensor([1], dtype=lib.uint8), lib.zeros(3, 2)))
    both_raise(lambda lib, f: f.embedding(lib.tensor([1]), lib.zeros(1, 3, 2)))
    both_raise(lambda lib, f: lib.nn.Embedding(3, 2, _weight=lib.zeros(2, 2)))
    same_values(lambda lib, f: [f.embedding(lib.tensor([2], dtype=lib.int32),
                                            lib.arange(6.0).reshape(3, 2))])


def test_one_hot_of_empty_needs_num_classes() -> None:
    both_raise(lambda lib, f: f.one_hot(lib.zeros(0, dtype=lib.int64)))
    same_values(lambda lib, f: [f.one_hot(lib.zeros(0, dtype=lib.int64), 3)])


def test_trunc_normal_refuses_integer_tensors() -> None:
    both_raise(lambda lib, f: lib.nn.init.trunc_normal_(lib.zeros(3, dtype=lib.int64)))


# -- containers and Module ----------------------------------------------------------------------
def _layout(seq: Any) -> list[tuple[str, str]]:
    return [(k, type(m).__name__) for k, m in seq._modules.items()]


def test_sequential_add_mul_operators() -> None:
    def run(lib: Any) -> list[Any]:
        nn = lib.nn
        a, b = nn.Sequential(nn.ReLU(), nn.Tanh()), nn.Sequential(nn.Sigmoid())
        out = [_layout(a + b), _layout(a * 2), _layout(3 * b)]
        shared = (a * 2)[2] is a[0]
        c = nn.Sequential(nn.ReLU(), nn.Tanh())
        c += b
        d = nn.Sequential(nn.ReLU(), nn.Tanh())
        d *= 2
        return out + [shared, _layout(c), _layout(d)]

    assert run(gradsum) == run(torch)
    for bad in (lambda lib: lib.nn.Sequential() + [1], lambda lib: lib.nn.Sequential() * 0,
                lambda lib: lib.nn.Sequential() * 1.5):
        both_raise(lambda lib, f, bad=bad: bad(lib))


@pytest.mark.parametrize("index", [0, 1, 2, 5])
def test_module_list_insert_like_torch(index: int) -> None:
    def run(lib: Any) -> list[tuple[str, str]]:
        nn = lib.nn
        ml = nn.ModuleList([nn.ReLU(), nn.Tanh()])
        ml.insert(index, nn.Sigmoid())
        return _layout(ml)

    assert run(gradsum) == run(torch)
    both_raise(lambda lib, f: lib.nn.ModuleList([lib.nn.ReLU()]).insert(-1, lib.nn.Tanh()))


def test_get_buffer() -> None:
    """Module.get_buffer finds a buffer by dotted path and raises torch's exception types for a
    parameter, a missing name or a missing module."""
    def build(lib: Any) -> Any:
        net = lib.nn.Sequential(lib.nn.Linear(2, 2))
        net[0].register_buffer("running", lib.ones(2))
        return net

    assert build(gradsum).get_buffer("0.running").tolist() == [1.0, 1.0]
    for target in ("0.weight", "0.nothing", "1.running"):
        both_raise(lambda lib, f, target=target: build(lib).get_buffer(target))


# -- clip_grad_norm_ ----------------------------------------------------------------------------
@pytest.mark.parametrize("norm_type", [math.inf, -math.inf])
def test_clip_grad_norm_infinity_norm_of_an_empty_grad(norm_type: float) -> None:
    def fn(lib: Any, f: Any) -> Any:
        p = lib.nn.Parameter(lib.zeros(0))
        p.grad = lib.zeros(0)
        return lib.nn.utils.clip_grad_norm_([p], 1.0, norm_type)

    both_raise(fn)
