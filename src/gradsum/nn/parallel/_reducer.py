"""DDP's gradient reducer: buckets, post-accumulate hooks, non-blocking all-reduce.

Two kinds of "bucket", in one ordered list (all ranks start collectives in the same order):

- *direct*: one parameter whose gradient alone is large (``>= min(1 MiB, bucket cap)``),
  all-reduced **in place** in its ``.grad`` buffer: no bucket memory, no copy in, no copy
  out (a copy of 23 MB costs about half the all-reduce itself on a memory-bound machine).
  Torch scales each gradient by ``1 / world`` before the sum. In a power-of-two world
  (float32/float64) the reducer sums it with its own halving schedule
  (``_Comm.halving_allreduce``: MPICH's reduce-scatter-allgather pairing over
  point-to-point messages, so the same summation tree and the same bits), which scales
  each rank's values where its first level adds them, chunk by chunk in cache, instead of a
  separate pass over the buffer (the pass cost about 1 ms of the 5-6 ms sync of 23 MB at 2
  ranks); it receives into a private buffer of half the gradient's size. In other worlds
  the ``.grad`` buffer is scaled in place (the sum MPI writes back would read about twice
  as slowly), piece by piece just before each piece's all-reduce starts (as the gradient
  arrives when its bucket can start at once, else right away, while it is still in
  cache), and MPI sums it.
  When the ``.grad`` buffer is not a plain buffer of its own (not C-contiguous,
  read-only, a view of another array, the wrong dtype, or a ``.grad`` with a graph), it
  goes through a private buffer allocated on first need (``.grad`` copied in, the average
  copied back).
- *flat*: small parameters packed into one preallocated buffer (copy in, copy out).

Life of one synchronising backward (see :class:`Reducer`):

1. ``begin`` (engine observer): decide whether this backward synchronises (a forward of the
   wrapper ran outside ``no_sync()`` since the last sync - torch's rule: the forward decides,
   not where the backward runs - and it accumulates into ``.grad``), and reset the per-pass
   state.
2. Each parameter's post-accumulate-grad hook stages its (accumulated) ``.grad``: a direct
   bucket just records the buffer; a small parameter's ``.grad / world`` goes into its slot
   of the flat buffer. Buckets are started in bucket order (every rank starts the same
   collectives in the same order), each in pieces of at most ``PIECE_BYTES``, every piece
   as soon as its bucket and all before it are complete, several in flight at once; the
   hooks start what is ready and test the ones in flight (MPI moves only inside MPI calls)
   during the rest of the backward.
3. ``end``: start the exchange of the usage bitmap (one small non-blocking allreduce on a
   separate communicator; waited for at once only when a parameter is unused on this rank,
   else together with the pieces), stage what never arrived (zeros, or a ``.grad``
   accumulated under ``no_sync``), start the remaining pieces, wait for all of them, and
   copy the flat buckets' averages into ``.grad`` (direct ones already hold theirs).

Only :mod:`gradsum.distributed` touches MPI; this module calls its ``_Comm`` methods.
"""

from __future__ import annotations

import contextlib
import functools
import time
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from gradsum._backend import xp
from gradsum._blas import ALIGNED_BYTES, aligned_empty, owns_buffer
from gradsum.autograd import engine
from gradsum.autograd.graph import _set_grad
from gradsum.nn import _messages

if TYPE_CHECKING:
    from gradsum._tensor import Tensor
    from gradsum.distributed._core import _Comm

FIRST_BUCKET_BYTES = 1024 * 1024  # torch's dist._DEFAULT_FIRST_BUCKET_BYTES
#: a gradient at least this large (and at least the bucket cap, if that is smaller) is
#: all-reduced in its own ``.grad`` buffer instead of being copied into a bucket
DIRECT_BYTES = 1024 * 1024
#: the largest single all-reduce: a bucket is reduced in consecutive pieces of at most this
#: size (on a CPU node MPI moves the bytes through the cores' caches: a 16 MB in-place
#: all-reduce measured slower than the same bytes in 8 MiB pieces). The pieces run several
#: in flight at once: one after another, each waits for the slowest rank to be scheduled,
#: which measured up to twice as slow on a loaded machine and with more ranks than cores)
PIECE_BYTES = 8 * 1024 * 1024

