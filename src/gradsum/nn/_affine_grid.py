"""``F.affine_grid``: the sampling grid of a batch of affine matrices, as torch builds it
(``affine_grid_generator``): a constant base grid of normalised coordinates ``[x, y, (z,) 1]``
times ``theta`` transposed, one batched matrix product, so the gradient to ``theta`` comes
from ``bmm``'s rule.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.nn import _messages


def _linspace_from_neg_one(num_steps: int, align_corners: bool, np_dtype: object) -> object:
    """torch's ``linspace_from_neg_one``: ``num_steps`` points over [-1, 1] (the corner pixels'
    centres when ``align_corners``, else scaled by ``(n - 1) / n`` to the pixel centres of an
    image spanning [-1, 1]); a single step is the centre, 0."""
    if num_steps <= 1:
        return xp.zeros((1,), dtype=np_dtype)
    from gradsum._creation import linspace
    from gradsum._dtype import from_numpy_dtype

    r = linspace(-1, 1, num_steps, dtype=from_numpy_dtype(xp.dtype(np_dtype)))._array
    if not align_corners:
        r = r * (num_steps - 1) / num_steps
    return r.astype(np_dtype, copy=False)


def affine_grid(theta: Tensor, size: Sequence[int], align_corners: bool | None = None) -> Tensor:
    """A 2-D (``size`` N, C, H, W; ``theta`` N x 2 x 3) or 3-D (N, C, D, H, W; N x 3 x 4)
    sampling grid for :func:`grid_sample`: shape ``(N, H, W, 2)`` or ``(N, D, H, W, 3)``.
    ``align_corners`` defaults to False, with torch's warning when it is left out.

    Example:
        >>> import gradsum
        >>> import gradsum.nn.functional as F
        >>> theta = gradsum.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
        >>> F.affine_grid(theta, [1, 1, 2, 2], align_corners=True).tolist()
        [[[[-1.0, -1.0], [1.0, -1.0]], [[-1.0, 1.0], [1.0, 1.0]]]]
    """
    if align_corners is None:
        warnings.warn(
            _messages.default_grid_sample_affine_grid(), UserWarning, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(_messages.expected_theta_floating_point_type(theta))
    size = list(size)
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(_messages.affine_theta_shape(2, size, theta))
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(_messages.affine_theta_shape(3, size, theta))
        spatial = size[-3:]
    else:
        raise NotImplementedError(  # (torch's type: sizes of other lengths have no grid)
            _messages.affine_grid_only_supports_4d(size))
    if align_corners and min(spatial) == 1:
        warnings.warn(
            _messages.since_version_1_3_0(), UserWarning, stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(_messages.expected_non_zero_positive_output(size))
    n = size[0]
    np_dtype = theta._array.dtype
    # base[..., k] is the k-th coordinate (x along the last spatial dim, then y, then z), 1 last
    dims = len(spatial)
    base = xp.ones((*spatial, dims + 1), dtype=np_dtype)
    for k in range(dims):
        axis = dims - 1 - k  # x varies along the last spatial axis
        coords = _linspace_from_neg_one(spatial[axis], bool(align_corners), np_dtype)
        shape = [1] * dims
        shape[axis] = spatial[axis]
        base[..., k] = xp.reshape(coords, shape)
    points = int(xp.prod(xp.asarray(spatial)))
    grid = Tensor._make(xp.broadcast_to(base.reshape(1, points, dims + 1),
                                        (n, points, dims + 1)).copy())
    return grid.bmm(theta.transpose(1, 2)).view(n, *spatial, dims)
