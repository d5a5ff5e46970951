"""The texts of interpolate, grid_sample and affine_grid."""

from __future__ import annotations

from typing import Any

# -- interpolate, grid_sample and affine_grid --------------------------------------------------


def default_grid_sample_affine_grid() -> str:
    return (
        "Default grid_sample and affine_grid behavior has changed to align_corners=False "
        "since 1.3.0. Please specify align_corners=True if the old behavior is desired. "
        "See the documentation of grid_sample for details."
    )


def expected_theta_floating_point_type(theta: Any) -> str:
    return f"Expected theta to have floating point type, but got {theta.dtype}"


def affine_theta_shape(d: Any, size: Any, theta: Any) -> str:
    return (
        f"Expected a batch of {d}D affine matrices of shape Nx{d}x{d + 1} for size "
        f"{size}. Got {tuple(theta.shape)}."
    )


def affine_grid_only_supports_4d(size: Any) -> str:
    return (
        "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
        f"respectively. Got size {size}."
    )


def since_version_1_3_0() -> str:
    return (
        "Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
        "align_corners=True. This is not an intended use case of affine_grid. See the "
        "documentation of affine_grid for details."
    )


def expected_non_zero_positive_output(size: Any) -> str:
    return f"Expected non-zero, positive output size. Got {size}"


def nn_functional_grid_sample_expected_mode(mode: Any) -> str:
    return (
        "nn.functional.grid_sample(): expected mode to be 'bilinear', "
        f"'nearest' or 'bicubic', but got: '{mode}'"
    )


def nn_functional_grid_sample_expected_padding(padding_mode: Any) -> str:
    return (
        "nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
        f"'border', or 'reflection', but got: '{padding_mode}'"
    )


def grid_sampler_expected_grid_input(in_shape: Any, grid_shape: Any) -> str:
    return (
        "grid_sampler(): expected grid and input to have same batch size, "
        f"but got input with sizes {in_shape} and grid with sizes "
        f"{grid_shape}"
    )


def grid_sampler_expected_grid_size(input: Any, grid_shape: Any) -> str:
    return (
        f"grid_sampler(): expected grid to have size {input.dim() - 2} in "
        f"last dimension, but got grid with sizes {grid_shape}"
    )


def grid_sampler_expected_input_non(in_shape: Any, i: Any) -> str:
    return (
        "grid_sampler(): expected input to have non-empty spatial "
        f"dimensions, but input has sizes {in_shape} with dimension "
        f"{i} being empty"
    )


def grid_sampler_expected_d_input(input: Any, in_shape: Any, grid_shape: Any) -> str:
    return (
        f"grid_sampler(): expected {input.dim()}D input and grid with same "
        f"number of dimensions, but got input with sizes {in_shape} and "
        f"grid with sizes {grid_shape}"
    )


def grid_sampler_bicubic_interpolation_only() -> str:
    return "grid_sampler(): bicubic interpolation only supports 4D input"


def upsample_deprecated(name: Any) -> str:
    return f"`nn.functional.{name}` is deprecated. Use `nn.functional.interpolate` instead."


def grid_sampler_not_floating(dims: Any, dtype_name: Any) -> str:
    return (
        f'"grid_sampler_{dims}d_cpu" not implemented for '
        f"'{dtype_name}'"
    )


def grid_sampler_dtype_mismatch(input_name: Any, grid_name: Any) -> str:
    return (
        f"expected scalar type {input_name} but found "
        f"{grid_name}"
    )
