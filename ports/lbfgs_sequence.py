"""pytorch/examples' time_sequence_prediction: two LSTMCells learn sine waves in double
precision with LBFGS and a closure, then predict the future under no_grad.

Runs as written under PyTorch (``python ports/lbfgs_sequence.py``) and under gradsum
(``gradsum run ports/lbfgs_sequence.py``). The waves are made with NumPy; ``--init`` loads the
initial weights if the file exists, else writes them there.
"""

import argparse
import os
import tempfile
import time

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim


class Sequence(nn.Module):
    def __init__(self, hidden=16):
        super().__init__()
        self.hidden = hidden
        self.lstm1 = nn.LSTMCell(1, hidden)
        self.lstm2 = nn.LSTMCell(hidden, hidden)
        self.linear = nn.Linear(hidden, 1)

    def forward(self, input, future=0):
        outputs = []
        h_t = torch.zeros(input.size(0), self.hidden, dtype=torch.double,
                          device=input.device)
        c_t = torch.zeros(input.size(0), self.hidden, dtype=torch.double,
                          device=input.device)
        h_t2 = torch.zeros(input.size(0), self.hidden, dtype=torch.double,
                          device=input.device)
        c_t2 = torch.zeros(input.size(0), self.hidden, dtype=torch.double,
                          device=input.device)
        for input_t in input.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for _ in range(future):
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        return torch.cat(outputs, dim=1)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=4, help="steps to run")
    parser.add_argument("--max_iter", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--init", default=None,
                        help="initial weights: loaded if present, else saved")
    parser.add_argument("--out_dir", default=None)
    opt = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    np.random.seed(2)
    torch.manual_seed(opt.seed)
    torch.cuda.manual_seed_all(opt.seed)
    torch.backends.cudnn.benchmark = True
    out_dir = opt.out_dir or tempfile.mkdtemp(prefix="lbfgs-")

    T, L, N = 20, 40, 8
    x = np.empty((N, L), np.int64)
    x[:] = np.array(range(L)) + np.random.randint(-4 * T, 4 * T, N).reshape(N, 1)
    data = np.sin(x / 1.0 / T).astype("float64")
    input = torch.from_numpy(data[3:, :-1]).to(device)
    target = torch.from_numpy(data[3:, 1:]).to(device)
    test_input = torch.from_numpy(data[:3, :-1]).to(device)
    test_target = torch.from_numpy(data[:3, 1:]).to(device)

    seq = Sequence()
    if opt.init is not None:
        if os.path.exists(opt.init):
            seq.load_state_dict(torch.load(opt.init, map_location=device))
        else:
            torch.save(seq.state_dict(), opt.init)
    seq.double()
    seq.to(device)
    criterion = nn.MSELoss()
    optimizer = optim.LBFGS(seq.parameters(), lr=0.8, max_iter=opt.max_iter)
    times = []
    for i in range(opt.steps):
        seq.train()
        t0 = time.perf_counter()
        evals = []

        def closure(evals=evals):
            optimizer.zero_grad()
            out = seq(input)
            loss = criterion(out, target)
            evals.append(loss.item())
            loss.backward()
            return loss
        optimizer.step(closure)
        times.append(time.perf_counter() - t0)
        print(f"step {i} loss {evals[0]!r} last {evals[-1]!r} evals {len(evals)}", flush=True)
        seq.eval()
        with torch.no_grad():
            future = 10
            pred = seq(test_input, future=future)
            loss = criterion(pred[:, :-future], test_target)
            print(f"step {i} test_loss {loss.item()!r}")
    torch.save(seq.state_dict(), os.path.join(out_dir, "seq.pt"))
    torch.save(seq, os.path.join(out_dir, "seq_model.pt"))
    restored = torch.load(os.path.join(out_dir, "seq_model.pt"), map_location=device,
                          weights_only=False)
    restored.load_state_dict(torch.load(os.path.join(out_dir, "seq.pt"), map_location=device))
    with torch.inference_mode():
        pred = restored(test_input, future=10)
    print(f"eval future_mean {pred[:, -10:].mean().item()!r}")
    print(f"step_time_ms {1000 * float(np.median(times))!r}")
