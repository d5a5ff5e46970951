"""The ``weights_only=True`` unpickler: builds tensors, storages and plain containers, nothing else.

A port of torch's ``torch/_weights_only_unpickler.py``: an interpreter of the pickle opcodes
that a checkpoint needs, written out here rather than a subclass of :class:`pickle.Unpickler`,
so that no opcode it does not know can run (``INST``, ``OBJ``, ``NEWOBJ_EX``, ``EXT*`` and the
rest are refused). ``GLOBAL`` resolves only names of an allow-list (torch's defaults, mapped to
gradsum's objects by :mod:`gradsum.serialization.rebuild`, plus what the user allowed with
:func:`add_safe_globals` / :func:`safe_globals`); it never imports anything. ``REDUCE`` calls
only allowed callables, ``NEWOBJ`` and ``BUILD`` act only on allowed classes, persistent ids
must be storages. The messages are torch's.

Example:
    >>> import io, pickle
    >>> from gradsum.serialization.weights_only_unpickler import Unpickler
    >>> Unpickler(io.BytesIO(pickle.dumps({"lr": 0.1, "betas": (0.9, 0.99)}, 2))).load()
    {'lr': 0.1, 'betas': (0.9, 0.99)}
    >>> try:
    ...     Unpickler(io.BytesIO(pickle.dumps(print, 2))).load()
    ... except pickle.UnpicklingError as e:
    ...     print(str(e)[:58])
    Unsupported global: GLOBAL print was not an allowed global
"""

from __future__ import annotations

import re
import warnings
from collections import Counter, OrderedDict
from collections.abc import Callable
from pickle import (
    APPEND,
    APPENDS,
    BINFLOAT,
    BINGET,
    BININT,
    BININT1,
    BININT2,
    BINPERSID,
    BINPUT,
    BINUNICODE,
    BUILD,
    EMPTY_DICT,
    EMPTY_LIST,
    EMPTY_SET,
    EMPTY_TUPLE,
    GLOBAL,
    LONG1,
    LONG_BINGET,
    LONG_BINPUT,
    MARK,
    NEWFALSE,
    NEWOBJ,
    NEWTRUE,
    NONE,
    PROTO,
    REDUCE,
    SETITEM,
    SETITEMS,
    SHORT_BINSTRING,
    STOP,
    TUPLE,
    TUPLE1,
    TUPLE2,
    TUPLE3,
    UnpicklingError,
    decode_long,
)
from struct import unpack
from sys import maxsize
from typing import Any

from gradsum.serialization import rebuild as R

__all__ = [
    "Unpickler", "add_safe_globals", "clear_safe_globals", "get_safe_globals", "safe_globals",
    "weights_only_message", "UNSAFE_MESSAGE",
]

_BLOCKLISTED_MODULES = ["sys", "os", "posix", "nt"]

# Python 2 names that protocol-2 pickles may spell (pickle's own compatibility table)
from _compat_pickle import IMPORT_MAPPING, NAME_MAPPING  # noqa: E402

_marked_safe_globals: list[Any] = []


def add_safe_globals(safe_globals: list[Any]) -> None:
    """Allow ``weights_only=True`` loads to use these classes and functions (torch's
    ``torch.serialization.add_safe_globals``). An entry is an object, found under its
    ``__module__`` and ``__qualname__``, or ``(object, "module.name")`` for one stored under
    another name.

    Example:
        >>> import gradsum.serialization as s
        >>> class Config: ...
        >>> s.add_safe_globals([Config])
        >>> Config in s.get_safe_globals()
        True
        >>> s.clear_safe_globals()
    """
    _marked_safe_globals.extend(safe_globals)


def get_safe_globals() -> list[Any]:
    """The objects added with :func:`add_safe_globals` (and active :func:`safe_globals`)."""
    return list(_marked_safe_globals)


def clear_safe_globals() -> None:
    """Forget every object added with :func:`add_safe_globals`."""
    _marked_safe_globals.clear()


class safe_globals:
    """A context manager that allows ``safe_globals`` for ``weights_only`` loads inside it
    (a class, as torch's ``torch.serialization.safe_globals``).

    Example:
        >>> import io, fractions, gradsum
        >>> buf = io.BytesIO(); gradsum.save(fractions.Fraction(1, 3), buf); _ = buf.seek(0)
        >>> with gradsum.serialization.safe_globals([fractions.Fraction]):
        ...     gradsum.load(buf)
        Fraction(1, 3)
    """

    def __init__(self, safe_globals: list[Any]) -> None:
        self.safe_globals = safe_globals

    def __enter__(self) -> None:
        self._before = list(_marked_safe_globals)
        _marked_safe_globals.extend(self.safe_globals)

    def __exit__(self, *exc: object) -> None:
        _marked_safe_globals[:] = self._before


