"""``gradsum demo``: the accumulation rules on a real classifier, in about ten seconds.

A small MLP (64-64-10) learns the UCI handwritten digits shipped in the package
(:func:`gradsum.datasets.load_digits`) with micro-batched gradient accumulation
(:func:`gradsum.toolkit.micro_batches`), in strict mode (:func:`gradsum.toolkit.strict`):

1. at the first step the gradient accumulated over the micro-batches equals the full-batch
   gradient (the maximum absolute difference is printed, next to the naive mean of means);
2. the same training with ``optimizer.zero_grad()`` forgotten: the sanitizer stops it at step 2
   with a :class:`~gradsum.toolkit.StaleGradientError`, whose message is printed;
3. with the sanitizer off, both ways are trained from the same weights and batches, and the
   loss curves are shown side by side (text, ``loss_curves.csv`` and ``loss_curves.png``): the
   silent bug becomes visible;
4. the model's graph is written as DOT text (``model_graph.dot``; ``model_graph.svg`` too when
   Graphviz is installed), the model is saved with :func:`gradsum.save` and reloaded with
   :func:`gradsum.load` + ``load_state_dict`` to the same test accuracy.

Run it with ``gradsum demo`` or ``python -m gradsum demo`` (``--help`` lists the options). The
optional packages of the ``demo`` extra (``pip install -e ".[demo]"`` in a clone, or
``pip install rich matplotlib``) add a progress bar and tables (``rich``, only when the output
is a terminal for the bar) and the PNG (``matplotlib``); without them the demo prints plain text
and skips the picture with a note. The checkpoint needs nothing beyond NumPy.
Paths below the current directory are printed relative to it.

Example:
    >>> from gradsum.demo import build_arg_parser
    >>> args = build_arg_parser().parse_args(["--steps", "5", "--no-plots"])
    >>> args.steps, args.micro_batches, args.plots
    (5, 3, False)
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import math
import os
import sys
import tempfile
import textwrap
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["DemoResult", "add_arguments", "build_arg_parser", "main", "run", "run_demo"]

HELP = ("train a digits classifier with micro-batched accumulation; show a forgotten "
        "zero_grad")
PROG = "gradsum demo"
#: the share of the digits the demo trains on (the rest is the test set)
TRAIN_FRACTION = 0.8


@dataclass
class TrainRun:
    """One training run of the demo.

    Attributes:
        name: what was run.
        losses: the full-batch mean loss of every step (accumulated over the micro-batches).
        accuracy: test accuracy after the last step (``nan`` if the run was stopped).
        seconds: wall time of the training loop.
    """

    name: str
    losses: list[float] = field(default_factory=list)
    accuracy: float = float("nan")
    seconds: float = 0.0

    @property
    def final_loss(self) -> float:
        """Mean loss of the last tenth of the steps (less noisy than the very last one); the
        results table's "loss (last 10%)"."""
        if not self.losses:
            return float("nan")
        tail = self.losses[-max(1, len(self.losses) // 10):]
        return sum(tail) / len(tail)


@dataclass
class DemoResult:
    """What :func:`run_demo` found; every number it printed.

    Attributes:
        out: the output folder (absolute path).
        max_abs_diff: max |accumulated - full-batch| gradient at step 1.
        naive_abs_diff: the same for the naive mean of micro-batch means (``loss / k``).
        stale_error: the sanitizer's message for the forgotten ``zero_grad()`` (``""`` if
            none was raised, which is a failure).
        runs: the training runs (strict, sanitizer off, forgotten ``zero_grad()``).
        reload_accuracy: test accuracy of the model reloaded from the checkpoint.
        files: names of the files written into ``out``.
        seconds: total wall time.
        ok: every check passed.
        problems: what failed, when ``ok`` is ``False``.
    """

    out: str
    max_abs_diff: float = float("nan")
    naive_abs_diff: float = float("nan")
    stale_error: str = ""
    runs: list[TrainRun] = field(default_factory=list)
    reload_accuracy: float | None = None
    files: list[str] = field(default_factory=list)
    seconds: float = 0.0
    ok: bool = False
    problems: list[str] = field(default_factory=list)


# -- command line -------------------------------------------------------------------------------
def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _learning_rate(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number above 0, got {text}")
    return value


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the demo's options to ``p`` (the ``gradsum demo`` sub-parser)."""
    p.add_argument("--steps", type=_positive_int, default=300, metavar="N",
                   help="optimizer steps per training run (default: %(default)s)")
    p.add_argument("--micro-batches", type=_positive_int, default=3, metavar="K",
                   help="micro-batches accumulated per optimizer step; with the default batch "
                        "of 64 they have unequal sizes (22+21+21), where a naive mean of means "
                        "would be wrong (default: %(default)s)")
    p.add_argument("--batch-size", type=_positive_int, default=64, metavar="B",
                   help="samples per optimizer step, split into the micro-batches; at most the "
                        "1437 training samples (default: %(default)s)")
    p.add_argument("--lr", type=_learning_rate, default=1e-2,
                   help="Adam learning rate, above 0 (default: %(default)s)")
    p.add_argument("--out", default=os.path.join(".", "gradsum-demo-out"), metavar="DIR",
                   help="output folder for the loss curves, graph picture and checkpoint; "
                        "created if missing, files in it are overwritten (default: %(default)s)")
    p.add_argument("--seed", type=int, default=0,
                   help="random seed: data split, initial weights and batches; the same seed "
                        "prints the same numbers (default: %(default)s)")
    p.add_argument("--no-plots", dest="plots", action="store_false",
                   help="skip the pictures (loss_curves.png, model_graph.svg); the text "
                        "summary, CSV, DOT file and checkpoint are still written")


def build_arg_parser() -> argparse.ArgumentParser:
    """A stand-alone parser with the demo's options (``gradsum demo`` uses the same ones)."""
    p = argparse.ArgumentParser(prog=PROG, description=HELP)
    add_arguments(p)
    return p


def _usage_error(message: str) -> int:
    """What ``parser.error`` prints (the usage, then ``gradsum demo: error: ...``), returned
    as exit status 2 instead of raised."""
    build_arg_parser().print_usage(sys.stderr)
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return 2


def _check_out(out: str) -> str | None:
    """Why ``out`` cannot be the output folder (creating it if missing), or ``None``."""
    if os.path.exists(out) and not os.path.isdir(out):
        return f"argument --out: {out!r} exists and is not a folder"
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as e:
        return f"argument --out: cannot create the folder {out!r}: {e.strerror or e}"
    try:
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as e:
        return f"argument --out: cannot write into {out!r}: {e.strerror or e}"
    return None


def _n_train() -> int:
    from gradsum.datasets import load_digits

    return int(load_digits()[0].shape[0] * TRAIN_FRACTION)


def run(args: argparse.Namespace) -> int:
    """Run the demo from parsed arguments; returns the exit status (0: every check passed,
    1: a check failed, 2: unusable arguments, reported as argparse does)."""
    for name in ("steps", "micro_batches", "batch_size"):  # args may come from another parser
        if getattr(args, name) < 1:
            return _usage_error(f"argument --{name.replace('_', '-')}: must be at least 1, "
                                f"got {getattr(args, name)}")
    if not (math.isfinite(args.lr) and args.lr > 0):
        return _usage_error(f"argument --lr: must be a finite number above 0, got {args.lr}")
    if args.micro_batches > args.batch_size:
        return _usage_error(f"argument --micro-batches: {args.micro_batches} micro-batches "
                            f"cannot split a batch of --batch-size {args.batch_size}")
    n_train = _n_train()
    if args.batch_size > n_train:
        return _usage_error(f"argument --batch-size: {args.batch_size} is more than the "
                            f"{n_train} training samples")
    problem = _check_out(args.out)
    if problem is not None:
        return _usage_error(problem)
    result = run_demo(steps=args.steps, micro_batches=args.micro_batches,
                      batch_size=args.batch_size, lr=args.lr, out=args.out, seed=args.seed,
                      plots=args.plots)
    return 0 if result.ok else 1


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m gradsum.demo [options]``: the same as ``gradsum demo [options]``."""
    from gradsum.__main__ import main as cli

    return cli(["demo", *(sys.argv[1:] if argv is None else argv)])


# -- output helpers -----------------------------------------------------------------------------
def _say(text: str = "") -> None:
    print(text, flush=True)


def _shown(path: str) -> str:
    """``path`` as printed: relative to the current directory when it is below it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return path
    return path if rel == os.pardir or rel.startswith(os.pardir + os.sep) else rel


def _rich() -> Any:
    """The ``rich`` package, or ``None`` when it is not installed."""
    try:
        import rich.console
        import rich.padding
        import rich.progress
        import rich.table
    except ImportError:
        return None
    return rich


def _isatty() -> bool:
    isatty = getattr(sys.stdout, "isatty", None)
    return bool(isatty and isatty())


def _fancy() -> bool:
    """A progress bar only for a terminal: logs and pipes get a few plain lines instead."""
    return _isatty() and _rich() is not None


@contextlib.contextmanager
def _progress(label: str, total: int) -> Iterator[Callable[[int, float], None]]:
    """Yield ``update(step, loss)``: a rich bar on a terminal, else about four plain lines."""
    if _fancy():
        rich = _rich()
        cols = (rich.progress.TextColumn("  {task.description:<38}"),
                rich.progress.BarColumn(),
                rich.progress.MofNCompleteColumn(),
                rich.progress.TextColumn("loss {task.fields[loss]:>7}"),
                rich.progress.TimeElapsedColumn())
        with rich.progress.Progress(*cols, console=rich.console.Console(file=sys.stdout)) as bar:
            task = bar.add_task(label, total=total, loss="-")

            def update(step: int, loss: float) -> None:
                bar.update(task, completed=step, loss=f"{loss:.4f}")

            yield update
        return
    marks = {max(1, round(total * q / 4)) for q in (1, 2, 3, 4)}

    def update_plain(step: int, loss: float) -> None:
        if step in marks:
            _say(f"  {label:<38} step {step:>{len(str(total))}}/{total}  loss {loss:.4f}")

    yield update_plain


def _sparkline(values: Sequence[float], lo: float, hi: float, width: int = 40) -> str:
    """The curve as one line of block characters (ASCII where the terminal cannot encode)."""
    blocks = "▁▂▃▄▅▆▇█"
    enc = getattr(sys.stdout, "encoding", None) or "ascii"
    try:
        blocks.encode(enc)
    except (UnicodeEncodeError, LookupError):
        blocks = "_.-:=+*#"
    n = len(values)
    if n == 0:
        return ""
    width = min(width, n)
    chunks = [values[i * n // width:(i + 1) * n // width] for i in range(width)]
    out = []
    for c in chunks:
        v = sum(c) / len(c)
        level = 0 if hi <= lo else int((min(max(v, lo), hi) - lo) / (hi - lo) * (len(blocks) - 1))
        out.append(blocks[level])
    return "".join(out)


def _table(title: str, heads: Sequence[str], rows: Sequence[Sequence[str]],
           indent: int = 0) -> None:
    """A rich table when rich is installed, else aligned plain text."""
    rich = _rich()
    if rich is not None:
        table = rich.table.Table(title=title, title_justify="left")
        for i, h in enumerate(heads):
            table.add_column(h, justify="left" if i == 0 else "right")
        for r in rows:
            table.add_row(*r)
        console = rich.console.Console(file=sys.stdout, width=None if _isatty() else 100)
        console.print(rich.padding.Padding(table, (0, 0, 0, indent), expand=False))
        return
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(heads)]
    _say(" " * indent + title)

    def line(cells: Sequence[str]) -> str:
        return " " * indent + "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                                        for i, (c, w) in enumerate(zip(cells, widths)))

    _say(line(heads))
    _say(" " * indent + "  ".join("-" * w for w in widths))
    for r in rows:
        _say(line(r))


# -- the demo -----------------------------------------------------------------------------------
def _model(seed: int) -> Any:
    import gradsum
    from gradsum import nn

    gradsum.manual_seed(seed)
    return nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))


def _accuracy(model: Any, x: Any, y: Any) -> float:
    import gradsum

    with gradsum.no_grad():
        return float((model(x).argmax(1) == y).float().mean().item())


def _train(model: Any, opt: Any, x: Any, y: Any, batches: Any, k: int, label: str,
           *, zero_grad: bool = True, first_step: Callable[[Any, Any], None] | None = None,
           stop_after: int | None = None, ledger: Any = None) -> list[float]:
    """Micro-batched training; returns the loss of each step. ``first_step(xb, yb)`` runs
    before the first optimizer step (after the accumulation); with a ``ledger`` every backward
    is labelled with its step and micro-batch (shown in the sanitizer's messages)."""
    import gradsum.nn.functional as F
    from gradsum.toolkit import micro_batches

    losses: list[float] = []
    steps = batches.shape[0] if stop_after is None else stop_after
    with _progress(label, steps) as update:
        for step in range(steps):
            idx = batches[step]
            xb, yb = x[idx], y[idx]
            total = 0.0
            for mb, scale in micro_batches(xb, yb, k):
                # the loss summed over the micro-batch, scaled by 1/(samples in the whole step)
                loss = F.cross_entropy(model(mb.x), mb.y, reduction="sum") * scale
                if ledger is not None:
                    ledger.next_label(f"step {step + 1}, micro-batch {mb.index + 1}/{k}")
                loss.backward()
                total += loss.item()
            if first_step is not None and step == 0:
                first_step(xb, yb)
            opt.step()
            if zero_grad:
                opt.zero_grad()
            losses.append(total)
            update(step + 1, total)
    return losses


def _grad_diffs(model: Any, xb: Any, yb: Any, k: int) -> tuple[float, float]:
    """max |.grad - full-batch grad| for the accumulated ``.grad`` (already filled), and the
    same for the naive mean of per-micro-batch means; ``autograd.grad`` touches no ``.grad``."""
    import gradsum
    import gradsum.nn.functional as F
    from gradsum.toolkit import micro_batches

    params = list(model.parameters())
    full = gradsum.autograd.grad(F.cross_entropy(model(xb), yb), params)
    naive = [gradsum.zeros_like(p) for p in params]
    for mb, _ in micro_batches(xb, yb, k):  # the same split, each mean loss divided by k
        gs = gradsum.autograd.grad(F.cross_entropy(model(mb.x), mb.y) / k, params)
        naive = [a + b for a, b in zip(naive, gs)]

    def worst(gs: Sequence[Any]) -> float:
        return max(float((g - f).abs().max().item()) for g, f in zip(gs, full))

    return worst([p.grad for p in params]), worst(naive)


def _sizes(n: int, k: int) -> str:
    base, extra = divmod(n, k)
    return "+".join(str(base + (1 if i < extra else 0)) for i in range(k))


def _write_curves(out: str, steps: int, good: list[float], bad: list[float],
                  accs: tuple[float, float], plots: bool, files: list[str]) -> None:
    path = os.path.join(out, "loss_curves.csv")
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["step", "loss_zero_grad", "loss_forgotten_zero_grad"])
        for i in range(steps):
            w.writerow([i + 1, f"{good[i]:.6f}" if i < len(good) else "",
                        f"{bad[i]:.6f}" if i < len(bad) else ""])
    files.append("loss_curves.csv")
    if not plots:
        _say("  loss_curves.png: skipped (--no-plots)")
        return
    try:
        from matplotlib.figure import Figure  # no pyplot: no global backend state (Agg)
    except ImportError:
        _say("  loss_curves.png: skipped (matplotlib is not installed: "
             "pip install matplotlib)")
        return
    fig = Figure(figsize=(10, 4), dpi=100)
    axes = fig.subplots(1, 2, sharey=True)
    top = max([*good, *bad, 0.1])
    for ax, curve, title, color, acc in (
        (axes[0], good, "optimizer.zero_grad() every step", "#1f77b4", accs[0]),
        (axes[1], bad, "optimizer.zero_grad() forgotten", "#d62728", accs[1]),
    ):
        xs = list(range(1, len(curve) + 1))
        ax.plot(xs, curve, color=color, alpha=0.35, linewidth=0.8, label="loss per step")
        win = max(1, len(curve) // 20)
        smooth = [sum(curve[max(0, i - win + 1):i + 1]) / len(curve[max(0, i - win + 1):i + 1])
                  for i in range(len(curve))]
        ax.plot(xs, smooth, color=color, linewidth=2.0, label=f"moving average ({win} steps)")
        ax.set_title(f"{title}\ntest accuracy {acc:.1%}", fontsize=10)
        ax.set_xlabel("optimizer step")
        ax.set_ylim(0, top * 1.05)
        ax.grid(alpha=0.3)
        ax.legend(loc="upper right", fontsize=8)
    axes[0].set_ylabel("cross-entropy (full-batch mean)")
    fig.suptitle("gradsum demo: the same training, with and without zero_grad()")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "loss_curves.png"))
    files.append("loss_curves.png")
    _say(f"  loss curves: {_shown(os.path.join(out, 'loss_curves.png'))}")


