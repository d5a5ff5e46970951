"""A GPT trained nanoGPT's way (weight tying, gradient accumulation, AdamW with weight-decay
groups, cosine LR with warmup, clip_grad_norm_, torch.compile, autocast via nullcontext on CPU).

Runs as written under PyTorch (``python ports/nanogpt_train.py``) and under gradsum
(``gradsum run ports/nanogpt_train.py``). The data is a deterministic NumPy token stream;
``--init FILE`` loads the initial weights if FILE exists, else writes them there.
"""

import argparse
import inspect
import math
import os
import tempfile
import time
from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
from torch.nn import functional as F


def str2bool(s):
    return str(s).lower() in ("1", "true", "yes", "y")


parser = argparse.ArgumentParser(description="nanoGPT-style training on a toy token stream")
parser.add_argument("--max_iters", type=int, default=8)
parser.add_argument("--gradient_accumulation_steps", type=int, default=2)
parser.add_argument("--batch_size", type=int, default=4)
parser.add_argument("--block_size", type=int, default=16)
parser.add_argument("--n_layer", type=int, default=2)
parser.add_argument("--n_head", type=int, default=2)
parser.add_argument("--n_embd", type=int, default=32)
parser.add_argument("--learning_rate", type=float, default=6e-3)
parser.add_argument("--min_lr", type=float, default=6e-4)
parser.add_argument("--warmup_iters", type=int, default=2)
parser.add_argument("--lr_decay_iters", type=int, default=8)
parser.add_argument("--weight_decay", type=float, default=1e-1)
parser.add_argument("--grad_clip", type=float, default=1.0)
parser.add_argument("--compile", type=str2bool, default=True)
parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
parser.add_argument("--seed", type=int, default=1337)
parser.add_argument("--init", default=None, help="initial weights: loaded if present, else saved")
parser.add_argument("--out_dir", default=None)
args = parser.parse_args()


@dataclass
class GPTConfig:
    block_size: int = 16
    vocab_size: int = 24
    n_layer: int = 2
    n_head: int = 2
    n_embd: int = 32
    dropout: float = 0.0
    bias: bool = True


class LayerNorm(nn.Module):
    """LayerNorm with an optional bias (nanoGPT's)."""

    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, input):
        return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)


class CausalSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        assert config.n_embd % config.n_head == 0
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.attn_dropout = nn.Dropout(config.dropout)
        self.resid_dropout = nn.Dropout(config.dropout)
        self.n_head = config.n_head
        self.n_embd = config.n_embd
        self.dropout = config.dropout
        self.flash = hasattr(torch.nn.functional, "scaled_dot_product_attention")
        if not self.flash:
            bs = config.block_size
            self.register_buffer("bias", torch.tril(torch.ones(bs, bs)).view(1, 1, bs, bs))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        if self.flash:
            y = torch.nn.functional.scaled_dot_product_attention(
                q, k, v, attn_mask=None, dropout_p=self.dropout if self.training else 0,
                is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            att = self.attn_dropout(att)
            y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.ln_1 = LayerNorm(config.n_embd, bias=config.bias)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = LayerNorm(config.n_embd, bias=config.bias)
        self.mlp = MLP(config)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd),
            wpe=nn.Embedding(config.block_size, config.n_embd),
            drop=nn.Dropout(config.dropout),
            h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
            ln_f=LayerNorm(config.n_embd, bias=config.bias),
        ))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # weight tying
        self.apply(self._init_weights)
        for pn, p in self.named_parameters():
            if pn.endswith("c_proj.weight"):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

    def get_num_params(self, non_embedding=True):
        n_params = sum(p.numel() for p in self.parameters())
        if non_embedding:
            n_params -= self.transformer.wpe.weight.numel()
        return n_params

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        device = idx.device
        _, t = idx.size()
        assert t <= self.config.block_size
        pos = torch.arange(0, t, dtype=torch.long, device=device)
        tok_emb = self.transformer.wte(idx)
        pos_emb = self.transformer.wpe(pos)
        x = self.transformer.drop(tok_emb + pos_emb)
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        if targets is not None:
            logits = self.lm_head(x)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                   ignore_index=-1)
        else:
            logits = self.lm_head(x[:, [-1], :])
            loss = None
        return logits, loss

    def configure_optimizers(self, weight_decay, learning_rate, betas, device_type):
        param_dict = {pn: p for pn, p in self.named_parameters() if p.requires_grad}
        decay_params = [p for n, p in param_dict.items() if p.dim() >= 2]
        nodecay_params = [p for n, p in param_dict.items() if p.dim() < 2]
        optim_groups = [
            {"params": decay_params, "weight_decay": weight_decay},
            {"params": nodecay_params, "weight_decay": 0.0},
        ]
        fused_available = "fused" in inspect.signature(torch.optim.AdamW).parameters
        use_fused = fused_available and device_type == "cuda"
        extra_args = dict(fused=True) if use_fused else dict()
        return torch.optim.AdamW(optim_groups, lr=learning_rate, betas=betas, **extra_args)


