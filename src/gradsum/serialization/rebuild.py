"""What a pickled tensor turns back into: torch's rebuild functions and storage types, as gradsum.

A tensor in a ``torch.save`` file is the call ``torch._utils._rebuild_tensor_v2(storage,
offset, size, stride, requires_grad, backward_hooks)`` whose ``storage`` is a persistent id
``('storage', torch.FloatStorage, key, location, numel)``. This module holds gradsum's versions
of those callables and storage types, and :data:`TORCH_NAMES`, the table between the ``torch.*``
names a file spells and these objects: the pickler writes the names for them, both unpicklers
read the names as them, so gradsum and torch files interchange although torch is not imported.

Example:
    >>> import numpy as np
    >>> from gradsum.serialization.rebuild import Storage, _rebuild_tensor_v2
    >>> s = Storage(np.arange(6, dtype=np.float32))
    >>> _rebuild_tensor_v2(s, 1, (2, 2), (2, 1), False, None)
    tensor([[1., 2.],
            [3., 4.]])
"""

from __future__ import annotations

import builtins
import codecs
import sys
from collections import Counter, OrderedDict
from typing import Any

from gradsum import _dtype as D
from gradsum._backend import xp
from gradsum._tensor import Tensor

__all__ = [
    "FORMER_NN_FILES", "Storage", "StorageType", "STORAGE_TYPES", "TORCH_NAMES",
    "former_nn_class", "torch_name_of",
    "_rebuild_tensor", "_rebuild_tensor_v2", "_rebuild_tensor_v3", "_rebuild_parameter",
    "_rebuild_parameter_with_state", "_rebuild_from_type_v2", "_rebuild_from_numpy",
]


class StorageType:
    """One of torch's typed storage classes (``torch.FloatStorage``, ...), as a file names it.

    Only its element type matters when loading; when saving, the pickler writes the GLOBAL
    ``torch.<name>`` for it.
    """

    def __init__(self, name: str, dtype_name: str) -> None:
        self.name = name
        self.dtype_name = dtype_name

    @property
    def dtype(self) -> D.dtype:
        """The gradsum dtype of the elements (TypeError where gradsum lacks it)."""
        dt = getattr(D, self.dtype_name, None)
        if not isinstance(dt, D.dtype):
            raise TypeError(
                f"the checkpoint holds a torch.{self.name} (dtype {self.dtype_name}), which "
                f"gradsum does not have; gradsum's dtypes: "
                f"{', '.join(d.name for d in D._ALL)}. Convert it in torch first, e.g. "
                "t.float() or t.real."
            )
        return dt

    def __repr__(self) -> str:
        return f"torch.{self.name}"


#: torch's storage class names and their element types
STORAGE_TYPES: dict[str, StorageType] = {
    name: StorageType(name, dtype_name) for name, dtype_name in (
        ("FloatStorage", "float32"), ("DoubleStorage", "float64"), ("HalfStorage", "float16"),
        ("BFloat16Storage", "bfloat16"), ("LongStorage", "int64"), ("IntStorage", "int32"),
        ("ShortStorage", "int16"), ("CharStorage", "int8"), ("ByteStorage", "uint8"),
        ("BoolStorage", "bool_"), ("ComplexFloatStorage", "complex64"),
        ("ComplexDoubleStorage", "complex128"), ("UntypedStorage", "uint8"),
    )
}
_STORAGE_OF_DTYPE = {st.dtype_name: st for st in STORAGE_TYPES.values()
                     if st.name != "UntypedStorage"}


def storage_type_of(dt: D.dtype) -> StorageType:
    """The torch storage type that holds elements of ``dt``."""
    return _STORAGE_OF_DTYPE["bool_" if dt is D.bool_ else dt.name]


class Storage:
    """A loaded storage: a flat, writable array of one dtype that tensors view.

    Args:
        array: the elements, one dimension.
    """

    def __init__(self, array: Any) -> None:
        self.array = array

    @property
    def dtype(self) -> D.dtype:
        return D.from_numpy_dtype(self.array.dtype)

    def size(self) -> int:
        return int(self.array.size)

    def cpu(self) -> Storage:
        return self

    def cuda(self, *args: Any, **kwargs: Any) -> Storage:
        raise AssertionError("Torch not compiled with CUDA enabled")

    def __repr__(self) -> str:
        return f"Storage({self.array.size} x {self.dtype.name})"


