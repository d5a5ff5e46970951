"""``gradsum.cuda``: torch.cuda as torch's CPU-only build answers it, on a machine without a GPU.

Queries answer as that build does (``is_available()`` is False, ``device_count()`` is 0, the
memory counters are 0), seeding calls are accepted and do nothing (``manual_seed_all``: "safe
to call if CUDA is not available; in that case, it is silently ignored"), and every operation
that needs a GPU raises that build's error, type and first phrase: mostly ``AssertionError:
Torch not compiled with CUDA enabled``. So the usual device selection runs unchanged:

Example:
    >>> import gradsum as torch
    >>> device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    >>> torch.cuda.manual_seed_all(0)
    >>> device, torch.cuda.device_count(), torch.cuda.memory_allocated()
    (device(type='cpu'), 0, 0)
"""

from __future__ import annotations

import importlib
import warnings
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

from gradsum import _device, _legacy_types
from gradsum._device import AcceleratorError
from gradsum._device import device as _torch_device

__all__ = [
    "AcceleratorError", "BFloat16Storage", "BFloat16Tensor", "BoolStorage", "BoolTensor",
    "ByteStorage",
    "ByteTensor", "CUDAGraph", "CharStorage", "CharTensor", "CudaError",
    "DeferredCudaCallError", "DoubleStorage", "DoubleTensor", "Event",
    "can_device_access_peer", "clock_rate", "current_blas_handle", "device_memory_used",
    "get_per_process_memory_fraction", "graph", "has_half", "has_magma",
    "is_current_stream_capturing", "list_gpu_processes", "make_graphed_callables",
    "memory_snapshot", "memory_stats_as_nested_dict", "memory_summary", "memory_usage",
    "power_draw", "reset_max_memory_cached", "set_per_process_memory_fraction",
    "temperature", "utilization",
    "FloatStorage", "FloatTensor", "HalfStorage", "HalfTensor", "IntStorage", "IntTensor",
    "LongStorage", "LongTensor", "OutOfMemoryError", "ShortStorage", "ShortTensor", "Stream",
    "StreamContext", "current_device", "current_stream", "default_stream", "device",
    "device_count", "device_of", "empty_cache", "get_arch_list", "get_device_capability",
    "get_device_name", "get_device_properties", "get_gencode_flags", "get_rng_state",
    "get_rng_state_all", "get_sync_debug_mode", "init", "initial_seed", "ipc_collect",
    "is_available", "is_bf16_supported", "is_initialized", "is_tf32_supported",
    "manual_seed", "manual_seed_all", "max_memory_allocated", "max_memory_cached",
    "max_memory_reserved", "mem_get_info", "memory_allocated", "memory_cached",
    "memory_reserved", "memory_stats", "reset_accumulated_memory_stats",
    "reset_max_memory_allocated", "reset_peak_memory_stats", "seed", "seed_all",
    "set_device", "set_rng_state", "set_rng_state_all", "stream", "synchronize",
]


class OutOfMemoryError(RuntimeError):
    """torch's ``torch.cuda.OutOfMemoryError`` (a RuntimeError), so ``except`` clauses that
    name it work; gradsum never raises it."""


def _no_cuda() -> AssertionError:
    return _device.not_compiled("cuda")  # type: ignore[return-value]


def _missing_binding(name: str) -> AttributeError:
    """torch's CPU build lacks some CUDA bindings and raises AttributeError for them."""
    return AttributeError(
        f"module 'torch._C' has no attribute '{name}': torch's CPU-only build raises this "
        "too; gradsum has no GPU. Guard the call with torch.cuda.is_available()."
    )


# -- queries --------------------------------------------------------------------------------
def is_available() -> bool:
    """Whether CUDA can be used: False (gradsum runs on the CPU)."""
    return False


def device_count() -> int:
    """The number of GPUs: 0."""
    return 0


