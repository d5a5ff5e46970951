"""Dtypes with torch's names and torch's type-promotion rules.

Example:
    >>> import gradsum
    >>> gradsum.float32
    gradsum.float32
    >>> gradsum.promote_types(gradsum.int64, gradsum.float32)
    gradsum.float32
"""

from __future__ import annotations

from typing import Any

from gradsum._backend import xp


class dtype:
    """A tensor element type (``gradsum.float32``, ``gradsum.int64``, ...)."""

    __slots__ = ("_category", "_itemsize", "is_floating_point", "name", "np")

    def __init__(self, name: str, np_dtype: Any, category: int) -> None:
        self.name = name
        self.np = xp.dtype(np_dtype)
        self._category = category  # 0 bool, 1 integer, 2 floating
        self._itemsize = self.np.itemsize
        self.is_floating_point = category == 2

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return self._itemsize

    @property
    def is_signed(self) -> bool:
        """Whether the type holds negative values (``False`` for ``bool`` and ``uint8``)."""
        return self._category != 0 and self.np.kind != "u"

    @property
    def is_complex(self) -> bool:
        """Always ``False``: gradsum has no complex dtypes."""
        return False

    def to_real(self) -> dtype:
        """The real counterpart of this dtype: itself, as gradsum has no complex dtypes."""
        return self

    def __repr__(self) -> str:
        return f"gradsum.{self.name}"

    def __reduce__(self) -> str:
        return self.name


float32 = dtype("float32", "float32", 2)
float64 = dtype("float64", "float64", 2)
float16 = dtype("float16", "float16", 2)
int64 = dtype("int64", "int64", 1)
int32 = dtype("int32", "int32", 1)
int16 = dtype("int16", "int16", 1)
int8 = dtype("int8", "int8", 1)
uint8 = dtype("uint8", "uint8", 1)
bool_ = dtype("bool", "bool", 0)

float = float32
double = float64
half = float16
long = int64
int = int32


class _UnavailableDtype(dtype):
    """A dtype whose NumPy type needs an optional package that is not installed: it can be
    named, compared and promoted, and any use that needs its elements raises ``TypeError``."""

    __slots__ = ("_why",)

    def __init__(self, name: str, itemsize: int, category: int, why: str) -> None:
        self.name = name
        self._category = category
        self._itemsize = itemsize
        self.is_floating_point = category == 2
        self._why = why

    @property  # type: ignore[override]
    def np(self) -> Any:
        raise TypeError(self._why)


try:  # bfloat16's NumPy type comes from the optional ml_dtypes package (gradsum[bfloat16])
    import ml_dtypes as _ml_dtypes
except ImportError:
    _ml_dtypes = None

#: torch's bfloat16 (8 exponent bits, 7 mantissa bits). Its NumPy type is ``ml_dtypes.bfloat16``;
#: elementwise ops compute in float32 and round back to nearest even, as torch's CPU kernels do.
bfloat16: dtype = (
    dtype("bfloat16", _ml_dtypes.bfloat16, 2) if _ml_dtypes is not None else
    _UnavailableDtype("bfloat16", 2, 2, "bfloat16 needs the optional ml_dtypes package: "
                      "pip install ml_dtypes (or gradsum[bfloat16])"))

#: the Python types torch takes as dtypes (``zeros(2, dtype=float)`` is float64)
_PYTHON_TYPES: dict[Any, dtype] = {}

_ALL: tuple[dtype, ...] = (float32, float64, float16, int64, int32, int16, int8, uint8, bool_)
if _ml_dtypes is not None:
    _ALL += (bfloat16,)
_BY_NP: dict[Any, dtype] = {d.np: d for d in _ALL}
#: the NumPy type of bfloat16: its kind is "V", not "f". Without ml_dtypes, a 2-byte void type
#: no gradsum array has, so ``array.dtype == _BF16_NP`` is always False (never ``None``: NumPy
#: reads ``dtype == None`` as ``dtype == float64``)
_BF16_NP: Any = (bfloat16.np if _ml_dtypes is not None
                 else xp.dtype([("gradsum_has_no_bfloat16_without_ml_dtypes", "V2")]))

