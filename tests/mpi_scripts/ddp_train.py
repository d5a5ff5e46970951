"""20 optimizer steps (SGD with momentum, AdamW) with DDP + DistributedSampler: replicas stay
bit-identical across ranks and match one process trained on the global batches."""

import copy

from _worker import check, start

import gradsum
import gradsum.distributed as dist
import gradsum.nn.functional as F
from gradsum import nn, optim
from gradsum.nn.parallel import DistributedDataParallel as DDP
from gradsum.utils.data import DistributedSampler

r, W = start()


gen = gradsum.Generator()
gen.manual_seed(0)
N, b = 48, 3  # dataset size, per-rank batch
X = gradsum.randn(N, 6, generator=gen, dtype=gradsum.float64)
Y = gradsum.randint(0, 4, (N,), generator=gen)
samplers = [DistributedSampler(N, num_replicas=W, rank=q, seed=5) for q in range(W)]
mine = DistributedSampler(N, seed=5)  # rank/world from the process group
check(mine.rank == r and mine.num_replicas == W, "sampler defaults")

for make_opt in (lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=1e-3),
                 lambda ps: optim.AdamW(ps, lr=0.01)):
    gradsum.manual_seed(1 + r)  # rank-dependent init: DDP broadcasts rank 0's
    net = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 4)).double()
    ddp = DDP(net, bucket_cap_mb=0.001)
    ref = copy.deepcopy(net)
    opt, ref_opt = make_opt(ddp.parameters()), make_opt(ref.parameters())
    steps = 0
    for epoch in range(10):
        if steps == 20:
            break
        for s in samplers + [mine]:
            s.set_epoch(epoch)
        shards = [list(s) for s in samplers]
        check(shards[r] == list(mine), "sampler shard")
        for i in range(0, len(shards[0]) - b + 1, b):
            if steps == 20:
                break
            rows = [shards[q][i : i + b] for q in range(W)]
            idx = gradsum.tensor(rows[r])
            opt.zero_grad()
            F.cross_entropy(ddp(X[idx]), Y[idx]).backward()
            opt.step()
            glob = gradsum.tensor([i for row in rows for i in row])
            ref_opt.zero_grad()
            F.cross_entropy(ref(X[glob]), Y[glob]).backward()
            ref_opt.step()
            steps += 1
    check(steps == 20, f"ran {steps} steps")
    ddp.check_parameters()  # bitwise identical across ranks (raises otherwise)
    for (n, p), q in zip(net.named_parameters(), ref.parameters()):
        gathered = [gradsum.zeros_like(p) for _ in range(W)]
        dist.all_gather(gathered, p.detach())
        check(all(gradsum.equal(g, gathered[0]) for g in gathered), f"{n} differs across ranks")
        check(gradsum.allclose(p, q, rtol=1e-9, atol=1e-10),
              f"{n}: DDP {p} vs single process {q}")
    ddp.reducer.close()
print(f"rank {r}: ddp training OK", flush=True)
