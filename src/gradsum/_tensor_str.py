"""Tensor printing: ``repr(t)`` / ``str(t)`` exactly as torch prints the same values.

The rules follow torch's printer:

* one formatter per tensor, fitted to the (summarised) elements: integers and bools print as
  Python does, right-aligned to the widest element; floats print in *int mode* (``3.``) when
  every nonzero finite value is integral, in *scientific mode* (``1.0000e+09``) when the
  nonzero finite magnitudes span more than a factor 1000, exceed ``1e8`` or fall below
  ``1e-4`` (or as :func:`set_printoptions` forces), and else with ``precision`` decimals;
  the width comes from the nonzero finite values only, so ``nan``, ``inf`` and zeros never
  widen a column;
* a tensor with more than ``threshold`` elements is summarised to ``edgeitems`` entries at
  each end of every dimension (``...`` rows and ``,  ...`` columns);
* rows wrap at ``linewidth`` characters, continuation lines indented under the ``tensor(``
  prefix, and slices of >2-D tensors are separated by blank lines;
* suffixes: ``size=`` for empty tensors that are not 1-D (and when ``edgeitems`` is 0),
  ``dtype=`` for a dtype other than the default float, int64 and bool (for empty tensors,
  for any dtype other than the default float), then ``grad_fn=<...>`` or
  ``requires_grad=True``.

Example:
    >>> import gradsum
    >>> gradsum.tensor([1.0, 2.5, -3.0])
    tensor([ 1.0000,  2.5000, -3.0000])
    >>> gradsum.tensor([1e-6, 1.0])
    tensor([1.0000e-06, 1.0000e+00])
    >>> gradsum.set_printoptions(threshold=5)
    >>> gradsum.arange(10)
    tensor([0, 1, 2,  ..., 7, 8, 9])
    >>> gradsum.set_printoptions(profile="default")
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any

from gradsum import _dtype as D
from gradsum._backend import xp

if TYPE_CHECKING:
    from gradsum._tensor import Tensor

__all__ = ["get_printoptions", "set_printoptions"]


@dataclasses.dataclass
class _PrintOptions:
    """The printer's settings (torch's defaults)."""

    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


#: the options in effect (module state, like torch's ``PRINT_OPTS``)
PRINT_OPTS = _PrintOptions()

#: profile name -> (precision, threshold, edgeitems, linewidth)
_PROFILES: dict[str, tuple[int, float, int, int]] = {
    "default": (4, 1000, 3, 80),
    "short": (2, 1000, 2, 80),
    "full": (4, math.inf, 3, 80),
}


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set the options for printing tensors, with torch's semantics.

    Args:
        precision: digits after the decimal point (default 4).
        threshold: element count above which a tensor is summarised (default 1000).
        edgeitems: items kept at each end of each dimension when summarising (default 3).
        linewidth: characters per line before a row wraps (default 80).
        profile: ``"default"``, ``"short"`` (precision 2, edgeitems 2) or ``"full"`` (never
            summarise); applied first, so the other arguments override it. An unknown name
            is ignored, as in torch.
        sci_mode: ``True``/``False`` force scientific notation on/off; ``None`` lets the
            values decide. Unlike the other options it is *always* set, so a call that
            leaves it out resets it to ``None`` (as torch does).

    Example:
        >>> import gradsum
        >>> gradsum.set_printoptions(precision=2)
        >>> gradsum.tensor([1.12345])
        tensor([1.12])
        >>> gradsum.set_printoptions(profile="default")
        >>> gradsum.tensor([1.12345])
        tensor([1.1235])
    """
    if profile is not None and profile in _PROFILES:
        (PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems,
         PRINT_OPTS.linewidth) = _PROFILES[profile]
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """The current print options, as keyword arguments for :func:`set_printoptions`.

    Example:
        >>> import gradsum
        >>> gradsum.get_printoptions()
        {'precision': 4, 'threshold': 1000, 'edgeitems': 3, 'linewidth': 80, 'sci_mode': None}
    """
    return dataclasses.asdict(PRINT_OPTS)


class _Formatter:
    """Formats every element of one tensor to a common width.

    Built from the (summarised) elements that will be printed; ``format`` turns one Python
    scalar into its right-aligned text.
    """

    def __init__(self, arr: Any) -> None:
        self.floating = arr.dtype.kind in "fV"
        self.int_mode = True
        self.sci_mode: bool = False
        self.max_width = 1
        flat = arr.reshape(-1)
        if not self.floating:
            if flat.size:
                if flat.dtype.kind == "b":
                    width = 4 if bool(flat.all()) else 5  # "True" / "False"
                else:  # the widest integer is the largest or the most negative one
                    width = max(len(str(int(flat.max()))), len(str(int(flat.min()))))
                self.max_width = max(self.max_width, width)
            return

        vals = flat[xp.isfinite(flat) & (flat != 0)]
        if vals.size == 0:  # nothing but zeros, inf and nan: int mode, no width
            return
        mags = xp.abs(vals).astype(xp.float64)
        lo, hi = float(mags.min()), float(mags.max())
        self.int_mode = bool(xp.all(vals == xp.ceil(vals)))
        forced = PRINT_OPTS.sci_mode
        self.sci_mode = bool(hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
                             if forced is None else forced)

        # Text length grows with the magnitude (fixed point) or with the exponent's size
        # (scientific), separately for each sign, so the extremes of each sign suffice.
        candidates: list[float] = []
        for part in (vals[vals > 0], vals[vals < 0]):
            if part.size:
                candidates += [float(part.min()), float(part.max())]
        prec = PRINT_OPTS.precision
        for v in candidates:
            if self.sci_mode:
                width = len(f"{v:.{prec}e}")
            elif self.int_mode:
                width = len(f"{v:.0f}") + 1  # the trailing "."
            else:
                width = len(f"{v:.{prec}f}")
            self.max_width = max(self.max_width, width)

    def width(self) -> int:
        """The common width of the formatted elements."""
        return self.max_width

    def format(self, value: Any) -> str:
        """One element (a Python scalar) as text, right-aligned to :meth:`width`."""
        if self.floating:
            prec = PRINT_OPTS.precision
            if self.sci_mode:
                text = f"{value:{self.max_width}.{prec}e}"
            elif self.int_mode:
                text = f"{value:.0f}"
                if math.isfinite(value):
                    text += "."
            else:
                text = f"{value:.{prec}f}"
        else:
            text = f"{value}"
        return text.rjust(self.max_width)


