"""pytorch/examples' MNIST classifier on a small synthetic digit set: Conv2d, BatchNorm2d,
max pooling, Dropout (p=0: no randomness in training), a DataLoader over a TensorDataset with
num_workers=2, Adadelta with StepLR, evaluation under inference_mode.

Runs as written under PyTorch (``python ports/mnist_cnn.py``) and under gradsum
(``gradsum run ports/mnist_cnn.py``). The images are made with NumPy; ``--init`` loads the
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
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.dropout1 = nn.Dropout(0.0)
        self.dropout2 = nn.Dropout(0.0)
        self.fc1 = nn.Linear(16 * 5 * 5, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(self.bn1(x))
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.dropout2(x)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


def make_digits(n, rng):
    """n 14x14 images: a class-specific stroke pattern plus noise."""
    protos = rng.random((10, 14, 14)) > 0.7
    labels = rng.integers(0, 10, size=n)
    images = protos[labels].astype(np.float32) + 0.3 * rng.standard_normal((n, 14, 14))
    images = (images - 0.3) / 0.6
    return images[:, None].astype(np.float32), labels.astype(np.int64)


def train(args, model, device, train_loader, optimizer, epoch, state):
    model.train()
    for data, target in train_loader:
        t0 = time.perf_counter()
        data = data.to(device, non_blocking=True)
        target = target.to(device, non_blocking=True)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        state["times"].append(time.perf_counter() - t0)
        print(f"step {state['step']} loss {loss.item()!r}", flush=True)
        state["step"] += 1
        if args.dry_run:
            break


def test(model, device, test_loader):
    model.eval()
    test_loss = 0
    correct = 0
    with torch.inference_mode():
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction="sum").item()
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()
    test_loss /= len(test_loader.dataset)
    return test_loss, correct


def main():
    parser = argparse.ArgumentParser(description="PyTorch MNIST-style Example")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--test-batch-size", type=int, default=100)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=1.0)
    parser.add_argument("--gamma", type=float, default=0.7)
    parser.add_argument("--no-accel", action="store_true")
    parser.add_argument("--dry-run", action="store_true")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--num-workers", type=int, default=2)
    parser.add_argument("--save-model", action="store_true", default=True)
    parser.add_argument("--init", default=None,
                        help="initial weights: loaded if present, else saved")
    parser.add_argument("--out_dir", default=None)
    args = parser.parse_args()

    use_cuda = not args.no_accel and torch.cuda.is_available()
    use_mps = not args.no_accel and torch.backends.mps.is_available()
    torch.manual_seed(args.seed)
    torch.cuda.manual_seed_all(args.seed)
    torch.backends.cudnn.benchmark = True
    if use_cuda:
        device = torch.device("cuda")
    elif use_mps:
        device = torch.device("mps")
    else:
        device = torch.device("cpu")
    out_dir = args.out_dir or tempfile.mkdtemp(prefix="mnist-")

    train_kwargs = {"batch_size": args.batch_size}
    test_kwargs = {"batch_size": args.test_batch_size}
    worker_kwargs = {"num_workers": args.num_workers, "pin_memory": use_cuda}
    train_kwargs.update(worker_kwargs)
    test_kwargs.update(worker_kwargs)

    rng = np.random.default_rng(2024)
    x_train, y_train = make_digits(192, rng)
    x_test, y_test = make_digits(100, rng)
    dataset1 = TensorDataset(torch.from_numpy(x_train), torch.from_numpy(y_train))
    dataset2 = TensorDataset(torch.from_numpy(x_test), torch.from_numpy(y_test))
    train_loader = DataLoader(dataset1, shuffle=False, **train_kwargs)
    test_loader = DataLoader(dataset2, **test_kwargs)

    model = Net()
    if args.init is not None:
        if os.path.exists(args.init):
            model.load_state_dict(torch.load(args.init, map_location=device))
        else:
            torch.save(model.state_dict(), args.init)
    model = model.to(device)
    optimizer = optim.Adadelta(model.parameters(), lr=args.lr)
    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    state = {"step": 0, "times": []}
    for epoch in range(1, args.epochs + 1):
        train(args, model, device, train_loader, optimizer, epoch, state)
        test_loss, correct = test(model, device, test_loader)
        print(f"eval epoch{epoch}_test_loss {test_loss!r} epoch{epoch}_correct {correct!r}")
        scheduler.step()
        print(f"eval epoch{epoch}_lr {scheduler.get_last_lr()[0]!r}")

    if args.save_model:
        torch.save(model.state_dict(), os.path.join(out_dir, "mnist_cnn.pt"))
        torch.save(model, os.path.join(out_dir, "mnist_cnn_model.pt"))
        restored = torch.load(os.path.join(out_dir, "mnist_cnn_model.pt"), map_location=device,
                              weights_only=False)
        restored.load_state_dict(torch.load(os.path.join(out_dir, "mnist_cnn.pt")))
        test_loss, correct = test(restored, device, test_loader)
        print(f"eval restored_test_loss {test_loss!r}")
    print(f"step_time_ms {1000 * float(np.median(state['times']))!r}")


if __name__ == "__main__":
    main()