def _view(storage: Any, offset: Any, size: Any, stride: Any) -> Any:
    """The elements ``storage[offset + sum(i_k * stride_k)]`` as an array, after checking
    that every one lies inside the storage (a file is input: it must never reach memory
    outside the buffer)."""
    if not isinstance(storage, Storage):
        raise TypeError(f"a tensor in the checkpoint refers to {type(storage).__name__}, not a "
                        "storage: the file is malformed")
    flat = storage.array
    size, stride = tuple(size), tuple(stride)
    ints = (offset, *size, *stride)
    if (len(size) != len(stride) or any(type(v) is not int for v in ints)
            or min(ints) < 0):
        raise ValueError(
            f"a tensor in the checkpoint has offset {offset!r}, size {size!r} and stride "
            f"{stride!r}: they must be non-negative integers, one stride per dimension"
        )
    empty = 0 in size  # (no element is read: only the strides matter)
    last = offset + sum((n - 1) * s for n, s in zip(size, stride))
    if not empty and last >= flat.size:
        raise ValueError(
            f"a tensor in the checkpoint (offset {offset}, size {size}, stride {stride}) "
            f"reaches element {last} of a storage of {flat.size}: the file is malformed"
        )
    item = flat.itemsize
    start = min(offset, flat.size) if empty else offset
    return xp.lib.stride_tricks.as_strided(
        flat[start:], shape=size, strides=tuple(s * item for s in stride))


def _rebuild_tensor(storage: Any, storage_offset: int, size: Any, stride: Any) -> Tensor:
    """torch's ``_rebuild_tensor``: a tensor viewing ``storage``."""
    return Tensor._make(_view(storage, storage_offset, size, stride))


def _rebuild_tensor_v2(storage: Any, storage_offset: int, size: Any, stride: Any,
                       requires_grad: bool, backward_hooks: Any, metadata: Any = None) -> Tensor:
    """torch's ``_rebuild_tensor_v2``: a leaf viewing ``storage`` (backward hooks dropped,
    as torch drops them)."""
    t = _rebuild_tensor(storage, storage_offset, size, stride)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_tensor_v3(storage: Any, storage_offset: int, size: Any, stride: Any,
                       requires_grad: bool, backward_hooks: Any, dtype: Any,
                       metadata: Any = None) -> Tensor:
    """torch's ``_rebuild_tensor_v3`` (an untyped storage read as ``dtype``)."""
    if isinstance(storage, Storage) and isinstance(dtype, D.dtype):
        storage = Storage(storage.array.view(dtype.np))
    return _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad,
                              backward_hooks)


def _set_obj_state(obj: Any, state: Any) -> None:
    """torch's ``_set_obj_state``: a ``__dict__`` update, or ``(dict, slots)``."""
    if isinstance(state, tuple) and len(state) == 2:
        dict_state, slots_state = state
    else:
        dict_state, slots_state = state, None
    for name, value in (dict_state or {}).items():
        setattr(obj, name, value)
    for name, value in (slots_state or {}).items():
        setattr(obj, name, value)


def _parameter_class() -> Any:
    from gradsum.nn.parameter import Parameter

    return Parameter


def _rebuild_parameter(data: Tensor, requires_grad: bool, backward_hooks: Any) -> Any:
    """torch's ``_rebuild_parameter``: ``Parameter(data, requires_grad)``."""
    return _parameter_class()(data, requires_grad)


def _rebuild_parameter_with_state(data: Tensor, requires_grad: bool, backward_hooks: Any,
                                  state: Any) -> Any:
    """torch's ``_rebuild_parameter_with_state``: a Parameter with Python attributes."""
    param = _rebuild_parameter(data, requires_grad, backward_hooks)
    _set_obj_state(param, state)
    return param


def _rebuild_from_type_v2(func: Any, new_type: Any, args: Any, state: Any) -> Any:
    """torch's ``_rebuild_from_type_v2``: ``func(*args)`` as ``new_type``, then its state."""
    ret = func(*args)
    if type(ret) is not new_type and isinstance(new_type, type) and issubclass(new_type, Tensor):
        ret = new_type._make(ret._array, ret._requires_grad)
    setstate = getattr(type(ret), "__setstate__", None)
    if setstate is not None and setstate is not getattr(object, "__setstate__", None):
        ret.__setstate__(state)
    else:
        _set_obj_state(ret, state)
    return ret


def _rebuild_from_numpy(array: Any, requires_grad: bool, state: Any = None,
                        new_type: Any = None) -> Tensor:
    """The plain-pickle form of a gradsum tensor (``pickle.dumps(t)``, ``copy``,
    multiprocessing): a new leaf over ``array`` with ``requires_grad`` and its Python
    attributes (of class ``new_type``, a Tensor subclass, when given)."""
    cls = new_type if isinstance(new_type, type) and issubclass(new_type, Tensor) else Tensor
    t = cls._make(array if array.flags.writeable else array.copy())
    if requires_grad:
        t.requires_grad_(True)
    if state:
        _set_obj_state(t, state)
    return t


