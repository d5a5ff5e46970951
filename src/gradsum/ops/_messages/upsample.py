"""The texts of upsampling and interpolation."""

from __future__ import annotations

from typing import Any


def upsample_sizes_not_positive(inp: Any, out: Any) -> str:
    return (
        f"Input and output sizes should be greater than 0, but got input ({inp}) output "
        f"({out})"
    )


def interpolate_align_corners_not_interpolating() -> str:
    return (
        "align_corners option can only be set with the interpolating modes: "
        "linear | bilinear | bicubic | trilinear"
    )


def interpolate_size_and_scale_factor() -> str:
    return "only one of size or scale_factor should be defined"


def interpolate_size_rank_mismatch(input: Any, size: Any) -> str:
    return (
        "Input and output must have the same number of spatial dimensions, but got "
        f"input with spatial dimensions of {list(input.shape[2:])} and output size "
        f"of {size}. Please provide input tensor in (N, C, d1, d2, ...,dK) format "
        "and output size in (o1, o2, ...,oK) format."
    )


def interpolate_scale_factor_rank_mismatch(input: Any, scale_factor: Any) -> str:
    return (
        "Input and scale_factor must have the same number of spatial dimensions, but "
        f"got input with spatial dimensions of {list(input.shape[2:])} and "
        f"scale_factor of shape {scale_factor}. Please provide input tensor in (N, C, "
        "d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format."
    )


def interpolate_no_size_nor_scale_factor() -> str:
    return "either size or scale_factor should be defined"


def interpolate_recompute_scale_factor_with_size() -> str:
    return "recompute_scale_factor is not meaningful with an explicit size."


def interpolate_antialias_not_supported() -> str:
    return "gradsum's interpolate has no antialias=True"


def interpolate_mode_wrong_rank(input: Any, mode: Any, need: Any) -> str:
    return f"Got {input.ndim}D input, but {mode} mode needs {need}D input"


def interpolate_input_rank_not_supported(input: Any, mode: Any) -> str:
    return (
        f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for "
        "the modes: nearest | linear | bilinear | bicubic | trilinear | area | "
        f"nearest-exact (got {mode}); gradsum implements nearest, nearest-exact, linear "
        "(3D) and bilinear (4D)"
    )