def _write_graph(out: str, model: Any, x: Any, y: Any, plots: bool, files: list[str]) -> None:
    import gradsum.nn.functional as F
    from gradsum.toolkit import draw, to_dot

    loss = F.cross_entropy(model(x[:4]), y[:4])
    dot = to_dot(loss, params=model)
    path = os.path.join(out, "model_graph.dot")
    with open(path, "w") as fh:
        fh.write(dot)
    files.append("model_graph.dot")
    _say(f"  model graph (DOT, {dot.count('->')} edges): {_shown(path)}")
    if not plots:
        return
    svg = os.path.join(out, "model_graph.svg")
    try:
        draw(loss, svg, params=model)
    except (ImportError, RuntimeError):  # the graphviz package or the dot program is missing
        _say("  model graph (SVG): skipped, Graphviz not found (pip install graphviz; "
             "apt-get install graphviz)")
    else:
        files.append("model_graph.svg")
        _say(f"  model graph (SVG): {_shown(svg)}")


def run_demo(
    *,
    steps: int = 300,
    micro_batches: int = 3,
    batch_size: int = 64,
    lr: float = 1e-2,
    out: str = os.path.join(".", "gradsum-demo-out"),
    seed: int = 0,
    plots: bool = True,
) -> DemoResult:
    """Run the whole demo, printing as it goes; see the module docstring.

    Args:
        steps: optimizer steps per training run.
        micro_batches: micro-batches per step.
        batch_size: samples per step.
        lr: Adam's learning rate.
        out: output folder (created).
        seed: random seed; equal seeds print equal numbers.
        plots: write the PNG and SVG pictures.

    Returns:
        A :class:`DemoResult`; ``ok`` is ``True`` when every check passed. The global random
        state (``gradsum.get_rng_state()``) is the same afterwards as before.
    """
    import gradsum

    state = gradsum.get_rng_state()
    try:
        return _demo(steps, micro_batches, batch_size, lr, out, seed, plots)
    finally:
        gradsum.set_rng_state(state)


