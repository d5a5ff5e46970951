"""``F.grid_sample``: sample an input at the normalised coordinates of a grid, composed of
gradsum's ops as torch's CPU kernels compute it (``GridSamplerKernel.cpp`` for 2-D,
``GridSampler.cpp`` for 3-D): coordinates unnormalised to pixel units, padded (``border``
clips, ``reflection`` reflects then clips: borders count as outside for the gradient, as
torch's), then bilinear/trilinear weights, the nearest pixel (half to even) or, in 2-D, the
16-tap bicubic convolution (A = -0.75, padding applied to each tap). Out-of-range taps read
0. The gradient to the input (through ``gather``) and to the grid (through the weights) come
from the ops' rules; nearest sampling gives the grid a zero gradient, as torch.
"""

from __future__ import annotations

import warnings
from typing import Any

from gradsum import _creation, ops
from gradsum._autocast import autocast_policy
from gradsum._backend import silenced, xp
from gradsum._fma import fma
from gradsum._tensor import Tensor
from gradsum.nn import _messages

_MODES = ("bilinear", "nearest", "bicubic")
_PADDINGS = ("zeros", "border", "reflection")
_A = -0.75  # torch's bicubic convolution constant


def _unnormalize(coord: Tensor, size: int, align_corners: bool, vectorized: bool) -> Tensor:
    """[-1, 1] to pixel units: the corner pixels' centres with ``align_corners``, else the
    image's edges (torch's 2-D kernel multiplies by a scale; its 3-D one divides)."""
    if vectorized:
        if align_corners:
            return (coord + 1) * ((size - 1) / 2)
        # torch's compiled kernel fuses this multiply-subtract (one rounding): the floor of a
        # coordinate that lands next to an integer, and so the corners read, depend on it
        shifted = coord + 1
        plain = shifted * (size / 2) - 0.5
        fused = fma(size / 2, shifted._array, xp.full_like(shifted._array, -0.5))
        # plain - (plain - fused): the fused value (both subtractions are exact, the two
        # values being a rounding apart), with plain's gradient; infinities stay as they are
        gap = plain._array - fused
        return plain - Tensor._make(xp.asarray(xp.where(xp.isnan(gap), 0, gap)))
    if align_corners:
        return ((coord + 1) / 2) * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _clip(coord: Tensor, size: int, vectorized: bool) -> Tensor:
    """Clamp to [0, size - 1] with torch's gradient: 0 at and beyond either border. A NaN
    becomes 0 in torch's 2-D kernel (its clamp's operand order) and size - 1 in its 3-D one
    (``std::min(size - 1, std::max(nan, 0))``)."""
    hi = size - 1
    inside = ops.logical_and(coord > 0, coord < hi)
    zeros, his = _creation.zeros_like(coord), _creation.full_like(coord, hi)
    clipped = ops.where(coord >= hi, his, zeros) if vectorized else \
        ops.where(coord <= 0, zeros, his)
    return ops.where(inside, coord, clipped)


def _abs(x: Tensor) -> Tensor:
    """``|x|`` with gradient +1 at 0 (torch's reflection takes ``x < 0`` as the flip)."""
    return ops.where(x < 0, -x, x)


def _reflect(coord: Tensor, size: int, align_corners: bool, vectorized: bool) -> Tensor:
    """Reflect into the image's span (the corner pixels' centres with ``align_corners``, else
    its edges), as torch's kernels compute it: the 2-D one folds with ``trunc`` and takes the
    nearer of the two reflections (NaN for infinite input), the 3-D one with ``fmod`` and the
    parity of the number of flips."""
    twice_low, twice_high = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
    if vectorized:
        if align_corners and size <= 1:
            return _creation.zeros_like(coord)
        low = twice_low / 2
        twice_span = twice_high - twice_low
        dist = _abs(coord - low)
        flips = ops.trunc(dist / twice_span).detach()
        extra = dist - flips * twice_span
        other = twice_span - extra
        folded = ops.where(extra > other, other, extra)
        # (torch's vector minimum propagates NaN: an infinite coordinate gives NaN)
        folded = ops.where(ops.isnan(extra), extra, folded)
        return folded + low if low else folded
    if twice_low == twice_high:
        return _creation.zeros_like(coord)
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    dist = _abs(coord - low)
    extra = ops.fmod(dist, span)
    flips = ops.floor(dist / span).detach()
    even = ops.remainder(flips, 2) == 0
    return ops.where(even, extra + low, span - extra + low)


def _pad(coord: Tensor, size: int, padding_mode: str, align_corners: bool,
         vectorized: bool) -> Tensor:
    if padding_mode == "border":
        return _clip(coord, size, vectorized)
    if padding_mode == "reflection":
        return _clip(_reflect(coord, size, align_corners, vectorized), size, vectorized)
    return coord


