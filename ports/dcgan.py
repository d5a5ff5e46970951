"""pytorch/examples' DCGAN, shrunk to 16x16 images: ConvTranspose2d/BatchNorm generator,
Conv2d/LeakyReLU critic with BatchNorm, weights_init through Module.apply, BCELoss with
real/fake labels, two Adam optimizers (betas=(0.5, 0.999)); noise and data from NumPy.

Runs as written under PyTorch (``python ports/dcgan.py``) and under gradsum
(``gradsum run ports/dcgan.py``). ``--init`` loads both networks' initial weights if the file
exists, else writes them there.
"""

import argparse
import os
import tempfile
import time

import numpy as np
import torch
import torch.backends.cudnn as cudnn
import torch.nn as nn
import torch.optim as optim
import torch.utils.data

parser = argparse.ArgumentParser()
parser.add_argument("--batchSize", type=int, default=16)
parser.add_argument("--nz", type=int, default=8, help="size of the latent z vector")
parser.add_argument("--ngf", type=int, default=8)
parser.add_argument("--ndf", type=int, default=8)
parser.add_argument("--niter", type=int, default=2, help="number of epochs to train for")
parser.add_argument("--lr", type=float, default=0.0002)
parser.add_argument("--beta1", type=float, default=0.5)
parser.add_argument("--accel", action="store_true", help="enables accelerator")
parser.add_argument("--manualSeed", type=int, default=999)
parser.add_argument("--init", default=None, help="initial weights: loaded if present, else saved")
parser.add_argument("--out_dir", default=None)
opt = parser.parse_args()

torch.manual_seed(opt.manualSeed)
torch.cuda.manual_seed_all(opt.manualSeed)
cudnn.benchmark = True
torch.backends.cudnn.benchmark = True
if opt.accel and torch.accelerator.is_available():
    device = torch.accelerator.current_accelerator()
else:
    device = torch.device("cpu")
out_dir = opt.out_dir or tempfile.mkdtemp(prefix="dcgan-")
rng = np.random.default_rng(12)

# 96 16x16 "images": blurred blobs at random places, scaled to [-1, 1] as Normalize(0.5, 0.5)
yy, xx = np.mgrid[0:16, 0:16]
centers = rng.uniform(3, 13, size=(96, 2))
images = np.exp(-((yy - centers[:, :1, None]) ** 2 + (xx - centers[:, 1:, None]) ** 2) / 8.0)
images = (images * 2 - 1).astype(np.float32)[:, None]
dataset = torch.utils.data.TensorDataset(torch.from_numpy(images))
dataloader = torch.utils.data.DataLoader(dataset, batch_size=opt.batchSize, shuffle=False)
nz, ngf, ndf, nc = opt.nz, opt.ngf, opt.ndf, 1


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        torch.nn.init.normal_(m.weight, 0.0, 0.02)
    elif classname.find("BatchNorm") != -1:
        torch.nn.init.normal_(m.weight, 1.0, 0.02)
        torch.nn.init.zeros_(m.bias)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 4, 4, 1, 0, bias=False),  # 4x4
            nn.BatchNorm2d(ngf * 4),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False),  # 8x8
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, nc, 4, 2, 1, bias=False),  # 16x16
            nn.Tanh(),
        )

    def forward(self, input):
        return self.main(input)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(nc, ndf, 4, 2, 1, bias=False),  # 8x8
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),  # 4x4
            nn.BatchNorm2d(ndf * 2),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False),
            nn.Sigmoid(),
        )

    def forward(self, input):
        return self.main(input).view(-1, 1).squeeze(1)


netG = Generator().to(device)
netG.apply(weights_init)
netD = Discriminator().to(device)
netD.apply(weights_init)
if opt.init is not None:
    if os.path.exists(opt.init):
        state = torch.load(opt.init, map_location=device)
        netG.load_state_dict(state["netG"])
        netD.load_state_dict(state["netD"])
    else:
        torch.save({"netG": netG.state_dict(), "netD": netD.state_dict()}, opt.init)

criterion = nn.BCELoss()
fixed_noise = torch.from_numpy(rng.standard_normal((8, nz, 1, 1)).astype(np.float32)).to(device)
real_label, fake_label = 1, 0
optimizerD = optim.Adam(netD.parameters(), lr=opt.lr, betas=(opt.beta1, 0.999))
optimizerG = optim.Adam(netG.parameters(), lr=opt.lr, betas=(opt.beta1, 0.999))

times = []
step = 0
for epoch in range(opt.niter):
    netG.train()
    netD.train()
    for (data,) in dataloader:
        t0 = time.perf_counter()
        # (1) Update D: maximize log(D(x)) + log(1 - D(G(z)))
        netD.zero_grad()
        real_cpu = data.to(device)
        batch_size = real_cpu.size(0)
        label = torch.full((batch_size,), real_label, dtype=real_cpu.dtype, device=device)
        output = netD(real_cpu)
        errD_real = criterion(output, label)
        errD_real.backward()
        D_x = output.mean().item()
        noise = torch.from_numpy(
            rng.standard_normal((batch_size, nz, 1, 1)).astype(np.float32)).to(device)
        fake = netG(noise)
        label.fill_(fake_label)
        output = netD(fake.detach())
        errD_fake = criterion(output, label)
        errD_fake.backward()
        D_G_z1 = output.mean().item()
        errD = errD_real + errD_fake
        optimizerD.step()
        # (2) Update G: maximize log(D(G(z)))
        netG.zero_grad()
        label.fill_(real_label)
        output = netD(fake)
        errG = criterion(output, label)
        errG.backward()
        D_G_z2 = output.mean().item()
        optimizerG.step()
        times.append(time.perf_counter() - t0)
        print(f"step {step} loss {errD.item()!r} loss_g {errG.item()!r} d_x {D_x!r} "
              f"d_g_z1 {D_G_z1!r} d_g_z2 {D_G_z2!r}", flush=True)
        step += 1
    netG.eval()
    with torch.no_grad():
        fake = netG(fixed_noise)
    print(f"eval epoch{epoch}_fixed_abs_mean {fake.abs().mean().item()!r}")
    torch.save(netG.state_dict(), os.path.join(out_dir, f"netG_epoch_{epoch}.pth"))
    torch.save(netD.state_dict(), os.path.join(out_dir, f"netD_epoch_{epoch}.pth"))

torch.save({"netG": netG.state_dict(), "netD": netD.state_dict()},
           os.path.join(out_dir, "dcgan.pt"))
torch.save(netG, os.path.join(out_dir, "netG.pt"))
restored = torch.load(os.path.join(out_dir, "netG.pt"), map_location=device, weights_only=False)
restored.eval()
with torch.inference_mode():
    print(f"eval restored_fixed_abs_mean {restored(fixed_noise).abs().mean().item()!r}")
print(f"step_time_ms {1000 * float(np.median(times))!r}")
