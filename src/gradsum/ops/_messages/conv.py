"""The texts of convolutions."""

from __future__ import annotations

from typing import Any


def conv_kernel_larger_than_input(padded: Any, extent: Any) -> str:
    return (
        f"Calculated padded input size per channel: "
        f"({' x '.join(map(str, padded))}). Kernel size: "
        f"({' x '.join(map(str, extent))}). Kernel size can't be greater than "
        "actual input size"
    )


def conv_argument_wrong_length(name: Any, nd: Any, v: Any) -> str:
    return (
        f"expected {name} to be a single integer value or a list of {nd} values to "
        f"match the convolution dimensions, but got {name}={list(v)}"
    )


def conv_input_wrong_rank(nd: Any, fn: Any, input: Any) -> str:
    return (
        f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {fn}, but got "
        f"input of size: {list(input.shape)}. Pass (C, {_spatial(nd)}) or (N, C, "
        f"{_spatial(nd)}); x[None] adds a batch of one, x[None, None] a channel too"
    )


def _spatial(nd: int) -> str:
    return ", ".join(("L",) if nd == 1 else ("H", "W") if nd == 2 else ("D", "H", "W"))


def conv_weight_wrong_rank(fn: Any, nd: Any, transposed: Any, weight: Any) -> str:
    return (
        f"{fn}: expected a {nd + 2}-D weight "
        f"({'in_channels, out_channels/groups' if transposed else 'out_channels, '}"
        f"{'' if transposed else 'in_channels/groups'}, *kernel_size), got weight of size "
        f"{list(weight.shape)}"
    )


def conv_dtype_mismatch(input: Any, other: Any, weight: Any) -> str:
    return (
        f"Input type ({input.dtype.name}) and {'weight' if other is weight else 'bias'} "
        f"type ({other.dtype.name}) should be the same: convert them to one dtype"
    )


def conv_stride_not_positive(s: Any) -> str:
    return f"non-positive stride is not supported (got stride={list(s)})"


def conv_dilation_not_positive(d: Any) -> str:
    return f"non-positive dilation is not supported (got dilation={list(d)})"


def conv_groups_not_positive(groups: Any) -> str:
    return f"non-positive groups is not supported (got groups={groups})"


def conv_weight_not_divisible_by_groups(groups: Any, weight: Any) -> str:
    return (
        f"Given groups={groups}, expected weight to be divisible by {groups} at dimension "
        f"0, but got weight of size {list(weight.shape)} instead"
    )


def conv_input_channels_mismatch(
    transposed: Any, groups: Any, weight: Any, input: Any, want: Any, c: Any
) -> str:
    t = "transposed=1, " if transposed else f"groups={groups}, "
    return (
        f"Given {t}weight of size {list(weight.shape)}, expected input"
        f"{list(input.shape)} to have {want} channels, but got {c} channels instead: pass "
        f"an input with {want} channels (dimension 1, or 0 unbatched), or build the layer "
        f"with in_channels={c}"
    )


def conv_bias_size_mismatch(transposed: Any, weight: Any, o: Any, bias: Any) -> str:
    t = "transposed=1, " if transposed else ""
    return (
        f"Given {t}weight of size {list(weight.shape)}, expected bias to be 1-dimensional "
        f"with {o} elements, but got bias of size {list(bias.shape)} instead"
    )


def conv_same_padding_strided() -> str:
    return "padding='same' is not supported for strided convolutions"


def conv_invalid_padding_string(padding: Any) -> str:
    return f"Invalid padding string: '{padding}' (expected 'valid' or 'same')"


def conv_negative_padding(p: Any) -> str:
    return f"negative padding is not supported (got padding={list(p)})"


def conv_padding_str_not_supported(fn: Any) -> str:
    return f"{fn}(): argument 'padding' must be tuple of ints, not str"


def conv_negative_output_padding(op: Any) -> str:
    return f"negative output_padding is not supported (got output_padding={list(op)})"


def conv_output_padding_too_large(op: Any, s: Any, d: Any) -> str:
    return (
        "output padding must be smaller than either stride or dilation, but got "
        f"output_padding={list(op)}, stride={list(s)}, dilation={list(d)}"
    )


def conv_output_size_too_small(shown: Any, ins: Any, size: Any) -> str:
    return (
        f"Given input size per channel: ({' x '.join(map(str, shown + ins))}). Calculated "
        f"output size per channel: ({' x '.join(map(str, shown + size))}). Output size is "
        "too small (lower the padding or the stride)"
    )
