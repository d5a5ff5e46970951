"""Process-wide switches torch scripts set: threads, float32 matmul precision, determinism.

- :func:`set_num_threads` bounds the threads of NumPy's bundled OpenBLAS (the library that
  does gradsum's matrix products), through its own ``openblas_set_num_threads`` entry point,
  found with ctypes; :func:`get_num_threads` reports the bound (by default the BLAS threads
  of this process: ``OMP_NUM_THREADS`` and friends, otherwise the CPUs it may use). Where
  NumPy links another BLAS without that entry point, the number is stored and reported only.
- :func:`set_num_interop_threads`: gradsum runs no inter-op thread pool; stored and reported.
- :func:`set_float32_matmul_precision`: gradsum multiplies float32 in float32 on the CPU
  ("highest"), as torch's CPU build does whatever the setting; stored, and tied to
  ``backends.cuda.matmul.allow_tf32`` as in torch.
- :func:`use_deterministic_algorithms`: gradsum's kernels are deterministic already; the
  setting is stored and reported as torch's.

Example:
    >>> import gradsum
    >>> gradsum.get_float32_matmul_precision()
    'highest'
    >>> gradsum.use_deterministic_algorithms(True)
    >>> gradsum.are_deterministic_algorithms_enabled()
    True
    >>> gradsum.use_deterministic_algorithms(False)
"""

from __future__ import annotations

import ctypes
import glob
import os
import warnings
from typing import Any

from gradsum import _blas
from gradsum._backend import xp

__all__ = [
    "are_deterministic_algorithms_enabled", "get_deterministic_debug_mode",
    "get_float32_matmul_precision", "get_num_interop_threads", "get_num_threads",
    "init_num_threads",
    "is_deterministic_algorithms_warn_only_enabled", "is_warn_always_enabled",
    "set_deterministic_debug_mode", "set_float32_matmul_precision", "set_num_interop_threads",
    "set_num_threads", "set_warn_always", "use_deterministic_algorithms",
]

_settings: dict[str, Any] = {
    "threads": None, "interop": None, "precision": "highest",
    "deterministic": False, "warn_only": False,
}


def _check_threads(n: Any, name: str) -> int:
    if isinstance(n, bool) or not isinstance(n, int):
        raise RuntimeError(f"{name} expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError(f"{name} expects a positive integer (got {n}). Pass 1 or more.")
    return n


def _openblas_setter() -> Any:
    """NumPy's bundled OpenBLAS's ``set_num_threads`` (None where there is none)."""
    libs = os.path.join(os.path.dirname(xp.__file__), os.pardir, "numpy.libs")
    for path in sorted(glob.glob(os.path.join(libs, "*openblas*"))):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for sym in ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads",
                    "openblas_set_num_threads64_", "openblas_set_num_threads"):
            fn = getattr(lib, sym, None)
            if fn is not None:
                return fn
    return None


def set_num_threads(n: int) -> None:
    """Bound the threads gradsum's matrix products use (NumPy's OpenBLAS), as
    ``torch.set_num_threads`` bounds torch's intra-op pool."""
    n = _check_threads(n, "set_num_threads")
    setter = _openblas_setter()
    if setter is not None:
        setter(ctypes.c_int(n))
    _settings["threads"] = n


def get_num_threads() -> int:
    """The threads gradsum's matrix products may use (see :func:`set_num_threads`)."""
    n = _settings["threads"]
    return int(n) if n is not None else _blas._threads()


def init_num_threads() -> None:
    """Initialise the thread pool of the calling thread: nothing to do (as torch's on a thread
    that already has one)."""


def set_num_interop_threads(n: int) -> None:
    """Stored and reported by :func:`get_num_interop_threads` (gradsum has no inter-op pool)."""
    _settings["interop"] = _check_threads(n, "set_num_interop_threads")


def get_num_interop_threads() -> int:
    """torch's inter-op thread count (as set, otherwise the CPUs, torch's default)."""
    n = _settings["interop"]
    return int(n) if n is not None else _blas._threads()


def set_float32_matmul_precision(precision: str) -> None:
    """``'highest'``, ``'high'`` or ``'medium'``; another value warns and changes nothing, as
    in torch. gradsum multiplies float32 in float32 whatever the setting (as torch's CPU)."""
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _settings["precision"] = precision


