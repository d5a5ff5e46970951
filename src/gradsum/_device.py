"""``gradsum.device``: torch's device objects, and the errors of torch's CPU-only build.

gradsum computes on the CPU only and behaves as PyTorch 2.13's CPU build on a machine without a
GPU: every device argument accepts ``"cpu"``, ``"cpu:0"`` and ``device("cpu")``; a CUDA, XPU,
MPS (and other accelerator) device raises what that build raises (``AssertionError: Torch not
compiled with CUDA enabled`` for CUDA), and an integer device raises torch's "Cannot access
accelerator device when none is available." The ``meta`` device (tensors without storage),
which torch's CPU build has, is the one departure: gradsum refuses it with a RuntimeError.

``with device("cpu"):`` sets the default device of the factories inside the block, as torch's
does; inside ``with device("cuda"):`` a factory call raises the CUDA error, again as torch's.

Example:
    >>> import gradsum
    >>> d = gradsum.device("cpu")
    >>> d.type, d.index, str(gradsum.device("cuda", 1))
    ('cpu', None, 'cuda:1')
    >>> gradsum.zeros(1).device == d, d == "cpu"
    (True, False)
"""

from __future__ import annotations

import builtins
import threading
from typing import Any

#: torch's device types, in the order of its "Expected one of ..." message
DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve",
                "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                "privateuseone")

# c10::DeviceType's numbers: torch's hash of a device is (type << 16) | (index & 0xFF)
_TYPE_NUMBER = {"cpu": 0, "cuda": 1, "mkldnn": 2, "opengl": 3, "opencl": 4, "ideep": 5,
                "hip": 6, "fpga": 7, "maia": 8, "xla": 9, "vulkan": 10, "xpu": 12, "mps": 13,
                "meta": 14, "hpu": 15, "ve": 16, "lazy": 17, "ipu": 18, "mtia": 19,
                "privateuseone": 20}

_NO_ACCELERATOR = "Cannot access accelerator device when none is available."
_CPU_ONLY = ("gradsum runs on the CPU only (it behaves as torch's CPU-only build); use "
             "device='cpu', or select it as torch scripts do: "
             "torch.device('cuda' if torch.cuda.is_available() else 'cpu')")


def _signature_error(got: str, reason: str = "") -> TypeError:
    return TypeError(
        f"device() received an invalid combination of arguments - got ({got}), but expected "
        "one of:\n * (gradsum.device device)\n" + reason + " * (str type, int index = -1)\n"
    )


def _int8(index: int) -> int:
    """torch keeps a device index in an int8 (``c10::DeviceIndex``): larger indices wrap."""
    return ((index + 128) % 256) - 128