device = args.device
device_type = "cuda" if "cuda" in device else "cpu"
dtype = ("bfloat16" if torch.cuda.is_available() and torch.cuda.is_bf16_supported()
         else "float16")
torch.manual_seed(args.seed)
torch.cuda.manual_seed_all(args.seed)
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
torch.backends.cudnn.benchmark = True
ptdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]
ctx = (nullcontext() if device_type == "cpu"
       else torch.amp.autocast(device_type=device_type, dtype=ptdtype))
out_dir = args.out_dir or tempfile.mkdtemp(prefix="nanogpt-")
os.makedirs(out_dir, exist_ok=True)

# a deterministic token stream: a few repeated "words" in a NumPy-shuffled order
vocab_size = 24
rng = np.random.default_rng(0)
words = [rng.integers(0, vocab_size, size=rng.integers(3, 7)) for _ in range(12)]
data = np.concatenate([words[i] for i in rng.integers(0, len(words), size=600)]).astype(np.int64)
n = int(0.9 * len(data))
train_data, val_data = data[:n], data[n:]
batch_rng = np.random.default_rng(1)


def get_batch(split):
    d = train_data if split == "train" else val_data
    ix = batch_rng.integers(0, len(d) - args.block_size, size=args.batch_size)
    x = torch.from_numpy(np.stack([d[i:i + args.block_size] for i in ix]))
    y = torch.from_numpy(np.stack([d[i + 1:i + 1 + args.block_size] for i in ix]))
    return x.to(device), y.to(device)


config = GPTConfig(block_size=args.block_size, vocab_size=vocab_size, n_layer=args.n_layer,
                   n_head=args.n_head, n_embd=args.n_embd)
model = GPT(config)
if args.init is not None:
    if os.path.exists(args.init):
        model.load_state_dict(torch.load(args.init, map_location=device))
    else:
        torch.save(model.state_dict(), args.init)
model.to(device)
assert model.transformer.wte.weight is model.lm_head.weight
# nanoGPT's line: on a machine without CUDA the scaler warns and disables itself
scaler = torch.cuda.amp.GradScaler(enabled=(dtype == "float16"))
optimizer = model.configure_optimizers(args.weight_decay, args.learning_rate, (0.9, 0.95),
                                       device_type)
raw_model = model
if args.compile:
    model = torch.compile(model)


def get_lr(it):
    if it < args.warmup_iters:
        return args.learning_rate * (it + 1) / (args.warmup_iters + 1)
    if it > args.lr_decay_iters:
        return args.min_lr
    decay_ratio = (it - args.warmup_iters) / (args.lr_decay_iters - args.warmup_iters)
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
    return args.min_lr + coeff * (args.learning_rate - args.min_lr)


@torch.no_grad()
def estimate_loss():
    out = {}
    model.eval()
    for split in ["train", "val"]:
        X, Y = get_batch(split)
        with ctx:
            _, loss = model(X, Y)
        out[split] = loss.item()
    model.train()
    return out


times = []
X, Y = get_batch("train")
for iter_num in range(args.max_iters):
    t0 = time.perf_counter()
    lr = get_lr(iter_num)
    for param_group in optimizer.param_groups:
        param_group["lr"] = lr
    total = 0.0
    for _micro_step in range(args.gradient_accumulation_steps):
        with ctx:
            _logits, loss = model(X, Y)
            loss = loss / args.gradient_accumulation_steps
        X, Y = get_batch("train")
        scaler.scale(loss).backward()
        total += loss.item()
    if args.grad_clip != 0.0:
        scaler.unscale_(optimizer)
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), args.grad_clip)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    times.append(time.perf_counter() - t0)
    print(f"step {iter_num} loss {total!r} grad_norm {norm.item()!r}", flush=True)

losses = estimate_loss()
print(f"eval train {losses['train']!r} val {losses['val']!r}")
checkpoint = {"model": raw_model.state_dict(), "optimizer": optimizer.state_dict(),
              "iter_num": args.max_iters, "best_val_loss": losses["val"]}
torch.save(checkpoint, os.path.join(out_dir, "ckpt.pt"))
ckpt = torch.load(os.path.join(out_dir, "ckpt.pt"), map_location=device)
torch.save(raw_model, os.path.join(out_dir, "model.pt"))
restored = torch.load(os.path.join(out_dir, "model.pt"), map_location=device, weights_only=False)
restored.load_state_dict(ckpt["model"])
restored.eval()
X, Y = get_batch("val")
with torch.inference_mode():
    _, loss = restored(X, Y)
print(f"eval restored {loss.item()!r}")
print(f"step_time_ms {1000 * float(np.median(times))!r}")