def _summarized_data(arr: Any) -> Any:
    """The elements a summarised print shows: ``edgeitems`` at each end of every axis."""
    if arr.ndim == 0:
        return arr
    edge = PRINT_OPTS.edgeitems
    if arr.ndim >= 2 and not edge:
        return arr[(slice(0, 0),) * arr.ndim]
    for axis, n in enumerate(arr.shape):
        if n > 2 * edge:
            keep = xp.concatenate([xp.arange(edge), xp.arange(n - edge, n)])
            arr = xp.take(arr, keep, axis=axis)
    return arr


def _vector_str(arr: Any, indent: int, summarize: bool, formatter: _Formatter) -> str:
    """A 1-D array as ``[a, b, ...]``, wrapped to the line width."""
    element_length = formatter.width() + 2  # the element and its ", "
    per_line = max(1, (PRINT_OPTS.linewidth - indent) // element_length)
    edge = PRINT_OPTS.edgeitems
    if summarize and not edge:
        data = ["..."]
    elif summarize and arr.shape[0] > 2 * edge:
        data = ([formatter.format(v) for v in arr[:edge].tolist()] + [" ..."]
                + [formatter.format(v) for v in arr[-edge:].tolist()])
    else:
        data = [formatter.format(v) for v in arr.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str_with_formatter(arr: Any, indent: int, summarize: bool,
                               formatter: _Formatter) -> str:
    """An array of any rank as nested brackets, its slices on separate lines."""
    if arr.ndim == 0:
        return formatter.format(arr.item())
    if arr.ndim == 1:
        return _vector_str(arr, indent, summarize, formatter)
    edge = PRINT_OPTS.edgeitems
    n = arr.shape[0]
    if summarize and n > 2 * edge:
        slices = ([_tensor_str_with_formatter(arr[i], indent + 1, summarize, formatter)
                   for i in range(edge)]
                  + ["..."]
                  + [_tensor_str_with_formatter(arr[i], indent + 1, summarize, formatter)
                     for i in range(n - edge, n)])
    else:
        slices = [_tensor_str_with_formatter(arr[i], indent + 1, summarize, formatter)
                  for i in range(n)]
    return "[" + ("," + "\n" * (arr.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _tensor_str(arr: Any, indent: int) -> str:
    """The bracketed contents of a tensor's repr (without prefix and suffixes)."""
    if arr.size == 0:
        return "[]"
    summarize = arr.size > PRINT_OPTS.threshold
    formatter = _Formatter(_summarized_data(arr) if summarize else arr)
    return _tensor_str_with_formatter(arr, indent, summarize, formatter)


def _add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    """Append ``, suffix`` items and the closing parenthesis, wrapping past the line width."""
    parts = [text]
    # (torch's count: the last line's length plus two)
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        # measured as torch spells it ("dtype=torch.float64"), so lines break where torch's do
        length = len(suffix.replace("gradsum.", "torch."))
        if last_line_len + length + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + length
        else:
            parts.append(", " + suffix)
            last_line_len += length + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(t: Tensor) -> str:
    """``repr(t)``: torch's text for the same values, with ``gradsum.`` dtype names.

    Example:
        >>> import gradsum
        >>> gradsum.zeros(0, 3, dtype=gradsum.int64)
        tensor([], size=(0, 3), dtype=gradsum.int64)
    """
    from gradsum._tensor import Tensor
    cls = type(t)
    # (nn.Parameter prints as a plain tensor, its subclasses wrapped: torch's rule; the class
    # says so itself, so printing needs nothing from nn)
    plain = cls is Tensor or vars(cls).get("_repr_as_tensor", False)
    prefix = "tensor(" if plain else f"{type(t).__name__}("
    indent = len(prefix)
    arr = t._array
    dtype = t.dtype
    default = D.get_default_dtype()
    suffixes: list[str] = []
    if arr.size == 0:
        if arr.ndim != 1:
            suffixes.append(f"size={tuple(arr.shape)}")
        if dtype.name != default.name:
            suffixes.append(f"dtype={dtype!r}")
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(f"size={tuple(arr.shape)}")
        if dtype.name not in (default.name, "int64", "bool"):
            suffixes.append(f"dtype={dtype!r}")
        body = _tensor_str(arr, indent)
    if t._grad_fn is not None:
        suffixes.append(f"grad_fn=<{t._grad_fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    text = _add_suffixes(prefix + body, suffixes, indent)
    wrapper = getattr(cls, "_repr_wrapper", None)
    if wrapper is not None and not plain:
        text = f"{wrapper}({text})"
    return text