def is_initialized() -> bool:
    """Whether CUDA has been initialised: False."""
    return False


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether the current GPU supports bfloat16: False (there is none)."""
    return False


def is_tf32_supported() -> bool:
    """Whether the current GPU supports TF32: False (there is none)."""
    return False


def get_arch_list() -> list[str]:
    """The CUDA architectures this build was compiled for: none."""
    return []


def get_gencode_flags() -> str:
    """The NVCC gencode flags this build was compiled with: none."""
    return ""


def init() -> None:
    """Initialise CUDA: ``AssertionError: Torch not compiled with CUDA enabled``."""
    raise _no_cuda()


def current_device() -> int:
    """The current GPU's index: ``AssertionError: Torch not compiled with CUDA enabled``."""
    raise _no_cuda()


def synchronize(device: Any = None) -> None:
    """Wait for the GPU: ``AssertionError: Torch not compiled with CUDA enabled``."""
    raise _no_cuda()


def ipc_collect() -> None:
    """``AssertionError: Torch not compiled with CUDA enabled``."""
    raise _no_cuda()


def get_device_name(device: Any = None) -> str:
    """A GPU's name: ``AssertionError: Torch not compiled with CUDA enabled``."""
    raise _no_cuda()


def get_device_capability(device: Any = None) -> tuple[int, int]:
    """A GPU's compute capability: ``AssertionError: Torch not compiled with CUDA enabled``."""
    raise _no_cuda()


def get_device_properties(device: Any = None) -> Any:
    """A GPU's properties: ``AssertionError: Torch not compiled with CUDA enabled``."""
    raise _no_cuda()


def mem_get_info(device: Any = None) -> tuple[int, int]:
    """Free and total GPU memory: ``AssertionError: Torch not compiled with CUDA enabled``."""
    raise _no_cuda()


def current_stream(device: Any = None) -> Any:
    """``AssertionError: Torch not compiled with CUDA enabled``."""
    raise _no_cuda()


def default_stream(device: Any = None) -> Any:
    """``AssertionError: Torch not compiled with CUDA enabled``."""
    raise _no_cuda()


def get_sync_debug_mode() -> int:
    """``AssertionError: Torch not compiled with CUDA enabled``."""
    raise _no_cuda()


def _device_index(device: Any, optional: bool = False) -> int | None:
    """torch.cuda's ``_get_device_index``: a cuda device, an int, or (``optional``) None."""
    if isinstance(device, str):
        device = _torch_device(device)
    idx: int | None = None
    if isinstance(device, _torch_device):
        if device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        idx = device.index
    elif isinstance(device, int) and not isinstance(device, bool):
        idx = device
    if idx is None and not optional:
        raise ValueError("Expected a torch.device with a specified index or an integer, but "
                         f"got:{device}")
    return idx


def set_device(device: Any) -> None:
    """Select a GPU: a negative index is a no-op (as in torch); another raises torch's CPU
    build's AttributeError."""
    idx = _device_index(device)
    if idx is not None and idx >= 0:
        raise _missing_binding("_cuda_setDevice")


def can_device_access_peer(device: Any, peer_device: Any) -> bool:
    """``AssertionError: Torch not compiled with CUDA enabled``."""
    raise _no_cuda()


def current_blas_handle() -> int:
    """``AssertionError: Torch not compiled with CUDA enabled``."""
    raise _no_cuda()


def is_current_stream_capturing() -> bool:
    """torch's CPU build: RuntimeError "Tried to instantiate dummy base class ..."."""
    raise RuntimeError("Tried to instantiate dummy base class _cuda_isCurrentStreamCapturing: "
                       "gradsum has no GPU (torch's CPU-only build raises this too).")


#: torch's build flags, as its CPU build reports them
has_half = True
has_magma = False


class CudaError(RuntimeError):
    """torch's ``torch.cuda.CudaError`` (a RuntimeError); gradsum never raises it."""


class DeferredCudaCallError(Exception):
    """torch's ``torch.cuda.DeferredCudaCallError``; gradsum never raises it."""


