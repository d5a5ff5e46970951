"""The pickler behind :func:`gradsum.save`: gradsum objects spelled as torch's.

It writes tensors exactly as ``torch.save`` does: a GLOBAL ``torch._utils _rebuild_tensor_v2``
called with a persistent id ``('storage', torch.FloatStorage, key, 'cpu', numel)``, the offset,
size and stride in elements, ``requires_grad`` and an empty ``OrderedDict`` of backward hooks;
Parameters through ``torch._utils _rebuild_parameter``; dtypes as ``torch.float32``. The GLOBAL
opcodes name torch even where torch is not installed: for the stand-ins of
:mod:`gradsum.serialization.rebuild` the pickler writes the opcode itself instead of looking
the name up. Tensor bytes never pass through pickle: each distinct buffer becomes one storage
record, written afterwards by the archive writer. Everything else pickles as usual (whole
modules, NumPy arrays, custom classes), as ``torch.save`` accepts any picklable object.

Example:
    >>> import io, pickletools, gradsum
    >>> from gradsum.serialization.torch_pickler import TorchPickler
    >>> buf = io.BytesIO()
    >>> p = TorchPickler(buf, protocol=2)
    >>> p.dump({"w": gradsum.ones(2)})
    >>> b"torch._utils\\n_rebuild_tensor_v2" in buf.getvalue(), list(p.storages)
    (True, ['0'])
"""

from __future__ import annotations

import pickle
from collections import OrderedDict
from typing import Any

from gradsum import _dtype as D
from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.serialization import rebuild as R

__all__ = ["TorchPickler"]


class _StorageRef:
    """A storage the pickler has seen: written as a persistent id, its bytes separately."""

    __slots__ = ("key", "numel", "type")

    def __init__(self, key: str, storage_type: R.StorageType, numel: int) -> None:
        self.key = key
        self.type = storage_type
        self.numel = numel


def _root(arr: Any) -> Any:
    """The array that owns ``arr``'s memory (the last ndarray down the ``base`` chain)."""
    root = arr
    while isinstance(root.base, xp.ndarray):
        root = root.base
    return root


class TorchPickler(pickle._Pickler):  # type: ignore[misc,name-defined]
    """A pickler that writes gradsum tensors, Parameters, dtypes and devices as torch does.

    After :meth:`dump`, :attr:`storages` maps each storage key (``'0'``, ``'1'``, ...) to the
    contiguous little-endian array whose bytes the archive must hold under ``data/<key>``.

    Args:
        file: the binary stream the pickle goes to.
        protocol: the pickle protocol (torch's default is 2).
        legacy: write the legacy format's storage ids (with a sixth entry, ``None``).
    """

    def __init__(self, file: Any, protocol: int = 2, legacy: bool = False) -> None:
        super().__init__(file, protocol=protocol)
        self.legacy = legacy
        self.storages: dict[str, Any] = {}
        self._by_root: dict[int, tuple[_StorageRef, Any]] = {}
        self._keep: list[Any] = []  # keeps the roots alive so their ids stay unique

    # -- persistent ids: storages ---------------------------------------------------------------
    def persistent_id(self, obj: Any) -> Any:
        if type(obj) is _StorageRef:
            if self.legacy:
                return ("storage", obj.type, obj.key, "cpu", obj.numel, None)
            return ("storage", obj.type, obj.key, "cpu", obj.numel)
        return None

    def _storage(self, arr: Any) -> tuple[_StorageRef, int, tuple[int, ...]]:
        """The storage ``arr`` views, its offset and its strides in elements. Views of one
        buffer share one storage (tied weights, slices), as in torch; a view torch can't
        express (negative or unaligned strides, a reinterpreted dtype, big-endian data)
        gets a storage of its own holding a contiguous copy."""
        item = arr.itemsize
        if arr.size == 0:  # torch's contiguous strides (NumPy's may be 0 for empty arrays)
            strides, step = [], 1
            for n in reversed(arr.shape):
                strides.append(step)
                step *= max(n, 1)
            empty = xp.empty(0, dtype=arr.dtype.newbyteorder("<"))
            return self._ref(empty, empty), 0, tuple(reversed(strides))
        root = _root(arr)
        if (root.dtype == arr.dtype and arr.dtype.byteorder in "=|<"
                and (root.flags.c_contiguous or root.flags.f_contiguous)):
            delta = (arr.__array_interface__["data"][0]
                     - root.__array_interface__["data"][0])
            strides = arr.strides
            if delta % item == 0 and all(s >= 0 and s % item == 0 for s in strides):
                ref = self._ref(root, root.ravel(order="K"))
                return ref, delta // item, tuple(s // item for s in strides)
        data = xp.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<"))
        ref = self._ref(data, data.reshape(-1))
        return ref, 0, tuple(s // item for s in data.strides)

    def _ref(self, root: Any, flat: Any) -> _StorageRef:
        known = self._by_root.get(id(root))
        if known is not None:
            return known[0]
        key = str(len(self.storages))
        ref = _StorageRef(key, R.storage_type_of(D.from_numpy_dtype(flat.dtype)), flat.size)
        self.storages[key] = flat
        self._by_root[id(root)] = (ref, root)
        return ref

    # -- tensors, dtypes, devices -------------------------------------------------------------
    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, Tensor):
            return self._reduce_tensor(obj)
        if isinstance(obj, (D.dtype, R.StorageType)) or callable(obj):
            name = R.torch_name_of(obj)
            if name is not None:
                return name[1]  # save_global below writes the torch name
        device = R.torch_names()["torch.device"]
        if isinstance(device, type) and type(obj) is device:  # torch's reduce of a device
            return device, (obj.type,) if obj.index is None else (obj.type, obj.index)
        return NotImplemented

    def _reduce_tensor(self, t: Tensor) -> Any:
        parameter = R._parameter_class()
        state = t._python_attributes()
        if type(t) is parameter:
            data = Tensor._make(t._array)
            if state:
                return R._rebuild_parameter_with_state, (data, t.requires_grad, OrderedDict(),
                                                         state)
            return R._rebuild_parameter, (data, t.requires_grad, OrderedDict())
        ref, offset, stride = self._storage(t._array)
        args = (ref, offset, tuple(t._array.shape), stride, bool(t.requires_grad), OrderedDict())
        if type(t) is Tensor and not state:
            return R._rebuild_tensor_v2, args
        return R._rebuild_from_type_v2, (R._rebuild_tensor_v2, type(t), args, state)

    def save_global(self, obj: Any, name: Any = None) -> None:
        torch_name = R.torch_name_of(obj)
        if torch_name is None:
            super().save_global(obj, name)
            return
        module, qualname = torch_name
        if self.proto >= 4:
            self.save(module)
            self.save(qualname)
            self.write(pickle.STACK_GLOBAL)
        else:
            self.write(pickle.GLOBAL + f"{module}\n{qualname}\n".encode())
        self.memoize(obj)

