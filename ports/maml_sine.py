"""Second-order MAML (Finn et al. 2017) on sine-wave regression: fast weights from one or more
inner SGD steps taken with torch.func.functional_call and autograd.grad(create_graph=True), the
meta-gradient through them, Adam on the meta-parameters. float64 throughout.

Runs as written under PyTorch (``python ports/maml_sine.py``) and under gradsum
(``gradsum run ports/maml_sine.py``). Tasks are drawn with NumPy; ``--init`` loads the initial
weights if the file exists, else writes them there.
"""

import argparse
import os
import tempfile
import time
from collections import OrderedDict

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call

parser = argparse.ArgumentParser(description="MAML on sine waves")
parser.add_argument("--meta_iters", type=int, default=10)
parser.add_argument("--meta_batch", type=int, default=4)
parser.add_argument("--k_shot", type=int, default=10)
parser.add_argument("--inner_steps", type=int, default=2)
parser.add_argument("--inner_lr", type=float, default=0.01)
parser.add_argument("--meta_lr", type=float, default=1e-3)
parser.add_argument("--first_order", action="store_true")
parser.add_argument("--seed", type=int, default=0)
parser.add_argument("--init", default=None, help="initial weights: loaded if present, else saved")
parser.add_argument("--out_dir", default=None)
args = parser.parse_args()

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(args.seed)
torch.cuda.manual_seed_all(args.seed)
torch.backends.cudnn.benchmark = True
torch.set_default_dtype(torch.float64)
out_dir = args.out_dir or tempfile.mkdtemp(prefix="maml-")
rng = np.random.default_rng(21)


def sample_task():
    amplitude, phase = rng.uniform(0.1, 5.0), rng.uniform(0, np.pi)

    def draw(n):
        x = rng.uniform(-5, 5, size=(n, 1))
        return (torch.from_numpy(x).to(device),
                torch.from_numpy(amplitude * np.sin(x - phase)).to(device))
    return draw(args.k_shot), draw(args.k_shot)


class SineNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(1, 40), nn.ReLU(), nn.Linear(40, 40), nn.ReLU(),
                                 nn.Linear(40, 1))

    def forward(self, x):
        return self.net(x)


model = SineNet()
if args.init is not None:
    if os.path.exists(args.init):
        model.load_state_dict(torch.load(args.init, map_location=device))
    else:
        torch.save(model.state_dict(), args.init)
model.to(device)
meta_opt = torch.optim.Adam(model.parameters(), lr=args.meta_lr)


def adapt(params, x, y, create_graph):
    fast = OrderedDict(params)
    for _ in range(args.inner_steps):
        loss = F.mse_loss(functional_call(model, fast, (x,)), y)
        grads = torch.autograd.grad(loss, list(fast.values()), create_graph=create_graph)
        fast = OrderedDict((name, w - args.inner_lr * g)
                           for (name, w), g in zip(fast.items(), grads))
    return fast


times = []
for it in range(args.meta_iters):
    t0 = time.perf_counter()
    model.train()
    meta_opt.zero_grad()
    params = OrderedDict(model.named_parameters())
    meta_loss = 0.0
    for _ in range(args.meta_batch):
        (xs, ys), (xq, yq) = sample_task()
        fast = adapt(params, xs, ys, create_graph=not args.first_order)
        meta_loss = meta_loss + F.mse_loss(functional_call(model, fast, (xq,)), yq)
    meta_loss = meta_loss / args.meta_batch
    meta_loss.backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 10.0)
    meta_opt.step()
    times.append(time.perf_counter() - t0)
    print(f"step {it} loss {meta_loss.item()!r} grad_norm {grad_norm.item()!r}", flush=True)

torch.save(model.state_dict(), os.path.join(out_dir, "maml.pt"))
torch.save(model, os.path.join(out_dir, "maml_model.pt"))
model = torch.load(os.path.join(out_dir, "maml_model.pt"), map_location=device,
                   weights_only=False)
model.eval()
(xs, ys), (xq, yq) = sample_task()
with torch.no_grad():
    before = F.mse_loss(model(xq), yq).item()
params = OrderedDict((n, p.detach().requires_grad_()) for n, p in model.named_parameters())
fast = adapt(params, xs, ys, create_graph=False)
with torch.no_grad():
    after = F.mse_loss(functional_call(model, fast, (xq,)), yq).item()
print(f"eval query_before {before!r} query_after {after!r}")
print(f"step_time_ms {1000 * float(np.median(times))!r}")
