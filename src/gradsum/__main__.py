"""The ``gradsum`` command line: ``gradsum <subcommand> ...``.

Subcommands live in :data:`SUBCOMMANDS` (name -> (help, add_arguments, run)); adding one is
one entry there.

Example:
    >>> from gradsum.__main__ import SUBCOMMANDS
    >>> "run" in SUBCOMMANDS
    True
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence


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
    "run": ("run a script on N MPI ranks (data-parallel training)", _run_args, _run),
    "demo": ("train a digits classifier with micro-batched accumulation; show a forgotten "
             "zero_grad", _demo_args, _demo),
}


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with one sub-parser per entry of :data:`SUBCOMMANDS`."""
    parser = argparse.ArgumentParser(prog="gradsum", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, (help_, add_args, _) in SUBCOMMANDS.items():
        add_args(sub.add_parser(name, help=help_, description=help_))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``gradsum`` console script; returns the exit status."""
    args = build_parser().parse_args(argv)
    return int(SUBCOMMANDS[args.command][2](args) or 0)


if __name__ == "__main__":
    sys.exit(main())
