"""Distributed benchmark: DDP's bucketed gradient sync vs raw MPI, and step time vs ranks.

Workload: MLP 784-2048-2048-10 (float32, 5.8 M parameters, 23.3 MB of gradients), global
batch 256 split over the ranks. For each world size (1, 2, 4) the script starts itself with
the launcher and reports, on rank 0, medians of:

- ``raw``: one mpi4py ``Allreduce`` (in place) of a flat buffer of all the gradient bytes;
- ``ddp comm``: DDP's bucketed part alone: the buckets' ``Iallreduce`` started one by one in
  the reducer's order and waited for (what overlaps the backward in a real step);
- ``ddp sync``: the whole synchronisation as a backward drives it (post-accumulate hooks copy
  each ``.grad`` / world into its bucket and start the buckets, then ``end`` exchanges the
  usage bitmap, waits, and writes the averages into ``.grad``), default mode
  (``.grad`` buffers are the user's: one copy in, one copy out);
- ``ddp sync (views)``: the same with ``gradient_as_bucket_view=True`` in the steady state
  (``zero_grad(set_to_none=False)``: the grads already live in the buckets; one scaling pass);
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


def worker(repeats: int) -> None:
    import gradsum.distributed as dist
    import gradsum.nn.functional as F
    from gradsum import optim
    from gradsum._backend import xp
    from gradsum.distributed._core import _state
    from gradsum.nn.parallel import DistributedDataParallel as DDP

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
    res["raw"] = timeit(lambda: comm.Allreduce(MPI.IN_PLACE, flat, op=MPI.SUM))

    for as_view in (False, True):
        ddp = DDP(net, gradient_as_bucket_view=as_view)
        red = ddp.reducer
        net.zero_grad()
        F.cross_entropy(ddp(x), y).backward()  # fresh grads: with views they move to buckets

        def sync(red=red) -> None:
            red.armed = True
            red._begin(True)
            for i in reversed(range(len(red.params))):  # as the engine would (reverse order)
                red._ready(i)
            red._end(None)

        if world > 1:
            if as_view:
                assert all(p.grad._array.base is not None for p in params)
            res["ddp sync (views)" if as_view else "ddp sync"] = timeit(sync)
            if not as_view:
                def comm_only(red=red) -> None:
                    red.comm.waitall([red.comm.iallreduce_sum(b.flat) for b in red.buckets])

                res["ddp comm"] = timeit(comm_only)
                res["buckets"] = len(red.buckets)
        red.close()
        net.zero_grad()

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
        line = [ln for ln in out.stdout.splitlines() if ln.startswith("RESULT ")]
        if out.returncode or not line:
            print(out.stdout, out.stderr, file=sys.stderr)
            raise SystemExit(f"{n} ranks failed (exit {out.returncode})")
        results[n] = json.loads(line[0][len("RESULT "):])
    print(f"MLP {'-'.join(map(str, SIZES))}, global batch {BATCH}, "
          f"{results[args.ranks[0]]['bytes'] / 1e6:.1f} MB of float32 gradients, "
          f"{os.cpu_count()} CPU cores, medians of {args.repeats}\n")
    print("| ranks | raw Allreduce | ddp comm (buckets) | ddp sync | ddp sync (views) | "
          "raw/comm | raw/sync | raw/sync (views) | check | step | plain 1-process step |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for n, r in results.items():
        if n == 1:
            print(f"| 1 | - | - | - | - | - | - | - | - | {fmt(r['step'])} | "
                  f"{fmt(r['plain step'])} |")
            continue
        print(f"| {n} | {fmt(r['raw'])} | {fmt(r['ddp comm'])} ({r['buckets']}) | "
              f"{fmt(r['ddp sync'])} | {fmt(r['ddp sync (views)'])} | "
              f"{r['raw'] / r['ddp comm']:.2f} | {r['raw'] / r['ddp sync']:.2f} | "
              f"{r['raw'] / r['ddp sync (views)']:.2f} | {fmt(max(r['check'], 0.0))} | "
              f"{fmt(r['step'])} | |")


if __name__ == "__main__":
    main()
