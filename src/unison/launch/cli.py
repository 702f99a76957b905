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
    unison launch --min-workers 2 --max-workers 4 --master 10.0.0.1:29400 --host-discovery-script ./hosts.sh \
        --host-exec 'ssh -o BatchMode=yes {host}' train.py   # elastic across hosts (UNISON_CLUSTER_TOKEN set)

torchrun's spellings (``--nproc_per_node=2``, ``--nnodes``, ``--node_rank``, ``--master_addr``/
``--master_port``, ``--rdzv_backend``/``--rdzv_endpoint``/``--rdzv_id``/``--rdzv_conf``,
``--max_restarts``, ``--standalone``) and horovodrun's (``-np 2``, ``-H localhost:2``) are accepted::

    unison launch --nproc_per_node=2 train.py
    unison launch -np 2 train.py
    unison launch --nnodes=2 --nproc_per_node=4 --rdzv_backend=c10d --rdzv_endpoint=10.0.0.1:29400 train.py

Each process's stderr is also copied to ``rank<R>.log`` in a private temporary folder. A failed
job ends with one paragraph per failed rank (how it ended: exit code or signal; its last stderr
lines; its log's path), the rank that failed first named first; the folder is then kept, and
removed after a successful job. SIGTERM or Ctrl-C stops every local process and prints one line.

``--min-workers``/``--max-workers`` run :mod:`unison.launch.elastic_agent` instead of torchrun:
workers that are lost are not restarted, the survivors re-form in place (``hvd.elastic.run``);
with ``--master`` and ``--host-exec`` the agent also starts workers on the hosts the discovery
script names.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import signal
import socket
import sys
import tempfile
from typing import Any

from unison.cluster.secret import ENV_CLUSTER_TOKEN, cluster_secret, launcher_secret_env
from unison.cluster.spec import parse_address
from unison.debug.timeline import ENV_TIMELINE, merge
from unison.launch.failures import from_child_failed_error, summary
from unison.launch.rank_entry import ENV_LOG_DIR
from unison.launch.tf_config_entry import ENV_TF_CONFIG_CLUSTER

RANK_ENTRY = "unison.launch.rank_entry"


def _nproc(value: str) -> int:
    """torchrun's ``--nproc-per-node``: a count, or ``gpu``/``cpu``/``auto``."""
    if value in ("gpu", "cpu", "auto"):
        import torch

        gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if value == "gpu" and gpus == 0:
            raise argparse.ArgumentTypeError("'gpu' asked for one process per GPU, but no GPU is visible")
        return gpus if value == "gpu" or (value == "auto" and gpus) else (os.cpu_count() or 1)
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of processes (or gpu/cpu/auto); got {value!r}") from None


def _nnodes(value: str) -> int:
    """torchrun's ``--nnodes``: ``M`` or ``M:M`` (an elastic range ``A:B`` is torchrun's alone)."""
    low, _, high = value.partition(":")
    try:
        counts = (int(low), int(high or low))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of nodes; got {value!r}") from None
    if counts[0] != counts[1]:
        raise argparse.ArgumentTypeError(
            f"an elastic node range ({value}) is not supported by unison launch; give a fixed --nnodes, or "
            "use --min-workers/--max-workers for an elastic job (--master/--host-exec across hosts)"
        )
    return counts[0]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``unison launch`` (torchrun's and horovodrun's spellings are accepted too)."""
    parser.add_argument(
        "--nproc-per-node",
        "--nproc_per_node",
        "-np",
        "--num-proc",
        dest="nproc_per_node",
        type=_nproc,
        default=None,
        metavar="N",
        help="processes (replicas) to start on this node (default 1; horovodrun's -np, torchrun's gpu/cpu/auto)",
    )
    parser.add_argument(
        "-H",
        "--hosts",
        default=None,
        metavar="HOST:SLOTS,...",
        help="horovodrun's host list; on this host only (localhost:SLOTS): starts SLOTS processes",
    )
    parser.add_argument("--nnodes", type=_nnodes, default=1, metavar="M", help="nodes in the job (default 1)")
    parser.add_argument(
        "--node-rank",
        "--node_rank",
        dest="node_rank",
        type=int,
        default=0,
        metavar="R",
        help="this node's index in [0, M) (default 0)",
    )
    parser.add_argument(
        "--master", default=None, metavar="ADDR:PORT", help="node 0's rendezvous address (required with --nnodes > 1)"
    )
    parser.add_argument("--master-addr", "--master_addr", dest="master_addr", default=None, help=argparse.SUPPRESS)
    parser.add_argument(
        "--master-port", "--master_port", dest="master_port", type=int, default=None, help=argparse.SUPPRESS
    )
    parser.add_argument(
        "--rdzv-backend", "--rdzv_backend", dest="rdzv_backend", default=None, help="torchrun's rendezvous backend"
    )
    parser.add_argument(
        "--rdzv-endpoint",
        "--rdzv_endpoint",
        dest="rdzv_endpoint",
        default=None,
        metavar="HOST:PORT",
        help="torchrun's rendezvous endpoint (instead of --master)",
    )
    parser.add_argument("--rdzv-id", "--rdzv_id", dest="rdzv_id", default=None, help="torchrun's rendezvous job id")
    parser.add_argument("--rdzv-conf", "--rdzv_conf", dest="rdzv_conf", default=None, help="torchrun's --rdzv-conf")
    parser.add_argument("--standalone", action="store_true", help="torchrun's flag; one node is the default here")
    parser.add_argument(
        "--max-restarts",
        "--max_restarts",
        dest="max_restarts",
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
        help="elastic job: a program printing 'HOST:SLOTS' lines; more slots start more workers (Horovod's option)",
    )
    parser.add_argument(
        "--host-exec",
        default=None,
        metavar="TEMPLATE",
        help="elastic job across hosts: the command that runs a worker on {host} (e.g. 'ssh -o BatchMode=yes "
        "{host}'); needs --master CHIEF_ADDR:PORT and UNISON_CLUSTER_TOKEN on every host",
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


def _local_slots(hosts: str) -> int:
    """The processes horovodrun's ``-H host:slots,...`` asks for, all on this host."""
    local = {"localhost", "127.0.0.1", socket.gethostname(), socket.getfqdn()}
    total = 0
    remote = []
    for item in hosts.split(","):
        host, _, slots = item.strip().partition(":")
        try:
            count = int(slots) if slots else 1
        except ValueError:
            raise ValueError(f"-H expects host:slots entries. Received: -H {hosts!r}") from None
        if host not in local:
            remote.append(host)
        total += count
    if remote:
        raise ValueError(
            f"-H names other hosts ({', '.join(remote)}): unison launch does not log in to other machines as "
            "horovodrun does over ssh. Run on each host `unison launch --nnodes M --node-rank R "
            "--master HOST0:PORT --nproc-per-node SLOTS script.py` (the same --master everywhere)."
        )
    return total


def _normalize(args: Any) -> None:
    """Fold torchrun's and horovodrun's spellings into unison's options (in place)."""
    hosts = getattr(args, "hosts", None)
    if hosts:
        slots = _local_slots(hosts)
        if args.nproc_per_node is None:
            args.nproc_per_node = slots
        elif args.nproc_per_node > slots:
            raise ValueError(
                f"-np {args.nproc_per_node} asks for more processes than -H {hosts} has slots ({slots}). "
                f"Fix: -np <= {slots}, or more slots in -H."
            )
    if args.nproc_per_node is None:
        args.nproc_per_node = 1
    addr, port = getattr(args, "master_addr", None), getattr(args, "master_port", None)
    if addr or port:
        if args.master:
            raise ValueError("Give either --master ADDR:PORT or --master-addr/--master-port, not both.")
        args.master = f"{addr or '127.0.0.1'}:{port or 29500}"
    if getattr(args, "rdzv_endpoint", None) and args.master:
        raise ValueError(
            "Give either --master (static rendezvous) or --rdzv-endpoint (torchrun's dynamic one), not both. "
            f"Received: --master {args.master} --rdzv-endpoint {args.rdzv_endpoint}"
        )


def _check(args: Any) -> None:
    _normalize(args)
    for name, low in (("nproc_per_node", 1), ("nnodes", 1), ("node_rank", 0), ("max_restarts", 0)):
        value = getattr(args, name)
        if value < low:
            flag = "--" + name.replace("_", "-")
            raise ValueError(f"{flag} must be >= {low}. Received: {flag} {value}")
    if args.node_rank >= args.nnodes:
        raise ValueError(
            f"--node-rank must be in [0, --nnodes). Received: --node-rank {args.node_rank} with --nnodes {args.nnodes}"
        )
    if args.nnodes > 1 and not args.master and not getattr(args, "rdzv_endpoint", None):
        raise ValueError(
            "--nnodes > 1 needs --master ADDR:PORT (or torchrun's --rdzv-endpoint HOST:PORT), the address of "
            "node 0 (the same on every node)."
        )
    if getattr(args, "rdzv_endpoint", None):
        parse_address(args.rdzv_endpoint, "--rdzv-endpoint")
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
    """The elastic options: coherent with each other and with the rest (one agent, no restarts)."""
    names = ("min_workers", "max_workers", "host_discovery_script", "host_exec")
    elastic = any(getattr(args, n, None) is not None for n in names)
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
    if args.nnodes > 1 or getattr(args, "rdzv_endpoint", None) or args.tf_config or args.max_restarts:
        raise ValueError(
            "--min-workers/--max-workers run an elastic job, which re-forms in place instead of restarting, from "
            "one agent on the chief host (--master CHIEF_ADDR:PORT and --host-exec start the other hosts' "
            "workers): drop --nnodes/--rdzv-endpoint/--tf-config/--max-restarts (or drop the elastic options)."
        )
    _check_elastic_hosts(args)
    if not args.host_discovery_script and args.min_workers > args.nproc_per_node:
        raise ValueError(
            f"--min-workers {args.min_workers} is more than the {args.nproc_per_node} worker(s) available "
            f"(--nproc-per-node {args.nproc_per_node}): the job could never start. Fix: --nproc-per-node "
            f">= {args.min_workers}, a lower --min-workers, or a --host-discovery-script that reports more slots."
        )
    if args.elastic_timeout <= 0:
        raise ValueError(f"--elastic-timeout must be > 0. Received: --elastic-timeout {args.elastic_timeout}")


def _check_elastic_hosts(args: Any) -> None:
    """An elastic job across hosts: ``--master`` and ``--host-exec`` together, and the cluster token set."""
    host_exec = getattr(args, "host_exec", None)
    if host_exec is not None and "{host}" not in host_exec:
        raise ValueError(
            f"--host-exec must contain {{host}}, where the host's name goes. Received: --host-exec {host_exec!r}. "
            "Example: --host-exec 'ssh -o BatchMode=yes {host}'"
        )
    if bool(host_exec) != bool(args.master):
        given, missing = ("--host-exec", "--master CHIEF_ADDR:PORT") if host_exec else ("--master", "--host-exec")
        raise ValueError(
            f"An elastic job across hosts needs both --master CHIEF_ADDR:PORT (where its membership store "
            f"listens, reachable from every host) and --host-exec 'TEMPLATE' (how to start a worker on {{host}}); "
            f"{given} was given without {missing}. On one host give neither."
        )
    if args.master and cluster_secret() is None:
        raise ValueError(
            f"An elastic job across hosts signs its membership store with the secret derived from "
            f"{ENV_CLUSTER_TOKEN}, which is not set. Fix: set the same {ENV_CLUSTER_TOKEN} (e.g. "
            f"`export {ENV_CLUSTER_TOKEN}=$(python -c 'import secrets; print(secrets.token_hex(32))')` on the "
            "chief, then the same value on every host) before `unison launch`."
        )


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
    elif getattr(args, "rdzv_endpoint", None):
        argv += [
            "--nnodes",
            str(args.nnodes),
            "--rdzv-backend",
            args.rdzv_backend or "c10d",
            "--rdzv-endpoint",
            args.rdzv_endpoint,
            "--rdzv-id",
            args.rdzv_id or "unison",
        ]
        if args.rdzv_conf:
            argv += ["--rdzv-conf", args.rdzv_conf]
    else:
        argv += ["--standalone"]
    if getattr(args, "log_dir", None):
        # torch's own files (error.json) go under our folder instead of a torchelastic_* temp folder
        argv += ["--log-dir", os.path.join(args.log_dir, "torch")]
    program = ["-m", RANK_ENTRY] + (["-m"] if args.module else []) + [args.script, *args.script_args]
    if args.tf_config:
        ports = free_ports or []
        env[ENV_TF_CONFIG_CLUSTER] = json.dumps({"worker": [f"127.0.0.1:{p}" for p in ports]})
        return argv + ["-m", RANK_ENTRY, "-m", "unison.launch.tf_config_entry", *program[2:]], env
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
    from torch.distributed.elastic.multiprocessing.api import SignalException
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    from torch.distributed.elastic.utils.distributed import get_free_port

    ports = [get_free_port() for _ in range(args.nproc_per_node)] if args.tf_config else None
    args.log_dir = tempfile.mkdtemp(prefix="unison_launch_")
    argv, env = torchrun_argv(args, ports)
    os.environ.update(env)
    os.environ[ENV_LOG_DIR] = args.log_dir
    if not args.master and not args.rdzv_endpoint:
        # One host: its replicas sign what they put in torchrun's store (the shared-memory vote)
        # with a secret only they hold. Across hosts, UNISON_CLUSTER_TOKEN is that secret.
        os.environ.update(launcher_secret_env())
    if args.timeline:
        # every replica records and writes <PATH>.rank<R>.json; merged below once all have exited
        os.environ[ENV_TIMELINE] = os.path.abspath(args.timeline)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    # torchrun would print a banner and pick 1; an equal share of the cores is what unison does.
    os.environ.setdefault("OMP_NUM_THREADS", str(max(1, cores // args.nproc_per_node)))
    # torch's agent logs each failure and signal with its own W/E lines; the summary below says it once
    for name in list(logging.root.manager.loggerDict):
        if name.startswith("torch.distributed.elastic"):
            logging.getLogger(name).setLevel(logging.CRITICAL)
    keep_logs = False
    try:
        torchrun.main(argv)
    except ChildFailedError as exc:
        keep_logs = True
        world = args.nproc_per_node * args.nnodes
        sys.stderr.write(summary(from_child_failed_error(exc), args.log_dir, world) + "\n")
        return 1
    except (SignalException, KeyboardInterrupt) as exc:
        sig = getattr(exc, "sigval", signal.SIGINT)
        name = signal.Signals(sig).name
        sys.stderr.write(
            f"unison launch: stopped by {name}; its {args.nproc_per_node} local process(es) were stopped too.\n"
        )
        return 128 + int(sig)
    finally:
        if args.timeline and args.nnodes == 1:  # this node holds every rank's file
            merge(os.path.abspath(args.timeline), args.nproc_per_node, wait_s=0.0)
        shutil.rmtree(os.path.join(args.log_dir, "torch"), ignore_errors=True)
        if not keep_logs:
            shutil.rmtree(args.log_dir, ignore_errors=True)
    return 0
