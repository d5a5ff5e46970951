"""The default process group over MPI and the collectives on gradsum tensors.

This is the only module in gradsum that imports ``mpi4py`` (lazily, in
:func:`init_process_group`), so ``import gradsum.distributed`` works without it.

Every collective first exchanges a small signature (operation, reduce op or source rank,
dtype, shape) with one ``Allgather`` of 16 int64 per rank. Ranks that disagree (different
shapes, dtypes, operations, or a local argument error on one of them) all raise the same
``RuntimeError`` naming each rank's view, instead of hanging or reading past a buffer. The
check costs one small latency-bound collective (a few microseconds on one node, see
``benchmarks/bench_distributed.py``); DDP's bucketed path skips it because the shapes were
checked once when it was built.

Under ``gradsum run``, every wait for a collective (blocking or ``Work.wait()``) is a loop that
also watches the job's end records (:mod:`._rank`): when another rank has ended (its script
returned, ``sys.exit``, an exception, ``os._exit``, a signal) and the wait has still not
completed a second later, the wait raises :class:`PeerEndedError` naming that rank and how it
ended, instead of waiting for ever for a rank that is gone.
"""

from __future__ import annotations

import enum
import hashlib
import os
import pickle
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from gradsum._backend import xp

if TYPE_CHECKING:
    from gradsum._tensor import Tensor
    from gradsum.distributed._rank import PeerWatch

_NOT_INIT = (
    "Default process group has not been initialized, please make sure to call "
    "init_process_group. Start the job with `gradsum run -n N script.py` and call "
    "gradsum.distributed.init_process_group(backend='mpi') first."
)
_NO_MPI = (
    "gradsum.distributed needs mpi4py and an MPI library: pip install mpi4py mpich "
    "(in a clone of gradsum: pip install -e '.[mpi]')"
)


class ReduceOp(enum.Enum):
    """Reduction operations for :func:`all_reduce` (torch's names and values).

    ``BAND``/``BOR``/``BXOR`` are bitwise (logical on bool tensors) and, as in torch, refuse
    floating-point tensors.

    Example:
        >>> from gradsum.distributed import ReduceOp
        >>> ReduceOp.AVG
        <ReduceOp.AVG: 1>
    """

    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7


# -- signatures ----------------------------------------------------------------------------------
_SIG_LEN = 16
_MAX_DIMS = 8  # slots 7..14; slot 15 carries a per-rank payload that is not compared
_MAGIC = 0x6752_6453  # 'gRdS': a rank that sends anything else is not in a gradsum collective
_OPS = ("barrier", "all_reduce", "broadcast", "all_gather", "all_reduce_count", "object")
_DTYPES = ("float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool")
_ERRORS = {
    1: "ReduceOp.AVG needs a floating-point tensor",
    2: "the tensor is not writable (an expanded or read-only view); pass a contiguous tensor",
    3: "tensor_list must hold world_size tensors of the input's shape and dtype",
    4: "src is not a valid rank",
    5: "the tensor has more than 8 dimensions",
    6: "the count does not fit in int64",
    7: "a bitwise ReduceOp (BAND/BOR/BXOR) needs an integer or bool tensor",
    8: "the tensors of tensor_list must have the input's dtype",
}
# The local argument errors that torch raises before the collective, as (type, torch's phrase):
# the rank that passed them raises this instead of the generic mismatch RuntimeError.
_LOCAL_ERRORS: dict[int, tuple[type[Exception], str]] = {
    1: (RuntimeError, "result type Float can't be cast to the desired output type"),
    3: (RuntimeError, "invalid output tensor list"),
    4: (RuntimeError, "invalid root rank"),
    7: (RuntimeError, "Cannot use ReduceOp.{op} with non-integral dtype"),
    8: (ValueError, "Invalid usage of tensors with different dtypes"),
}


def _signature(op: str, arg: int = 0, arr: Any = None, err: int = 0, extra: int = 0) -> Any:
    sig = xp.zeros(_SIG_LEN, dtype=xp.int64)
    sig[0] = _MAGIC
    sig[1] = _OPS.index(op)
    sig[2] = arg
    sig[3] = err
    sig[4] = extra
    if arr is not None:
        name = arr.dtype.name
        sig[5] = _DTYPES.index(name) if name in _DTYPES else 99
        sig[6] = arr.ndim
        if arr.ndim > _MAX_DIMS:
            sig[3] = sig[3] or 5
        sig[7 : 7 + min(arr.ndim, _MAX_DIMS)] = arr.shape[:_MAX_DIMS]
    else:
        sig[5] = -1
    return sig


