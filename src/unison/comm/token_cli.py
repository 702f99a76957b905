"""``unison token``: print a fresh cluster token (256 bits, hex) for ``UNISON_CLUSTER_TOKEN``.

Example::

    export UNISON_CLUSTER_TOKEN=$(unison token)
"""

from __future__ import annotations

import argparse

from unison.comm.auth import generate_token


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Print a fresh random cluster token (64 hex digits, 256 bits). Set UNISON_CLUSTER_TOKEN "
        "to it on every task of the cluster: export UNISON_CLUSTER_TOKEN=$(unison token)"
    )


def run(args: argparse.Namespace) -> int:
    print(generate_token())
    return 0