def _no_nvml() -> ModuleNotFoundError:
    return ModuleNotFoundError("nvidia-ml-py does not seem to be installed or it can't be "
                               "imported. gradsum has no GPU to query.")


def utilization(device: Any = None) -> int:
    """GPU utilisation through NVML: torch's ModuleNotFoundError without nvidia-ml-py."""
    raise _no_nvml()


def temperature(device: Any = None) -> int:
    """GPU temperature through NVML: torch's ModuleNotFoundError without nvidia-ml-py."""
    raise _no_nvml()


def power_draw(device: Any = None) -> int:
    """GPU power through NVML: torch's ModuleNotFoundError without nvidia-ml-py."""
    raise _no_nvml()


def clock_rate(device: Any = None) -> int:
    """GPU clock through NVML: torch's ModuleNotFoundError without nvidia-ml-py."""
    raise _no_nvml()


def memory_usage(device: Any = None) -> int:
    """GPU memory use through NVML: torch's ModuleNotFoundError without nvidia-ml-py."""
    raise _no_nvml()


def device_memory_used(device: Any = None) -> int:
    """GPU memory use through NVML: torch's ModuleNotFoundError without nvidia-ml-py."""
    raise _no_nvml()


def list_gpu_processes(device: Any = None) -> str:
    """The processes on a GPU, as text: torch's answer without nvidia-ml-py."""
    return "pynvml module not found, please install nvidia-ml-py"


# -- memory: nothing is allocated on a GPU -----------------------------------------------------
def set_per_process_memory_fraction(fraction: float, device: Any = None) -> None:
    """``AssertionError: Torch not compiled with CUDA enabled``."""
    raise _no_cuda()


def get_per_process_memory_fraction(device: Any = None) -> float:
    """``AssertionError: Torch not compiled with CUDA enabled``."""
    raise _no_cuda()


def memory_stats_as_nested_dict(device: Any = None) -> dict[str, Any]:
    """The CUDA allocator's statistics, nested: empty (CUDA is not initialised)."""
    return {}


def memory_summary(device: Any = None, abbreviated: bool = False) -> str:
    """torch's CPU build raises KeyError here (its statistics are empty); so does gradsum."""
    raise KeyError("allocated_bytes.all.current")


def memory_snapshot(mempool_id: Any = None, include_traces: bool = True) -> Any:
    """torch's CPU build raises AttributeError here (it lacks the binding); so does gradsum."""
    raise _missing_binding("_cuda_memorySnapshot")


def empty_cache() -> None:
    """Release cached GPU memory: nothing to do (CUDA is not initialised)."""


def memory_stats(device: Any = None) -> dict[str, Any]:
    """The CUDA allocator's statistics: empty (CUDA is not initialised)."""
    return OrderedDict()


def memory_allocated(device: Any = None) -> int:
    """GPU memory occupied by tensors, in bytes: 0."""
    return 0


def max_memory_allocated(device: Any = None) -> int:
    """The peak of :func:`memory_allocated`: 0."""
    return 0


def memory_reserved(device: Any = None) -> int:
    """GPU memory held by the caching allocator, in bytes: 0."""
    return 0


def max_memory_reserved(device: Any = None) -> int:
    """The peak of :func:`memory_reserved`: 0."""
    return 0


def memory_cached(device: Any = None) -> int:
    """Deprecated name of :func:`memory_reserved` (warns, as torch's): 0."""
    warnings.warn("`torch.cuda.memory_cached` has been renamed to `torch.cuda.memory_reserved`",
                  FutureWarning, stacklevel=2)
    return 0


def max_memory_cached(device: Any = None) -> int:
    """Deprecated name of :func:`max_memory_reserved` (warns, as torch's): 0."""
    warnings.warn("`torch.cuda.max_memory_cached` has been renamed to "
                  "`torch.cuda.max_memory_reserved`", FutureWarning, stacklevel=2)
    return 0


def reset_peak_memory_stats(device: Any = None) -> None:
    """torch's CPU build raises AttributeError here (it lacks the binding); so does gradsum."""
    raise _missing_binding("_cuda_resetPeakMemoryStats")