def _pad_array(coord: Any, size: int, padding_mode: str, align_corners: bool) -> Any:
    """:func:`_pad` on a constant NumPy array of tap positions (bicubic's taps), truncated
    to integers as torch's ``get_value_bounded`` does."""
    c = coord.astype(xp.float64)
    if padding_mode == "reflection":
        lo2, hi2 = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        if lo2 == hi2:
            c = xp.zeros_like(c)
        else:
            low, span = lo2 / 2, (hi2 - lo2) / 2
            dist = xp.abs(c - low)
            extra = xp.fmod(dist, span)
            flips = xp.floor(dist / span)
            c = xp.where(flips % 2 == 0, extra + low, span - extra + low)
    if padding_mode in ("border", "reflection"):
        c = xp.clip(c, 0, size - 1)
    return c.astype(xp.int64)


def _gather(flat: Tensor, idx: list[Any], sizes: list[int]) -> tuple[Tensor, Any]:
    """The values of ``flat`` (N, C, prod(sizes)) at integer positions ``idx`` (one NumPy
    array (N, *out) per spatial dim, slowest first), and where they are inside."""
    valid = xp.ones(idx[0].shape, dtype=bool)
    linear = xp.zeros(idx[0].shape, dtype=xp.int64)
    for i, s in zip(idx, sizes):
        valid &= (i >= 0) & (i < s)
        linear = linear * s + i
    linear = xp.where(valid, linear, 0)
    n, c = flat.shape[0], flat.shape[1]
    out_shape = idx[0].shape[1:]
    index = Tensor._make(linear.reshape(n, 1, -1)).expand(n, c, -1)
    vals = flat.gather(2, index).reshape(n, c, *out_shape)
    return vals, valid


def _masked(vals: Tensor, weight: Tensor | None, valid: Any) -> Tensor:
    mask = Tensor._make(valid[:, None].astype(vals._array.dtype))
    vals = vals * mask
    return vals if weight is None else vals * weight.unsqueeze(1)


@autocast_policy("grid_sampler")
def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear",
                padding_mode: str = "zeros", align_corners: bool | None = None) -> Tensor:
    """Sample ``input`` (N, C, H, W) or (N, C, D, H, W) at ``grid`` (N, Ho, Wo, 2) or
    (N, Do, Ho, Wo, 3), whose last dimension holds (x, y[, z]) in [-1, 1]; the output is
    (N, C, Ho, Wo) or (N, C, Do, Ho, Wo). Modes ``bilinear``, ``nearest`` and (2-D only)
    ``bicubic``; padding ``zeros``, ``border`` or ``reflection``; ``align_corners`` defaults
    to False with torch's warning when left out.

    Example:
        >>> import gradsum
        >>> import gradsum.nn.functional as F
        >>> img = gradsum.tensor([[[[0.0, 1.0], [2.0, 3.0]]]])
        >>> F.grid_sample(img, gradsum.zeros(1, 1, 1, 2), align_corners=True).tolist()
        [[[[1.5]]]]
    """
    if mode not in _MODES:
        raise ValueError(_messages.nn_functional_grid_sample_expected_mode(mode))
    if padding_mode not in _PADDINGS:
        raise ValueError(_messages.nn_functional_grid_sample_expected_padding(padding_mode))
    if align_corners is None:
        warnings.warn(
            _messages.default_grid_sample_affine_grid(), UserWarning, stacklevel=2)
        align_corners = False
    in_shape, grid_shape = list(input.shape), list(grid.shape)
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(_messages.grid_sampler_expected_grid_input(in_shape, grid_shape))
    if grid.shape[-1] != input.dim() - 2:
        raise RuntimeError(_messages.grid_sampler_expected_grid_size(input, grid_shape))
    for i in range(2, input.dim()):
        if input.shape[i] <= 0:
            raise RuntimeError(_messages.grid_sampler_expected_input_non(in_shape, i))
    dims = input.dim() - 2
    if input.dim() not in (4, 5) or grid.dim() != input.dim():
        raise RuntimeError(_messages.grid_sampler_expected_d_input(input, in_shape, grid_shape))
    if dims == 3 and mode == "bicubic":
        raise RuntimeError(_messages.grid_sampler_bicubic_interpolation_only())
    if not input.is_floating_point():
        raise NotImplementedError(_messages.grid_sampler_not_floating(dims, _scalar_name(input)))
    if grid.dtype != input.dtype:
        raise RuntimeError(
            _messages.grid_sampler_dtype_mismatch(_scalar_name(input), _scalar_name(grid))
        )
    return _sample(input, grid, mode, padding_mode, bool(align_corners))