def _encode(obj: str, encoding: str = "utf-8", errors: str = "strict") -> bytes:
    """``_codecs.encode`` as pickle protocol 2 uses it for ``bytes``: text to bytes only."""
    if not isinstance(obj, str):
        raise TypeError(f"_codecs.encode in a checkpoint got {type(obj).__name__}, not str")
    return codecs.encode(obj, encoding, errors)


def _size(values: Any = ()) -> tuple[int, ...]:
    """``torch.Size``: gradsum's shapes are tuples."""
    return tuple(values)


def _layout_unsupported(name: str) -> Any:
    raise TypeError(f"the checkpoint holds a tensor with layout {name!r}: gradsum has only "
                    "strided tensors. Convert it in torch first with t.to_dense().")


def _dtype_table() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for d in D._ALL:
        out[f"torch.{d.name}"] = d
    out["torch.bfloat16"] = D.bfloat16  # (without ml_dtypes: a dtype whose use says so)
    return out


def _gradsum_attr(name: str) -> Any:
    import gradsum

    return getattr(gradsum, name, None)


_LEGACY_TENSOR_TYPES = ("FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor",
                        "LongTensor", "IntTensor", "ShortTensor", "CharTensor", "ByteTensor",
                        "BoolTensor")


def torch_globals() -> dict[str, Any]:
    """The ``module.name`` -> object table of what a torch file may reference by default
    (torch's ``_get_allowed_globals``), restricted to what gradsum can build."""
    table: dict[str, Any] = {
        "collections.OrderedDict": OrderedDict,
        "collections.Counter": Counter,
        "torch.nn.parameter.Parameter": _parameter_class(),
        "torch.Size": _size,
        "torch.Tensor": Tensor,
        "torch.device": _gradsum_attr("device"),
        "torch.serialization._get_layout": _layout_unsupported,
        "_codecs.encode": _encode,
        "builtins.bytearray": builtins.bytearray,
        "builtins.set": builtins.set,
        "builtins.complex": builtins.complex,
        "torch._utils._rebuild_tensor": _rebuild_tensor,
        "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
        "torch._utils._rebuild_tensor_v3": _rebuild_tensor_v3,
        "torch._utils._rebuild_parameter": _rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": _rebuild_parameter_with_state,
        "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
    }
    table.update(_dtype_table())
    for name, st in STORAGE_TYPES.items():
        table[f"torch.{name}"] = st
    table["torch.storage.UntypedStorage"] = STORAGE_TYPES["UntypedStorage"]
    for name in _LEGACY_TENSOR_TYPES:
        table[f"torch.{name}"] = _gradsum_attr(name)
    return table


#: the ``torch.*`` names a checkpoint may spell, and gradsum's object for each
TORCH_NAMES: dict[str, Any] = {}


def torch_names() -> dict[str, Any]:
    """:data:`TORCH_NAMES`, filled on first use (gradsum.nn and the device class must have
    been imported)."""
    if not TORCH_NAMES:
        TORCH_NAMES.update(torch_globals())
    return TORCH_NAMES


#: the files gradsum.nn's module classes were defined in before each moved to the file torch
#: defines it in (``gradsum.nn.modules.<file>``, ``gradsum.nn.parallel.data_parallel``): a whole
#: module saved before the move names its class in one of them (``gradsum.nn.layers.Linear``)
FORMER_NN_FILES = frozenset(f"gradsum.nn.{f}" for f in (
    "layers", "activation", "container", "loss", "module", "rnn", "_transformer", "_lazy",
    "_extra", "_compat_losses", "_parallel_compat", "_adaptive", "_attention", "_ctc", "_bag"))


def former_nn_class(module: str, name: str) -> Any:
    """The class that ``module.name`` of a checkpoint written before gradsum.nn's classes moved
    to torch's files stands for (``gradsum.nn.layers.Linear`` -> ``gradsum.nn.modules.linear
    .Linear``), or None: ``module`` is not one of :data:`FORMER_NN_FILES` or held no such class.
    Nothing is imported (gradsum.nn's files are loaded with gradsum)."""
    if module not in FORMER_NN_FILES:
        return None
    for mname, mod in list(sys.modules.items()):
        if mname.startswith("gradsum.nn.modules.") or mname == "gradsum.nn.parallel.data_parallel":
            value = vars(mod).get(name)
            if isinstance(value, type) and value.__module__ == mname:
                return value
    return None


_NAME_OF: dict[int, tuple[str, str]] = {}


def torch_name_of(obj: Any) -> tuple[str, str] | None:
    """``(module, name)`` of the torch global that stands for ``obj``, or None."""
    if not _NAME_OF:
        for full, value in torch_names().items():
            if full.startswith("torch.") and full != "torch.storage.UntypedStorage":
                module, _, name = full.rpartition(".")
                _NAME_OF.setdefault(id(value), (module, name))
    return _NAME_OF.get(id(obj))