def reset_max_memory_allocated(device: Any = None) -> None:
    """Warns as torch's, then raises its CPU build's AttributeError."""
    warnings.warn("torch.cuda.reset_max_memory_allocated now calls "
                  "torch.cuda.reset_peak_memory_stats, which resets /all/ peak memory stats.",
                  FutureWarning, stacklevel=2)
    raise _missing_binding("_cuda_resetPeakMemoryStats")


def reset_max_memory_cached(device: Any = None) -> None:
    """Warns as torch's, then raises its CPU build's AttributeError."""
    warnings.warn("torch.cuda.reset_max_memory_cached now calls "
                  "torch.cuda.reset_peak_memory_stats, which resets /all/ peak memory stats.",
                  FutureWarning, stacklevel=2)
    raise _missing_binding("_cuda_resetPeakMemoryStats")


def reset_accumulated_memory_stats(device: Any = None) -> None:
    """torch's CPU build raises AttributeError here (it lacks the binding); so does gradsum."""
    raise _missing_binding("_cuda_resetAccumulatedMemoryStats")


# -- random numbers: seeding is accepted and ignored, as torch's ------------------------------
def manual_seed(seed: int) -> None:
    """Seed the current GPU's generator: silently ignored without CUDA (as in torch); the seed
    must still convert to an int."""
    int(seed)


def manual_seed_all(seed: int) -> None:
    """Seed every GPU's generator: silently ignored without CUDA (as in torch)."""
    int(seed)


def seed() -> None:
    """Seed the current GPU's generator randomly: silently ignored without CUDA."""


def seed_all() -> None:
    """Seed every GPU's generator randomly: silently ignored without CUDA."""


def initial_seed() -> int:
    """The current GPU's seed: ``AssertionError: Torch not compiled with CUDA enabled``."""
    raise _no_cuda()


def get_rng_state(device: Any = "cuda") -> Any:
    """A GPU's generator state: ``AssertionError: Torch not compiled with CUDA enabled``."""
    raise _no_cuda()


def get_rng_state_all() -> list[Any]:
    """Every GPU's generator state: ``[]`` (there are none)."""
    return []


def set_rng_state(new_state: Any, device: Any = "cuda") -> None:
    """Set a GPU's generator state: silently ignored without CUDA (as in torch)."""


def set_rng_state_all(new_states: Iterable[Any]) -> None:
    """Set every GPU's generator state: silently ignored without CUDA (as in torch)."""
    for _ in new_states:
        pass


# -- device and stream contexts ----------------------------------------------------------------
class device:
    """Context manager selecting a GPU (``torch.cuda.device``): a negative index or None is
    a no-op; entering another raises torch's CPU build's RuntimeError."""

    def __init__(self, device: Any) -> None:
        self.idx = _device_index(device, optional=True)
        self.prev_idx = -1

    def __enter__(self) -> None:
        if self.idx is None:
            raise TypeError("'<' not supported between instances of 'NoneType' and 'int'")
        if self.idx >= 0:
            raise RuntimeError("PyTorch was compiled without CUDA support: gradsum has no GPU. "
                               "Guard the block with torch.cuda.is_available().")

    def __exit__(self, *exc: Any) -> bool:
        return False


class device_of(device):
    """Context manager selecting the GPU of a tensor: a no-op for a CPU tensor."""

    def __init__(self, obj: Any) -> None:
        super().__init__(obj.get_device() if obj.is_cuda else -1)


class Event:
    """``torch.cuda.Event``: constructing one raises torch's CPU build's RuntimeError."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Event:
        raise RuntimeError("Tried to instantiate dummy base class Event: gradsum has no GPU "
                           "(torch's CPU-only build raises this too).")


class Stream:
    """``torch.cuda.Stream``: constructing one raises torch's CPU build's RuntimeError."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Stream:
        raise RuntimeError("torch.cuda.Stream requires CUDA support: gradsum has no GPU.")