@silenced  # (non-finite coordinates: NumPy's cast and subtract warnings, none in torch)
def _sample(input: Tensor, grid: Tensor, mode: str, padding_mode: str,
            align_corners: bool) -> Tensor:
    dims = input.dim() - 2
    sizes = [int(s) for s in input.shape[2:]]  # (D,) H, W: slowest first
    n, c = input.shape[0], input.shape[1]
    flat = input.reshape(n, c, -1)
    vectorized = dims == 2  # (torch's 2-D CPU kernel; the 3-D one is scalar code)
    # grid[..., 0] is x (the last, fastest spatial dim): coords[k] is spatial dim k's
    coords = [_unnormalize(grid.select(-1, dims - 1 - k), sizes[k], align_corners, vectorized)
              for k in range(dims)]
    if mode == "bicubic":
        return _bicubic(flat, coords, sizes, padding_mode, align_corners)
    first = coords[0]
    coords = [_pad(coords[k], sizes[k], padding_mode, align_corners, vectorized)
              for k in range(dims)]
    if mode == "nearest":
        idx = [xp.rint(co._array).astype(xp.int64) for co in coords]  # (half to even)
        vals, valid = _gather(flat, idx, sizes)
        return _keep_grid(_masked(vals, None, valid), first)
    out = _linear(flat, coords, sizes, vectorized)
    if padding_mode != "zeros" and all(s == 1 for s in sizes):  # (every coordinate clipped)
        return _keep_grid(out, first)
    return out


def _keep_grid(out: Tensor, coord: Tensor) -> Tensor:
    """``out`` plus an exact zero that depends on the grid: torch's node takes the grid as
    an input and gives it a zero gradient where nothing depends on it (nearest sampling,
    a grid clipped everywhere), so ``autograd.grad(out, grid)`` returns zeros there too."""
    keep = ops.where(Tensor._make(xp.zeros(coord.shape, dtype=bool)), coord, 0.0)
    return out + keep.unsqueeze(1)


def _scalar_name(t: Tensor) -> str:
    from gradsum._dtype import _TORCH_SCALAR_NAMES

    name: str = _TORCH_SCALAR_NAMES.get(t.dtype.name, t.dtype.name)
    return name


def _linear(flat: Tensor, coords: list[Tensor], sizes: list[int], vectorized: bool) -> Tensor:
    """Bilinear (2-D) or trilinear (3-D) interpolation: the 2**d corners around each point,
    weighted as torch's kernels weight them, accumulated in torch's corner order."""
    dims = len(coords)
    floors = [ops.floor(co).detach() for co in coords]
    lo = [f._array.astype(xp.int64) for f in floors]
    if vectorized:  # torch's 2-D kernel: w = x - floor(x), e = 1 - w (and n/s for y)
        frac = [co - f for co, f in zip(coords, floors)]
        weights = {0: [1 - f for f in frac], 1: frac}
    else:  # torch's 3-D kernel: (x_hi - x) and (x - x_lo) with x_hi = floor + 1
        weights = {0: [(f + 1) - co for co, f in zip(coords, floors)],
                   1: [co - f for co, f in zip(coords, floors)]}
    # torch's order: slowest dim outermost (t/b, then n/s, then w/e)
    out: Tensor | None = None
    for corner in range(2 ** dims):
        bits = [(corner >> (dims - 1 - k)) & 1 for k in range(dims)]
        idx = [lo[k] + bits[k] for k in range(dims)]
        if vectorized:  # nw = s * e: the y factor first, then x's
            w = weights[bits[0]][0] * weights[bits[1]][1]
        else:  # tnw = (x part) * (y part) * (z part)
            w = weights[bits[dims - 1]][dims - 1]
            for k in range(dims - 2, -1, -1):
                w = w * weights[bits[k]][k]
        vals, valid = _gather(flat, idx, sizes)
        term = _masked(vals, w, valid)
        out = term if out is None else out + term
    assert out is not None
    return out


def _cubic_coefficients(t: Tensor) -> list[Tensor]:
    """torch's ``get_cubic_upsample_coefficients(t)`` for A = -0.75."""
    x1 = t + 1.0
    c0 = ((_A * (x1 - 5) * x1 + 8 * _A) * x1 - 4 * _A)
    c1 = ((_A + 2) * t - (_A + 3)) * t * t + 1
    x2 = 1.0 - t
    c2 = ((_A + 2) * x2 - (_A + 3)) * x2 * x2 + 1
    x3 = 2.0 - t
    c3 = ((_A * (x3 - 5) * x3 + 8 * _A) * x3 - 4 * _A)
    return [c0, c1, c2, c3]


def _bicubic(flat: Tensor, coords: list[Tensor], sizes: list[int], padding_mode: str,
             align_corners: bool) -> Tensor:
    """16 taps around each point, padding applied to each tap, rows interpolated along x
    with x's coefficients, then the four rows along y."""
    y, x = coords
    fy, fx = ops.floor(y).detach(), ops.floor(x).detach()
    cy, cx = _cubic_coefficients(y - fy), _cubic_coefficients(x - fx)
    iy0, ix0 = fy._array.astype(xp.int64), fx._array.astype(xp.int64)
    h, w = sizes
    out: Tensor | None = None
    for i in range(4):
        ty = _pad_array(iy0 - 1 + i, h, padding_mode, align_corners)
        row: Tensor | None = None
        for j in range(4):
            tx = _pad_array(ix0 - 1 + j, w, padding_mode, align_corners)
            vals, valid = _gather(flat, [ty, tx], sizes)
            term = _masked(vals, cx[j], valid)
            row = term if row is None else row + term
        assert row is not None
        term = row * cy[i].unsqueeze(1)
        out = term if out is None else out + term
    assert out is not None
    return out
