"""DDP's gradient reducer: buckets, post-accumulate hooks, non-blocking all-reduce.

Life of one synchronising backward (see :class:`Reducer`):

1. ``begin`` (engine observer): decide whether this backward synchronises (a forward of the
   wrapper ran since the last sync, we are outside ``no_sync()``, and it accumulates into
   ``.grad``), and reset the per-pass state.
2. Each parameter's post-accumulate-grad hook copies its (accumulated) ``.grad``, divided by
   the world size, into its slot of a flat bucket. When every parameter of a bucket is in,
   the bucket's ``Iallreduce`` starts, in bucket order (all ranks must start collectives in
   the same order), overlapping the rest of the backward.
3. ``end``: exchange the usage bitmap (one small allreduce on a separate communicator),
   zero-fill / copy in what never arrived, start the remaining buckets, wait for all, and
   write the averages into ``.grad``.

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
from gradsum.autograd import engine

if TYPE_CHECKING:
    from gradsum._tensor import Tensor
    from gradsum.distributed._core import _Comm

FIRST_BUCKET_BYTES = 1024 * 1024  # torch's dist._DEFAULT_FIRST_BUCKET_BYTES

_SYNC, _IDLE, _UNARMED = 0, 1, 2


class _Bucket:
    __slots__ = ("dtype", "flat", "members", "nbytes")

    def __init__(self, dtype: Any) -> None:
        self.dtype = dtype
        self.members: list[int] = []
        self.nbytes = 0
        self.flat: Any = None


def assign_buckets(params: Sequence[Tensor], cap_bytes: int,
                   first_bytes: int = FIRST_BUCKET_BYTES) -> list[list[int]]:
    """Indices of ``params`` per bucket: reverse parameter order (the order gradients tend to
    become ready in), one dtype per bucket, a bucket closed once it holds ``>= cap`` bytes
    (the first bucket of each dtype at ``min(first_bytes, cap)``), like torch.

    Example:
        >>> import gradsum
        >>> ps = [gradsum.zeros(100), gradsum.zeros(100), gradsum.zeros(100)]
        >>> assign_buckets(ps, cap_bytes=800, first_bytes=400)
        [[2], [1, 0]]
    """
    open_: dict[Any, _Bucket] = {}
    closed_count: dict[Any, int] = {}
    out: list[list[int]] = []
    for i in reversed(range(len(params))):
        arr = params[i]._array
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
        self.armed = False
        self.buckets: list[_Bucket] = []
        self.bucket_of: list[int] = [0] * len(self.params)
        self.views: list[Any] = [None] * len(self.params)
        for k, members in enumerate(assign_buckets(self.params, bucket_cap_bytes)):
            dt = self.params[members[0]]._array.dtype
            b = _Bucket(dt)
            b.members = members
            total = sum(self.params[i]._array.size for i in members)
            b.flat = xp.zeros(total, dtype=dt)
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
        self._next = 0
        self._reqs: list[Any] = []
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
        if not accumulate or self.world == 1 or not self.require_sync or (
            _SYNC in self._stack
        ):
            self._stack.append(_IDLE)
            return
        if not self.armed:
            self._stack.append(_UNARMED)
            return
        self._stack.append(_SYNC)
        n = len(self.params)
        self._fired = [False] * n
        self._pending = [len(b.members) for b in self.buckets]
        self._next = 0
        self._reqs = []
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
        self._copy_in(i)
        k = self.bucket_of[i]
        self._pending[k] -= 1
        if self._pending[k] == 0 and k == self._next:
            self._launch_ready()
        elif self._reqs:
            self.comm.testall(self._reqs)  # MPI progresses only inside MPI calls

    def _copy_in(self, i: int) -> None:
        g = self.params[i]._grad
        view = self.views[i]
        xp.divide(g._array, self.world, out=view)  # in place when .grad is the view itself

    def _launch_ready(self) -> None:
        nb = len(self.buckets)
        while self._next < nb and self._pending[self._next] == 0:
            self._reqs.append(self.comm.iallreduce_sum(self.buckets[self._next].flat))
            self._next += 1

    def _end(self, error: BaseException | None) -> None:
        state = self._stack.pop() if self._stack else _IDLE
        if state == _UNARMED:
            hit, self._unarmed_hit = self._unarmed_hit, False
            if hit and error is None:
                raise RuntimeError(
                    "DistributedDataParallel: this backward computed gradients of the "
                    "wrapped parameters, but no forward of the DDP wrapper ran since the last "
                    "gradient synchronisation, so they would not be averaged across ranks. "
                    "Call ddp(x) (not ddp.module(x)) before each backward, or put extra "
                    "backwards of the same forward inside ddp.no_sync()."
                )
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
        used = xp.asarray([f or p._grad is not None for f, p in zip(self._fired, params)],
                          dtype=xp.uint8)
        self.ctrl.allreduce_max(used)
        for k in range(self._next, len(self.buckets)):  # in bucket order, like every rank
            b = self.buckets[k]
            if not any(used[i] for i in b.members):
                continue  # unused on every rank (so started nowhere): nothing to reduce
            for i in b.members:
                if not self._fired[i]:
                    if params[i]._grad is not None:
                        self._copy_in(i)  # accumulated under no_sync, not touched now
                    else:
                        self.views[i][...] = 0
            self._reqs.append(self.comm.iallreduce_sum(b.flat))
        self._next = len(self.buckets)
        self.comm.waitall(self._reqs)
        self._reqs = []
        for i, p in enumerate(params):
            if used[i]:
                self._copy_out(i, p)
        self._had = []
        self.last_end_s = time.perf_counter() - t0

    def _copy_out(self, i: int, p: Tensor) -> None:
        from gradsum._tensor import Tensor

        view = self.views[i]
        g = p._grad
        if g is None:  # unused here, used elsewhere: the average (others' share) lands here
            p._grad = Tensor._make(view if self.as_view else view.copy())
        elif g._array is view:
            g._version[0] += 1
        elif self.as_view and g is not self._had[i] and g._grad_fn is None:
            p._grad = Tensor._make(view)  # fresh this backward: nobody else holds it
        else:
            g._array[...] = view  # keep the .grad object (and its buffer) the user holds
            g._version[0] += 1