class StreamContext:
    """``torch.cuda.stream(s)``'s context: with ``None`` (the only stream there can be
    without a GPU) a no-op."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def __enter__(self) -> None:
        if self.stream is not None:
            raise _no_cuda()

    def __exit__(self, *exc: Any) -> None:
        return None


class CUDAGraph:
    """``torch.cuda.CUDAGraph``: constructing one raises torch's CPU build's RuntimeError."""

    def __new__(cls, *args: Any, **kwargs: Any) -> CUDAGraph:
        raise RuntimeError("Tried to instantiate dummy base class CUDAGraph: gradsum has no "
                           "GPU (torch's CPU-only build raises this too).")


class graph:
    """``torch.cuda.graph(cuda_graph)``: it makes a capture stream first, which raises as
    :class:`Stream` does (as on torch's CPU build)."""

    def __init__(self, cuda_graph: Any, pool: Any = None, stream: Any = None,
                 capture_error_mode: str = "global") -> None:
        self.capture_stream = Stream() if stream is None else stream
        self.cuda_graph = cuda_graph

    def __enter__(self) -> None:
        raise _no_cuda()

    def __exit__(self, *exc: Any) -> None:
        return None


def make_graphed_callables(callables: Any, sample_args: Any, *args: Any,
                           **kwargs: Any) -> Any:
    """Capturing CUDA graphs: raises as :class:`CUDAGraph` does."""
    return CUDAGraph()


def stream(stream: Any) -> StreamContext:
    """Run the block on ``stream``: with ``None`` a no-op, as in torch."""
    return StreamContext(stream)


# -- legacy tensor types: torch.cuda.FloatTensor and friends ------------------------------------
# The tensor types are gradsum._legacy_types' (so that Tensor.type('torch.cuda.FloatTensor')
# and gradsum.cuda.FloatTensor are one object): no tensor is an instance, and constructing
# one raises torch's CPU build's TypeError.
FloatTensor = _legacy_types.CUDA_TYPES["FloatTensor"]
DoubleTensor = _legacy_types.CUDA_TYPES["DoubleTensor"]
HalfTensor = _legacy_types.CUDA_TYPES["HalfTensor"]
BFloat16Tensor = _legacy_types.CUDA_TYPES["BFloat16Tensor"]
ByteTensor = _legacy_types.CUDA_TYPES["ByteTensor"]
CharTensor = _legacy_types.CUDA_TYPES["CharTensor"]
ShortTensor = _legacy_types.CUDA_TYPES["ShortTensor"]
IntTensor = _legacy_types.CUDA_TYPES["IntTensor"]
LongTensor = _legacy_types.CUDA_TYPES["LongTensor"]
BoolTensor = _legacy_types.CUDA_TYPES["BoolTensor"]


class _CudaStorageType(type):
    """The metaclass of ``cuda.FloatStorage`` etc.: no object is an instance, and calling
    one raises torch's CPU build's error."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        raise _no_cuda()

    def __instancecheck__(cls, obj: Any) -> bool:
        return False


def _storage(name: str) -> type:
    return _CudaStorageType(name, (), {"__module__": __name__, "__doc__":
                                       f"``torch.cuda.{name}``: unavailable without CUDA."})


FloatStorage = _storage("FloatStorage")
DoubleStorage = _storage("DoubleStorage")
HalfStorage = _storage("HalfStorage")
BFloat16Storage = _storage("BFloat16Storage")
ByteStorage = _storage("ByteStorage")
CharStorage = _storage("CharStorage")
ShortStorage = _storage("ShortStorage")
IntStorage = _storage("IntStorage")
LongStorage = _storage("LongStorage")
BoolStorage = _storage("BoolStorage")


def __getattr__(name: str) -> Any:
    # ``torch.cuda.amp`` and ``.nvtx`` are attributes without an explicit import, as in torch
    if name in ("amp", "nvtx"):
        return importlib.import_module(f"gradsum.cuda.{name}")
    raise AttributeError(f"module 'gradsum.cuda' has no attribute '{name}'")
