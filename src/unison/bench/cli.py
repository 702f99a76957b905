"""The ``unison bench`` command line (also ``python -m unison.bench``).

Example::

    unison bench --model cnn --dataset mnist --replicas 1,2 --epochs 1 --baseline ddp,tensorflow
    unison bench --model mlp --dataset synthetic --replicas 1,2 --samples 4000 --repeats 1
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from unison.bench import config as cfg
from unison.bench.data import DATASETS

DESCRIPTION = (
    "Train the same model on 1, 2, ... replicas (one process each, started as a user starts "
    "them) and compare time per epoch, samples/s, scaling efficiency, peak memory and final "
    "accuracy, beside torchrun + DDP and TensorFlow's MirroredStrategy."
)
EPILOG = (
    "Writes results.json, results.csv and results.png (with matplotlib: pip install 'unison[plot]') "
    "to --out, and each run's output to --out/logs. The TensorFlow baseline runs when tensorflow "
    f"imports in this Python, or with the Python named by ${cfg.ENV_TF_PYTHON}. "
    "See docs/benchmarking.md for how to read the numbers."
)


def _arg_type(parse: Callable[[str], object]) -> Callable[[str], object]:
    """Turn a ValueError of ``parse`` into argparse's 'unison bench: error: ...' line."""

    def convert(text: str) -> object:
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = parse.__name__
    return convert


def _int_at_least(low: int, name: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < low:
            raise ValueError(f"{name} must be an integer >= {low}. Received: {name} {text!r}")
        return value

    parse.__name__ = name
    return parse


def _model(text: str) -> str:
    from unison.bench.models import check_name

    return check_name(text)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare ``unison bench``'s options on ``parser``."""
    parser.description = DESCRIPTION
    parser.epilog = EPILOG
    parser.add_argument(
        "--model",
        type=_arg_type(_model),
        default="cnn",
        help="cnn (Keras MNIST convnet), mlp (the seed program's model), or "
        "package.module:factory returning a unison.keras model (default: cnn)",
    )
    parser.add_argument(
        "--dataset",
        choices=DATASETS,
        default="mnist",
        help="mnist / fashion_mnist ($UNISON_DATA_DIR, cache or download) or "
        "synthetic (MNIST-shaped, generated; default: mnist)",
    )
    parser.add_argument(
        "--replicas",
        type=_arg_type(cfg.parse_replicas),
        default=[1, 2],
        help="replica counts, comma-separated (default: 1,2)",
    )
    parser.add_argument(
        "--strategy", choices=cfg.STRATEGIES, default="mirrored", help="unison's strategy (default: mirrored)"
    )
    parser.add_argument("--epochs", type=_arg_type(_int_at_least(1, "--epochs")), default=1)
    parser.add_argument(
        "--batch-size",
        type=_arg_type(_int_at_least(1, "--batch-size")),
        default=128,
        help="global batch, split across replicas (default: 128)",
    )
    parser.add_argument(
        "--repeats",
        type=_arg_type(_int_at_least(1, "--repeats")),
        default=3,
        help="runs of each system and replica count; medians are reported (default: 3)",
    )
    parser.add_argument(
        "--samples",
        type=_arg_type(_int_at_least(1, "--samples")),
        default=None,
        help="keep only this many training samples (validation: 1/6 as many)",
    )
    parser.add_argument(
        "--baseline",
        type=_arg_type(cfg.parse_baselines),
        default=[],
        help="also measure ddp and/or tensorflow, comma-separated (default: none)",
    )
    parser.add_argument("--out", default="results", help="folder for the results (default: results/)")
    parser.add_argument(
        "--timeout",
        type=_arg_type(_int_at_least(1, "--timeout")),
        default=1800,
        help="seconds one run may take before it is stopped (default: 1800)",
    )


def config_from_args(args: argparse.Namespace) -> cfg.BenchConfig:
    """The checked :class:`~unison.bench.config.BenchConfig` of parsed arguments."""
    from unison.bench.config import resolve_device

    return cfg.BenchConfig(
        model=args.model,
        dataset=args.dataset,
        replicas=list(args.replicas),
        strategy=args.strategy,
        epochs=args.epochs,
        batch_size=args.batch_size,
        repeats=args.repeats,
        samples=args.samples,
        baselines=list(args.baseline),
        out=args.out,
        device=resolve_device(list(args.replicas)),
        timeout_s=float(args.timeout),
    )


def run(args: argparse.Namespace) -> int:
    """Run ``unison bench``; the exit status (2: bad input, 1: a run failed, 0: all good)."""
    from unison.bench.core import run_bench

    try:
        config = config_from_args(args)
        return run_bench(config, say=lambda line: print(line, flush=True))
    except (ValueError, TypeError) as exc:  # bad options, missing data: one clear message, no traceback
        print(f"unison bench: error: {exc}", file=sys.stderr, flush=True)
        return 2


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m unison.bench ...``."""
    parser = argparse.ArgumentParser(prog="unison bench")
    add_arguments(parser)
    return run(parser.parse_args(argv))