def get_float32_matmul_precision() -> str:
    """The float32 matmul precision setting (``'highest'`` by default)."""
    return str(_settings["precision"])


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Ask for deterministic algorithms: gradsum's are, always; the setting is recorded."""
    if not isinstance(mode, bool):
        raise TypeError("_set_deterministic_algorithms(): argument 'mode' (position 1) must "
                        f"be bool, not {type(mode).__name__}")
    if not isinstance(warn_only, bool):
        raise TypeError("_set_deterministic_algorithms(): argument 'warn_only' must be bool, "
                        f"not {type(warn_only).__name__}")
    _settings["deterministic"] = mode
    _settings["warn_only"] = warn_only if mode else False


def are_deterministic_algorithms_enabled() -> bool:
    """Whether :func:`use_deterministic_algorithms` was turned on."""
    return bool(_settings["deterministic"])


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """Whether it was turned on with ``warn_only=True``."""
    return bool(_settings["warn_only"])


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode: str | int) -> None:
    """``'default'``/0 (off), ``'warn'``/1, ``'error'``/2, as torch's."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, "
                               f"`warn`, `error`, but got {debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    if isinstance(debug_mode, bool) or not isinstance(debug_mode, int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError("invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> int:
    """0, 1 or 2: see :func:`set_deterministic_debug_mode`."""
    if not _settings["deterministic"]:
        return 0
    return 1 if _settings["warn_only"] else 2


_warn_always = False


def set_warn_always(b: bool, /) -> None:
    """When ``True``, warnings that torch gives once per process (``TORCH_WARN_ONCE``, such as
    ``set_default_tensor_type``'s deprecation) are given every time, as torch's flag.

    Example:
        >>> import gradsum
        >>> gradsum.set_warn_always(True); gradsum.is_warn_always_enabled()
        True
        >>> gradsum.set_warn_always(False)
    """
    global _warn_always
    if not isinstance(b, bool):
        raise RuntimeError(f"setWarnOnlyOnce expects a bool, but got {type(b).__name__}. Pass "
                           "True or False.")
    _warn_always = b


def is_warn_always_enabled() -> bool:
    """Whether :func:`set_warn_always` turned once-per-process warnings into every-time ones."""
    return _warn_always


# -- the C allocator --------------------------------------------------------------------------
#: glibc's ``mallopt`` parameter numbers (malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
#: allocations below this come from malloc's heap, not a fresh mmap (glibc's largest allowed)
MMAP_THRESHOLD = 32 << 20
#: free memory at the top of the heap kept for reuse, not handed back to the system
TRIM_THRESHOLD = 128 << 20
#: what :func:`tune_allocator` did: None before it ran, else True (tuned) or the reason not
allocator_tuned: bool | str | None = None


def tune_allocator() -> bool | str:
    """Keep NumPy's temporaries in reusable memory: glibc's ``mallopt`` with an mmap
    threshold of 32 MiB and a trim threshold of 128 MiB (run once when gradsum is imported).

    A kernel of a few NumPy passes makes temporaries of the operand's size. With glibc's
    defaults a freed temporary of a few hundred KiB is often handed back to the system and
    the next call's is page-faulted in again, one fault per 4 KiB page: measured here, a
    float32 ``log_ndtr`` forward+backward on 64K elements took 5.6 ms with 1,248 faults per
    call and 3.3 ms with none. Allocations below the mmap threshold now come from the heap,
    and up to the trim threshold of free memory stays in the process for the next call (the
    process's resident size can stay that much above what it uses). The setting is the
    process's (torch in the same process gets it too). ``GRADSUM_MALLOC_TUNING=0`` in the
    environment leaves the allocator alone, as do glibc's own ``MALLOC_MMAP_THRESHOLD_`` or
    ``MALLOC_TRIM_THRESHOLD_`` variables when set, and a C library other than glibc. Returns
    True when tuned, else the reason it was not.
    """
    global allocator_tuned
    if os.environ.get("GRADSUM_MALLOC_TUNING", "1").strip() == "0":
        reason: bool | str = "GRADSUM_MALLOC_TUNING=0"
    elif "MALLOC_MMAP_THRESHOLD_" in os.environ or "MALLOC_TRIM_THRESHOLD_" in os.environ:
        reason = "glibc's MALLOC_*_THRESHOLD_ variables are set"
    else:
        try:
            libc = ctypes.CDLL(None)
            libc.gnu_get_libc_version  # noqa: B018 - glibc only (musl, macOS: no mallopt knobs)
            mallopt = libc.mallopt
        except (OSError, AttributeError):
            reason = "not glibc"
        else:
            mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
            ok = mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) and \
                mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)
            reason = True if ok else "mallopt refused the thresholds"
    allocator_tuned = reason
    return reason