_SYNC, _IDLE, _UNARMED = 0, 1, 2


def _buffer(shape: tuple[int, ...], dtype: Any) -> Any:
    """A zeroed buffer for the reducer; a large one starts on a 2 MiB boundary (huge pages:
    MPI all-reduces it faster, see ``_blas.ALIGNED_BYTES``)."""
    dtype = xp.dtype(dtype)
    n = dtype.itemsize
    for s in shape:
        n *= s
    if n < ALIGNED_BYTES:
        return xp.zeros(shape, dtype=dtype)
    out = aligned_empty(tuple(shape), dtype)
    out.fill(0)
    return out


class _Bucket:
    __slots__ = ("direct", "dtype", "flat", "grad", "halving", "members", "nbytes", "spare",
                 "staged", "tmp", "unscaled")

    def __init__(self, dtype: Any) -> None:
        self.dtype = dtype
        self.members: list[int] = []
        self.nbytes = 0
        #: what the all-reduce runs on: the flat buffer; for a direct bucket, set per pass
        self.flat: Any = None
        self.direct = False
        #: direct bucket: private fallback buffer (allocated on first need)
        self.spare: Any = None
        #: direct bucket, per pass: _IN_PLACE, _FRESH or _SPARE (where the result lands),
        #: and the .grad tensor reduced in place (_IN_PLACE) or the fresh array (_FRESH)
        self.staged = 0
        self.grad: Any = None
        #: direct bucket, per pass: staged in place and not yet scaled by 1 / world
        self.unscaled = False
        #: direct bucket summed by the reducer's own halving schedule (power-of-two world,
        #: float32/float64), which scales as it adds: staged unscaled; ``tmp`` its receive
        #: buffer (half the gradient, allocated on first need)
        self.halving = False
        self.tmp: Any = None


_IN_PLACE, _FRESH, _SPARE = 1, 2, 3
#: dtypes a direct bucket may sum with the halving schedule (NumPy's addition of them is
#: IEEE's, as MPI's sum is)
_HALVING_DTYPES = (xp.dtype(xp.float32), xp.dtype(xp.float64))
#: message tags per bucket for the halving schedule (2 per level)
_TAGS = 64


def assign_buckets(params: Sequence[Tensor], cap_bytes: int,
                   first_bytes: int = FIRST_BUCKET_BYTES,
                   direct_bytes: int | None = None) -> list[list[int]]:
    """Indices of ``params`` per bucket: reverse parameter order (the order gradients tend to
    become ready in), one dtype per bucket, a bucket closed once it holds ``>= cap`` bytes
    (the first bucket of each dtype at ``min(first_bytes, cap)``), like torch. With
    ``direct_bytes``, a parameter of at least that many bytes gets a bucket of its own at
    its place in the order (the small ones around it keep filling the open bucket).

    Example:
        >>> import gradsum
        >>> ps = [gradsum.zeros(100), gradsum.zeros(100), gradsum.zeros(100)]
        >>> assign_buckets(ps, cap_bytes=800, first_bytes=400)
        [[2], [1, 0]]
        >>> ps = [gradsum.zeros(10), gradsum.zeros(1000), gradsum.zeros(10)]
        >>> assign_buckets(ps, cap_bytes=10**6, direct_bytes=4000)
        [[1], [2, 0]]
    """
    open_: dict[Any, _Bucket] = {}
    closed_count: dict[Any, int] = {}
    out: list[list[int]] = []
    for i in reversed(range(len(params))):
        arr = params[i]._array
        if direct_bytes is not None and arr.nbytes >= direct_bytes:
            out.append([i])
            continue
        b = open_.get(arr.dtype)
        if b is None:
            b = open_[arr.dtype] = _Bucket(arr.dtype)
        b.members.append(i)
        b.nbytes += arr.nbytes
        limit = min(first_bytes, cap_bytes) if closed_count.get(arr.dtype, 0) == 0 else cap_bytes
        if b.nbytes >= limit:
            out.append(b.members)
            closed_count[arr.dtype] = closed_count.get(arr.dtype, 0) + 1
            del open_[arr.dtype]
    out.extend(b.members for b in open_.values() if b.members)
    return out


