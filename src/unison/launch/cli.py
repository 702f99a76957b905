"""``unison launch``: start the processes of a multi-worker job (a front of ``torch.distributed.run``).

torchrun's elastic agent does the work: it starts ``--nproc-per-node`` processes on this node,
runs the rendezvous with the other nodes, watches the processes and, with ``--max-restarts K``,
restarts the whole group up to K times when one of them fails (``BackupAndRestore`` then resumes
training). ``--tf-config`` instead gives each local process its own ``TF_CONFIG`` (a cluster of
``--nproc-per-node`` workers on 127.0.0.1), to try a multi-worker program on one machine exactly
as it will run on a real cluster.

Examples::

    unison launch --nproc-per-node 2 train.py --epochs 5
    unison launch --nproc-per-node 4 --nnodes 2 --node-rank 0 --master 10.0.0.1:29500 train.py
    unison launch --nproc-per-node 2 --max-restarts 3 train.py
    unison launch --tf-config --nproc-per-node 2 train.py
    unison launch --nproc-per-node 3 --min-workers 2 --max-workers 4 train.py   # elastic, in place

``--min-workers``/``--max-workers`` run :mod:`unison.launch.elastic_agent` instead of torchrun:
workers that are lost are not restarted, the survivors re-form in place (``hvd.elastic.run``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from unison.cluster.secret import launcher_secret_env
from unison.cluster.spec import parse_address
from unison.debug.timeline import ENV_TIMELINE, merge
from unison.launch.tf_config_entry import ENV_TF_CONFIG_CLUSTER


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``unison launch``."""
    parser.add_argument(
        "--nproc-per-node",
        type=int,
        default=1,
        metavar="N",
        help="processes (replicas) to start on this node (default 1)",
    )
    parser.add_argument("--nnodes", type=int, default=1, metavar="M", help="nodes in the job (default 1)")
    parser.add_argument("--node-rank", type=int, default=0, metavar="R", help="this node's index in [0, M) (default 0)")
    parser.add_argument(
        "--master", default=None, metavar="ADDR:PORT", help="node 0's rendezvous address (required with --nnodes > 1)"
    )
    parser.add_argument(
        "--max-restarts",
        type=int,
        default=0,
        metavar="K",
        help="restart the whole job up to K times when a process fails (default 0)",
    )
    parser.add_argument(
        "--min-workers",
        type=int,
        default=None,
        metavar="A",
        help="elastic job: keep going while at least A workers remain; lost workers are not restarted, "
        "the survivors re-form in place (hvd.elastic.run)",
    )
    parser.add_argument(
        "--max-workers", type=int, default=None, metavar="B", help="elastic job: at most B workers (default: A)"
    )
    parser.add_argument(
        "--host-discovery-script",
        default=None,
        metavar="PATH",
        help="elastic job: a program printing 'localhost:SLOTS'; more slots start more workers (Horovod's option)",
    )
    parser.add_argument(
        "--elastic-timeout",
        type=float,
        default=600.0,
        metavar="S",
        help="elastic job: seconds to wait for --min-workers slots at start (default 600)",
    )
    parser.add_argument(
        "--tf-config", action="store_true", help="give each local process its own TF_CONFIG (workers on 127.0.0.1)"
    )
    parser.add_argument(
        "--timeline",
        default=None,
        metavar="PATH",
        help="write a Chrome/Perfetto trace of every local process to PATH (JSON trace events, merged at the end)",
    )
    parser.add_argument("-m", "--module", action="store_true", help="run SCRIPT as a module, like python -m")
    parser.add_argument("script", metavar="SCRIPT", help="the training script (or module with -m)")
    parser.add_argument("script_args", nargs=argparse.REMAINDER, metavar="...", help="arguments of the script")


def _check(args: Any) -> None:
    for name, low in (("nproc_per_node", 1), ("nnodes", 1), ("node_rank", 0), ("max_restarts", 0)):
        value = getattr(args, name)
        if value < low:
            flag = "--" + name.replace("_", "-")
            raise ValueError(f"{flag} must be >= {low}. Received: {flag} {value}")
    if args.node_rank >= args.nnodes:
        raise ValueError(
            f"--node-rank must be in [0, --nnodes). Received: --node-rank {args.node_rank} with --nnodes {args.nnodes}"
        )
    if args.nnodes > 1 and not args.master:
        raise ValueError("--nnodes > 1 needs --master ADDR:PORT, the address of node 0 (the same on every node).")
    if args.master:
        parse_address(args.master, "--master")
    if args.tf_config and args.nnodes > 1:
        raise ValueError(
            "--tf-config starts workers on this machine only. On several hosts give "
            "each process its own TF_CONFIG, or use --nnodes/--master without --tf-config."
        )
    _check_elastic(args)
    if not args.module and not os.path.exists(args.script):
        raise ValueError(f"No such script: {args.script!r}. Pass the path of the training script (or -m for a module).")


