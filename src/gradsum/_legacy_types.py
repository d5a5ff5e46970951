"""torch's legacy tensor types: ``FloatTensor``, ``LongTensor``, ... and ``Tensor.type``.

In torch these are not subclasses of ``Tensor`` but classes whose metaclass
(``torch.tensortype``) makes ``isinstance(x, torch.FloatTensor)`` mean "a float32 CPU
tensor", and whose call is a legacy constructor: ``FloatTensor(2, 3)`` (a tensor of that
size), ``FloatTensor([1, 2])`` (data converted), ``FloatTensor(other)`` (an alias of a tensor
of that dtype). The CUDA ones (``gradsum.cuda.FloatTensor``, :data:`CUDA_TYPES`) exist, as in
torch's CPU build, and refuse to construct.

``Tensor.type()`` returns torch's own spelling, ``'torch.FloatTensor'``, so that a script that
compares it with a string ports unchanged; ``Tensor.type(T)`` accepts a legacy type, its name
(``'torch.DoubleTensor'``, ``'gradsum.DoubleTensor'`` too) or a dtype.

Example:
    >>> import gradsum
    >>> x = gradsum.FloatTensor([1, 2])
    >>> isinstance(x, gradsum.FloatTensor), isinstance(x, gradsum.DoubleTensor)
    (True, False)
    >>> x.type()
    'torch.FloatTensor'
    >>> x.type(gradsum.LongTensor)
    tensor([1, 2])
    >>> gradsum.FloatTensor(2, 3).shape
    (2, 3)
"""

from __future__ import annotations

import warnings
from typing import Any

from gradsum import _dtype as D
from gradsum._backend import xp

# (legacy name, dtype name) in torch's order; bfloat16 exists as a dtype even without
# ml_dtypes (gradsum._dtype: its use then raises TypeError), so BFloat16Tensor always exists
_TYPES = (
    ("DoubleTensor", "float64"), ("FloatTensor", "float32"), ("HalfTensor", "float16"),
    ("BFloat16Tensor", "bfloat16"), ("ByteTensor", "uint8"), ("CharTensor", "int8"),
    ("ShortTensor", "int16"), ("IntTensor", "int32"), ("LongTensor", "int64"),
    ("BoolTensor", "bool"),
)

#: dtype name -> the C++ scalar type name torch's legacy-constructor errors print
_CPP_NAMES = {
    "float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
    "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
    "uint8": "unsigned char", "bool": "bool",
}

_NO_CUDA = "Torch not compiled with CUDA enabled."

#: the signatures torch's legacy constructor lists when no overload matches
_SIGNATURES = (
    " * (*, torch.device device = None)\n"
    " * (torch.Storage storage)\n"
    " * (Tensor other)\n"
    " * (tuple of ints size, *, torch.device device = None)\n"
    " * (object data, *, torch.device device = None)\n"
)


def _dtype_by_name(name: str) -> D.dtype:
    found: D.dtype = getattr(D, "bool_" if name == "bool" else name)
    return found


def _type_name(value: Any) -> str:
    """The name CPython's ``tp_name`` gives ``type(value)`` (what torch's messages print):
    the bare name for builtins and for classes defined in Python, ``module.name`` for
    extension types (``numpy.float32``)."""
    cls = value if isinstance(value, type) else type(value)
    heap = bool(cls.__flags__ & (1 << 9))  # Py_TPFLAGS_HEAPTYPE: defined by a class statement
    if heap or cls.__module__ == "builtins":
        return cls.__name__
    return f"{cls.__module__}.{cls.__name__}"


def _options(dtype_name: str) -> str:
    return (f"TensorOptions(dtype={_CPP_NAMES.get(dtype_name, dtype_name)}, device=cpu, "
            "layout=Strided, requires_grad=false (default), pinned_memory=false (default), "
            "memory_format=(nullopt))")


def _invalid_combination(args: tuple[Any, ...], kwargs: dict[str, Any]) -> TypeError:
    got = ", ".join([_type_name(a) for a in args]
                    + [f"{k}={_type_name(v)}" for k, v in kwargs.items()])
    return TypeError(
        f"new() received an invalid combination of arguments - got ({got}), but expected one "
        f"of:\n{_SIGNATURES}Legacy constructors take sizes, data or a tensor of their dtype "
        "(and device='cpu'); use gradsum.tensor(data, dtype=..., requires_grad=...) for more.")


def _is_size(value: Any) -> bool:
    """An integer that torch's argument parser takes as a size: a Python or NumPy integer,
    or a 0-d NumPy array of integers (``FloatTensor(np.array(2))`` has two elements)."""
    if isinstance(value, xp.ndarray):
        return value.ndim == 0 and value.dtype.kind in "iu"
    return isinstance(value, (int, xp.integer)) and not isinstance(value, bool)