class device:
    """A device: a type (``'cpu'``, ``'cuda'``, ...) and an optional index, as ``torch.device``.

    Constructed as torch's: ``device("cpu")``, ``device("cuda:1")``, ``device("cuda", 1)``,
    ``device(type="cuda", index=0)``, ``device(other_device)``; ``device(0)`` means the first
    accelerator, and, as on torch's CPU build, raises "Cannot access accelerator device when
    none is available." Devices are equal when type and index are (``device("cpu:0") !=
    device("cpu")``; a device never equals a string, as in torch), hash as torch's, pickle and
    copy. Used as a context manager it sets the default device of factories inside the block.

    Example:
        >>> import gradsum
        >>> gradsum.device("cuda:1")
        device(type='cuda', index=1)
        >>> with gradsum.device("cpu"):
        ...     gradsum.ones(2).device
        device(type='cpu')
    """

    __slots__ = ("_index", "_saved", "_type")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        raise TypeError("type 'gradsum.device' is not an acceptable base type")

    def __new__(cls, *args: Any, **kwargs: Any) -> device:
        type_, index = _parse_arguments(args, kwargs)
        self = object.__new__(cls)
        object.__setattr__(self, "_type", type_)
        object.__setattr__(self, "_index", index)
        object.__setattr__(self, "_saved", [])
        return self

    @property
    def type(self) -> str:
        """The device type, e.g. ``'cpu'`` or ``'cuda'``."""
        return self._type

    @property
    def index(self) -> int | None:
        """The device index, or None when the device names no index (``device('cuda')``)."""
        return None if self._index == -1 else self._index

    def __setattr__(self, name: str, value: Any) -> None:
        if name in ("type", "index"):
            raise AttributeError(f"attribute '{name}' of 'gradsum.device' objects is not "
                                 "writable")
        raise AttributeError(f"'gradsum.device' object has no attribute '{name}'")

    def __repr__(self) -> str:
        if self._index == -1:
            return f"device(type='{self._type}')"
        # (torch's repr shows a wrapped, negative int8 index as an unsigned 16-bit number)
        return f"device(type='{self._type}', index={self._index & 0xFFFF})"

    def __str__(self) -> str:
        return self._type if self._index == -1 else f"{self._type}:{self._index}"

    def __eq__(self, other: object) -> builtins.bool:
        if not isinstance(other, device):
            return NotImplemented
        return self._type == other._type and self._index == other._index

    def __ne__(self, other: object) -> builtins.bool:
        if not isinstance(other, device):
            return NotImplemented
        return not self == other

    def _refuse_order(self, other: object, op: str) -> Any:
        if isinstance(other, device):
            raise TypeError("comparison not implemented")
        raise TypeError(f"'{op}' not supported between instances of 'gradsum.device' and "
                        f"'{type(other).__name__}'")

    def __lt__(self, other: object) -> Any:
        return self._refuse_order(other, "<")

    def __le__(self, other: object) -> Any:
        return self._refuse_order(other, "<=")

    def __gt__(self, other: object) -> Any:
        return self._refuse_order(other, ">")

    def __ge__(self, other: object) -> Any:
        return self._refuse_order(other, ">=")

    def __hash__(self) -> int:
        return (_TYPE_NUMBER[self._type] << 16) | (self._index & 0xFF)

    def __reduce__(self) -> tuple[Any, ...]:
        if self._index == -1:
            return (device, (self._type,))
        return (device, (self._type, self._index))

    def __enter__(self) -> device:
        self._saved.append(getattr(_state, "default", None))
        _state.default = self
        return self

    def __exit__(self, *exc: Any) -> None:
        _state.default = self._saved.pop()


def _check_index(index: Any) -> int:
    if isinstance(index, bool) or not hasattr(index, "__index__"):
        raise TypeError("device(): argument 'index' (position 2) must be int, not "
                        f"{type(index).__name__}")
    i = int(index.__index__())
    if i < 0:
        raise RuntimeError(f"Device index must not be negative (got {i}). Pass 0 or more, or "
                           "None for no index.")
    return i


def _parse_string(s: str) -> tuple[str, int]:
    """torch's parser (c10/core/Device.cpp): letters and ``_``, then ``:N`` with no leading
    zero."""
    if not s:
        raise RuntimeError("Device string must not be empty")
    name, sep, digits = s.partition(":")
    if (not name or not builtins.all(c.isascii() and (c.isalpha() or c == "_") for c in name)
            or (sep and (not digits or not digits.isascii() or not digits.isdigit()
                         or (len(digits) > 1 and digits[0] == "0")))):
        raise RuntimeError(f"Invalid device string: '{s}'")
    if name not in _TYPE_NUMBER:
        raise RuntimeError(f"Expected one of {', '.join(DEVICE_TYPES)} device type at start "
                           f"of device string: {name}")
    if not sep:
        return name, -1
    if len(digits) > 10 or int(digits) >= 2**31:
        raise RuntimeError(f"Could not parse device index '{digits}' in device string '{s}'")
    return name, _int8(int(digits))


