"""Newton-CG training of a small classifier with Hessian-vector products: the HVP by double
backward (autograd.grad of the gradient with create_graph=True) inside conjugate gradient, and
checked against torch.autograd.functional.hvp on the flattened parameters. float64.

Runs as written under PyTorch (``python ports/hessian_newton.py``) and under gradsum
(``gradsum run ports/hessian_newton.py``). The data is made with NumPy; ``--init`` loads the
initial weights if the file exists, else writes them there.
"""

import argparse
import os
import tempfile
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd.functional import hvp

parser = argparse.ArgumentParser(description="Newton-CG with Hessian-vector products")
parser.add_argument("--steps", type=int, default=8)
parser.add_argument("--cg_iters", type=int, default=10)
parser.add_argument("--damping", type=float, default=1.0,
                    help="Levenberg-Marquardt damping: (H + damping I) d = -g")
parser.add_argument("--seed", type=int, default=0)
parser.add_argument("--init", default=None, help="initial weights: loaded if present, else saved")
parser.add_argument("--out_dir", default=None)
args = parser.parse_args()

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(args.seed)
torch.cuda.manual_seed_all(args.seed)
torch.backends.cudnn.benchmark = True
out_dir = args.out_dir or tempfile.mkdtemp(prefix="hvp-")

rng = np.random.default_rng(9)
X = rng.standard_normal((128, 6))
w_true = rng.standard_normal((6, 3))
y = np.argmax(X @ w_true + 0.5 * rng.standard_normal((128, 3)), axis=1)
X, y = torch.from_numpy(X).to(device), torch.from_numpy(y).to(device)

model = nn.Sequential(nn.Linear(6, 12), nn.Tanh(), nn.Linear(12, 3)).double()
if args.init is not None:
    if os.path.exists(args.init):
        model.load_state_dict(torch.load(args.init, map_location=device))
    else:
        torch.save(model.state_dict(), args.init)
model = model.to(device)
params = [p for p in model.parameters() if p.requires_grad]


def loss_fn():
    return F.cross_entropy(model(X), y) + 1e-3 * sum((p ** 2).sum() for p in params)


def flat(ts):
    return torch.cat([t.reshape(-1) for t in ts])


def unflat(v):
    out, i = [], 0
    for p in params:
        out.append(v[i:i + p.numel()].view_as(p))
        i += p.numel()
    return out


def hessian_vector(grads, v):
    hv = torch.autograd.grad(grads, params, grad_outputs=unflat(v), retain_graph=True)
    return flat(hv) + args.damping * v


def conjugate_gradient(grads, b):
    x = torch.zeros_like(b)
    r = b.clone()
    p = r.clone()
    rs = r @ r
    for _ in range(args.cg_iters):
        Ap = hessian_vector(grads, p)
        alpha = rs / (p @ Ap)
        x = x + alpha * p
        r = r - alpha * Ap
        rs_new = r @ r
        if rs_new.sqrt() < 1e-10:
            break
        p = r + (rs_new / rs) * p
        rs = rs_new
    return x


times = []
model.train()
for step in range(args.steps):
    t0 = time.perf_counter()
    loss = loss_fn()
    grads = torch.autograd.grad(loss, params, create_graph=True)
    g = flat(grads).detach()
    direction = conjugate_gradient(grads, -g)
    with torch.no_grad():
        for p, d in zip(params, unflat(direction)):
            p.add_(d)
    times.append(time.perf_counter() - t0)
    print(f"step {step} loss {loss.item()!r} grad_norm {g.norm().item()!r}", flush=True)

# the double-backward HVP against torch.autograd.functional.hvp on the flat parameters
shapes = [p.shape for p in params]
theta = flat([p.detach() for p in params])


def loss_of_flat(theta):
    ws, i = [], 0
    for s in shapes:
        n = int(np.prod(s))
        ws.append(theta[i:i + n].view(s))
        i += n
    h = torch.tanh(X @ ws[0].t() + ws[1])
    logits = h @ ws[2].t() + ws[3]
    return F.cross_entropy(logits, y) + 1e-3 * (theta ** 2).sum()


v = torch.from_numpy(np.linspace(-1.0, 1.0, theta.numel())).to(device)
_, hv_functional = hvp(loss_of_flat, theta, v)
loss = loss_fn()
grads = torch.autograd.grad(loss, params, create_graph=True)
hv_double = hessian_vector(grads, v) - args.damping * v
print(f"eval hvp_norm {hv_functional.norm().item()!r} "
      f"hvp_agree {int((hv_functional - hv_double).abs().max().item() < 1e-10)}")
torch.save(model.state_dict(), os.path.join(out_dir, "newton.pt"))
torch.save(model, os.path.join(out_dir, "newton_model.pt"))
restored = torch.load(os.path.join(out_dir, "newton_model.pt"), map_location=device,
                      weights_only=False)
restored.eval()
with torch.inference_mode():
    acc = (restored(X).argmax(1) == y).double().mean().item()
print(f"eval accuracy {acc!r}")
print(f"step_time_ms {1000 * float(np.median(times))!r}")
