"""The ``gradsum`` command line: ``gradsum <subcommand> ...``.

Subcommands live in :data:`SUBCOMMANDS` (name -> (help, add_arguments, run)); adding one is
one entry there. :func:`main` gives every subcommand the manners of a Unix tool: a usage error
exits 2 with the subcommand's usage, an interrupt (Ctrl-C) exits 130 with one line on stderr,
and output cut short by the reader (``gradsum demo | head -3``) ends the command quietly with
the status 141 (128 + SIGPIPE) that a shell reports for a tool stopped by a closed pipe.

Example:
    >>> from gradsum.__main__ import SUBCOMMANDS
    >>> "run" in SUBCOMMANDS
    True
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

#: the first line of ``gradsum --help``
DESCRIPTION = "gradsum: a NumPy autograd with PyTorch's gradient semantics."
#: exit status after an interrupt (128 + SIGINT), as a shell reports it
EXIT_INTERRUPTED = 130
#: exit status when the reader closed the output (128 + SIGPIPE), as a shell reports it
EXIT_BROKEN_PIPE = 141


def _run_args(p: argparse.ArgumentParser) -> None:
    from gradsum.distributed.run import add_arguments

    add_arguments(p)


def _run(args: argparse.Namespace) -> int:
    from gradsum.distributed.run import launch

    return launch(args)


def _demo_args(p: argparse.ArgumentParser) -> None:
    from gradsum.demo import add_arguments

    add_arguments(p)


def _demo(args: argparse.Namespace) -> int:
    from gradsum.demo import run

    return run(args)


#: name -> (one-line help, fn(parser) adding its arguments, fn(args) -> exit status)
SUBCOMMANDS: dict[
    str,
    tuple[str, Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]],
] = {
    "run": ("run a script (a PyTorch script as written: import torch resolves to gradsum), "
            "on N MPI ranks with -n N", _run_args, _run),
    "demo": ("train a digits classifier with micro-batched accumulation; show a forgotten "
             "zero_grad", _demo_args, _demo),
}


class _Version(argparse.Action):
    """``--version``: imports gradsum only when asked (``--help`` stays light)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS,
                 **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="print gradsum's version and exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> NoReturn:
        from gradsum import __version__

        print(f"gradsum {__version__}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with one sub-parser per entry of :data:`SUBCOMMANDS`."""
    return _build()[0]


def _build() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    parser = argparse.ArgumentParser(prog="gradsum", description=DESCRIPTION)
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    subparsers = {}
    for name, (help_, add_args, _) in SUBCOMMANDS.items():
        subparsers[name] = sub.add_parser(name, help=help_, description=help_)
        add_args(subparsers[name])
    return parser, subparsers


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``gradsum`` console script; returns the exit status."""
    parser, subparsers = _build()
    args, extra = parser.parse_known_args(argv)
    sub = subparsers[args.command]
    if extra:  # argparse would show the top-level usage; the subcommand's is the useful one
        sub.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        status = int(SUBCOMMANDS[args.command][2](args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, not as a warning at exit
    except KeyboardInterrupt:
        print(f"{sub.prog}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader is gone (head, a closed pager): stop quietly, as a Unix tool does. What
        # is still buffered cannot be written; point stdout at /dev/null so that the flush at
        # exit does not report the closed pipe again.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):  # no file descriptor (stdout replaced in-process)
            pass
        return EXIT_BROKEN_PIPE
    return status


if __name__ == "__main__":
    sys.exit(main())