_default_float = float32


def is_float_np(np_dtype: Any) -> bool:
    """Whether a backend dtype is floating: kind "f", or bfloat16 (whose NumPy kind is "V")."""
    return np_dtype.kind == "f" or np_dtype == _BF16_NP


def from_numpy_dtype(np_dtype: Any) -> dtype:
    """The gradsum dtype of a backend dtype; raises ``TypeError`` for unsupported ones."""
    try:
        return _BY_NP[np_dtype]
    except KeyError:
        pass
    try:
        return _BY_NP[xp.dtype(np_dtype)]
    except (KeyError, TypeError):
        raise TypeError(
            f"can't convert array of dtype {np_dtype}: gradsum supports "
            f"{', '.join(d.name for d in _ALL)}. Convert with .astype() first."
        ) from None


def to_numpy_dtype(d: Any) -> Any:
    """Backend dtype for a gradsum dtype (or anything NumPy understands)."""
    if isinstance(d, dtype):
        return d.np
    if d is None:
        return None
    return from_numpy_dtype(d).np


def get_default_dtype() -> dtype:
    """The dtype of floating tensors created from Python floats (``float32`` by default)."""
    return _default_float


def set_default_dtype(d: dtype) -> None:
    """Set the default floating dtype (``float32`` or ``float64``), like torch."""
    global _default_float
    if not isinstance(d, dtype):
        raise TypeError(f"invalid dtype object: only floating-point types are supported as the "
                        f"default type, got {d!r}. Pass e.g. gradsum.float64.")
    if not d.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default_float = d


def from_python_type(value: Any, name: str, arg: str = "dtype") -> dtype | None:
    """``value`` as an optional dtype argument of ``name``: a gradsum dtype, ``None``, or one of
    the Python types ``float``/``int``/``bool`` that torch also takes (float64/int64/bool);
    anything else raises torch's ``TypeError``."""
    if value is None or isinstance(value, dtype):
        return value
    found = _PYTHON_TYPES.get(value) if isinstance(value, type) else None
    if found is None:
        raise TypeError(
            f"{name}(): argument '{arg}' must be gradsum.dtype, not {type(value).__name__}. "
            "Pass e.g. dtype=gradsum.float32."
        )
    return found


def promote_types(a: dtype, b: dtype) -> dtype:
    """The smallest dtype both ``a`` and ``b`` can be cast to, as ``torch.promote_types``."""
    for pos, d in enumerate((a, b), 1):
        if not isinstance(d, dtype):
            raise TypeError(f"promote_types(): argument 'type{pos}' (position {pos}) must be "
                            f"gradsum.dtype, not {type(d).__name__}")
    if a is b:
        return a
    if a._category != b._category:  # torch: the higher category wins with its own width
        return a if a._category > b._category else b
    if bfloat16 in (a, b):  # (without asking NumPy: the dtype exists without ml_dtypes too)
        other = b if a is bfloat16 else a
        return float32 if other is float16 else other
    return from_numpy_dtype(xp.promote_types(a.np, b.np))


def _combine_categories(higher: dtype | None, lower: dtype | None) -> dtype | None:
    # The tier rule of torch's result_type: a tier of lower priority (zero-dim tensors,
    # then Python scalars) changes the dtype only when it brings a higher category.
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.is_floating_point:
        return higher
    if higher is bool_ or lower.is_floating_point:
        return promote_types(higher, lower)
    return higher


def _scalar_dtype(value: object) -> dtype:
    kind = _scalar_kind(value)
    if kind == "b":
        return bool_
    if kind == "i":
        return int64
    return _default_float


def _scalar_kind(value: object) -> str:
    if isinstance(value, bool):
        return "b"
    if isinstance(value, (builtins_int, xp.integer)):
        return "i"
    if isinstance(value, (builtins_float, xp.floating)):
        return "f"
    if isinstance(value, xp.bool_):
        return "f"  # (torch's argument parser reads a NumPy bool as a float)
    raise TypeError(f"unsupported scalar of type {type(value).__name__}")


import builtins as _builtins  # noqa: E402

