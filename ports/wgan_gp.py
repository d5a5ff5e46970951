"""WGAN-GP (Gulrajani et al.) on a 2-D mixture of Gaussians: a critic trained n_critic times
per generator step with the gradient penalty from torch.autograd.grad(create_graph=True),
Adam(betas=(0.5, 0.9)); the noise, the interpolation weights and the data come from NumPy.

Runs as written under PyTorch (``python ports/wgan_gp.py``) and under gradsum
(``gradsum run ports/wgan_gp.py``). ``--init`` loads both networks' initial weights if the file
exists, else writes them there.
"""

import argparse
import os
import tempfile
import time

import numpy as np
import torch
import torch.autograd as autograd
import torch.nn as nn

parser = argparse.ArgumentParser(description="WGAN-GP on 8 Gaussians")
parser.add_argument("--iters", type=int, default=10)
parser.add_argument("--critic_iters", type=int, default=2)
parser.add_argument("--batch_size", type=int, default=32)
parser.add_argument("--dim", type=int, default=32)
parser.add_argument("--lambda_gp", type=float, default=0.1)
parser.add_argument("--lr", type=float, default=1e-4)
parser.add_argument("--seed", type=int, default=0)
parser.add_argument("--init", default=None, help="initial weights: loaded if present, else saved")
parser.add_argument("--out_dir", default=None)
args = parser.parse_args()

cuda = torch.cuda.is_available()
device = torch.device("cuda:0" if cuda else "cpu")
torch.manual_seed(args.seed)
torch.cuda.manual_seed_all(args.seed)
torch.backends.cudnn.benchmark = True
out_dir = args.out_dir or tempfile.mkdtemp(prefix="wgan-gp-")
rng = np.random.default_rng(11)


class Generator(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.main = nn.Sequential(
            nn.Linear(2, dim), nn.ReLU(True),
            nn.Linear(dim, dim), nn.ReLU(True),
            nn.Linear(dim, 2),
        )

    def forward(self, noise):
        return self.main(noise)


class Discriminator(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.main = nn.Sequential(
            nn.Linear(2, dim), nn.LeakyReLU(0.2, inplace=True),
            nn.Linear(dim, dim), nn.LeakyReLU(0.2, inplace=True),
            nn.Linear(dim, 1),
        )

    def forward(self, inputs):
        return self.main(inputs).view(-1)


def real_batch():
    centers = np.array([(np.cos(a), np.sin(a)) for a in np.linspace(0, 2 * np.pi, 8,
                                                                   endpoint=False)]) * 2
    points = centers[rng.integers(0, 8, size=args.batch_size)]
    points = points + 0.02 * rng.standard_normal((args.batch_size, 2))
    return torch.from_numpy((points / 1.414).astype(np.float32)).to(device)


def noise_batch():
    return torch.from_numpy(rng.standard_normal((args.batch_size, 2)).astype(np.float32)).to(
        device)


def calc_gradient_penalty(netD, real_data, fake_data):
    alpha = torch.from_numpy(rng.random((args.batch_size, 1)).astype(np.float32)).to(device)
    alpha = alpha.expand(real_data.size())
    interpolates = alpha * real_data + ((1 - alpha) * fake_data)
    interpolates = interpolates.to(device)
    interpolates.requires_grad_(True)
    disc_interpolates = netD(interpolates)
    gradients = autograd.grad(outputs=disc_interpolates, inputs=interpolates,
                              grad_outputs=torch.ones(disc_interpolates.size(), device=device),
                              create_graph=True, retain_graph=True, only_inputs=True)[0]
    return ((gradients.norm(2, dim=1) - 1) ** 2).mean() * args.lambda_gp


netG = Generator(args.dim)
netD = Discriminator(args.dim)
if args.init is not None:
    if os.path.exists(args.init):
        state = torch.load(args.init, map_location=device)
        netG.load_state_dict(state["netG"])
        netD.load_state_dict(state["netD"])
    else:
        torch.save({"netG": netG.state_dict(), "netD": netD.state_dict()}, args.init)
netG, netD = netG.to(device), netD.to(device)
optimizerD = torch.optim.Adam(netD.parameters(), lr=args.lr, betas=(0.5, 0.9))
optimizerG = torch.optim.Adam(netG.parameters(), lr=args.lr, betas=(0.5, 0.9))
one = torch.tensor(1, dtype=torch.float, device=device)
mone = one * -1

times = []
for iteration in range(args.iters):
    t0 = time.perf_counter()
    for p in netD.parameters():
        p.requires_grad = True
    for _ in range(args.critic_iters):
        real_data = real_batch()
        netD.zero_grad()
        D_real = netD(real_data).mean()
        D_real.backward(mone)
        with torch.no_grad():
            fake = netG(noise_batch())
        D_fake = netD(fake).mean()
        D_fake.backward(one)
        gradient_penalty = calc_gradient_penalty(netD, real_data, fake)
        gradient_penalty.backward()
        D_cost = D_fake - D_real + gradient_penalty
        Wasserstein_D = D_real - D_fake
        optimizerD.step()
    for p in netD.parameters():
        p.requires_grad = False
    netG.zero_grad()
    fake = netG(noise_batch())
    G = netD(fake).mean()
    G.backward(mone)
    G_cost = -G
    optimizerG.step()
    times.append(time.perf_counter() - t0)
    # (the Wasserstein estimate, a difference of two close means, is shown, not compared)
    print(f"step {iteration} loss {D_cost.item()!r} g_cost {G_cost.item()!r} "
          f"gp {gradient_penalty.item()!r}", flush=True)
    print(f"  wasserstein_d {Wasserstein_D.item():.6f}")

torch.save({"netG": netG.state_dict(), "netD": netD.state_dict()},
           os.path.join(out_dir, "wgan_gp.pt"))
torch.save(netG, os.path.join(out_dir, "netG.pt"))
restored = torch.load(os.path.join(out_dir, "netG.pt"), map_location=device, weights_only=False)
restored.eval()
with torch.inference_mode():
    samples = restored(torch.from_numpy(np.linspace(-1, 1, 20, dtype=np.float32).reshape(10, 2)))
print(f"eval sample_norm {samples.norm().item()!r}")
print(f"step_time_ms {1000 * float(np.median(times))!r}")