class tensortype(type):
    """The metaclass of the legacy tensor types (torch's ``torch.tensortype``).

    ``isinstance(x, FloatTensor)`` is true for a float32 tensor on the CPU (parameters
    included); no class is a subclass of another, nor of ``Tensor``, as in torch. Calling one
    is torch's legacy constructor (see :func:`construct`).

    Example:
        >>> import gradsum
        >>> isinstance(gradsum.nn.Parameter(gradsum.zeros(2)), gradsum.FloatTensor)
        True
        >>> issubclass(gradsum.FloatTensor, gradsum.Tensor)
        False
    """

    dtype: D.dtype
    is_cuda: bool
    is_xpu: bool = False
    is_sparse: bool = False
    is_sparse_csr: bool = False

    def __instancecheck__(cls, obj: Any) -> bool:
        from gradsum._tensor import Tensor

        return not cls.is_cuda and isinstance(obj, Tensor) and obj.dtype == cls.dtype

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return construct(cls, args, kwargs)

    @property
    def _torch_name(cls) -> str:
        """torch's name of this type: ``'torch.FloatTensor'``, ``'torch.cuda.FloatTensor'``."""
        return f"torch.cuda.{cls.__name__}" if cls.is_cuda else f"torch.{cls.__name__}"


def _make_types(cuda: bool) -> dict[str, tensortype]:
    out: dict[str, tensortype] = {}
    for name, dtype_name in _TYPES:
        dtype = _dtype_by_name(dtype_name)
        out[name] = tensortype(name, (), {
            "__module__": "gradsum.cuda" if cuda else "gradsum", "__qualname__": name,
            "__slots__": (), "dtype": dtype, "is_cuda": cuda,
        })
    return out


#: the CPU legacy types, exported at gradsum's top level
CPU_TYPES: dict[str, tensortype] = _make_types(cuda=False)
#: the CUDA legacy types (for ``gradsum.cuda``): they answer ``isinstance`` with False and
#: refuse to construct, with the ``TypeError`` of torch's CPU-only build
CUDA_TYPES: dict[str, tensortype] = _make_types(cuda=True)

DoubleTensor = CPU_TYPES["DoubleTensor"]
FloatTensor = CPU_TYPES["FloatTensor"]
HalfTensor = CPU_TYPES["HalfTensor"]
BFloat16Tensor = CPU_TYPES["BFloat16Tensor"]
ByteTensor = CPU_TYPES["ByteTensor"]
CharTensor = CPU_TYPES["CharTensor"]
ShortTensor = CPU_TYPES["ShortTensor"]
IntTensor = CPU_TYPES["IntTensor"]
LongTensor = CPU_TYPES["LongTensor"]
BoolTensor = CPU_TYPES["BoolTensor"]


def _check_device(device: Any) -> None:
    if device is None:
        return
    kind = getattr(device, "type", None)
    if not isinstance(kind, str):
        kind = str(device).split(":")[0]
    if kind != "cpu":
        raise RuntimeError(
            f"legacy constructor expects device type: cpu but device type: {kind} was passed. "
            "gradsum runs on the CPU only: leave device out or pass device='cpu'.")


