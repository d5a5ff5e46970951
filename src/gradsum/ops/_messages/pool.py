"""The texts of pooling."""

from __future__ import annotations

from typing import Any

_WORDS = {1: "one", 2: "two", 3: "three"}
_DIMS = {1: ("W",), 2: ("H", "W"), 3: ("T", "H", "W")}


def _named(prefix: str, vals: tuple[int, ...]) -> str:
    return " ".join(f"{prefix}{n}: {v}" for n, v in zip(_DIMS[len(vals)], vals))


def pool_argument_wrong_length(fn: Any, name: Any, nd: Any, allow_empty: Any, v: Any) -> str:
    what = (f"either be omitted, a single int, or a tuple of {_WORDS[nd]} ints"
            if allow_empty else f"either be a single int, or a tuple of {_WORDS[nd]} ints")
    return f"{fn}: {name} must {what} (got {v})"


def pool_input_wrong_rank(nd: Any, x: Any) -> str:
    return (
        f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for input (got "
        f"shape {list(x.shape)})"
    )


def pool_stride_zero(s: Any) -> str:
    return f"stride should not be zero (got stride={list(s)})"


def pool_kernel_size_not_positive(k: Any) -> str:
    return f"kernel_size should be greater than zero, but got {_named('k', k)}"


def pool_stride_negative(s: Any) -> str:
    return f"stride should be greater than zero, but got {_named('d', s)}"


def pool_dilation_not_positive(d: Any) -> str:
    return f"dilation should be greater than zero, but got {_named('dilation', d)}"


def pool_pad_too_large(pp: Any, kk: Any, dd: Any) -> str:
    return (
        f"pad should be at most half of effective kernel size, but got pad={pp}, "
        f"kernel_size={kk} and dilation={dd}"
    )


def pool_output_size_too_small(c: Any, size: Any, out: Any) -> str:
    return (
        f"Given input size: ({'x'.join(map(str, (c, *size)))}). Calculated output size: "
        f"({'x'.join(map(str, (c, *out)))}). Output size is too small: the kernel "
        f"(with its dilation) is larger than the padded input; use a smaller kernel_size, "
        f"padding, or a larger input"
    )


def pool_expected_input_rank(fn: Any, nd: Any, x: Any, dims: Any) -> str:
    return (
        f"{fn}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: {list(x.shape)} (pass "
        f"{dims})"
    )


def adaptive_pool_output_size_wrong_length(fn: Any, nd: Any, output_size: Any) -> str:
    return f"{fn}: output_size must be {nd} (got {tuple(output_size)})"


def adaptive_pool_negative_output_size(fn: Any, osz: Any) -> str:
    return (
        f"{fn}: elements of output_size must be greater than or equal to 0 but received "
        f"{{{', '.join(map(str, osz))}}}"
    )


def adaptive_pool_empty_input_dimension(fn: Any, x: Any, d: Any) -> str:
    return (
        f"{fn}(): Expected input to have non-zero size for non-batch dimensions, but "
        f"input has sizes {list(x.shape)} with dimension {d} being empty"
    )


def pool_divisor_zero() -> str:
    return "divisor must be not zero"


def pool1d_argument_not_one_int(fn: Any, name: Any) -> str:
    return f"{fn}: {name} must be a single int or a tuple of one int"


def max_pool1d_input_wrong_rank(input: Any) -> str:
    return (
        "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size "
        f"for input, but got:{list(input.shape)}"
    )


def avg_pool1d_input_wrong_rank(input: Any) -> str:
    return f"avg_pool1d() Expected 2D or 3D input tensor, but got {list(input.shape)}"


def adaptive_pool1d_input_wrong_rank(input: Any, fn: Any) -> str:
    return (
        f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument "
        f"#1 'self' (while checking arguments for {fn})"
    )


def max_unpool_output_size_wrong_length(nd: Any, out: Any) -> str:
    return (
        f"output_size should be a sequence containing {nd} or {nd + 2} elements, but it "
        f"has a length of '{len(out)}'"
    )


def max_unpool_invalid_output_size(output_size: Any, d: Any, lo: Any, hi: Any) -> str:
    return (
        f'invalid output_size "{list(output_size)}" (dim {d} must be between {lo} and '
        f"{hi})"
    )


def max_unpool_input_wrong_rank(fn: Any, nd: Any, input: Any) -> str:
    return (
        f"Input to {fn} should be a {nd + 1}d or {nd + 2}d Tensor, but got a tensor with "
        f"{input.ndim} dimensions."
    )


def max_unpool_indices_not_int64(indices: Any) -> str:
    return (
        f"elements in indices should be type int64 but got: {indices.dtype.name} (pass the "
        "indices returned by max_pool with return_indices=True)"
    )


def max_unpool_indices_shape_mismatch(input: Any, indices: Any) -> str:
    return (
        f"Expected shape of indices to be same as that of the input tensor "
        f"({list(input.shape)}) but got indices tensor with shape: {list(indices.shape)}"
    )


def max_unpool_invalid_max_index(bad: Any, size: Any) -> str:
    return (
        f"Found an invalid max index: {bad} (output volumes are of size "
        f"{'x'.join(map(str, size))})"
    )
