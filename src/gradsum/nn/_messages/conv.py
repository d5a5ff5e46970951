"""The texts of convolution, pooling, padding and fold."""

from __future__ import annotations

from typing import Any

# -- conv, pool and pad ------------------------------------------------------------------------


def using_padding_same_even_kernel() -> str:
    return (
        "Using padding='same' with even kernel lengths and odd dilation may require a "
        "zero-padded copy of the input be created"
    )


def input_error_only_3d_or(input: Any) -> str:
    return (
        f"Input Error: Only 3D or 4D input Tensors are supported (got "
        f"{input.ndim}D)"
    )


def input_error_only_unbatched_2d(input: Any) -> str:
    return (
        f"Input Error: Only unbatched (2D) or batched (3D) input Tensors are "
        f"supported (got {input.ndim}D)"
    )


def expected_size_input_dimension_1(cols: Any, kh: Any, kw: Any) -> str:
    return (
        f"Expected size of input's dimension 1 to be divisible by the product of "
        f"kernel_size, but got input.size(1)={cols.shape[1]} and kernel_size=({kh}, {kw})"
    )


def given_output_size_kernel_size(h: Any, w: Any, kh: Any, kw: Any, geo: Any, cols: Any) -> str:
    return (
        f"Given output_size=({h}, {w}), kernel_size=({kh}, {kw}), expected size of input's "
        f"dimension 2 to match the calculated number of sliding blocks "
        f"{geo.out_hw[0]} * {geo.out_hw[1]} = {geo.out_hw[0] * geo.out_hw[1]}, but got "
        f"input.size(2)={cols.shape[2]}."
    )


def groups_positive_integer() -> str:
    return "groups must be a positive integer"


def channels_divisible_by_groups() -> str:
    return "in_channels must be divisible by groups"


def out_channels_divisible_by_groups() -> str:
    return "out_channels must be divisible by groups"


def invalid_padding_string_one_valid(padding: Any) -> str:
    return f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}"


def only_zeros_padding_mode_supported(module: Any) -> str:
    return f'Only "zeros" padding mode is supported for {type(module).__name__}'


def convtranspose_d_d_input_output(nd: Any, input: Any, lead: Any, size: Any) -> str:
    return (
        f"ConvTranspose{nd}D: for {input.ndim}D input, output_size must have {nd} or "
        f"{lead + nd} elements (got {len(size)})"
    )


def requested_output_size_valid_sizes(size: Any, lo: Any, hi: Any, input: Any, lead: Any) -> str:
    return (
        f"requested an output size of {size}, but valid sizes range from {lo} to "
        f"{hi} (for an input of {list(input.shape[lead:])})"
    )


def conv_transpose_d_argument_padding(module: Any) -> str:
    return (
        f"conv_transpose{module._nd}d(): argument 'padding' must be tuple of ints, not "
        "str"
    )


def padding_mode_not_one_of(modes: Any, padding_mode: Any) -> str:
    return (
        f"padding_mode must be one of {modes}, but got "
        f"padding_mode='{padding_mode}'"
    )


def conv_input_dims(no_batch: Any, module: Any, size: Any) -> str:
    return (
        f"Expected {no_batch}D (unbatched) or {no_batch + 1}D (batched) input to "
        f"{type(module).__name__}, but got input of size: {size}. Pass (C, *spatial) or "
        f"(N, C, *spatial) with {no_batch - 1} spatial dimension(s); x[None] adds a batch of "
        f"one"
    )