def construct(cls: tensortype, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """torch's legacy constructor ``cls(*args, **kwargs)``.

    * ``T()``: an empty 1-d tensor; ``T(2, 3)``, ``T(size=(2, 3))`` or ``T(x.size())`` (a
      :class:`gradsum.Size`): a tensor of that size (torch leaves it uninitialised; gradsum
      fills it with zeros);
    * ``T(data)`` / ``T(data=...)``: a sequence or array converted to the type's dtype (a NumPy
      array of exactly that dtype is shared, as in torch); a 0-d or scalar number is refused;
    * ``T(other)``: an alias of ``other`` (same storage; ``AliasBackward0`` when it requires
      grad), which must already have the type's dtype (``TypeError`` otherwise);
    * ``device`` may only name the CPU.

    Example:
        >>> import gradsum
        >>> gradsum.ByteTensor([-1, 2])
        tensor([255,   2], dtype=gradsum.uint8)
        >>> gradsum.LongTensor(gradsum.tensor([1.0]))
        Traceback (most recent call last):
        ...
        TypeError: expected TensorOptions(dtype=long int, ...
    """
    from gradsum._creation import tensor as _tensor_fn
    from gradsum._tensor import Size, Tensor

    if cls.is_cuda:
        raise TypeError(
            f"type {cls._torch_name} not available. {_NO_CUDA} gradsum runs on the CPU only: "
            f"use gradsum.{cls.__name__} (or gradsum.tensor(..., dtype={cls.dtype})).")
    given = dict(kwargs)
    device = given.pop("device", None)
    if set(given) - {"size", "data"} or len(given) > 1 or (given and args):
        raise _invalid_combination(args, kwargs)
    _check_device(device)
    dtype = cls.dtype
    if "size" in given:
        size = given["size"]
        sizes = tuple(size) if isinstance(size, (tuple, list)) else (size,)
        return _sized(cls, sizes)
    if "data" in given:
        args = (given["data"],)
    if not args:
        return Tensor._make(xp.empty((0,), dtype=dtype.np))
    if _is_size(args[0]):
        return _sized(cls, args)
    if len(args) > 1:
        raise _invalid_combination(args, {})
    data = args[0]
    if isinstance(data, Tensor):
        if data.dtype != dtype:
            raise TypeError(
                f"expected {_options(dtype.name)} (got {_options(data.dtype.name)}). "
                f"{cls.__name__}(other) makes an alias of a {dtype} tensor; convert instead "
                f"with other.to({dtype}) or other.type(gradsum.{cls.__name__}).")
        return data[...]  # torch: an alias (shared storage and version, AliasBackward0)
    if isinstance(data, Size):  # torch: a Size is a size (a tuple is data)
        return _sized(cls, tuple(data))
    if isinstance(data, xp.ndarray):
        if data.dtype == dtype.np:
            return Tensor._make(data)  # torch shares a NumPy array of its own dtype
        return Tensor._make(xp.array(data, dtype=dtype.np))
    if isinstance(data, str):
        raise TypeError(f"new(): invalid data type 'str'. Pass a sequence of numbers, e.g. "
                        f"gradsum.{cls.__name__}([1, 2]).")
    if isinstance(data, range):
        data = list(data)
    if not isinstance(data, (list, tuple)):
        raise TypeError(f"new(): data must be a sequence (got {_type_name(data)}). For a "
                        f"0-d tensor use gradsum.tensor(value, dtype={dtype}).")
    return _tensor_fn(data, dtype=dtype)


def tensor_new(self: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``Tensor.new(*args, **kwargs)``: :func:`construct` for the legacy type of ``self``'s
    dtype (``float64`` tensors make ``DoubleTensor``s), as torch's ``Tensor.new``."""
    cls = next(t for t in CPU_TYPES.values() if t.dtype == self.dtype)
    return construct(cls, args, kwargs)


def _sized(cls: tensortype, sizes: tuple[Any, ...]) -> Any:
    from gradsum._tensor import Tensor

    for pos, s in enumerate(sizes, 1):
        if not _is_size(s):
            raise TypeError(
                f"new(): argument 'size' failed to unpack the object at pos {pos} with error "
                f"\"type must be tuple of ints,but got {_type_name(s)}\". Sizes are integers: "
                f"gradsum.{cls.__name__}(2, 3).")
    shape = tuple(int(s) for s in sizes)
    for s in shape:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(shape)}. Sizes must be >= 0.")
    return Tensor._make(xp.zeros(shape, dtype=cls.dtype.np))


def legacy_type_name(dtype: D.dtype) -> str:
    """torch's legacy type name of ``dtype`` (``'torch.FloatTensor'``), as ``Tensor.type()``
    returns it.

    Example:
        >>> import gradsum
        >>> from gradsum._legacy_types import legacy_type_name
        >>> legacy_type_name(gradsum.int64)
        'torch.LongTensor'
    """
    for name, dtype_name in _TYPES:
        if dtype_name == dtype.name:
            return f"torch.{name}"
    return f"torch.{dtype.name}"


def typename(obj: Any, /) -> str:
    """The fully qualified name of ``obj``'s type, as ``torch.typename``: a tensor's legacy
    type name (``'torch.FloatTensor'``, as ``Tensor.type()``), otherwise ``module.qualname``
    of a class or function (of ``type(obj)`` for other objects; builtins unqualified).

    Example:
        >>> import gradsum
        >>> gradsum.typename(gradsum.tensor([1, 2])), gradsum.typename(gradsum.nn.Parameter)
        ('torch.LongTensor', 'gradsum.nn.parameter.Parameter')
        >>> gradsum.typename(3)
        'int'
    """
    from gradsum._tensor import Tensor

    if isinstance(obj, Tensor):
        return legacy_type_name(obj.dtype)
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = obj.__class__.__module__ or ""
        qualname = obj.__class__.__qualname__
    if module in {"", "builtins"}:
        return qualname
    return f"{module}.{qualname}"


def _resolve_type_name(name: str) -> tensortype | None:
    """The legacy type a string names (torch's and gradsum's spellings), or None;
    ``torch.Tensor``/``gradsum.Tensor`` give the default float type's class."""
    module, _, short = name.rpartition(".")
    if module in ("torch", "gradsum"):
        if short == "Tensor":
            return _default_type()
        return CPU_TYPES.get(short)
    if module in ("torch.cuda", "gradsum.cuda"):
        return CUDA_TYPES.get(short)
    return None


def _default_type() -> tensortype:
    default = D.get_default_dtype()
    return next(t for t in CPU_TYPES.values() if t.dtype == default)


def _cuda_unavailable() -> RuntimeError:
    return RuntimeError(
        "Cannot initialize CUDA without ATen_cuda library. gradsum runs on the CPU only (it "
        "behaves as torch's CPU build); convert with a CPU type or a dtype instead, e.g. "
        "x.type(gradsum.FloatTensor) or x.float().")


def tensor_type(self: Any, dtype: Any = None, non_blocking: bool = False,
                **kwargs: Any) -> Any:
    """``Tensor.type``: without ``dtype`` the legacy type name (``'torch.FloatTensor'``);
    otherwise ``self`` converted to that legacy type, type name or dtype (``self`` itself
    when the dtype is already that one), as torch's ``Tensor.type``.

    Example:
        >>> import gradsum
        >>> x = gradsum.zeros(2)
        >>> x.type('torch.DoubleTensor').dtype
        gradsum.float64
        >>> x.type(gradsum.FloatTensor) is x
        True
    """
    from gradsum._tensor import Tensor

    unknown = set(kwargs) - {"memory_format"}
    if unknown:
        raise TypeError(f"type() got an unexpected keyword argument '{sorted(unknown)[0]}'")
    if not isinstance(non_blocking, bool):
        raise TypeError(f"type(): argument 'non_blocking' (position 2) must be bool, not "
                        f"{_type_name(non_blocking)}")
    if dtype is None:
        return legacy_type_name(self.dtype)
    target: D.dtype
    if isinstance(dtype, D.dtype):
        target = dtype
    elif isinstance(dtype, (str, bytes)):
        name = dtype.decode() if isinstance(dtype, bytes) else dtype
        found = _resolve_type_name(name)
        if found is None:
            raise ValueError(f"invalid type: '{name}'. Name a legacy type, e.g. "
                             "'torch.DoubleTensor', or pass a dtype such as gradsum.float64.")
        if found.is_cuda:
            raise _cuda_unavailable()
        target = found.dtype
    elif isinstance(dtype, tensortype):
        if dtype.is_cuda:
            raise _cuda_unavailable()
        target = dtype.dtype
    elif dtype is Tensor:
        target = D.get_default_dtype()
    elif isinstance(dtype, type):
        raise ValueError(f"invalid type: '{_type_name(dtype)}'. Pass a legacy type such as "
                         "gradsum.DoubleTensor, its name, or a dtype such as gradsum.float64.")
    else:
        raise TypeError("dtype must be a type, str, or dtype object (got "
                        f"{_type_name(dtype)}), e.g. gradsum.DoubleTensor or gradsum.float64")
    return self.to(target)


_warned_default_tensor_type = False


def set_default_tensor_type(t: Any, /) -> None:
    """Deprecated in torch 2.1 (it warns once, as torch does): sets the default float dtype
    from a floating legacy type or its name. Prefer :func:`gradsum.set_default_dtype`.

    Example:
        >>> import warnings, gradsum
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     gradsum.set_default_tensor_type(gradsum.DoubleTensor)
        >>> gradsum.tensor([1.0]).dtype
        gradsum.float64
        >>> gradsum.set_default_dtype(gradsum.float32)
    """
    global _warned_default_tensor_type
    from gradsum._process_settings import is_warn_always_enabled

    if not _warned_default_tensor_type or is_warn_always_enabled():  # torch: TORCH_WARN_ONCE
        _warned_default_tensor_type = True
        warnings.warn(
            "torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
            "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
            UserWarning, stacklevel=2)
    if isinstance(t, str):
        module, _, short = t.rpartition(".")
        if module not in ("torch", "gradsum", "torch.cuda", "gradsum.cuda"):
            raise ModuleNotFoundError(f"No module named '{module or t}'")
        if short == "Tensor" and module in ("torch", "gradsum"):
            from gradsum._tensor import Tensor

            t = Tensor  # (refused below, as torch refuses torch.Tensor)
        else:
            found = _resolve_type_name(t)
            if found is None:
                raise AttributeError(f"module '{module}' has no attribute '{short}'")
            t = found
    if not isinstance(t, tensortype):
        raise TypeError("invalid type object: only floating-point types are supported as the "
                        f"default type (got {_type_name(t)}); pass e.g. gradsum.DoubleTensor, "
                        "or better gradsum.set_default_dtype(gradsum.float64)")
    if t.is_cuda:
        raise TypeError(f"type {t._torch_name} not available. {_NO_CUDA} gradsum runs on the "
                        f"CPU only: use gradsum.{t.__name__}.")
    if not t.dtype.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type (got "
                        f"{t._torch_name}); pass e.g. gradsum.DoubleTensor")
    D.set_default_dtype(t.dtype)
