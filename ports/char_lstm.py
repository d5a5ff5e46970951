"""A character-level language model with a 2-layer LSTM (char-rnn style): truncated BPTT with
the hidden state carried and detached between batches, Adam, clip_grad_norm_, greedy sampling.

Runs as written under PyTorch (``python ports/char_lstm.py``) and under gradsum
(``gradsum run ports/char_lstm.py``). The text is made deterministically with NumPy; ``--init``
loads the initial weights if the file exists, else writes them there.
"""

import argparse
import os
import tempfile
import time

import numpy as np
import torch
import torch.nn as nn

parser = argparse.ArgumentParser(description="char-rnn: LSTM language model")
parser.add_argument("--steps", type=int, default=12)
parser.add_argument("--seq_length", type=int, default=16)
parser.add_argument("--batch_size", type=int, default=4)
parser.add_argument("--hidden_size", type=int, default=32)
parser.add_argument("--num_layers", type=int, default=2)
parser.add_argument("--lr", type=float, default=3e-3)
parser.add_argument("--clip", type=float, default=5.0)
parser.add_argument("--seed", type=int, default=42)
parser.add_argument("--no-cuda", action="store_true", default=False)
parser.add_argument("--threads", type=int, default=1, help="intra-op threads on the CPU")
parser.add_argument("--init", default=None, help="initial weights: loaded if present, else saved")
parser.add_argument("--out_dir", default=None)
args = parser.parse_args()

torch.set_num_threads(args.threads)
use_cuda = not args.no_cuda and torch.cuda.is_available()
device = torch.device("cuda" if use_cuda else "cpu")
torch.manual_seed(args.seed)
torch.cuda.manual_seed_all(args.seed)
torch.backends.cudnn.benchmark = True
out_dir = args.out_dir or tempfile.mkdtemp(prefix="char-lstm-")

# the corpus: sentences drawn with NumPy from a small vocabulary of words
rng = np.random.default_rng(7)
vocab_words = ["the", "cat", "sat", "on", "a", "mat", "and", "dog", "ran", "far", "away"]
text = " ".join(vocab_words[i] for i in rng.integers(0, len(vocab_words), size=400)) + "."
chars = sorted(set(text))
stoi = {c: i for i, c in enumerate(chars)}
itos = {i: c for c, i in stoi.items()}
encoded = np.array([stoi[c] for c in text], dtype=np.int64)


class CharRNN(nn.Module):
    def __init__(self, n_chars, hidden_size, num_layers, dropout=0.0):
        super().__init__()
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.encoder = nn.Embedding(n_chars, hidden_size)
        self.lstm = nn.LSTM(hidden_size, hidden_size, num_layers, dropout=dropout,
                            batch_first=True)
        self.decoder = nn.Linear(hidden_size, n_chars)

    def forward(self, x, hidden):
        emb = self.encoder(x)
        output, hidden = self.lstm(emb, hidden)
        return self.decoder(output), hidden

    def init_hidden(self, batch_size):
        weight = next(self.parameters())
        return (weight.new_zeros(self.num_layers, batch_size, self.hidden_size),
                weight.new_zeros(self.num_layers, batch_size, self.hidden_size))


def repackage_hidden(h):
    """Wraps hidden states in new Tensors, to detach them from their history."""
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def batches():
    # batch_size parallel streams over the text (as char-rnn's loader does)
    n = (len(encoded) - 1) // args.batch_size
    streams = encoded[: n * args.batch_size + 1]
    xs = np.stack([streams[i * n:(i + 1) * n] for i in range(args.batch_size)])
    ys = np.stack([streams[i * n + 1:(i + 1) * n + 1] for i in range(args.batch_size)])
    for start in range(0, n - args.seq_length + 1, args.seq_length):
        x = torch.from_numpy(xs[:, start:start + args.seq_length].copy())
        y = torch.from_numpy(ys[:, start:start + args.seq_length].copy())
        if use_cuda:
            x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        yield x.to(device), y.to(device)


model = CharRNN(len(chars), args.hidden_size, args.num_layers)
if args.init is not None:
    if os.path.exists(args.init):
        model.load_state_dict(torch.load(args.init, map_location=device))
    else:
        torch.save(model.state_dict(), args.init)
if use_cuda:
    model.cuda()
assert next(model.parameters()).is_cuda == use_cuda
assert next(model.parameters()).device.type == device.type
optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
criterion = nn.CrossEntropyLoss()

model.train()
hidden = model.init_hidden(args.batch_size)
times = []
step = 0
while step < args.steps:
    for x, y in batches():
        if step == args.steps:
            break
        t0 = time.perf_counter()
        hidden = repackage_hidden(hidden)
        optimizer.zero_grad()
        output, hidden = model(x, hidden)
        loss = criterion(output.reshape(-1, len(chars)), y.reshape(-1))
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        optimizer.step()
        times.append(time.perf_counter() - t0)
        print(f"step {step} loss {loss.item()!r}", flush=True)
        step += 1

torch.save(model.state_dict(), os.path.join(out_dir, "char_lstm_state.pt"))
torch.save(model, os.path.join(out_dir, "char_lstm.pt"))
model = torch.load(os.path.join(out_dir, "char_lstm.pt"), map_location=device, weights_only=False)
model.load_state_dict(torch.load(os.path.join(out_dir, "char_lstm_state.pt"),
                                 map_location=device))
model.eval()
with torch.inference_mode():
    total, count = 0.0, 0
    hidden = model.init_hidden(args.batch_size)
    for x, y in batches():
        output, hidden = model(x, hidden)
        total += criterion(output.reshape(-1, len(chars)), y.reshape(-1)).item() * y.numel()
        count += y.numel()
    print(f"eval loss {total / count!r}")
    # greedy sampling from a prompt
    h = model.init_hidden(1)
    idx = torch.tensor([[stoi[c] for c in "the "]], device=device)
    out = []
    for _ in range(20):
        logits, h = model(idx, h)
        idx = logits[:, -1].argmax(dim=-1, keepdim=True)
        out.append(itos[idx.item()])
    print("sample:", "the " + "".join(out))
print(f"threads {torch.get_num_threads()}")
print(f"step_time_ms {1000 * float(np.median(times))!r}")
