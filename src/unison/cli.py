"""The ``unison`` command: one entry point, one sub-command per module that owns it.

Example::

    unison --version
    unison bench --help
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# sub-command -> module with ``add_arguments(parser)`` and ``run(args) -> int``
SUBCOMMANDS = {
    "bench": ("unison.bench.cli", "time one device against several, side by side"),
    "launch": ("unison.launch.cli", "start the processes of a multi-replica job"),
    "doctor": ("unison.launch.doctor", "check a multi-worker cluster (ports, reachability, versions, clocks, links)"),
    "server": ("unison.distribute.parameter_server.server", "run a ps or worker task of a parameter-server cluster"),
    "token": ("unison.comm.token_cli", "print a fresh cluster token for UNISON_CLUSTER_TOKEN"),
    "certs": ("unison.comm.certs", "make a CA and TLS certificates for the tasks of a cluster"),
}


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` and run the chosen sub-command; returns the exit status."""
    from unison import __version__

    parser = argparse.ArgumentParser(prog="unison", description="unison: tf.distribute on PyTorch")
    parser.add_argument("--version", action="version", version=f"unison {__version__}")
    subs = parser.add_subparsers(dest="command", metavar="COMMAND")
    available = {}
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue  # that sub-command is not built yet
        sub = subs.add_parser(name, help=help_text, description=help_text)
        module.add_arguments(sub)
        available[name] = module
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        sub_parser = subs.choices.get(args.command) if args.command else parser
        _unknown_options(sub_parser or parser, unknown)
    if args.command is None:
        parser.print_help()
        return 2
    return int(available[args.command].run(args) or 0)


def _unknown_options(parser: argparse.ArgumentParser, unknown: Sequence[str]) -> None:
    """argparse's "unrecognized arguments" error, with the closest option each one may have meant."""
    import difflib

    options = [o for action in parser._actions for o in action.option_strings]
    hints = []
    for item in unknown:
        flag = item.split("=", 1)[0]
        close = difflib.get_close_matches(flag, options, n=1, cutoff=0.6) if flag.startswith("-") else []
        if close:
            hints.append(f"{flag!r}: did you mean {close[0]!r}?")
    message = "unrecognized arguments: " + " ".join(unknown)
    if hints:
        message += " (" + "; ".join(hints) + ")"
    parser.error(message + f". See `{parser.prog} --help`.")


if __name__ == "__main__":
    sys.exit(main())