def _check_elastic(args: Any) -> None:
    """The elastic options: coherent with each other and with the rest (one host, no restarts)."""
    elastic = any(getattr(args, n, None) is not None for n in ("min_workers", "max_workers", "host_discovery_script"))
    if not elastic:
        return
    if args.min_workers is None:
        args.min_workers = 1
    if args.max_workers is None:
        args.max_workers = max(args.min_workers, args.nproc_per_node)
    if args.min_workers < 1:
        raise ValueError(f"--min-workers must be >= 1. Received: --min-workers {args.min_workers}")
    if args.max_workers < args.min_workers:
        raise ValueError(
            f"--max-workers must be >= --min-workers. Received: --min-workers {args.min_workers} "
            f"--max-workers {args.max_workers}"
        )
    if args.nnodes > 1 or args.master or args.tf_config or args.max_restarts:
        raise ValueError(
            "--min-workers/--max-workers run an elastic job on this host, which re-forms in place instead of "
            "restarting: drop --nnodes/--master/--tf-config/--max-restarts (or drop the elastic options)."
        )
    if not args.host_discovery_script and args.min_workers > args.nproc_per_node:
        raise ValueError(
            f"--min-workers {args.min_workers} is more than the {args.nproc_per_node} worker(s) available "
            f"(--nproc-per-node {args.nproc_per_node}): the job could never start. Fix: --nproc-per-node "
            f">= {args.min_workers}, a lower --min-workers, or a --host-discovery-script that reports more slots."
        )
    if args.elastic_timeout <= 0:
        raise ValueError(f"--elastic-timeout must be > 0. Received: --elastic-timeout {args.elastic_timeout}")


def torchrun_argv(args: Any, free_ports: list[int] | None = None) -> tuple[list[str], dict[str, str]]:
    """The ``torch.distributed.run`` arguments for ``args``, and the environment to add."""
    argv = [
        "--nproc-per-node",
        str(args.nproc_per_node),
        "--max-restarts",
        str(args.max_restarts),
        "--monitor-interval",
        "0.1",
    ]
    env: dict[str, str] = {}
    if args.master:
        host, port = parse_address(args.master, "--master")
        argv += [
            "--nnodes",
            str(args.nnodes),
            "--node-rank",
            str(args.node_rank),
            "--master-addr",
            host,
            "--master-port",
            str(port),
        ]
    else:
        argv += ["--standalone"]
    program = (["-m"] if args.module else []) + [args.script, *args.script_args]
    if args.tf_config:
        ports = free_ports or []
        env[ENV_TF_CONFIG_CLUSTER] = json.dumps({"worker": [f"127.0.0.1:{p}" for p in ports]})
        return argv + ["-m", "unison.launch.tf_config_entry", *program], env
    return argv + program, env


def run(args: Any) -> int:
    """Run ``unison launch``; returns the exit status (1 if a process failed for good)."""
    try:
        _check(args)
    except ValueError as exc:
        sys.stderr.write(f"unison launch: error: {exc}\n")
        return 2
    if getattr(args, "min_workers", None) is not None:
        from unison.launch.elastic_agent import run_elastic

        return run_elastic(args)
    import torch.distributed.run as torchrun
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    from torch.distributed.elastic.utils.distributed import get_free_port

    ports = [get_free_port() for _ in range(args.nproc_per_node)] if args.tf_config else None
    argv, env = torchrun_argv(args, ports)
    os.environ.update(env)
    if not args.master:
        # One host: its replicas sign what they put in torchrun's store (the shared-memory vote)
        # with a secret only they hold. Across hosts, UNISON_CLUSTER_TOKEN is that secret.
        os.environ.update(launcher_secret_env())
    if args.timeline:
        # every replica records and writes <PATH>.rank<R>.json; merged below once all have exited
        os.environ[ENV_TIMELINE] = os.path.abspath(args.timeline)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    # torchrun would print a banner and pick 1; an equal share of the cores is what unison does.
    os.environ.setdefault("OMP_NUM_THREADS", str(max(1, cores // args.nproc_per_node)))
    try:
        torchrun.main(argv)
    except ChildFailedError as exc:
        sys.stderr.write(f"unison launch: the job failed.\n{exc}\n")
        return 1
    finally:
        if args.timeline and args.nnodes == 1:  # this node holds every rank's file
            merge(os.path.abspath(args.timeline), args.nproc_per_node, wait_s=0.0)
    return 0
