"""The texts of padding."""

from __future__ import annotations

from typing import Any

_SUPPORTED = (
    "Supported combinations for non-constant padding:\n"
    "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
    "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
    "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
)


def pad_crops_more_than_input(lo: Any, hi: Any, d: Any, size: Any) -> str:
    return (
        f"narrow(): length must be non-negative. (padding ({lo}, {hi}) of dimension {d} "
        f"of size {size} would crop more than the input holds)"
    )


def pad_element_not_int(p: Any, i: Any) -> str:
    return (
        "pad(): argument 'pad' (position 2) must be tuple of ints, but found element of "
        f"type {type(p).__name__} at pos {i}"
    )


def pad_unrecognised_mode(mode: Any) -> str:
    return (
        f"Unrecognised padding mode {mode} (use 'constant', 'reflect', 'replicate' or "
        "'circular')"
    )


def pad_odd_length(pad: Any) -> str:
    return f"Padding length must be divisible by 2 (got {len(pad)} values)"


def pad_too_long(pad: Any, ndim: Any) -> str:
    return (
        "Padding length should be less than or equal to two times the input dimension but "
        f"got padding length {len(pad)} and input of dimension {ndim}"
    )


def pad_mode_takes_no_value(mode: Any) -> str:
    return (
        f"Padding mode \"{mode}\" doesn't take in value argument (pass value=None, or use "
        "mode='constant')"
    )


def pad_size_not_supported(pad: Any, ndim: Any) -> str:
    return f"Padding size {len(pad)} is not supported for {ndim}D input tensor.\n{_SUPPORTED}"


def pad_reflect_too_large(i: Any, lo: Any, hi: Any, d: Any, shape: Any) -> str:
    return (
        f"Argument #{4 + 2 * i}: Padding size should be less than the corresponding "
        f"input dimension, but got: padding ({lo}, {hi}) at dimension {d} of input "
        f"{list(shape)}"
    )


def pad_circular_wraps_twice(lo: Any, hi: Any, d: Any, size: Any) -> str:
    return (
        f"Padding value causes wrapping around more than once. (padding ({lo}, {hi}) "
        f"of dimension {d} of size {size})"
    )


def pad_replicate_empty_dimension(d: Any, shape: Any) -> str:
    return (
        f"Expected dim {d} of the input to be non-empty to replicate it (shape "
        f"{list(shape)})"
    )


def pad_negative_output_size(shape: Any, lo: Any, hi: Any, d: Any) -> str:
    return (
        f"input (shape {list(shape)}) with padding ({lo}, {hi}) at dimension {d} gives "
        "a negative output size: crop less"
    )
