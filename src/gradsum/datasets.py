"""Small real datasets shipped inside the package (no download, no extra dependency).

- :func:`load_digits`: the UCI optical handwritten digits, 1797 images of 8x8 pixels, 10
  classes (E. Alpaydin & C. Kaynak, 1998, CC BY 4.0; see ``gradsum/data/LICENSE-digits.txt``).

Example:
    >>> from gradsum.datasets import load_digits
    >>> x, y = load_digits()
    >>> tuple(x.shape), x.dtype, tuple(y.shape), y.dtype
    ((1797, 64), gradsum.float32, (1797,), gradsum.int64)
    >>> float(x.min()), float(x.max()), sorted(set(y.tolist()))
    (0.0, 1.0, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
"""

from __future__ import annotations

from importlib import resources
from typing import TYPE_CHECKING

from gradsum._backend import xp

if TYPE_CHECKING:
    from gradsum._tensor import Tensor

__all__ = ["DIGITS_CITATION", "load_digits"]

#: Where the digits come from; print it wherever the data is used.
DIGITS_CITATION = (
    "UCI ML Repository: Optical Recognition of Handwritten Digits "
    "(E. Alpaydin & C. Kaynak, 1998), CC BY 4.0"
)


def load_digits(*, flatten: bool = True, scale: bool = True) -> tuple[Tensor, Tensor]:
    """The UCI optical handwritten digits: 1797 grey 8x8 images of the digits 0-9.

    Each pixel counts the "on" pixels of a 4x4 block of the original 32x32 bitmap (0..16).
    The data ships as ``gradsum/data/digits.npz`` (45 KB; source and license in
    ``gradsum/data/LICENSE-digits.txt``). Every call returns fresh tensors.

    Args:
        flatten: images as rows of 64 features, shape ``(1797, 64)``; else ``(1797, 8, 8)``.
        scale: pixels as ``float32`` in ``[0, 1]`` (divided by 16); else the raw ``uint8``
            counts.

    Returns:
        ``(images, labels)``: the images, and the labels as ``int64`` of shape ``(1797,)``.

    Example:
        >>> from gradsum.datasets import load_digits
        >>> x, y = load_digits(flatten=False, scale=False)
        >>> tuple(x.shape), x.dtype, int(x.max()), y[:5].tolist()
        ((1797, 8, 8), gradsum.uint8, 16, [0, 1, 2, 3, 4])
    """
    from gradsum._creation import from_numpy

    path = resources.files("gradsum").joinpath("data/digits.npz")
    with path.open("rb") as fh, xp.load(fh) as data:
        images = xp.array(data["images"])
        labels = xp.array(data["labels"]).astype(xp.int64)
    if flatten:
        images = images.reshape(images.shape[0], -1)
    if scale:
        images = images.astype(xp.float32) / xp.float32(16.0)
    return from_numpy(images), from_numpy(labels)
