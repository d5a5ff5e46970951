"""Side by side with torch: details of the Tensor API (expand's -1, chunk of an empty dim, tile,
Python scalar conversions, comparison with other objects, the legacy type name, a number on the
left of // and %, 0-d tensors formatted as numbers, creation functions needing a size, random
fills of integer tensors)."""

from __future__ import annotations

import pytest

import gradsum
from diff_helpers import leaf, same_summary

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)


# -- shape ops and Tensor API -----------------------------------------------------------------
def test_expand_refuses_minus_one_in_a_new_dimension():
    same_summary(lambda m: m.zeros(3, 1).expand(-1, 3, 4))


def test_chunk_of_an_empty_dimension_gives_chunks_pieces():
    same_summary(lambda m: [t.shape for t in m.zeros(0, 2).chunk(3)])


def test_tile():
    """Tensor.tile as torch's: an int repeat, more repeats than dims (leading dims added), the
    gradient summed back."""
    def f(m):
        x = leaf(m, [[1.0, 2.0]])
        y = x.tile(2)
        y.sum().backward()
        return y, x.grad, x.tile((2, 1, 2)).shape

    same_summary(f)


def test_python_scalar_conversions_of_many_elements_raise_value_error():
    same_summary(lambda m: float(m.zeros(2)))
    same_summary(lambda m: int(m.zeros(2, dtype=m.int64)))


def test_comparison_with_unsupported_object_is_python_identity():
    same_summary(lambda m: (m.zeros(2) == "a", m.zeros(2) != "a"))


def test_legacy_type_name():
    same_summary(lambda m: [m.zeros(1, dtype=d).type() for d in (m.float32, m.float64, m.int64,
                                                                m.bool)])


@pytest.mark.parametrize("expr", ["7 % x", "7 // x", "7.5 // i", "7.5 % i", "7 % i", "True // i",
                                  "-7 % y", "7 // z", "2 % b"])
def test_number_on_the_left_of_floordiv_and_mod(expr):
    """``number // t`` and ``number % t`` compute like torch (wrapped-number promotion, the
    integer division-by-zero error); with a tensor requiring grad the result carries torch's
    ``NotImplemented`` node, whose backward raises."""
    results = []
    for lib in (torch, gradsum):
        env = {"x": lib.tensor([2.0, 3.0], requires_grad=True), "i": lib.tensor([2, 3]),
               "y": lib.tensor([2.0, -3.0]), "z": lib.tensor([0, 3]), "b": lib.tensor([True])}
        try:
            r = eval(expr, {}, env)
        except RuntimeError:
            results.append("RuntimeError")
            continue
        name = type(r.grad_fn).__name__ if r.grad_fn is not None else None
        backward = None
        if r.requires_grad:
            try:
                r.sum().backward()
                backward = "runs"
            except RuntimeError as e:
                backward = "derivative" in str(e) and "not implemented" in str(e)
        results.append((r.tolist(), str(r.dtype).split(".")[-1], name, backward))
    assert results[1] == results[0]


def test_zero_dim_tensors_format_as_numbers():
    for lib in (torch, gradsum):
        assert f"{lib.tensor(0.1):.3f}" == "0.100"
        assert f"{lib.tensor(3):d}" == "3"
        assert f"{lib.tensor([1, 2])}" == "tensor([1, 2])"
        with pytest.raises(TypeError):
            f"{lib.tensor([0.1]):.3f}"


@pytest.mark.parametrize("name", ["zeros", "ones", "empty", "rand", "randn"])
def test_creation_functions_require_a_size(name):
    for lib in (torch, gradsum):
        with pytest.raises(TypeError):
            getattr(lib, name)()
        assert tuple(getattr(lib, name)(()).shape) == ()


@pytest.mark.parametrize("fill", ["normal_", "uniform_", "exponential_", "bernoulli_",
                                  "random_"])
@pytest.mark.parametrize("dtype", ["int64", "bool", "float32"])
def test_random_fills_on_integer_tensors(fill, dtype):
    outcome = []
    for lib in (torch, gradsum):
        t = lib.zeros(3, dtype=getattr(lib, dtype))
        try:
            getattr(t, fill)()
            outcome.append("ok")
        except (NotImplementedError, RuntimeError) as e:
            outcome.append(type(e).__name__)
    assert outcome[1] == outcome[0]