class _Observer:
    """The engine observer; holds the reducer weakly and unregisters itself once it is gone."""

    __slots__ = ("ref",)

    def __init__(self, reducer: Reducer) -> None:
        self.ref = weakref.ref(reducer)

    def begin(self, roots: Any, inputs: Any, accumulate: bool) -> None:
        r = self.ref()
        if r is not None:
            r._begin(accumulate)

    def end(self, error: BaseException | None) -> None:
        r = self.ref()
        if r is not None:
            r._end(error)


def _hook(ref: weakref.ReferenceType[Reducer], i: int, p: Tensor) -> None:
    r = ref()
    if r is not None:
        r._ready(i)


def _cleanup(obs: _Observer, handles: list[Any]) -> None:
    with contextlib.suppress(ValueError):
        engine.backward_observers.remove(obs)
    for h in handles:
        h.remove()


def _scaler(world: int) -> Any:
    """``f(src, out)``: ``out = src * (1 / world)`` in ``src``'s dtype, torch's DDP scaling
    (``mul_out(bucket_view, grad, 1 / world_size)`` before the sum)."""
    inv = 1.0 / world

    def scale(src: Any, out: Any) -> None:
        xp.multiply(src, inv, out=out)

    return scale


class Reducer:
    """Averages the gradients of ``params`` across the ranks of ``comm`` after each
    synchronising backward (see the module docstring). Built by ``DistributedDataParallel``.
    """

    def __init__(self, params: Sequence[Tensor], names: Sequence[str], comm: _Comm,
                 bucket_cap_bytes: int, gradient_as_bucket_view: bool = False) -> None:
        self.params = list(params)
        self.names = list(names)
        self.world = comm.size
        self.comm = comm.dup()  # bucket all-reduces, in bucket order
        self.ctrl = comm.dup()  # the usage bitmap (must never match a bucket's collective)
        self.as_view = gradient_as_bucket_view
        self.require_sync = True
        #: a forward with grad ran outside no_sync since the last sync: the next backward
        #: synchronises (torch: the forward decides, wherever its backward runs)
        self.armed = False
        #: the last forward with grad ran inside no_sync: its backwards accumulate locally
        self.local = False
        self.buckets: list[_Bucket] = []
        self.bucket_of: list[int] = [0] * len(self.params)
        self.views: list[Any] = [None] * len(self.params)
        self._scale = _scaler(self.world)
        halving = self.world > 1 and not self.world & (self.world - 1)
        direct = max(1, min(DIRECT_BYTES, bucket_cap_bytes))
        for k, members in enumerate(assign_buckets(self.params, bucket_cap_bytes,
                                                   direct_bytes=direct)):
            dt = self.params[members[0]]._array.dtype
            b = _Bucket(dt)
            b.members = members
            if len(members) == 1 and self.params[members[0]]._array.nbytes >= direct:
                b.direct = True
                b.halving = halving and dt in _HALVING_DTYPES
                b.nbytes = self.params[members[0]]._array.nbytes
                self.bucket_of[members[0]] = k
                self.buckets.append(b)
                continue
            total = sum(self.params[i]._array.size for i in members)
            b.flat = _buffer((total,), dt)
            b.nbytes = b.flat.nbytes
            off = 0
            for i in members:
                a = self.params[i]._array
                self.views[i] = b.flat[off : off + a.size].reshape(a.shape)
                self.bucket_of[i] = k
                off += a.size
            self.buckets.append(b)
        # per-pass state
        self._stack: list[int] = []
        self._fired: list[bool] = []
        self._pending: list[int] = []
        self._next = 0  # the next bucket to start
        self._skip: list[bool] = []  # per bucket: unused on every rank, nothing to reduce
        self._reqs: list[Any] = []  # the collectives in flight (started, not yet waited for)
        self._started: list[_Bucket] = []  # direct buckets started, finished in ``end``
        self._scheds: list[Any] = []  # the halving schedules in flight
        self._had: list[Any] = []
        self._unarmed_hit = False
        #: seconds spent in the last ``end`` (waiting + writing back), for benchmarks
        self.last_end_s = 0.0
        ref = weakref.ref(self)
        handles = [p.register_post_accumulate_grad_hook(functools.partial(_hook, ref, i))
                   for i, p in enumerate(self.params)]
        obs = _Observer(self)
        engine.backward_observers.append(obs)
        self._finalizer = weakref.finalize(self, _cleanup, obs, handles)

    def close(self) -> None:
        """Remove the hooks and the engine observer (the reducer stops acting)."""
        self._finalizer()

    # -- engine observer -------------------------------------------------------------------------
    def _begin(self, accumulate: bool) -> None:
        if not accumulate or self.world == 1 or _SYNC in self._stack:
            self._stack.append(_IDLE)
            return
        if not self.armed:  # no sync forward pending: local unless nothing explains it
            self._stack.append(_IDLE if self.local or not self.require_sync else _UNARMED)
            return
        self._stack.append(_SYNC)
        n = len(self.params)
        self._fired = [False] * n
        self._pending = [len(b.members) for b in self.buckets]
        self._next = 0
        self._skip = [False] * len(self.buckets)
        self._reqs = []
        self._started = []
        self._scheds = []
        self._had = [p._grad for p in self.params]

    def _ready(self, i: int) -> None:
        if not self._stack:
            return
        state = self._stack[-1]
        if state != _SYNC:
            if state == _UNARMED:
                self._unarmed_hit = True
            return
        if self._fired[i]:
            return
        self._fired[i] = True
        k = self.bucket_of[i]
        b = self.buckets[k]
        if b.direct:
            self._stage_direct(k, i)
        else:
            self._copy_in(i)
        self._pending[k] -= 1
        self._advance(block=False)  # also progresses MPI, which moves only inside MPI calls
        if b.unscaled:  # waits for an earlier bucket: scaled now, while still in cache
            self._scale(b.flat, b.flat)
            b.unscaled = False

    def _copy_in(self, i: int) -> None:
        g = self.params[i]._grad
        self._scale(g._array, self.views[i])  # in place when .grad is the view itself

    def _stage_direct(self, k: int, i: int) -> None:
        """Make direct bucket ``k`` ready to all-reduce param ``i``'s gradient: its own
        ``.grad`` buffer (to be scaled in place, see :meth:`_advance`), a fresh zero buffer,
        or a scaled copy in the spare buffer."""
        b = self.buckets[k]
        p = self.params[i]
        g = p._grad
        if g is None:  # unused here, used elsewhere: a fresh zero buffer becomes .grad
            b.grad = _buffer(p._array.shape, b.dtype)  # its own buffer: next time
            b.flat = b.grad.reshape(-1)  # it is reduced in place
            b.staged = _FRESH
            return
        a = g._array
        if ((a.base is None or owns_buffer(a)) and a.flags.c_contiguous and a.flags.writeable
                and a.dtype == b.dtype and a.shape == p._array.shape
                and g._grad_fn is None and not g.requires_grad):
            # the .grad buffer is its own: reduced where it is, each piece scaled just
            # before it starts (in cache when MPI reads it; the sum MPI writes back is
            # slower to read), or when ``_ready`` finds that the bucket cannot start yet
            b.flat = a.reshape(-1)
            b.staged = _IN_PLACE
            b.grad = g
            b.unscaled = not b.halving  # (the halving schedule scales as it adds)
            return
        if b.spare is None:
            b.spare = _buffer((p._array.size,), b.dtype)
            self.views[i] = b.spare.reshape(p._array.shape)
        if b.halving:  # every rank stages unscaled values: the schedule scales them
            self.views[i][...] = a
        else:
            self._scale(a, self.views[i])  # (scaled while copied)
        b.flat = b.spare
        b.staged = _SPARE

    def _advance(self, block: bool, extra: Any = None) -> None:
        """Start the collectives of every bucket that is ready, in bucket order (the same
        order on every rank), each in pieces of at most ``PIECE_BYTES`` (a direct bucket
        staged in place: each piece scaled by ``1 / world`` just before it starts), all
        left in flight. Without ``block`` it then only tests the ones in flight (MPI
        progresses inside MPI calls); with it, it waits for all of them (and the request
        ``extra``) and finishes the direct buckets."""
        comm, buckets, reqs = self.comm, self.buckets, self._reqs
        while self._next < len(buckets) and not self._pending[self._next]:
            k = self._next
            self._next = k + 1
            if self._skip[k]:
                continue
            b = buckets[k]
            flat = b.flat
            if b.halving:
                if b.tmp is None:
                    b.tmp = _buffer(((flat.size + 1) // 2,), b.dtype)
                self._scheds.append(comm.halving_allreduce(flat, b.tmp, _TAGS * k, self._scale))
                self._started.append(b)
                continue
            n = max(1, PIECE_BYTES // flat.itemsize)
            for s in range(0, max(flat.size, 1), n):
                piece = flat[s : s + n]
                if b.unscaled:
                    self._scale(piece, piece)
                reqs.append(comm.iallreduce_sum(piece))
            b.unscaled = False
            if b.direct:
                self._started.append(b)
        if block:
            if self._scheds:
                self._scheds[0].wait_all(self._scheds)
                self._scheds = []
            if extra is not None:
                reqs.append(extra)
            comm.waitall(reqs)
            reqs.clear()
            started, self._started = self._started, []
            for b in started:
                self._finish_direct(b)
        else:
            if reqs and comm.testall(reqs):
                reqs.clear()
            for sched in self._scheds:
                sched.test()

    def _end(self, error: BaseException | None) -> None:
        state = self._stack.pop() if self._stack else _IDLE
        if state == _UNARMED:
            hit, self._unarmed_hit = self._unarmed_hit, False
            if hit and error is None:
                raise RuntimeError(_messages.ddp_backward_without_forward())
            return
        if state != _SYNC:
            return
        self.armed = False
        if isinstance(error, KeyboardInterrupt):
            return  # the job is going down; do not block in collectives
        # Even after an error elsewhere in this backward, finish the protocol: the other
        # ranks are (or will be) waiting in the same collectives.
        t0 = time.perf_counter()
        params = self.params
        local = [f or p._grad is not None for f, p in zip(self._fired, params)]
        used = xp.asarray(local, dtype=xp.uint8)
        bitmap = self.ctrl.iallreduce_max(used)
        if not all(local):  # which of ours are used elsewhere decides what to stage
            self.ctrl.waitall([bitmap])
            bitmap = None
            local = [bool(u) for u in used]
        # (else every parameter is used here, so everywhere: wait with the pieces)
        for k in range(self._next, len(self.buckets)):  # stage what has not started yet
            b = self.buckets[k]
            self._pending[k] = 0
            if not any(local[i] for i in b.members):
                self._skip[k] = True  # unused on every rank (started nowhere): no reduce
                continue
            if b.direct:
                if not self._fired[b.members[0]]:  # else staged already, waiting its turn
                    self._stage_direct(k, b.members[0])
                continue
            for i in b.members:
                if not self._fired[i]:
                    if params[i]._grad is not None:
                        self._copy_in(i)  # accumulated under no_sync, not touched now
                    else:
                        self.views[i][...] = 0
        self._advance(block=True, extra=bitmap)
        buckets = self.buckets
        for i, p in enumerate(params):
            if used[i] and not buckets[self.bucket_of[i]].direct:
                self._copy_out(i, p)
        self._had = []
        self.last_end_s = time.perf_counter() - t0

    def _finish_direct(self, b: _Bucket) -> None:
        from gradsum._tensor import Tensor

        i = b.members[0]
        p = self.params[i]
        staged, g = b.staged, b.grad
        b.staged, b.flat, b.grad, b.unscaled = 0, None, None, False
        if staged == _SPARE:
            self._copy_out(i, p)
        elif staged == _IN_PLACE:
            g._vc[0] += 1
        else:
            _set_grad(p, Tensor._make(g))  # the fresh zero buffer, now the average

    def _copy_out(self, i: int, p: Tensor) -> None:
        from gradsum._tensor import Tensor

        view = self.views[i]
        g = p._grad
        if g is None:  # unused here, used elsewhere: the average (others' share) lands here
            _set_grad(p, Tensor._make(view if self.as_view else view.copy()))
        elif g._array is view:
            g._vc[0] += 1
        elif self.as_view and g is not self._had[i] and g._grad_fn is None:
            _set_grad(p, Tensor._make(view))  # fresh this backward: nobody else holds it
        else:
            g._array[...] = view  # keep the .grad object (and its buffer) the user holds
            g._vc[0] += 1
