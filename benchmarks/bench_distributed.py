"""Distributed benchmark: DDP's bucketed gradient sync vs raw MPI, and step time vs ranks.

Workload: MLP 784-2048-2048-10 (float32, 5.8 M parameters, 23.3 MB of gradients), global
batch 256 split over the ranks. For each world size (1, 2, 4) the script starts itself with
the launcher and reports, on rank 0, medians of (``raw``, ``ddp comm`` and both ``ddp
sync`` are timed interleaved, one of each per round, so that a noisy machine drifts them
together and the ratios stay meaningful):

- ``raw``: one mpi4py ``Allreduce`` (in place) of a flat buffer of all the gradient bytes;
- ``raw aligned``: the same, on a buffer starting on a 2 MiB boundary, as the reducer's own
  buffers and gradsum's large matrix products are (huge pages from the first byte);
- ``raw pieces``: the same bytes as ``raw``, all-reduced in consecutive pieces of at most
  ``PIECE_BYTES`` (8 MiB), one after another: what the reducer's message size alone is worth;
- ``ddp comm``: DDP's collectives alone, without the scaling: the buckets in the reducer's
  order, all started one after another and left in flight, then one wait (what overlaps the
  backward in a real step); the two large weights are buckets of their own ("direct":
  reduced in their ``.grad`` buffer; in a power-of-two world by the reducer's halving
  schedule of point-to-point messages, else by MPI's all-reduce in pieces of at most 8 MiB),
  the small parameters share a flat bucket (MPI's all-reduce);
- ``ddp sync``: the whole synchronisation as a backward drives it (post-accumulate hooks
  stage each ``.grad`` - a direct bucket's where it is, scaled by 1/world by the halving
  schedule as it adds the first level (or, in other worlds, in place piece by piece as each
  piece starts), a small parameter's scaled while copied into the flat bucket - and start
  the buckets, then ``end`` exchanges the usage bitmap, waits, and copies the small
  parameters' averages back into ``.grad``), default mode;
- ``ddp sync (views)``: the same with ``gradient_as_bucket_view=True`` in the steady state
  (``zero_grad(set_to_none=False)``: the small grads already live in their buckets);
- ``check``: the mismatch check each public collective does first (a 16-int64 allgather),
  as ``all_reduce`` of 1 float minus a raw ``Allreduce`` of 1 float;
- ``step``: forward + cross-entropy + backward (with DDP sync) + SGD step, and the same
  with a plain model in one process for reference.

Run: ``python benchmarks/bench_distributed.py [--ranks 1 2 4] [--repeats N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import _common  # noqa: F401 - sets single-thread env vars before numpy loads
from _common import fmt, median

import gradsum
from gradsum.nn.parallel._reducer import PIECE_BYTES

SIZES = (784, 2048, 2048, 10)
BATCH = 256


def _model():
    from gradsum import nn

    layers = []
    for i in range(len(SIZES) - 1):
        layers.append(nn.Linear(SIZES[i], SIZES[i + 1]))
        if i < len(SIZES) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def _buffers(red) -> list:
    """The arrays a DDP sync reads and writes: each ``.grad`` and each flat bucket."""
    out = [p.grad._array for p in red.params]
    return out + [b.flat for b in red.buckets if not b.direct]


def worker(repeats: int) -> None:
    import gradsum.distributed as dist
    import gradsum.nn.functional as F
    from gradsum import optim
    from gradsum._backend import xp
    from gradsum.distributed._core import _state
    from gradsum.nn.parallel import DistributedDataParallel as DDP
    from gradsum.nn.parallel._reducer import _buffer

    dist.init_process_group(backend="mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    comm = _state.group.comm
    MPI = _state.group.MPI
    res: dict[str, float] = {}

    def timeit(fn, n: int = repeats, warmup: int = 2) -> float:
        for _ in range(warmup):
            fn()
        ts = []
        for _ in range(n):
            comm.Barrier()
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
        times = comm.gather(ts, root=0)
        # the slowest rank defines a collective's time
        return median([max(col) for col in zip(*times)]) if rank == 0 else 0.0

    def timeit_rounds(fns: dict, n: int = 3 * repeats, warmup: int = 2) -> dict[str, float]:
        """Like timeit, for several functions timed in rounds (one call of each per round).

        Before each timed call, the buffers that call works on are rewritten (untimed), as
        gradients are just after a backward: each candidate starts from the same cache
        state instead of inheriting what the previous one left behind."""
        for _ in range(warmup):
            for fn in fns.values():
                fn()
        ts: dict[str, list[float]] = {k: [] for k in fns}
        for _ in range(n):
            for k, fn in fns.items():
                for buf in touched[k]:
                    xp.multiply(buf, 1.0, out=buf)
                comm.Barrier()
                t0 = time.perf_counter()
                fn()
                ts[k].append(time.perf_counter() - t0)
        out = {}
        for k, mine in ts.items():
            times = comm.gather(mine, root=0)
            out[k] = median([max(col) for col in zip(*times)]) if rank == 0 else 0.0
        return out

    gen = gradsum.Generator()
    gen.manual_seed(1)
    X = gradsum.randn(BATCH, SIZES[0], generator=gen)
    Y = gradsum.randint(0, SIZES[-1], (BATCH,), generator=gen)
    per = BATCH // world
    x, y = X[rank * per : (rank + 1) * per], Y[rank * per : (rank + 1) * per]
    gradsum.manual_seed(0)
    net = _model()
    params = list(net.parameters())
    nbytes = sum(p._array.nbytes for p in params)
    res["bytes"] = nbytes
    flat = xp.ones(nbytes // 4, dtype=xp.float32)
    flat_aligned = _buffer((nbytes // 4,), xp.float32)  # (as the reducer allocates)

    def raw() -> None:
        comm.Allreduce(MPI.IN_PLACE, flat, op=MPI.SUM)

    def raw_aligned() -> None:
        comm.Allreduce(MPI.IN_PLACE, flat_aligned, op=MPI.SUM)

    def in_pieces(bufs: list) -> list:
        n = PIECE_BYTES // 4
        return [f[s : s + n] for f in bufs for s in range(0, max(f.size, 1), n)]

    flat_pieces = in_pieces([flat])

    def raw_pieces() -> None:
        for f in flat_pieces:
            comm.Allreduce(MPI.IN_PLACE, f, op=MPI.SUM)

    if world == 1:
        res["raw"] = timeit(raw)
    else:
        fns = {"raw": raw, "raw aligned": raw_aligned, "raw pieces": raw_pieces}
        touched: dict[str, list] = {"raw": [flat], "raw aligned": [flat_aligned],
                                    "raw pieces": [flat]}
        reducers = []
        for as_view in (False, True):
            m = _model()  # a replica per mode, so both can be timed round by round
            ddp = DDP(m, gradient_as_bucket_view=as_view)
            red = ddp.reducer
            reducers.append(red)
            m.zero_grad()
            F.cross_entropy(ddp(x), y).backward()  # fresh grads (views: small ones move)

            def sync(red=red) -> None:
                red.armed = True
                red._begin(True)
                for i in reversed(range(len(red.params))):  # as the engine would (reverse)
                    red._ready(i)
                red._end(None)

            if as_view:
                small = [red.params[b.members[0]] for b in red.buckets if not b.direct]
                assert all(p.grad._array.base is not None for p in small)
                fns["ddp sync (views)"] = sync
                touched["ddp sync (views)"] = _buffers(red)
            else:
                # the reducer's collectives alone, on buffers of its buckets' sizes, in order:
                # a direct bucket's halving schedule (power-of-two worlds) without the
                # scaling, else MPI's all-reduce in pieces
                sized = [(b, _buffer((sum(red.params[i]._array.size for i in b.members),),
                                     b.dtype)) for b in red.buckets]
                halves = [(f, _buffer(((f.size + 1) // 2,), f.dtype))
                          for b, f in sized if b.halving]
                bufs = in_pieces([f for b, f in sized if not b.halving])

                def comm_only(red=red, bufs=bufs, halves=halves) -> None:
                    scheds = [red.comm.halving_allreduce(f, t, 64 * k)
                              for k, (f, t) in enumerate(halves)]
                    reqs = [red.comm.iallreduce_sum(f) for f in bufs]
                    if scheds:
                        scheds[0].wait_all(scheds)
                    red.comm.waitall(reqs)

                fns["ddp comm"] = comm_only
                fns["ddp sync"] = sync
                touched["ddp comm"] = [f for _, f in sized]
                touched["ddp sync"] = _buffers(red)
                res["buckets"] = len(red.buckets)
                res["direct"] = sum(b.direct for b in red.buckets)
        res.update(timeit_rounds(fns))
        for red in reducers:
            red.close()

    one = xp.ones(1, dtype=xp.float32)
    t_one = gradsum.ones(1)
    if world > 1:
        res["check"] = timeit(lambda: dist.all_reduce(t_one), n=200) - timeit(
            lambda: comm.Allreduce(MPI.IN_PLACE, one, op=MPI.SUM), n=200)

    # training step
    ddp = DDP(net)
    opt = optim.SGD(ddp.parameters(), lr=0.01, momentum=0.9)

    def step() -> None:
        opt.zero_grad()
        F.cross_entropy(ddp(x), y).backward()
        opt.step()

    res["step"] = timeit(step, n=max(3, repeats // 2))
    if world == 1:
        plain = _model()
        popt = optim.SGD(plain.parameters(), lr=0.01, momentum=0.9)

        def plain_step() -> None:
            popt.zero_grad()
            F.cross_entropy(plain(X), Y).backward()
            popt.step()

        res["plain step"] = timeit(plain_step, n=max(3, repeats // 2))
    if rank == 0:
        print("RESULT " + json.dumps(res), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.repeats)
        return
    results = {}
    for n in args.ranks:
        cmd = [sys.executable, "-m", "gradsum.distributed.run", "-n", str(n), "--timeout",
               "900", os.path.abspath(__file__), "--worker", "--repeats", str(args.repeats)]
        out = subprocess.run(cmd, capture_output=True, text=True, check=False)
        line = [ln for ln in out.stdout.splitlines() if ln.startswith("[0] RESULT ")]
        if out.returncode or not line:
            print(out.stdout, out.stderr, file=sys.stderr)
            raise SystemExit(f"{n} ranks failed (exit {out.returncode})")
        results[n] = json.loads(line[0][len("[0] RESULT "):])
    print(f"MLP {'-'.join(map(str, SIZES))}, global batch {BATCH}, "
          f"{results[args.ranks[0]]['bytes'] / 1e6:.1f} MB of float32 gradients, "
          f"{os.cpu_count()} CPU cores, medians of {args.repeats}\n")
    print("| ranks | raw Allreduce | raw, 2 MiB-aligned buffer | raw in 8 MiB pieces "
          "| ddp comm (buckets, direct) | ddp sync "
          "| ddp sync (views) | raw/comm | raw/sync | raw/sync (views) | check | step | "
          "plain 1-process step |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for n, r in results.items():
        if n == 1:
            print(f"| 1 | - | - | - | - | - | - | - | - | - | - | {fmt(r['step'])} | "
                  f"{fmt(r['plain step'])} |")
            continue
        print(f"| {n} | {fmt(r['raw'])} | {fmt(r['raw aligned'])} | {fmt(r['raw pieces'])} "
              f"| {fmt(r['ddp comm'])} "
              f"({r['buckets']}, {r['direct']} direct) | "
              f"{fmt(r['ddp sync'])} | {fmt(r['ddp sync (views)'])} | "
              f"{r['raw'] / r['ddp comm']:.2f} | {r['raw'] / r['ddp sync']:.2f} | "
              f"{r['raw'] / r['ddp sync (views)']:.2f} | {fmt(max(r['check'], 0.0))} | "
              f"{fmt(r['step'])} | |")


if __name__ == "__main__":
    main()
