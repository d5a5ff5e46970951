"""Matrix products of the backend, with an optional Intel MKL GEMM for large float matrices.

NumPy's wheels multiply matrices with OpenBLAS. On Intel CPUs, MKL's single-precision GEMM
(the one PyTorch's CPU build uses) is often 10-40% faster for the shapes of a training step,
and a large MLP spends nearly all its time there. When the optional ``mkl`` package is
installed (``pip install mkl``, about 1 GB; in a clone of gradsum ``pip install -e ".[mkl]"``),
:func:`matmul` sends large 2-D float32/float64 products to MKL's ``cblas_?gemm`` through
``ctypes``. Everything else goes to NumPy: small products (where the call overhead would
dominate), other dtypes, batched products, and layouts that are neither C-contiguous nor the
transpose of a C-contiguous matrix.

MKL and OpenBLAS add the same products in different orders, so results can differ in the
last bits (as between NumPy and PyTorch). ``GRADSUM_BLAS=numpy`` in the environment turns
the MKL path off; ``gradsum.backends.mkl.enabled = False`` does so at run time.

MKL runs its sequential layer only, so it is used only in a process whose BLAS is asked for
one thread (``MKL_NUM_THREADS``, ``OMP_NUM_THREADS`` or ``OPENBLAS_NUM_THREADS`` set to 1, or
one CPU): MKL's threaded layers bring Intel's OpenMP runtime, which computes wrong results
next to the GNU OpenMP that PyTorch loads into the same process. With more threads, NumPy's
multi-threaded OpenBLAS does the products.

Example:
    >>> from gradsum._backend import xp
    >>> from gradsum._blas import matmul
    >>> matmul(xp.ones((2, 3)), xp.ones((3, 4))).tolist()[0]
    [3.0, 3.0, 3.0, 3.0]
"""

from __future__ import annotations

import ctypes
import os
import sys
from typing import Any

from gradsum._backend import xp

#: products with at least this many multiply-adds (m * n * k) go to MKL; below it NumPy's
#: call is cheaper than the ctypes call (about 3 us)
MIN_FLOPS = 1 << 21

enabled = True  # the switch behind gradsum.backends.mkl.enabled

_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112
_SEQUENTIAL = 1  # MKL_THREADING_SEQUENTIAL
_np_matmul = xp.matmul
_ptr = ctypes.c_void_p
_char = ctypes.c_char
_addressof = ctypes.addressof


def _addr(a: Any) -> Any:
    """The data address of ``a`` as a ``c_void_p``. ``a.ctypes.data`` builds a helper object
    per call (about 0.8 us); a writable array whose memory is one contiguous block can lend it
    as a buffer instead, for a third of that."""
    flags = a.flags
    if flags.writeable:
        if flags.c_contiguous:
            return _ptr(_addressof(_char.from_buffer(a)))
        if flags.f_contiguous:
            return _ptr(_addressof(_char.from_buffer(a.T)))
    return _ptr(a.ctypes.data)
_ndarray = xp.ndarray
_empty = xp.empty
_uint8 = xp.dtype("uint8")
_getrefcount = sys.getrefcount

#: products whose result has at least this many bytes are written into a buffer that starts
#: on a 2 MiB boundary, where the kernel backs it with huge pages from its first byte: a
#: weight gradient made there is all-reduced 15-20% faster by MPI (measured with 8 MiB
#: pieces on two ranks), and a GEMM writes it with fewer TLB misses. The bytes before the
#: boundary are never touched, so they cost address space, not memory.
ALIGNED_BYTES = 4 << 20
ALIGNMENT = 2 << 20


def aligned_empty(shape: tuple[int, ...], dtype: Any) -> Any:
    """``xp.empty(shape, dtype)`` starting on an ``ALIGNMENT`` boundary: a C-contiguous view
    of a private byte buffer that only it references (see :func:`owns_buffer`)."""
    n = dtype.itemsize
    for s in shape:
        n *= s
    raw = _empty(n + ALIGNMENT, _uint8)
    off = -raw.ctypes.data % ALIGNMENT
    return raw[off : off + n].view(dtype).reshape(shape)


def owns_buffer(a: Any) -> bool:
    """Whether ``a``, an array with a base, is an :func:`aligned_empty` buffer that nothing
    else references (no other view of its memory exists): then it may be taken over or
    written in place like an array that owns its data."""
    b = a.base
    return (b.__class__ is _ndarray and b.dtype is _uint8 and b.base is None
            and b.nbytes - a.nbytes <= ALIGNMENT and a.flags.c_contiguous
            and _getrefcount(b) == _SOLE_REFS)


def _base_refs(a: Any) -> int:
    b = a.base  # (the same steps as owns_buffer)
    return _getrefcount(b)


def _calibrate() -> int:
    """The reference count :func:`owns_buffer` sees for the buffer of an array that is its
    only view (what the interpreter counts for a local and an argument differs between
    versions), or -1 (nothing is ever owned) unless a second view is seen to add one."""
    a = aligned_empty((1,), _float32)
    sole = _base_refs(a)
    other = a[:]
    shared = _base_refs(a)
    del other
    return sole if shared == sole + 1 and _base_refs(a) == sole else -1
_float32 = xp.dtype("float32")
_float64 = xp.dtype("float64")

_SOLE_REFS = _calibrate()
_gemm: dict[Any, Any] | None = None  # dtype -> cblas_?gemm, once loaded
_load_error: str | None = None