def _user_allowed_globals() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for entry in _marked_safe_globals:
        if isinstance(entry, tuple):
            if len(entry) != 2 or not isinstance(entry[1], str):
                raise ValueError(
                    f"Expected tuple of length 2 (global, str of callable full path), but got "
                    f"{entry!r} in the safe globals. Pass (object, 'module.name') pairs."
                )
            out[entry[1]] = entry[0]
        else:
            out[f"{entry.__module__}.{entry.__qualname__}"] = entry
    return out


UNSAFE_MESSAGE = (
    "As in PyTorch 2.6 and later, the default value of the `weights_only` argument in "
    "`gradsum.load` is `True`. Re-running `gradsum.load` with `weights_only` set to `False` "
    "will likely succeed, but it can result in arbitrary code execution. Do it only if you "
    "got the file from a trusted source."
)
DOCS_MESSAGE = (
    "\n\nCheck the documentation of torch.load to learn more about types accepted by default "
    "with weights_only https://pytorch.org/docs/stable/generated/torch.load.html."
)


def weights_only_message(message: str) -> str:
    """torch's ``_get_wo_message``: the text of a refused ``weights_only`` load."""
    if "was not an allowed global by default." in message:
        return (
            "Weights only load failed. This file can still be loaded, to do so you have two "
            "options, \033[1mdo those steps only if you trust the source of the "
            f"checkpoint\033[0m. \n\t(1) {UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with "
            "`weights_only=True` please check the recommended steps in the following error "
            "message.\n\tWeightsUnpickler error: " + message + DOCS_MESSAGE
        )
    text = f"Weights only load failed. {UNSAFE_MESSAGE}\n"
    if "is blocked" not in message:
        text += (
            "Please file an issue with the following so that we can make `weights_only=True` "
            "compatible with your use case: WeightsUnpickler error: "
        )
    return text + "\n\n" + message + DOCS_MESSAGE


#: torch names that torch's weights-only load allows but that build what gradsum lacks
_TORCH_ONLY = re.compile(
    r"torch\.(_utils\._rebuild_\w+|complex\w*|uint(16|32|64)|float8\w*|qu?int\w*|bits\w*"
    r"|int[1-7]|uint[1-7]|per_\w+|\w*Q\w*Storage|ComplexHalfStorage)$")


def _unsupported_global(full_path: str) -> UnpicklingError:
    if _TORCH_ONLY.match(full_path):
        return UnpicklingError(
            f"Unsupported global: GLOBAL {full_path} builds a kind of tensor gradsum does not "
            "have (sparse, quantized, nested, complex, a narrow dtype, or on another device). "
            "Convert it in torch first (t.to_dense(), t.dequantize(), t.real, t.float(), "
            "t.cpu()) and save again."
        )
    if full_path.startswith("builtins"):
        rest = full_path[len("builtins"):]
        full_path = rest[1:] if rest.startswith(".") else "builtins" + rest
    fix = full_path
    return UnpicklingError(
        f"Unsupported global: GLOBAL {full_path} was not an allowed global by default. "
        f"Please use `gradsum.serialization.add_safe_globals([{fix}])` or the "
        f"`gradsum.serialization.safe_globals([{fix}])` context manager to allowlist this "
        "global if you trust this class/function."
    )


def python3_name(module: str, name: str) -> tuple[str, str]:
    """The Python 3 spelling of a global a protocol-2 pickle names (``__builtin__.long`` is
    ``builtins.int``), as torch reads them."""
    if (module, name) in NAME_MAPPING:
        return NAME_MAPPING[(module, name)]
    return IMPORT_MAPPING.get(module, module), name