def _demo(steps: int, micro_batches: int, batch_size: int, lr: float, out: str, seed: int,
          plots: bool) -> DemoResult:
    import gradsum
    from gradsum import optim
    from gradsum.datasets import DIGITS_CITATION, load_digits
    from gradsum.toolkit import StaleGradientError, strict

    t_start = time.perf_counter()
    out = os.path.abspath(out)
    os.makedirs(out, exist_ok=True)
    res = DemoResult(out=out)
    k = micro_batches

    # data: a seeded 80/20 split; the batches of every step drawn once, shared by all runs
    x, y = load_digits()
    gen = gradsum.Generator().manual_seed(seed)
    perm = gradsum.randperm(x.shape[0], generator=gen)
    n_train = int(x.shape[0] * TRAIN_FRACTION)
    x_tr, y_tr = x[perm[:n_train]], y[perm[:n_train]]
    x_te, y_te = x[perm[n_train:]], y[perm[n_train:]]
    batches = gradsum.randint(0, n_train, (steps, batch_size), generator=gen)

    _say("gradsum demo: gradient accumulation, made loud")
    _say(f"data:   {x.shape[0]} handwritten digits, 8x8 pixels, {n_train} train / "
         f"{x.shape[0] - n_train} test")
    _say(f"        ({DIGITS_CITATION})")
    n_params = sum(p.numel() for p in _model(seed).parameters())
    _say(f"model:  MLP 64-64-10 ({n_params} parameters), Adam lr={lr:g}; {steps} steps of "
         f"{batch_size} samples in {k} micro-batches ({_sizes(batch_size, k)})")
    _say(f"output: {_shown(out)}")

    # 1. exact micro-batching, strict mode on -------------------------------------------------
    _say("")
    _say("[1] micro-batched gradient accumulation, sanitizer on (strict mode)")
    model = _model(seed)
    opt = optim.Adam(model.parameters(), lr=lr)

    def check_first(xb: Any, yb: Any) -> None:
        res.max_abs_diff, res.naive_abs_diff = _grad_diffs(model, xb, yb, k)
        _say(f"  step 1: accumulated gradient == full-batch gradient: max abs difference "
             f"{res.max_abs_diff:.2e}")
        _say(f"          (the naive mean of micro-batch means, loss / {k}, would be off by "
             f"{res.naive_abs_diff:.2e})")

    strict_run = TrainRun("zero_grad() every step, sanitizer on")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        with strict(opt, params=model, accumulate=k) as sanitizer:
            strict_run.losses = _train(model, opt, x_tr, y_tr, batches, k, strict_run.name,
                                       first_step=check_first)
        strict_run.seconds = time.perf_counter() - t0
    strict_run.accuracy = _accuracy(model, x_te, y_te)
    res.runs.append(strict_run)
    flagged = [str(w.message) for w in caught
               if w.category.__module__.startswith("gradsum.toolkit")]
    windows = {r.backward_calls for r in sanitizer.reports}
    _say(f"  strict mode: {sanitizer.steps} steps checked, each fed by "
         f"{'/'.join(map(str, sorted(windows)))} backward passes; "
         + ("nothing stale, no graph in .grad, no leak" if not flagged
            else f"{len(flagged)} warning(s): {flagged[0]}"))
    _say(f"  test accuracy {strict_run.accuracy:.1%}")
    if not res.max_abs_diff <= 1e-5:
        res.problems.append(f"accumulated != full-batch gradient ({res.max_abs_diff:.3g})")

    # 2. the same with zero_grad() forgotten, strict mode on -----------------------------------
    _say("")
    _say("[2] the same training with optimizer.zero_grad() forgotten, sanitizer on")
    model_b = _model(seed)
    opt_b = optim.Adam(model_b.parameters(), lr=lr)
    with strict(opt_b, params=model_b, accumulate=k) as sanitizer_b:
        try:
            _train(model_b, opt_b, x_tr, y_tr, batches, k, "zero_grad() forgotten",
                   zero_grad=False, stop_after=min(steps, 2), ledger=sanitizer_b.ledger)
        except StaleGradientError as e:
            res.stale_error = str(e)
    if res.stale_error:
        _say("  the sanitizer stopped it (parameters untouched by the failed step):")
        for para in f"StaleGradientError: {res.stale_error}".splitlines():
            _say(textwrap.fill(para, width=98, initial_indent="  | ", subsequent_indent="  | ",
                               break_on_hyphens=False, break_long_words=False))
    elif steps < 2:
        _say("  (needs --steps 2 or more: the forgotten zero_grad() shows at step 2)")
    else:
        res.problems.append("the sanitizer did not raise StaleGradientError")
        _say("  ERROR: the sanitizer did not raise StaleGradientError")

    # 3. sanitizer off: both ways -------------------------------------------------------------
    _say("")
    _say("[3] sanitizer off: both ways, from the same initial weights and batches")
    runs: list[TrainRun] = []
    for forget in (False, True):
        r = TrainRun("zero_grad() forgotten, sanitizer off" if forget
                     else "zero_grad() every step, sanitizer off")
        m = _model(seed)
        o = optim.Adam(m.parameters(), lr=lr)
        t0 = time.perf_counter()
        try:
            r.losses = _train(m, o, x_tr, y_tr, batches, k, r.name, zero_grad=not forget)
        except StaleGradientError:  # GRADSUM_STRICT=1 turns strict mode on everywhere
            _say("  GRADSUM_STRICT=1 is set: strict mode is on for every optimizer and stopped "
                 "this run at step 2; unset it to see the silent failure")
        r.seconds = time.perf_counter() - t0
        r.accuracy = _accuracy(m, x_te, y_te)
        runs.append(r)
    res.runs.extend(runs)
    good, bad = runs[0].losses, runs[1].losses
    same = max((abs(a - b) for a, b in zip(good, strict_run.losses)), default=0.0)
    _say(f"  zero_grad() every step, sanitizer on vs off: max loss difference {same:.1g} "
         "(the checks change no number)")
    if same != 0.0:
        res.problems.append(f"strict mode changed the loss curve ({same:.3g})")
    lo = min([*good, *bad]) if bad else min(good)
    hi = max([*good, *bad]) if bad else max(good)
    _say(f"  loss curves ({steps} steps in {min(40, steps)} characters; loss from {lo:.3f} "
         f"to {hi:.3f}):")
    _say(f"    zero_grad() every step  {_sparkline(good, lo, hi)}  "
         f"test accuracy {runs[0].accuracy:.1%}")
    _say(f"    zero_grad() forgotten   {_sparkline(bad, lo, hi)}  "
         f"test accuracy {runs[1].accuracy:.1%}")
    marks = sorted({1, *(max(1, round(steps * q / 5)) for q in range(1, 6))})
    _table("loss by step (full-batch mean cross-entropy)",
           ["step", "zero_grad() every step", "zero_grad() forgotten"],
           [[str(s), f"{good[s - 1]:.4f}",
             f"{bad[s - 1]:.4f}" if s <= len(bad) else "-"] for s in marks], indent=2)
    _write_curves(out, steps, good, bad, (runs[0].accuracy, runs[1].accuracy), plots,
                  res.files)

    # 4. graph picture and checkpoint ---------------------------------------------------------
    _say("")
    _say("[4] the model's graph and a checkpoint")
    _write_graph(out, model, x_tr, y_tr, plots, res.files)
    ckpt = os.path.join(out, "model.pt")
    gradsum.save({"model": model.state_dict(), "steps": steps, "seed": seed}, ckpt)
    res.files.append("model.pt")
    fresh = _model(seed + 1)
    before = _accuracy(fresh, x_te, y_te)
    state = gradsum.load(ckpt)
    fresh.load_state_dict(state["model"])
    res.reload_accuracy = _accuracy(fresh, x_te, y_te)
    same_acc = res.reload_accuracy == strict_run.accuracy
    _say(f"  checkpoint: {_shown(ckpt)} ({os.path.getsize(ckpt)} bytes)")
    _say(f"  reloaded into a fresh model (test accuracy {before:.1%} before loading): "
         f"test accuracy {res.reload_accuracy:.1%}, "
         + ("same as the trained model" if same_acc else "DIFFERENT from the trained model"))
    if not same_acc:
        res.problems.append("the reloaded model's accuracy differs")

    # 5. summary ------------------------------------------------------------------------------
    res.seconds = time.perf_counter() - t_start
    summary = {
        "seed": seed, "steps": steps, "micro_batches": k, "batch_size": batch_size, "lr": lr,
        "max_abs_diff_step1": res.max_abs_diff, "naive_abs_diff_step1": res.naive_abs_diff,
        "stale_gradient_error": res.stale_error,
        "runs": [{"name": r.name, "steps": len(r.losses), "final_loss": r.final_loss,
                  "test_accuracy": r.accuracy, "seconds": round(r.seconds, 3)}
                 for r in res.runs],
        "reload_accuracy": res.reload_accuracy,
    }
    with open(os.path.join(out, "summary.json"), "w") as fh:
        json.dump(summary, fh, indent=2)
    res.files.append("summary.json")
    _say("")
    rows = [[r.name, str(len(r.losses)), f"{r.final_loss:.4f}", f"{r.accuracy:.1%}",
             f"{r.seconds:.2f}"] for r in res.runs]
    if res.reload_accuracy is not None:
        rows.append(["model reloaded from the checkpoint", "-", "-",
                     f"{res.reload_accuracy:.1%}", "-"])
    _table("results", ["run", "steps", "loss (last 10%)", "test accuracy", "time (s)"], rows)
    tail = max(1, steps // 10)
    _say(f"loss (last 10%): the mean of the steps' losses over the last {tail} of {steps} steps")
    res.ok = not res.problems and (bool(res.stale_error) or steps < 2)
    _say(f"files in {_shown(out)}: {', '.join(sorted(res.files))}")
    if res.ok:
        _say(f"all checks passed in {res.seconds:.1f} s")
    else:
        _say("FAILED: " + "; ".join(res.problems or ["see above"]))
    return res


if __name__ == "__main__":
    sys.exit(main())