def _describe(sig: Any) -> str:
    if int(sig[0]) != _MAGIC:
        return "a different (non-gradsum) collective"
    op = _OPS[int(sig[1])] if 0 <= int(sig[1]) < len(_OPS) else "?"
    parts = [op]
    if op == "all_reduce":
        parts.append(f"op={ReduceOp(int(sig[2])).name}")
    elif op == "broadcast":
        parts.append(f"src={int(sig[2])}")
    if int(sig[5]) >= 0:
        ndim = int(sig[6])
        shape = tuple(int(d) for d in sig[7 : 7 + min(ndim, _MAX_DIMS)])
        dt = _DTYPES[int(sig[5])] if int(sig[5]) < len(_DTYPES) else "?"
        parts.append(f"shape={shape} dtype={dt}")
    if int(sig[3]):
        parts.append(f"invalid arguments: {_ERRORS.get(int(sig[3]), '?')}")
    return " ".join(parts)


# -- the process group ---------------------------------------------------------------------------
#: seconds a wait goes on after another rank's end record appeared (a collective that rank
#: took part in completes within them: it keeps making MPI progress until its process ends)
_PEER_GRACE_S = 1.0


class DistError(RuntimeError):
    """torch.distributed's base of its errors (a RuntimeError)."""


class DistBackendError(DistError):
    """A collective's backend failed (torch raises it when a peer's connection closes)."""


class PeerEndedError(DistBackendError):
    """A collective waited for a rank that has ended (torch: "Connection closed by peer"):
    ``except dist.DistBackendError`` catches it, as it catches torch's.

    ``peer`` is that rank; the message says how it ended.
    """

    def __init__(self, message: str, peer: int) -> None:
        super().__init__(message)
        self.peer = peer


def _wait(mpi: Any, reqs: list[Any], what: str) -> None:
    """Complete MPI requests ``reqs``. Under ``gradsum run``, raise :class:`PeerEndedError`
    once another rank has ended and they are still incomplete ``_PEER_GRACE_S`` later."""
    watch = _state.watch
    if watch is None:
        mpi.Request.Waitall(reqs)
        return
    testall = mpi.Request.Testall
    seen = None
    while not testall(reqs):
        rec = watch.ended()
        if rec is None:
            continue
        now = time.monotonic()
        if seen is None:
            seen = now
        elif now - seen > _PEER_GRACE_S:
            peer = int(rec["rank"])
            raise PeerEndedError(
                f"Connection closed by peer: rank {peer} ended ({rec['cause']}) while rank "
                f"{watch.me} waits for it in {what}, so {what} can never complete. Every rank "
                f"must run the same collectives until the end of the script; see rank {peer}'s "
                f"output for why it ended.", peer)


def _dup(mpi: Any, comm: Any) -> Any:
    """``comm.Dup()``, waited for as a collective is (a rank that has ended is seen)."""
    new, req = comm.Idup()
    _wait(mpi, [req], "init_process_group")
    return new


