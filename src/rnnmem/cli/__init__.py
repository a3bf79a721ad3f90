"""The book's command line, ``python -m rnnmem COMMAND``.

Each command is a module of this package that defines

* ``NAME``: the word typed after ``python -m rnnmem``;
* ``HELP``: one line for the list of commands;
* ``configure(parser)``: adds its options to an :class:`argparse.ArgumentParser`;
* ``run(args) -> int``: does the work and returns the exit status.

Every module here is found by :func:`commands`, so a new command is one new
file. A ``NAME`` of two words (``"lab sweep"``) is a command of its own under
the first word's command: ``python -m rnnmem lab sweep ...`` runs it, with its
own options and usage. Bad input exits with status 2 and the usage, as argparse does; a
``ValueError`` from the package is reported the same way, naming the argument.
The command line needs numpy only, like the rest of the core.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence
from types import ModuleType

__all__ = ["commands", "build_parser", "main"]


def commands() -> dict[str, ModuleType]:
    """Every command module of this package, by its ``NAME``, in alphabetical order.

    >>> all(callable(m.run) and callable(m.configure) for m in commands().values())
    True
    """
    found: dict[str, ModuleType] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        name = module.NAME
        if name in found:
            raise RuntimeError(f"two commands are named {name!r}: {found[name].__name__} and {module.__name__}")
        found[name] = module
    return dict(sorted(found.items()))


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The top-level parser and one parser per command (a two-word command's parser stands alone).

    >>> parser, parsers = build_parser()
    >>> parser.prog, sorted(parsers) == sorted(commands()), parsers["lab sweep"].prog
    ('python -m rnnmem', True, 'python -m rnnmem lab sweep')
    """
    parser = argparse.ArgumentParser(
        prog="python -m rnnmem",
        description="Why recurrent networks forget: the book's computations from the command line.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    parsers = {}
    for name, module in commands().items():
        options: dict = {
            "description": getattr(module, "DESCRIPTION", module.HELP),
            "formatter_class": argparse.RawDescriptionHelpFormatter,
        }
        if " " in name:
            p = argparse.ArgumentParser(prog=f"{parser.prog} {name}", **options)
            p.set_defaults(command=name)
        else:
            p = sub.add_parser(name, help=module.HELP, **options)
        module.configure(p)
        parsers[name] = p
    return parser, parsers


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (default: ``sys.argv[1:]``), run the command, return its exit status.

    Without a command, argparse prints the usage to standard error and exits with status 2:

    >>> try:
    ...     main([])
    ... except SystemExit as exc:
    ...     print(exc.code)
    2
    """
    parser, parsers = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    nested = " ".join(argv[:2])
    args = parsers[nested].parse_args(argv[2:]) if " " in nested and nested in parsers else parser.parse_args(argv)
    module = commands()[args.command]
    try:
        return int(module.run(args) or 0)
    except ValueError as exc:
        parsers[args.command].print_usage(sys.stderr)
        print(f"{parsers[args.command].prog}: error: {exc}", file=sys.stderr)
        return 2