def _parse_arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[str, int]:
    if kwargs:
        if args or builtins.any(k not in ("type", "index", "device") for k in kwargs) or (
                "device" in kwargs and len(kwargs) > 1):
            bad = ", ".join(f"{k}={type(v).__name__}" for k, v in kwargs.items())
            wrong = [k for k in kwargs if k not in ("type", "index")]
            raise _signature_error(bad + ", ", "      didn't match because some of the keywords "
                                   f"were incorrect: {', '.join(wrong)}\n" if wrong else "")
        if "device" in kwargs:
            args = (kwargs["device"],)
        else:
            if "type" not in kwargs or not isinstance(kwargs["type"], str):
                bad = ", ".join(f"{k}={type(v).__name__}" for k, v in kwargs.items())
                raise _signature_error(bad + ", ")
            args = (kwargs["type"], kwargs.get("index"))
    if not args or len(args) > 2:
        raise _signature_error(", ".join(type(a).__name__ for a in args))
    first = args[0]
    if len(args) == 1:
        if isinstance(first, device):
            return first._type, first._index
        if isinstance(first, bytes):
            first = first.decode()
        if isinstance(first, str):
            return _parse_string(first)
        if hasattr(first, "__index__") and not isinstance(first, bool):
            _check_index(first)
            raise RuntimeError(_NO_ACCELERATOR + " " + _CPU_ONLY + ".")
        raise _signature_error(type(first).__name__, "      didn't match because some of the "
                               f"arguments have invalid types: (!{type(first).__name__}!)\n")
    if not isinstance(first, (str, bytes)):
        raise TypeError("device(): argument 'type' (position 1) must be str, not "
                        f"{type(first).__name__}")
    if isinstance(first, bytes):
        first = first.decode()
    name, idx = _parse_string(first)
    if idx != -1:  # (even with index None, as torch)
        raise RuntimeError("type (string) must not include an index because index was passed "
                           f"explicitly: {first}")
    if args[1] is None:
        return name, idx
    return name, _int8(_check_index(args[1]))


# -- the default device (``with device(...)``, ``set_default_device``) ---------------------------
class _State(threading.local):
    default: device | None = None


_state = _State()  # (thread-local, as torch's default-device context)


def set_default_device(device_: Any) -> None:
    """Set the device factories use when given none, as ``torch.set_default_device``.

    ``None`` restores the CPU. Setting ``'cuda'`` is accepted, as in torch; factory calls then
    raise torch's CPU-build error.

    Example:
        >>> import gradsum
        >>> gradsum.set_default_device("cpu")
        >>> gradsum.get_default_device()
        device(type='cpu')
        >>> gradsum.set_default_device(None)
    """
    _state.default = None if device_ is None else as_device(device_)


def get_default_device() -> device:
    """The device factories use when given none (``device('cpu')`` unless changed).

    A default of ``'cuda'`` without an index asks the current CUDA device, which raises on
    gradsum as on torch's CPU build.

    Example:
        >>> import gradsum
        >>> gradsum.get_default_device()
        device(type='cpu')
    """
    d = _state.default
    if d is None:
        return _CPU
    if d._index == -1 and d._type not in ("cpu", "meta"):
        raise not_compiled(d._type)
    return d


def as_device(obj: Any, name: str | None = None) -> device:
    """``obj`` (a device, a string, an int) as a :class:`device`; ``name`` is the function
    named in the TypeError for another type."""
    if isinstance(obj, device):
        return obj
    if isinstance(obj, (str, bytes)) or (hasattr(obj, "__index__")
                                          and not isinstance(obj, builtins.bool)):
        return device(obj)
    raise TypeError(f"{name or 'device'}(): argument 'device' must be torch.device, not "
                    f"{type(obj).__name__}")


# -- the errors of torch's CPU build ---------------------------------------------------------
def not_compiled(type_: str) -> BaseException:
    """What torch's CPU build raises for a device of ``type_`` given to a factory or ``to``
    (for the types both paths treat alike: cuda, xpu, mtia, hpu, privateuseone, lazy)."""
    if type_ == "cuda":
        return AssertionError(f"Torch not compiled with CUDA enabled: {_CPU_ONLY}.")
    if type_ == "xpu":
        return AssertionError(f"Torch not compiled with XPU enabled: {_CPU_ONLY}.")
    if type_ == "mtia":
        return AssertionError(f"Torch not compiled with MTIA enabled: {_CPU_ONLY}.")
    if type_ in ("hpu", "privateuseone"):
        return ModuleNotFoundError(f"No module named 'gradsum.{type_}': {_CPU_ONLY}.")
    if type_ == "meta":
        return RuntimeError("gradsum has no 'meta' device (tensors without storage, which "
                            "torch has): create the tensor on the CPU (device='cpu').")
    if type_ == "lazy":
        return _no_kernel("Lazy")
    return RuntimeError(f"PyTorch is not linked with support for {type_} devices: {_CPU_ONLY}.")