class _Comm:
    """A thin wrapper of one MPI communicator, used by the collectives and by DDP's reducer.

    Only this module touches mpi4py; the reducer in :mod:`gradsum.nn.parallel` calls these
    methods with backend arrays.
    """

    __slots__ = ("MPI", "comm", "rank", "size")

    def __init__(self, mpi: Any, comm: Any) -> None:
        self.MPI = mpi
        self.comm = comm
        self.rank: int = comm.Get_rank()
        self.size: int = comm.Get_size()

    def dup(self) -> _Comm:
        """A new communicator over the same ranks (its collectives never match ours)."""
        return _Comm(self.MPI, _dup(self.MPI, self.comm))

    def free(self) -> None:
        if self.comm != self.MPI.COMM_WORLD and not self.MPI.Is_finalized():
            self.comm.Free()

    def _mpi_op(self, op: ReduceOp) -> Any:
        M = self.MPI
        return {ReduceOp.SUM: M.SUM, ReduceOp.AVG: M.SUM, ReduceOp.PRODUCT: M.PROD,
                ReduceOp.MIN: M.MIN, ReduceOp.MAX: M.MAX, ReduceOp.BAND: M.BAND,
                ReduceOp.BOR: M.BOR, ReduceOp.BXOR: M.BXOR}[op]

    def iallreduce_sum(self, flat: Any) -> Any:
        """Start an in-place sum of a contiguous 1-D array; returns the request."""
        return self.comm.Iallreduce(self.MPI.IN_PLACE, flat, op=self.MPI.SUM)

    def allreduce_max(self, arr: Any) -> None:
        """In-place elementwise max (blocking), e.g. of a uint8 usage bitmap."""
        self.waitall([self.iallreduce_max(arr)], "all_reduce")

    def iallreduce_max(self, arr: Any) -> Any:
        """Start an in-place elementwise max of a contiguous array; returns the request."""
        return self.comm.Iallreduce(self.MPI.IN_PLACE, arr, op=self.MPI.MAX)

    def testall(self, reqs: list[Any]) -> bool:
        return bool(self.MPI.Request.Testall(reqs))

    def waitall(self, reqs: list[Any], what: str = "a collective") -> None:
        """Complete ``reqs``; raise :class:`PeerEndedError` if a rank they need has ended."""
        _wait(self.MPI, reqs, what)

    def halving_allreduce(self, flat: Any, tmp: Any, tag: int,
                          scale: Callable[[Any, Any], None] | None = None) -> _Halving:
        """Start an in-place sum of ``flat`` (see :class:`_Halving`; power-of-two sizes)."""
        return _Halving(self, flat, tmp, tag, scale)

    def bcast_array(self, arr: Any, root: int = 0) -> None:
        self.waitall([self.comm.Ibcast(arr, root=root)], "broadcast")

    def allgather_object(self, obj: Any) -> list[Any]:
        data = xp.frombuffer(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL), xp.uint8)
        sizes = xp.empty(self.size, dtype=xp.int64)
        self.waitall([self.comm.Iallgather(xp.asarray([data.size], xp.int64), sizes)],
                     "all_gather_object")
        offsets = xp.concatenate([[0], xp.cumsum(sizes)[:-1]])
        recv = xp.empty(int(sizes.sum()), dtype=xp.uint8)
        self.waitall([self.comm.Iallgatherv(data, [recv, (sizes, offsets), self.MPI.BYTE])],
                     "all_gather_object")
        return [pickle.loads(recv[o : o + n].tobytes()) for o, n in zip(offsets, sizes)]

    def bcast_object(self, obj: Any, root: int) -> Any:
        data = (xp.frombuffer(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL), xp.uint8)
                if self.rank == root else None)
        size = xp.asarray([0 if data is None else data.size], xp.int64)
        self.bcast_array(size, root)
        buf = data.copy() if data is not None else xp.empty(int(size[0]), dtype=xp.uint8)
        self.bcast_array(buf, root)
        return obj if self.rank == root else pickle.loads(buf.tobytes())

    def check(self, sig: Any, what: str) -> Any:
        """Exchange ``sig`` with every rank; raise on any disagreement or local error.

        Returns the gathered signatures, shape ``(world_size, 16)``.
        """
        table = xp.empty((self.size, _SIG_LEN), dtype=xp.int64)
        self.waitall([self.comm.Iallgather(sig, table)], what)
        head = table[:, : _SIG_LEN - 1]
        if bool((head == head[0]).all()) and not bool(table[:, 3].any()):
            return table
        lines = [f"  rank {r}: {_describe(table[r])}" for r in range(self.size)]
        local = _LOCAL_ERRORS.get(int(sig[3]))
        if local is not None:  # torch raises these on the rank that passed them
            exc, phrase = local
            op = ReduceOp(int(sig[2])).name if _OPS[int(sig[1])] == "all_reduce" else "?"
            raise exc(
                f"{phrase.format(op=op)} ({what} on rank {self.rank}: {_ERRORS[int(sig[3])]}; "
                f"no rank ran it). Fix the arguments; what each rank passed:\n"
                + "\n".join(lines)
            )
        raise RuntimeError(
            f"{what}: the ranks called mismatched collectives, so none of them ran. Every rank "
            f"must call the same collective with tensors of the same shape and dtype (and the "
            f"same op/src). This rank is {self.rank}; what each rank passed:\n"
            + "\n".join(lines)
        )


#: bytes per message of :class:`_Halving`'s halving levels: each level's exchange goes in
#: messages of this size, and each received piece is scaled and added as soon as it has
#: arrived, while MPI's copy of it is still in cache (after the whole half had arrived, the
#: scale-and-add read it back from memory: 3.0 ms of a 9.5 ms sync of 23 MB at 2 ranks)
_HALVING_CHUNK_BYTES = 256 * 1024


