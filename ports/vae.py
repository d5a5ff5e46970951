"""pytorch/examples' VAE on small synthetic binary images: encoder to (mu, logvar), the
reparameterisation trick, BCE + KL divergence, Adam; the noise eps comes from NumPy (so both
libraries draw the same numbers), evaluation under no_grad.

Runs as written under PyTorch (``python ports/vae.py``) and under gradsum
(``gradsum run ports/vae.py``). ``--init`` loads the initial weights if the file exists, else
writes them there.
"""

import argparse
import os
import tempfile
import time

import numpy as np
import torch
import torch.utils.data
from torch import nn, optim
from torch.nn import functional as F

parser = argparse.ArgumentParser(description="VAE Example")
parser.add_argument("--batch-size", type=int, default=32)
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--no-accel", action="store_true")
parser.add_argument("--seed", type=int, default=1)
parser.add_argument("--init", default=None, help="initial weights: loaded if present, else saved")
parser.add_argument("--out_dir", default=None)
args = parser.parse_args()

use_accel = not args.no_accel and torch.accelerator.is_available()
torch.manual_seed(args.seed)
torch.cuda.manual_seed_all(args.seed)
torch.backends.cudnn.benchmark = True
device = torch.accelerator.current_accelerator() if use_accel else torch.device("cpu")
out_dir = args.out_dir or tempfile.mkdtemp(prefix="vae-")

D = 64  # 8x8 images
rng = np.random.default_rng(5)
protos = (rng.random((6, D)) > 0.5).astype(np.float32)
flip = rng.random((256, D)) < 0.1
images = np.abs(protos[rng.integers(0, 6, size=256)] - flip).astype(np.float32)
train_set = torch.utils.data.TensorDataset(torch.from_numpy(images[:192]))
test_set = torch.utils.data.TensorDataset(torch.from_numpy(images[192:]))
train_loader = torch.utils.data.DataLoader(train_set, batch_size=args.batch_size, shuffle=False)
test_loader = torch.utils.data.DataLoader(test_set, batch_size=args.batch_size)
noise = np.random.default_rng(6)


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(D, 32)
        self.fc21 = nn.Linear(32, 8)
        self.fc22 = nn.Linear(32, 8)
        self.fc3 = nn.Linear(8, 32)
        self.fc4 = nn.Linear(32, D)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar, eps):
        std = torch.exp(0.5 * logvar)
        return mu + eps * std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x, eps):
        mu, logvar = self.encode(x.view(-1, D))
        z = self.reparameterize(mu, logvar, eps)
        return self.decode(z), mu, logvar


def draw_eps(n):
    return torch.from_numpy(noise.standard_normal((n, 8)).astype(np.float32)).to(device)


model = VAE()
if args.init is not None:
    if os.path.exists(args.init):
        model.load_state_dict(torch.load(args.init, map_location=device))
    else:
        torch.save(model.state_dict(), args.init)
model = model.to(device)
optimizer = optim.Adam(model.parameters(), lr=1e-3)


def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, D), reduction="sum")
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return BCE + KLD


times = []
step = 0
for epoch in range(1, args.epochs + 1):
    model.train()
    for (data,) in train_loader:
        t0 = time.perf_counter()
        data = data.to(device)
        optimizer.zero_grad()
        recon_batch, mu, logvar = model(data, draw_eps(len(data)))
        loss = loss_function(recon_batch, data, mu, logvar)
        loss.backward()
        optimizer.step()
        times.append(time.perf_counter() - t0)
        print(f"step {step} loss {loss.item() / len(data)!r}", flush=True)
        step += 1
    model.eval()
    test_loss = 0
    with torch.no_grad():
        for (data,) in test_loader:
            data = data.to(device)
            recon_batch, mu, logvar = model(data, torch.zeros(len(data), 8, device=device))
            test_loss += loss_function(recon_batch, data, mu, logvar).item()
    print(f"eval epoch{epoch}_test_loss {test_loss / len(test_loader.dataset)!r}")

torch.save(model.state_dict(), os.path.join(out_dir, "vae.pt"))
torch.save(model, os.path.join(out_dir, "vae_model.pt"))
restored = torch.load(os.path.join(out_dir, "vae_model.pt"), map_location=device,
                      weights_only=False)
restored.load_state_dict(torch.load(os.path.join(out_dir, "vae.pt"), map_location=device))
with torch.no_grad():
    sample = restored.decode(torch.from_numpy(np.linspace(-2, 2, 16 * 8, dtype=np.float32)
                                              .reshape(16, 8)).to(device))
print(f"eval sample_mean {sample.mean().item()!r}")
print(f"step_time_ms {1000 * float(np.median(times))!r}")