class Unpickler:
    """torch's weights-only unpickler over gradsum's objects.

    Args:
        file: a binary stream positioned at a pickle.
        persistent_load: called with each persistent id (after checking it names a storage).
        encoding: how ``SHORT_BINSTRING`` (Python 2 ``str``) is decoded; ``'bytes'`` keeps bytes.
    """

    def __init__(self, file: Any, persistent_load: Callable[[Any], Any] | None = None, *,
                 encoding: str = "bytes") -> None:
        self.encoding = encoding
        self.readline = file.readline
        self.read = file.read
        self.memo: dict[int, Any] = {}
        self.proto: int = -1
        self._persistent_load = persistent_load

    def persistent_load(self, pid: Any) -> Any:
        if self._persistent_load is None:
            raise UnpicklingError("unsupported persistent id encountered")
        return self._persistent_load(pid)

    def _read(self, n: int) -> bytes:
        data = self.read(n)
        if len(data) != n:
            raise UnpicklingError("pickle data was truncated")
        return data

    def load(self) -> Any:
        """Read one pickle and return the object it describes."""
        allowed = R.torch_names()
        user = _user_allowed_globals()
        allowed_values = list(allowed.values()) + list(user.values())

        def is_allowed(obj: Any) -> bool:
            return any(obj is v for v in allowed_values)

        parameter = allowed["torch.nn.parameter.Parameter"]
        tensor_cls = allowed["torch.Tensor"]
        self.metastack: list[list[Any]] = []
        self.stack: list[Any] = []
        self.append = self.stack.append
        read = self._read
        while True:
            key = self.read(1)
            if not key:
                raise EOFError
            op = key[0]
            if op == GLOBAL[0]:
                module, name = python3_name(self.readline()[:-1].decode("utf-8"),
                                            self.readline()[:-1].decode("utf-8"))
                full_path = f"{module}.{name}"
                if module in _BLOCKLISTED_MODULES:
                    raise UnpicklingError(
                        f"Trying to load unsupported GLOBAL {full_path} whose module {module} "
                        "is blocked."
                    )
                if full_path in allowed:
                    self.append(allowed[full_path])
                elif full_path in user:
                    self.append(user[full_path])
                elif ((moved := R.former_nn_class(module, name)) is not None
                      and any(moved is v for v in user.values())):
                    # (an allowed class, named where it was defined before the nn move)
                    self.append(moved)
                else:
                    raise _unsupported_global(full_path)
            elif op == NEWOBJ[0]:
                args = self.stack.pop()
                cls = self.stack.pop()
                if cls is parameter:
                    self.append(parameter(*args))
                elif is_allowed(cls) and isinstance(cls, type):
                    self.append(cls.__new__(cls, *args))
                else:
                    raise UnpicklingError(
                        "Can only create new object for nn.Parameter or classes allowlisted "
                        f"via `add_safe_globals` but got {cls}"
                    )
            elif op == REDUCE[0]:
                args = self.stack.pop()
                func = self.stack[-1]
                if not is_allowed(func):
                    msg = f"Trying to call reduce for unrecognized function {func}"
                    if hasattr(func, "__self__"):
                        msg += f" which belongs to {func.__self__}"
                    raise UnpicklingError(msg)
                if not isinstance(args, tuple):
                    raise UnpicklingError(f"REDUCE expects a tuple of arguments, got "
                                          f"{type(args).__name__}")
                self.stack[-1] = func(*args)
            elif op == BUILD[0]:
                state = self.stack.pop()
                inst = self.stack[-1]
                if type(inst) is tensor_cls or type(inst) is parameter:
                    R._set_obj_state(inst, state)
                elif type(inst) is OrderedDict:
                    inst.__dict__.update(state)
                elif is_allowed(type(inst)):
                    if hasattr(inst, "__setstate__") and type(inst).__setstate__ is not \
                            object.__setstate__:
                        inst.__setstate__(state)
                    else:
                        slotstate = None
                        if isinstance(state, tuple) and len(state) == 2:
                            state, slotstate = state
                        if state:
                            inst.__dict__.update(state)
                        if slotstate:
                            for k, v in slotstate.items():
                                setattr(inst, k, v)
                else:
                    raise UnpicklingError(
                        "Can only build Tensor, Parameter, OrderedDict or types allowlisted "
                        f"via `add_safe_globals`, but got {type(inst)}"
                    )
            elif op == APPEND[0]:
                item = self.stack.pop()
                list_obj = self.stack[-1]
                if type(list_obj) is not list:
                    raise UnpicklingError(f"Can only append to lists, but got {type(list_obj)}")
                list_obj.append(item)
            elif op == APPENDS[0]:
                items = self.pop_mark()
                list_obj = self.stack[-1]
                if type(list_obj) is not list:
                    raise UnpicklingError(f"Can only extend lists, but got {type(list_obj)}")
                list_obj.extend(items)
            elif op == SETITEM[0]:
                (v, k) = (self.stack.pop(), self.stack.pop())
                self._check_set_item_target("SETITEM")
                self.stack[-1][k] = v
            elif op == SETITEMS[0]:
                items = self.pop_mark()
                self._check_set_item_target("SETITEMS")
                for i in range(0, len(items) - 1, 2):
                    self.stack[-1][items[i]] = items[i + 1]
            elif op == MARK[0]:
                self.metastack.append(self.stack)
                self.stack = []
                self.append = self.stack.append
            elif op == TUPLE[0]:
                items = self.pop_mark()  # (before self.append is read: pop_mark rebinds it)
                self.append(tuple(items))
            elif op == TUPLE1[0]:
                self.stack[-1] = (self.stack[-1],)
            elif op == TUPLE2[0]:
                self.stack[-2:] = [(self.stack[-2], self.stack[-1])]
            elif op == TUPLE3[0]:
                self.stack[-3:] = [(self.stack[-3], self.stack[-2], self.stack[-1])]
            elif op == NONE[0]:
                self.append(None)
            elif op == NEWFALSE[0]:
                self.append(False)
            elif op == NEWTRUE[0]:
                self.append(True)
            elif op == EMPTY_TUPLE[0]:
                self.append(())
            elif op == EMPTY_LIST[0]:
                self.append([])
            elif op == EMPTY_DICT[0]:
                self.append({})
            elif op == EMPTY_SET[0]:
                self.append(set())
            elif op == BININT[0]:
                self.append(unpack("<i", read(4))[0])
            elif op == BININT1[0]:
                self.append(read(1)[0])
            elif op == BININT2[0]:
                self.append(unpack("<H", read(2))[0])
            elif op == BINFLOAT[0]:
                self.append(unpack(">d", read(8))[0])
            elif op == BINUNICODE[0]:
                strlen = unpack("<I", read(4))[0]
                if strlen > maxsize:
                    raise UnpicklingError("String is too long")
                self.append(str(read(strlen), "utf-8", "surrogatepass"))
            elif op == SHORT_BINSTRING[0]:
                strdata = read(read(1)[0])
                self.append(strdata if self.encoding == "bytes"
                            else strdata.decode(self.encoding, "strict"))
            elif op == BINPERSID[0]:
                pid = self.stack.pop()
                if type(pid) is not tuple and type(pid) is not int:
                    raise UnpicklingError(
                        f"persistent_load id must be tuple or int, but got {type(pid)}"
                    )
                if type(pid) is tuple and len(pid) > 0 and _ascii(pid[0]) != "storage":
                    raise UnpicklingError(
                        f"Only persistent_load of storage is allowed, but got {type(pid[0])}"
                    )
                self.append(self.persistent_load(pid))
            elif op in (BINGET[0], LONG_BINGET[0]):
                idx = (read(1)[0] if op == BINGET[0] else unpack("<I", read(4))[0])
                if idx not in self.memo:
                    raise UnpicklingError(f"Memo value not found at index {idx}")
                self.append(self.memo[idx])
            elif op in (BINPUT[0], LONG_BINPUT[0]):
                i = (read(1)[0] if op == BINPUT[0] else unpack("<I", read(4))[0])
                self.memo[i] = self.stack[-1]
            elif op == LONG1[0]:
                self.append(decode_long(read(read(1)[0])))
            elif op == PROTO[0]:
                self.proto = read(1)[0]
                if self.proto != 2:
                    warnings.warn(
                        f"Detected pickle protocol {self.proto} in the checkpoint, which was "
                        "not the default pickle protocol used by `torch.load` (2). The "
                        "weights_only Unpickler might not support all instructions "
                        "implemented by this protocol, please file an issue for adding "
                        "support if you encounter this.",
                        stacklevel=2,
                    )
            elif op == STOP[0]:
                return self.stack.pop()
            else:
                raise UnpicklingError(f"Unsupported operand {op}")

    def pop_mark(self) -> list[Any]:
        items = self.stack
        self.stack = self.metastack.pop()
        self.append = self.stack.append
        return items

    def _check_set_item_target(self, opcode: str) -> None:
        if type(self.stack[-1]) not in (dict, OrderedDict, Counter):
            raise UnpicklingError(
                f"Can only {opcode} for dict, collections.OrderedDict, "
                f"collections.Counter, but got {type(self.stack[-1])}"
            )


def _ascii(value: Any) -> Any:
    return value.decode("ascii") if isinstance(value, bytes) else value