class _Halving:
    """An in-place sum of a 1-D float array over a power-of-two number of ranks, as
    point-to-point messages: a reduce-scatter by recursive halving, then an allgather by
    recursive doubling. The pairing is MPICH's reduce-scatter-allgather algorithm's (which
    its ``Allreduce`` and ``Iallreduce`` use for such arrays): partner ``rank ^ 1`` first,
    then ``rank ^ 2``, ..., so every element is summed in the same tree, ``(x0 + x1) + (x2 +
    x3)``, as there (IEEE addition is commutative: the same bits).

    A halving level's exchange goes in consecutive messages of ``_HALVING_CHUNK_BYTES``
    (MPI keeps the order of messages with the same source, tag and communicator, so the
    j-th piece sent meets the j-th receive), and each piece received is added into the
    range kept as soon as it is there, while still in cache.

    With ``scale`` (``scale(src, out)``, e.g. ``out = src * (1 / world)``), every rank's own
    values are scaled before they are summed, where the first level meets them: the piece a
    rank keeps and the piece its partner sent are scaled, then added - ``scale(a) +
    scale(b)``, the same operations as scaling the whole array first, without a pass over
    it (the half a rank sends is scaled by its receiver).

    MPI moves only inside MPI calls: :meth:`test` advances what has arrived (without
    blocking), :meth:`wait` finishes. Message tags ``tag .. tag + 2 * levels - 1``.
    """

    __slots__ = ("comm", "flat", "hi", "levels", "lo", "parents", "recvs", "reduced", "reqs",
                 "scale", "step", "tag", "tmp")

    def __init__(self, comm: _Comm, flat: Any, tmp: Any, tag: int,
                 scale: Callable[[Any, Any], None] | None) -> None:
        self.comm = comm
        self.flat = flat
        self.tmp = tmp  # at least (flat.size + 1) // 2 elements of flat's dtype
        self.tag = tag
        self.scale = scale
        self.levels = comm.size.bit_length() - 1
        self.lo, self.hi = 0, flat.size  # the range this rank holds (reduces, then owns)
        self.parents: list[tuple[int, int]] = []  # the range before each halving level
        self.step = 0  # 0 .. levels - 1: halving levels; then the doubling levels
        #: the current step's requests (a halving level: its sends; a doubling level: both)
        self.reqs: list[Any] = []
        #: a halving level: the receives of its pieces, in order, and how many are added
        self.recvs: list[Any] = []
        self.reduced = 0
        self._post()

    def _post(self) -> None:
        """Post the messages of the current step (nothing once done)."""
        levels, step, comm = self.levels, self.step, self.comm.comm
        flat, rank, tag = self.flat, self.comm.rank, self.tag + self.step
        self.recvs, self.reduced = [], 0
        if step < levels:  # halving: keep one half of the range, send the other
            mask = 1 << step
            lo, hi = self.lo, self.hi
            mid = lo + (hi - lo) // 2
            self.parents.append((lo, hi))
            keep, send = ((mid, hi), (lo, mid)) if rank & mask else ((lo, mid), (mid, hi))
            self.lo, self.hi = keep
            peer = rank ^ mask
            n = max(1, _HALVING_CHUNK_BYTES // flat.itemsize)
            # the partner sends its ``send`` range, which is this rank's ``keep``, cut the same
            tmp = self.tmp
            self.recvs = [comm.Irecv(tmp[s : min(s + n, keep[1] - keep[0])], peer, tag)
                          for s in range(0, keep[1] - keep[0], n)]
            self.reqs = [comm.Isend(flat[s : min(s + n, send[1])], peer, tag)
                         for s in range(send[0], send[1], n)]
        elif step < 2 * levels:  # doubling: send the range owned, receive its sibling
            level = 2 * levels - 1 - step
            plo, phi = self.parents[level]
            lo, hi = self.lo, self.hi
            sib = (hi, phi) if lo == plo else (plo, lo)
            peer = rank ^ (1 << level)
            self.reqs = [comm.Irecv(flat[sib[0] : sib[1]], peer, tag),
                         comm.Isend(flat[lo:hi], peer, tag)]
            self.lo, self.hi = plo, phi
        else:
            self.reqs = []

    def _reduce(self, j: int) -> None:
        """Add piece ``j`` just received into the range kept (scaling both first, at level
        0)."""
        n = max(1, _HALVING_CHUNK_BYTES // self.flat.itemsize)
        s = j * n
        mine = self.flat[self.lo + s : min(self.lo + s + n, self.hi)]
        got = self.tmp[s : s + mine.size]
        if not self.step and self.scale is not None:
            self.scale(mine, mine)
            self.scale(got, got)
        xp.add(got, mine, out=mine)

    def done(self) -> bool:
        return self.step >= 2 * self.levels

    def _next(self) -> None:
        self.step += 1
        self._post()

    def test(self) -> bool:
        """Advance through every piece and step whose messages have arrived (without
        blocking); whether all are done."""
        test = self.comm.MPI.Request.Test
        testall = self.comm.MPI.Request.Testall
        while not self.done():
            recvs = self.recvs
            while self.reduced < len(recvs) and test(recvs[self.reduced]):
                self._reduce(self.reduced)
                self.reduced += 1
            if self.reduced < len(recvs) or not testall(self.reqs):
                return False
            self._next()
        return True

    def _finish_step(self) -> None:
        """Wait for the current step's messages (adding each piece as it arrives), then post
        the next step's."""
        waitall = self.comm.waitall
        recvs = self.recvs
        while self.reduced < len(recvs):
            waitall([recvs[self.reduced]], "the gradient all-reduce")
            self._reduce(self.reduced)
            self.reduced += 1
        waitall(self.reqs, "the gradient all-reduce")
        self._next()

    def wait(self) -> None:
        while not self.done():
            self._finish_step()

    @staticmethod
    def wait_all(scheds: Sequence[_Halving]) -> None:
        """Finish every schedule in ``scheds``: round by round, one step of each in turn
        (while one waits, the messages of the others move too). Every rank goes through the
        same list in the same order, so no two ranks wait on each other."""
        active = [s for s in scheds if not s.done()]
        while active:
            for s in active:
                if not s.done():
                    s._finish_step()
            active = [s for s in active if not s.done()]


class _State:
    group: _Comm | None = None
    world: Any = None
    world_mpi: Any = None
    wrapped: bool = False
    watch: PeerWatch | None = None
    backend: str = "mpi"
    prev_excepthook: Callable[..., Any] | None = None


_state = _State()


def is_available() -> bool:
    """Whether gradsum.distributed can run: mpi4py is installed.

    Example:
        >>> import gradsum.distributed as dist
        >>> isinstance(dist.is_available(), bool)
        True
    """
    import importlib.util

    return importlib.util.find_spec("mpi4py") is not None


def is_initialized() -> bool:
    """Whether :func:`init_process_group` has been called (and not destroyed).

    Example:
        >>> import gradsum.distributed as dist
        >>> dist.is_initialized()
        False
    """
    return _state.group is not None


def _group(group: Any = None) -> _Comm:
    if group is not None and group is not _state.group:
        raise ValueError("gradsum.distributed supports only the default group (group=None)")
    g = _state.group
    if g is None:
        raise ValueError(_NOT_INIT)
    return g


def _abort_excepthook(tp: type[BaseException], value: BaseException, tb: Any) -> None:
    # Print the traceback, then take every rank down: without this, the other ranks would
    # wait forever in their next collective for the rank that died.
    try:
        rank = _state.group.rank if _state.group is not None else "?"
        text = "".join(traceback.format_exception(tp, value, tb))
        sys.stdout.flush()
        sys.stderr.write(f"[gradsum rank {rank}] uncaught exception, ending the job:\n{text}")
        sys.stderr.flush()
    finally:
        world = _state.world
        # (under gradsum run, the rank's wrapper ends the job and reports how this rank ended)
        if world is not None and world.Get_size() > 1 and not _state.wrapped:
            time.sleep(0.3)  # let mpiexec forward the traceback before it tears the job down
            world.Abort(130 if issubclass(tp, KeyboardInterrupt) else 1)
        prev = _state.prev_excepthook
        if world is None or world.Get_size() == 1:
            (prev or sys.__excepthook__)(tp, value, tb)


def init_process_group(
    backend: str | None = "mpi",
    init_method: str | None = None,
    timeout: Any = None,
    world_size: int = -1,
    rank: int = -1,
    store: Any = None,
    group_name: str = "",
    pg_options: Any = None,
    device_id: Any = None,
) -> None:
    """Initialise the default process group over MPI (``MPI.COMM_WORLD``).

    Rank and world size come from the MPI launcher (``gradsum run -n N script.py``); a
    script started without one runs as a group of one. An excepthook is installed that, on
    an uncaught exception in any rank, prints the traceback and calls ``MPI_Abort``, so the
    whole job ends instead of the other ranks hanging.

    Args:
        backend: ``"mpi"`` (or ``None``), or ``"gloo"``, torch's CPU backend, which scripts
            written for torch pass: its collectives run over MPI here, with the same results
            (``get_backend()`` then says ``"gloo"``). GPU backends (``"nccl"``) are refused.
        init_method, timeout, store, group_name, pg_options, device_id: accepted for
            torch compatibility and ignored (MPI does the rendezvous).
        world_size, rank: optional; if given they must match what MPI assigned.

    Raises:
        ValueError: called twice, a GPU backend, or world_size/rank disagree with MPI.
        RuntimeError: mpi4py is not installed.
    """
    if _state.group is not None:
        raise ValueError("trying to initialize the default process group twice!")
    name = "mpi" if backend is None else str(backend).lower()
    if name not in ("mpi", "gloo"):
        raise ValueError(
            f"Invalid backend {backend!r}: gradsum.distributed runs on the CPU over MPI; pass "
            f"backend='mpi' or 'gloo' (torch's CPU backend, run over MPI here)"
        )
    try:
        from mpi4py import MPI
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise RuntimeError(_NO_MPI) from e
    world = MPI.COMM_WORLD
    if world_size not in (-1, None) and world_size != world.Get_size():
        raise ValueError(
            f"world_size={world_size} but the MPI job has {world.Get_size()} ranks; leave "
            f"world_size at -1 or start the job with `gradsum run -n {world_size}`"
        )
    if rank not in (-1, None) and rank != world.Get_rank():
        raise ValueError(f"rank={rank} but MPI assigned rank {world.Get_rank()}; leave it -1")
    from gradsum.distributed import _rank  # (not at import: `python -m` runs it as __main__)

    _state.watch = _rank.ended_peer(world.Get_rank())  # (the wait for the Dup reads it)
    try:
        comm = _dup(MPI, world)
    except BaseException:
        _state.watch = None
        raise
    _state.world = world
    _state.world_mpi = MPI
    _state.wrapped = _rank.watched()
    _state.backend = name
    _state.group = _Comm(MPI, comm)
    _state.prev_excepthook = sys.excepthook
    sys.excepthook = _abort_excepthook


def destroy_process_group(group: Any = None) -> None:
    """Tear down the default process group and restore the excepthook.

    MPI itself stays initialised until the interpreter exits (mpi4py finalises it).

    Raises:
        AssertionError: no process group is initialised (torch's type and message).
    """
    if group is None and _state.group is None:
        raise AssertionError(
            "Process group cannot be None: the default process group is not initialized "
            "(never initialized, or already destroyed). Call init_process_group() first and "
            "destroy_process_group() once."
        )
    g = _group(group)
    g.free()
    _state.group = None
    if sys.excepthook is _abort_excepthook:
        sys.excepthook = _state.prev_excepthook or sys.__excepthook__
    _state.prev_excepthook = None


def get_rank(group: Any = None) -> int:
    """This process's rank in ``0 .. world_size - 1``."""
    return _group(group).rank


def get_world_size(group: Any = None) -> int:
    """The number of processes in the job."""
    return _group(group).size


def get_backend(group: Any = None) -> str:
    """The backend ``init_process_group`` was given: ``"mpi"`` or ``"gloo"`` (both run over
    MPI)."""
    _group(group)
    return _state.backend


# -- Work ----------------------------------------------------------------------------------------
class Work:
    """Handle of an ``async_op=True`` collective; :meth:`wait` completes it.

    The result is written into the tensors (and their version counters bumped) by ``wait``;
    read them only after it returns.
    """

    __slots__ = ("_done", "_finish", "_req", "_tensors", "_what")

    def __init__(self, req: Any, finish: Callable[[], None] | None, tensors: list[Tensor],
                 what: str = "a collective") -> None:
        self._req = req
        self._finish = finish
        self._done = False
        self._tensors = tensors
        self._what = what

    def wait(self, timeout: Any = None) -> bool:
        """Block until the collective is complete and its result is in the tensors."""
        if not self._done:
            if self._req is not None:
                _wait(_state.world_mpi, [self._req], self._what)
            self._done = True
            if self._finish is not None:
                self._finish()
        return True

    def is_completed(self) -> bool:
        """Whether the collective has finished (completing it if it has)."""
        if self._done:
            return True
        if self._req is None or self._req.Test():
            self._req = None
            self.wait()
        return self._done

    def is_success(self) -> bool:
        return self.is_completed()

    def result(self) -> list[Tensor]:
        """The output tensors (after :meth:`wait`)."""
        self.wait()
        return list(self._tensors)


def _tensor_check(t: Any, name: str = "tensor") -> None:
    from gradsum._tensor import Tensor

    if not isinstance(t, Tensor):
        raise TypeError(f"{name} must be a gradsum.Tensor, got {type(t).__name__}")


def _buffer(arr: Any, reduce: bool) -> tuple[Any, bool]:
    """A contiguous 1-D buffer MPI can use for ``arr``, and whether it is a copy."""
    if reduce and arr.dtype == xp.float16:  # no portable MPI float16 reductions
        return arr.astype(xp.float32).reshape(-1), True
    if arr.flags.c_contiguous:
        return arr.reshape(-1), False
    return xp.ascontiguousarray(arr).reshape(-1), True


def _write_back(t: Tensor, buf: Any, copied: bool) -> None:
    if copied:
        t._array[...] = buf.reshape(t._array.shape)
    t._vc[0] += 1


def _run(g: _Comm, req: Any, finish: Callable[[], None], tensors: list[Tensor],
         async_op: bool, what: str) -> Work | None:
    work = Work(req, finish, tensors, what)
    if async_op:
        return work
    work.wait()
    return None


# -- collectives ---------------------------------------------------------------------------------
def barrier(group: Any = None, async_op: bool = False, device_ids: Any = None) -> Work | None:
    """Block until every rank has reached the barrier."""
    g = _group(group)
    g.check(_signature("barrier"), "barrier")
    return Work(None, None, []) if async_op else None


def all_reduce(tensor: Tensor, op: ReduceOp = ReduceOp.SUM, group: Any = None,
               async_op: bool = False) -> Work | None:
    """Reduce ``tensor`` across ranks, in place: every rank ends with the result.

    Args:
        tensor: the input and output (its buffer is overwritten, its version bumped).
        op: :class:`ReduceOp` ``SUM`` (default), ``AVG`` (floating dtypes), ``PRODUCT``,
            ``MIN``, ``MAX``, or the bitwise ``BAND``, ``BOR``, ``BXOR`` (integer and bool
            dtypes).
        async_op: return a :class:`Work` whose ``wait()`` completes the reduction (an MPI
            non-blocking ``Iallreduce``); the signature check before it is blocking.

    Raises:
        RuntimeError: the ranks passed tensors of different shapes/dtypes or different ops;
            ``AVG`` of an integer tensor, or a bitwise op on a floating one (torch's errors).
    """
    _tensor_check(tensor)
    if not isinstance(op, ReduceOp):
        raise TypeError(f"op must be a gradsum.distributed.ReduceOp, got {op!r}")
    g = _group(group)
    arr = tensor._array
    err = 0
    if op is ReduceOp.AVG and arr.dtype.kind not in "fc":
        err = 1
    elif op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR) and arr.dtype.kind in "fc":
        err = 7
    elif not arr.flags.writeable:
        err = 2
    g.check(_signature("all_reduce", op.value, arr, err), "all_reduce")
    buf, copied = _buffer(arr, reduce=True)
    M = g.MPI
    if arr.dtype == xp.bool_:  # SUM/MAX/BOR of booleans: OR; MIN/PRODUCT/BAND: AND
        mop = (M.LXOR if op is ReduceOp.BXOR
               else M.LOR if op in (ReduceOp.SUM, ReduceOp.MAX, ReduceOp.BOR) else M.LAND)
    else:
        mop = g._mpi_op(op)
    req = g.comm.Iallreduce(M.IN_PLACE, buf, op=mop)

    def finish() -> None:
        if op is ReduceOp.AVG:
            xp.divide(buf, g.size, out=buf)
        _write_back(tensor, buf, copied)

    return _run(g, req, finish, [tensor], async_op, "all_reduce")


def broadcast(tensor: Tensor, src: int, group: Any = None, async_op: bool = False,
              group_src: int | None = None) -> Work | None:
    """Copy ``tensor`` of rank ``src`` into ``tensor`` on every other rank, in place."""
    _tensor_check(tensor)
    if group_src is not None:
        src = group_src
    g = _group(group)
    arr = tensor._array
    err = 0
    if not (isinstance(src, int) and 0 <= src < g.size):
        err = 4
    elif not arr.flags.writeable:
        err = 2
    g.check(_signature("broadcast", int(src) if err != 4 else -1, arr, err), "broadcast")
    buf, copied = _buffer(arr, reduce=False)
    req = g.comm.Ibcast(buf, root=src)

    def finish() -> None:
        if g.rank != src:
            _write_back(tensor, buf, copied)

    return _run(g, req, finish, [tensor], async_op, "broadcast")


def all_gather(tensor_list: list[Tensor], tensor: Tensor, group: Any = None,
               async_op: bool = False) -> Work | None:
    """Gather ``tensor`` from every rank into ``tensor_list[r]`` (written in place).

    Raises:
        ValueError: a tensor of ``tensor_list`` has another dtype than ``tensor`` (torch's
            "Invalid usage of tensors with different dtypes").
        RuntimeError: ``tensor_list`` does not hold ``world_size`` tensors of ``tensor``'s
            shape, or the ranks passed different shapes/dtypes.
    """
    _tensor_check(tensor)
    g = _group(group)
    arr = tensor._array
    err = 0
    from gradsum._tensor import Tensor

    if isinstance(tensor_list, (list, tuple)) and any(
        isinstance(o, Tensor) and o._array.dtype != arr.dtype for o in tensor_list
    ):
        err = 8  # torch checks the dtypes first, in Python: ValueError
    elif (not isinstance(tensor_list, (list, tuple)) or len(tensor_list) != g.size or any(
        not isinstance(o, Tensor) or o._array.shape != arr.shape
        or not o._array.flags.writeable for o in tensor_list
    )):
        err = 3
    g.check(_signature("all_gather", 0, arr, err), "all_gather")
    send = xp.ascontiguousarray(arr).reshape(-1)
    recv = xp.empty((g.size, send.size), dtype=arr.dtype)
    req = g.comm.Iallgather(send, recv)

    def finish() -> None:
        for r, out in enumerate(tensor_list):
            out._array[...] = recv[r].reshape(arr.shape)
            out._vc[0] += 1

    return _run(g, req, finish, list(tensor_list), async_op, "all_gather")


def all_reduce_count(n: int, group: Any = None) -> int:
    """The sum of the Python int ``n`` over all ranks (one small collective).

    Use it to normalise a loss by the global number of tokens/examples when micro-batches
    differ in size across ranks, so that N ranks match one process exactly.

    Example:
        >>> import gradsum.distributed as dist
        >>> if dist.is_initialized():   # in a job: the total over ranks
        ...     total = dist.all_reduce_count(17)
    """
    if isinstance(n, bool) or not isinstance(n, int):
        try:
            n = int(n.__index__())  # numpy ints, 0-d integer tensors
        except (AttributeError, TypeError):
            raise TypeError(f"all_reduce_count expects an int, got {type(n).__name__}") from None
    g = _group(group)
    ok = -(2**62) < n < 2**62  # the sum over ranks must fit too
    sig = _signature("all_reduce_count", err=0 if ok else 6)
    sig[_SIG_LEN - 1] = n if ok else 0  # the payload rides in the check: one collective
    table = g.check(sig, "all_reduce_count")
    return int(table[:, _SIG_LEN - 1].sum())


def all_gather_object(object_list: list[Any], obj: Any, group: Any = None) -> None:
    """Gather a picklable ``obj`` from every rank into ``object_list`` (torch's API)."""
    g = _group(group)
    g.check(_signature("object", 1), "all_gather_object")
    got = g.allgather_object(obj)
    object_list[:] = got


def broadcast_object_list(object_list: list[Any], src: int = 0, group: Any = None) -> None:
    """Replace ``object_list``'s items by rank ``src``'s (picklable objects)."""
    g = _group(group)
    g.check(_signature("object", 2, None, 0, int(src)), "broadcast_object_list")
    got = g.bcast_object(list(object_list), src)
    object_list[:] = got


def _checksum(arr: Any) -> int:
    """A 63-bit digest of an array's bytes (equal bits, equal digest)."""
    a = xp.ascontiguousarray(arr)
    h = hashlib.blake2b(memoryview(a).cast("B"), digest_size=8).digest()
    return int.from_bytes(h, "little") >> 1


def _compare_checksums(g: _Comm, names: Sequence[str], arrays: Sequence[Any],
                       what: str) -> None:
    """Raise if any array differs bitwise across ranks, naming it and the ranks."""
    local = xp.asarray([_checksum(a) for a in arrays], dtype=xp.int64)
    table = xp.empty((g.size, local.size), dtype=xp.int64)
    g.waitall([g.comm.Iallgather(local, table)], what)
    bad = (table != table[0]).any(axis=0)
    if bool(bad.any()):
        idx = [int(i) for i in xp.nonzero(bad)[0]]
        first = idx[0]
        differ = [r for r in range(g.size) if table[r, first] != table[0, first]]
        raise RuntimeError(
            f"{what}: parameter {names[first]!r} differs across ranks (ranks {differ} differ "
            f"from rank 0; {len(idx)} tensor(s) diverged in all: "
            f"{[names[i] for i in idx[:8]]}). The replicas are no longer in sync: something "
            f"updated them differently (rank-dependent code around the optimizer step, an "
            f"unsynchronised gradient, or a different random seed)."
        )


def _strict_env() -> bool:
    return os.environ.get("GRADSUM_STRICT", "") not in ("", "0")