_BACKEND_NAMES = {"hip": "HIP", "ve": "VE", "fpga": "FPGA", "maia": "MAIA", "xla": "XLA",
                  "lazy": "Lazy", "vulkan": "Vulkan", "mps": "MPS", "ipu": "IPU"}


def _no_kernel(backend: str, kernel: str = "aten::empty.memory_format") -> NotImplementedError:
    return NotImplementedError(
        f"Could not run '{kernel}' with arguments from the '{backend}' backend: {_CPU_ONLY}."
    )


def factory_error(type_: str, kernel: str = "aten::empty.memory_format") -> BaseException:
    """What torch's CPU build raises when a factory (``zeros``, ``randn``, ...) is asked for
    a tensor on a device of ``type_`` (``kernel``: the allocation torch's message names)."""
    if type_ in _BACKEND_NAMES:
        return _no_kernel(_BACKEND_NAMES[type_], kernel)
    if type_ in ("mkldnn", "opengl", "opencl", "ideep"):
        return RuntimeError(f"This is a grandfathered Caffe2 device type {type_}, it shouldn't "
                            f"ever convert to a DispatchKey: {_CPU_ONLY}.")
    return not_compiled(type_)


def check_factory(device_: Any, name: str = "zeros",
                  kernel: str = "aten::empty.memory_format") -> None:
    """Refuse, as torch's CPU build does, a non-CPU ``device=`` of a factory (None: the default
    device, see :func:`set_default_device`)."""
    d = get_default_device() if device_ is None else as_device(device_, name)
    if d._type != "cpu":
        raise factory_error(d._type, kernel)


def check_transfer(device_: Any, name: str = "to") -> device:
    """Refuse, as torch's CPU build does, a non-CPU target of ``to``/``tensor(..., device=)``;
    returns the device (a CPU one)."""
    d = as_device(device_, name)
    if d._type != "cpu":
        raise not_compiled(d._type)
    return d


def check_cuda_target(device_: Any, kind: str = "cuda") -> BaseException:
    """The error of ``Tensor.cuda(device)`` (or ``.xpu``) on torch's CPU build."""
    if device_ is None:
        return not_compiled(kind)
    d = as_device(device_, kind)
    if d._type != kind:
        return RuntimeError(f"Invalid device, must be {kind} device (got {d}); {_CPU_ONLY}.")
    return not_compiled(kind)


def no_accelerator() -> RuntimeError:
    """torch's error for an accelerator query on a machine without one."""
    return RuntimeError(f"{_NO_ACCELERATOR} {_CPU_ONLY}.")


_CPU = device("cpu")
device.__module__ = "gradsum"  # (as torch.device is torch.device)


class AcceleratorError(RuntimeError):
    """torch's ``torch.AcceleratorError`` (a RuntimeError raised by accelerator runtimes), so
    ``except`` clauses naming it work; gradsum never raises it."""


def get_device(input: Any) -> int:
    """The CUDA device index of a tensor: -1, as for any CPU tensor in torch.

    Example:
        >>> import gradsum
        >>> gradsum.get_device(gradsum.ones(1))
        -1
    """
    from gradsum._tensor import Tensor

    if not isinstance(input, Tensor):
        raise TypeError("get_device(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return -1


def get_device_module(device_: Any = None) -> Any:
    """The module of a device type (``gradsum.cuda`` for ``'cuda'``; the CPU's for None), as
    ``torch.get_device_module``.

    Example:
        >>> import gradsum
        >>> gradsum.get_device_module("cuda") is gradsum.cuda
        True
    """
    import importlib

    if device_ is None:
        name = "cpu"
    elif isinstance(device_, (str, device)):
        name = as_device(device_).type
    else:
        raise RuntimeError(f"Invalid value of device '{device_}', expect torch.device, str, "
                           "or None")
    if name in ("cpu", "cuda", "mps", "xpu"):
        return importlib.import_module(f"gradsum.{name}")
    raise RuntimeError(f"Device '{name}' does not have a corresponding module registered as "
                       f"'torch.{name}'.")