def _find_mkl() -> str | None:
    """Path of ``libmkl_rt`` installed by the ``mkl`` wheel, or None."""
    try:
        from importlib import metadata

        dist = metadata.distribution("mkl")
    except Exception:  # not installed (or unreadable metadata): no MKL
        return None
    for f in dist.files or ():
        name = f.name
        if name.startswith("libmkl_rt.so") or name in ("mkl_rt.dll", "libmkl_rt.dylib") or (
            name.startswith("mkl_rt.") and name.endswith(".dll")
        ):
            path = os.path.abspath(str(dist.locate_file(f)))
            if os.path.exists(path):
                return path
    return None


def _threads() -> int:
    """How many threads one process's BLAS is asked to use: ``MKL_NUM_THREADS``,
    ``OMP_NUM_THREADS`` or ``OPENBLAS_NUM_THREADS`` (the first one set), otherwise the CPUs
    this process may run on."""
    for var in ("MKL_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        v = os.environ.get(var, "").split(",")[0].strip()
        if v.isdigit() and int(v) > 0:
            return int(v)
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # (not on every platform)
        return os.cpu_count() or 1


def _load() -> dict[Any, Any] | None:
    """Load MKL once; on any failure remember why and use NumPy from then on."""
    global _gemm, _load_error
    if _gemm is not None or _load_error is not None:
        return _gemm
    if os.environ.get("GRADSUM_BLAS", "auto").lower() == "numpy":
        _load_error = "disabled by GRADSUM_BLAS=numpy"
        return None
    n = _threads()
    if n != 1:
        # MKL's threaded layers need an OpenMP runtime, and PyTorch puts GNU OpenMP in the
        # process's global scope: Intel OpenMP mixed with it computes wrong products (seen,
        # not just feared). The sequential layer has no OpenMP at all, so MKL serves only
        # processes that ask their BLAS for one thread (benchmarks, MPI ranks); with more,
        # NumPy's multi-threaded OpenBLAS does the products.
        _load_error = (
            f"MKL is used only with one BLAS thread per process, and this one may use {n} "
            "(set OMP_NUM_THREADS=1 to use MKL's sequential GEMM; NumPy's BLAS runs threaded)"
        )
        return None
    path = _find_mkl()
    if path is None:
        _load_error = ("the mkl package is not installed (pip install mkl, about 1 GB; in a "
                       "clone of gradsum: pip install -e '.[mkl]')")
        return None
    try:
        lib = ctypes.CDLL(path)
        lib.MKL_Set_Threading_Layer(_SEQUENTIAL)  # before any other MKL call
        gemms = {}
        for dt, fn, scalar in ((_float32, lib.cblas_sgemm, ctypes.c_float),
                               (_float64, lib.cblas_dgemm, ctypes.c_double)):
            # No argtypes (their conversion costs a microsecond a call): the integers go as
            # C ints, the pointers as c_void_p and alpha/beta as prebuilt C scalars.
            fn.restype = None
            gemms[dt] = (fn, scalar(1.0), scalar(0.0))
    except (OSError, AttributeError) as e:
        _load_error = f"could not load MKL from {path}: {e}"
        return None
    _gemm = gemms
    return _gemm


def available() -> bool:
    """Whether MKL's GEMM can be used (the ``mkl`` package loads)."""
    return _load() is not None


def unavailable_reason() -> str | None:
    """Why :func:`available` is False (None when it is True)."""
    _load()
    return None if _gemm is not None else _load_error


def _layout(a: Any) -> tuple[int, int] | None:
    """(transpose flag, leading dimension) of a 2-D operand cblas can read in place."""
    s0, s1 = a.strides
    it = a.itemsize
    if s1 == it and s0 >= a.shape[1] * it and s0 % it == 0:
        return _NO_TRANS, max(s0 // it, 1)
    if s0 == it and s1 >= a.shape[0] * it and s1 % it == 0:
        return _TRANS, max(s1 // it, 1)
    return None


def matmul(x: Any, y: Any) -> Any:
    """``xp.matmul(x, y)``; large 2-D float products of one dtype go to MKL when enabled."""
    if (
        enabled
        and x.ndim == 2
        and y.ndim == 2
        and x.shape[0] * x.shape[1] * y.shape[1] >= MIN_FLOPS
        and x.dtype is y.dtype
        and x.shape[1] == y.shape[0]
    ):
        gemm = (_gemm if _gemm is not None else _load() or {}).get(x.dtype)
        if gemm is not None:
            la, lb = _layout(x), _layout(y)
            if la is not None and lb is not None:
                m, k = x.shape
                n = y.shape[1]
                out = (aligned_empty((m, n), x.dtype) if m * n * x.itemsize >= ALIGNED_BYTES
                       else _empty((m, n), x.dtype))
                fn, one, zero = gemm
                fn(_ROW_MAJOR, la[0], lb[0], m, n, k, one, _addr(x), la[1], _addr(y), lb[1],
                   zero, _addr(out), max(n, 1))
                return out
    if (x.ndim == 2 and y.ndim == 2 and x.dtype is y.dtype and x.dtype.kind == "f"
            and x.shape[1] == y.shape[0]
            and x.shape[0] * y.shape[1] * x.itemsize >= ALIGNED_BYTES):
        # a large product starts on a huge-page boundary, as MKL's do above: MPI moves it
        # (DDP reduces a weight's gradient where it is) about 25% faster than NumPy's own
        # allocation (the same BLAS call, only the output's address differs)
        return _np_matmul(x, y, out=aligned_empty((x.shape[0], y.shape[1]), x.dtype))
    if x.dtype.kind == "V" or y.dtype.kind == "V":  # bfloat16: float32 products rounded once,
        f32 = xp.float32  # as torch's CPU GEMM
        low = x.dtype if x.dtype.kind == "V" else y.dtype
        return _np_matmul(x.astype(f32), y.astype(f32)).astype(low)
    return _np_matmul(x, y)