builtins_int = _builtins.int
builtins_float = _builtins.float
_PYTHON_TYPES.update({builtins_float: float64, builtins_int: int64, _builtins.bool: bool_})


def result_type(*operands: Any) -> dtype:
    """Result dtype of an op on tensors and Python scalars, following torch's three tiers.

    Example:
        >>> import gradsum
        >>> gradsum.result_type(gradsum.tensor([1, 2]), 2.5)
        gradsum.float32
    """
    dim: dtype | None = None
    zero: dtype | None = None
    wrapped: dtype | None = None
    for op in operands:
        arr = getattr(op, "_array", None)
        if arr is not None:
            d = from_numpy_dtype(arr.dtype)
            if arr.ndim == 0:
                zero = d if zero is None else promote_types(zero, d)
            else:
                dim = d if dim is None else promote_types(dim, d)
        else:
            d = _scalar_dtype(op)
            wrapped = d if wrapped is None else promote_types(wrapped, d)
    out = _combine_categories(dim, _combine_categories(zero, wrapped))
    assert out is not None  # at least one operand
    return out


#: torch's C++ scalar-type names, as its "not implemented for 'Long'" errors spell them
_TORCH_SCALAR_NAMES = {
    "float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
    "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
    "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble",
}


def not_implemented(kernel: str, np_dtype: Any, fix: str = "") -> NotImplementedError:
    """torch's error for a kernel that has no implementation for a dtype, e.g.
    ``"silu_cpu" not implemented for 'Long'``, followed by the fix when one is given.

    Example:
        >>> import numpy as np
        >>> from gradsum._dtype import not_implemented
        >>> print(not_implemented("silu_cpu", np.dtype("int64")))
        "silu_cpu" not implemented for 'Long'
    """
    name = _TORCH_SCALAR_NAMES.get(str(np_dtype), str(np_dtype))
    return NotImplementedError(f'"{kernel}" not implemented for \'{name}\'' + (
        f". {fix}" if fix else ""))


class finfo:
    """Machine limits of a floating dtype, as ``torch.finfo`` (the default dtype without one).

    Example:
        >>> import gradsum
        >>> gradsum.finfo(gradsum.bfloat16).eps
        0.0078125
        >>> gradsum.finfo(gradsum.bfloat16).bits
        16
    """

    def __init__(self, type: dtype | None = None) -> None:
        d = get_default_dtype() if type is None else type
        if not isinstance(d, dtype) or not d.is_floating_point:
            raise TypeError("torch.finfo() requires a floating point input type. Use "
                            "torch.iinfo to handle 'torch.finfo'")
        self.bits = d.itemsize * 8
        self.dtype = d.name
        if d.name == "bfloat16":  # (known without ml_dtypes: 8 exponent, 7 mantissa bits)
            self.eps, self.resolution = 2.0 ** -7, 0.01
            self.max = (2.0 - 2.0 ** -7) * 2.0 ** 127
            self.tiny = self.smallest_normal = 2.0 ** -126
        else:
            info = xp.finfo(d.np)
            self.eps, self.resolution = _builtins.float(info.eps), 10.0 ** -info.precision
            self.max = _builtins.float(info.max)
            self.tiny = self.smallest_normal = _builtins.float(info.smallest_normal)
        self.min = -self.max

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Limits of an integer (or bool) dtype, as ``torch.iinfo``.

    Example:
        >>> import gradsum
        >>> gradsum.iinfo(gradsum.int8).min
        -128
    """

    def __init__(self, type: dtype) -> None:
        if not isinstance(type, dtype) or type.is_floating_point:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo "
                            "to handle 'torch.iinfo'")
        info = xp.iinfo(type.np) if type is not bool_ else None
        self.bits = type.itemsize * 8
        self.min, self.max = (0, 1) if info is None else (_builtins.int(info.min),
                                                            _builtins.int(info.max))
        self.dtype = type.name

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


def can_cast(from_: dtype, to: dtype) -> bool:
    """Whether an in-place op may write a ``from_`` result into a ``to`` tensor (torch rule)."""
    return from_._category <= to._category
