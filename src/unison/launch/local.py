"""The local launcher: replica 0 re-runs the user's command to start the other replicas.

The process model (docs/semantics.md#process-model): when a script that asks for N replicas was started as a plain
``python script.py``, the first process becomes replica 0, serves the rendezvous store, and starts
replicas 1..N-1 by re-running the very same command with ``UNISON_*`` variables that place them.
A watchdog thread in replica 0 watches them: if one fails, replica 0 prints which one and its
traceback, stops the others and exits, so a failure never turns into a hang. Each child also
dies with its parent (``PR_SET_PDEATHSIG`` on Linux, a parent-watch thread elsewhere).

Example (what ``MirroredStrategy(["/cpu:0", "/cpu:1"])`` does in the user's process)::

    placement, store = start_local_job(num_replicas=2, timeout_s=300)
    # this process is now rank 0; one more copy of the script runs as rank 1
"""

from __future__ import annotations

import atexit
import ctypes
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from unison.cluster.placement import (
    ENV_ERROR_FILE,
    ENV_LOCAL_RANK,
    ENV_LOCAL_WORLD_SIZE,
    ENV_MASTER_ADDR,
    ENV_PARENT_PID,
    ENV_RANK,
    ENV_STORE_DIR,
    ENV_WORLD_SIZE,
    UNISON_SOURCE,
    ProcessPlacement,
)
from unison.cluster.secret import launcher_secret_env
from unison.comm.store import private_file_store
from unison.core.interactive import in_ipython, in_jupyter_kernel
from unison.errors import LaunchError
from unison.launch import notebook_cells
from unison.launch.notebook_cells import CellMirror, ipython_shell

ENV_REPLICA_OUTPUT = "UNISON_REPLICA_OUTPUT"
_POLL_S = 0.05


def rerun_command() -> list[str]:
    """Return the command line that re-runs this program, or raise :class:`LaunchError`.

    ``sys.orig_argv`` keeps ``-c CODE`` and ``-m MODULE`` exactly as the user typed them, so
    those re-run too. An interactive interpreter, a notebook or a test runner has no command
    that would reach the same point again.
    """
    hint = (
        "Start the program from a script instead (`python train.py`), or launch the replicas "
        "explicitly: `unison launch --nproc-per-node N train.py` (or `torchrun --nproc-per-node N "
        "train.py`)."
    )
    if ipython_shell() is not None:
        # a notebook: its program is the cells the kernel ran; each replica is a shell replaying them
        return [sys.executable, "-c", f"from {notebook_cells.MODULE} import replica_main; replica_main()"]
    if hasattr(sys, "ps1") or sys.flags.interactive or in_jupyter_kernel() or in_ipython():
        raise LaunchError(
            "MirroredStrategy needs one process per replica, and unison starts them by re-running "
            "the command that started this program, but this is an interactive session: there "
            "is no script to re-run. In a notebook, put the training in a function and run it on N replicas "
            "with `from unison.launch.notebook import notebook_launcher; notebook_launcher(train, num_replicas=N)` "
            "(the strategy inside joins those replicas). " + hint
        )
    if os.environ.get("PYTEST_CURRENT_TEST"):
        raise LaunchError(
            "MirroredStrategy with several replicas was created inside a pytest test; re-running "
            "pytest would run the whole test session again in every replica. Run the multi-replica "
            "code through `unison.testing.run_distributed(fn, world_size=N)` instead."
        )
    argv = list(getattr(sys, "orig_argv", [sys.executable, *sys.argv]))
    main = sys.modules.get("__main__")
    if len(argv) < 2 or (
        argv[1] == "-" or (getattr(main, "__file__", None) is None and "-c" not in argv and "-m" not in argv)
    ):
        raise LaunchError(
            "MirroredStrategy needs one process per replica, and unison starts them by re-running "
            f"the command that started this program, but it cannot be re-run (command: {argv!r}). " + hint
        )
    return [sys.executable, *argv[1:]]


def _die_with_parent() -> None:
    """In the child before exec: ask Linux to SIGKILL us when replica 0 goes away."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass  # not Linux: the parent-watch thread in the replica covers this


@dataclass
class _Child:
    rank: int
    proc: subprocess.Popen[bytes]
    error_file: str
    log_file: str | None


@dataclass
class LocalJob:
    """Replica 0's view of the job it launched: the store it serves and the children it watches."""

    world_size: int
    store: Any
    children: list[_Child] = field(default_factory=list)
    workdir: str = ""
    mirror: CellMirror | None = None  # replica 0 is a notebook kernel: its cells go to the replicas
    chief_failed: bool = False
    _stopping: bool = False
    _report_lock: threading.Lock = field(default_factory=threading.Lock)

    def placement(self) -> ProcessPlacement:
        return ProcessPlacement(
            0, self.world_size, 0, self.world_size, "127.0.0.1", 0, UNISON_SOURCE, store_dir=self.workdir
        )

    def failure_report(self, child: _Child) -> str:
        code = child.proc.returncode
        how = f"was killed by signal {signal.Signals(-code).name}" if code < 0 else f"exited with code {code}"
        text = ""
        if os.path.exists(child.error_file):
            with open(child.error_file, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
        if not text and child.log_file and os.path.exists(child.log_file):
            with open(child.log_file, encoding="utf-8", errors="replace") as fh:
                text = "".join(fh.readlines()[-40:])
        where = f"\nIts full output: {child.log_file}" if child.log_file else ""
        return (
            f"unison: replica {child.rank} of {self.world_size} (pid {child.proc.pid}) {how}; "
            f"stopping all replicas.\n--- traceback of replica {child.rank} ---\n"
            f"{text.rstrip() or '(it reported no traceback)'}\n--- end of replica {child.rank} ---"
            f"{where}\n"
        )

    def kill_children(self) -> None:
        self._stopping = True
        for child in self.children:
            if child.proc.poll() is None:
                child.proc.kill()
        for child in self.children:
            try:
                child.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass

    def failed_child(self, grace_s: float = 0.0) -> _Child | None:
        """The first replica that exited with an error, waiting up to ``grace_s`` for one."""
        deadline = time.monotonic() + grace_s
        while True:
            for child in self.children:
                code = child.proc.poll()
                if code is not None and code != 0:
                    return child
            if time.monotonic() >= deadline:
                return None
            time.sleep(_POLL_S)

    def report_and_stop(self, child: _Child) -> None:
        """Print which replica failed and why, once, and stop the others."""
        with self._report_lock:
            if self._stopping:
                return
            self._stopping = True
            sys.stderr.write(self.failure_report(child))
            sys.stderr.flush()
        self.kill_children()
        self._keep_workdir()

    def watch(self) -> None:
        """Watchdog loop (daemon thread): a failed replica stops the whole job, loudly."""
        while not self._stopping:
            child = self.failed_child()
            if child is not None:
                self.report_and_stop(child)
                if self.mirror is not None:
                    # a kernel stays: its collective with the dead replica fails (the shared-memory
                    # path watches the ranks' processes; gloo at its timeout) and the cell raises
                    self.mirror.close()
                    return
                # The main thread may be blocked inside a collective that will never
                # complete; leaving from here is the only way that cannot hang.
                os._exit(1)
            time.sleep(_POLL_S)

    def finish(self) -> None:
        """At replica 0's exit: wait for the others, then remove the job's folder if all went well.

        On a failure (ours or a replica's) the folder (logs, tracebacks) is kept and named.
        """
        if self.chief_failed:
            self.kill_children()
            self._keep_workdir()
            return
        if self.mirror is not None:
            self._finish_mirrored()
            return
        deadline = time.monotonic() + 600
        for child in self.children:
            while child.proc.poll() is None and time.monotonic() < deadline:
                time.sleep(_POLL_S)
        failed = [c for c in self.children if c.proc.returncode not in (0, None)]
        self._stopping = True
        for child in failed:
            sys.stderr.write(self.failure_report(child))
        self.kill_children()
        if failed:
            self._keep_workdir()
            sys.stderr.flush()
            os._exit(1)
        if self.workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def _finish_mirrored(self) -> None:
        """A notebook kernel's end (shutdown, restart): its replica shells end at the end of their
        input; a failure was reported when it happened, and the kernel's exit code stays its own."""
        if self.mirror is not None:
            self.mirror.close()
        deadline = time.monotonic() + 30
        for child in self.children:
            while child.proc.poll() is None and time.monotonic() < deadline:
                time.sleep(_POLL_S)
        with self._report_lock:
            reported, self._stopping = self._stopping, True
        # a replica that died just before the kernel's end, before the watchdog's next look
        failed = [] if reported else [c for c in self.children if c.proc.returncode not in (0, None)]
        for child in failed:
            sys.stderr.write(self.failure_report(child))
        self.kill_children()
        if failed:
            self._keep_workdir()
        elif not reported and self.workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def _keep_workdir(self) -> None:
        if self.workdir and os.path.isdir(self.workdir):
            sys.stderr.write(f"unison: the replicas' logs and tracebacks are kept in {self.workdir}\n")
            sys.stderr.flush()


def spawn_replicas(job: LocalJob, ranks: range, env_for: Callable[[int, str], dict[str, str]]) -> None:
    """Re-run this program once per rank in ``ranks``, each with ``env_for(rank, error_file)``.

    Children write their traceback to ``error_file``, die with this process, and (unless
    ``UNISON_REPLICA_OUTPUT=inherit``) send their output to a log file in ``job.workdir``.
    """
    command = rerun_command()
    inherit = os.environ.get(ENV_REPLICA_OUTPUT, "") == "inherit"
    for rank in ranks:
        error_file = os.path.join(job.workdir, f"replica-{rank}.err")
        env = dict(os.environ)
        env.update(env_for(rank, error_file))
        env[ENV_PARENT_PID] = str(os.getpid())
        log_file = None if inherit else os.path.join(job.workdir, f"replica-{rank}.log")
        out = None if log_file is None else open(log_file, "wb")
        proc = subprocess.Popen(
            command,
            env=env,
            stdin=subprocess.PIPE if job.mirror is not None else subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT if out else None,
            preexec_fn=_die_with_parent,
        )
        if out is not None:
            out.close()
        job.children.append(_Child(rank, proc, error_file, log_file))
    if job.mirror is not None:
        job.mirror.start(job.children)


def watch_replicas(job: LocalJob, who: str) -> None:
    """Watch the started replicas: report a failed one, stop the rest, wait for them at exit."""
    previous_hook = sys.excepthook

    def parent_excepthook(tp: type[BaseException], value: BaseException, tb: Any) -> None:
        job.chief_failed = True
        # A collective error here is usually the echo of another replica's failure: name that
        # replica (and show its traceback) before our own, secondary, traceback.
        child = job.failed_child(grace_s=3.0)
        if child is not None:
            job.report_and_stop(child)
            sys.stderr.write(f"--- {who}'s own error, a consequence of the failure above ---\n")
        previous_hook(tp, value, tb)

    sys.excepthook = parent_excepthook
    atexit.register(job.finish)
    threading.Thread(target=job.watch, name="unison-replica-watchdog", daemon=True).start()


def start_local_job(num_replicas: int, timeout_s: float) -> tuple[ProcessPlacement, Any, LocalJob]:
    """Become replica 0 of a new ``num_replicas`` job on this host and start the others.

    The replicas meet in a ``FileStore`` inside a fresh private (``0700``) folder, not on a
    port: no other user and no other host can read or write what they exchange. The folder
    also holds the replicas' logs; it is removed when the job ends well and kept (and named)
    when it fails. The replicas share a job secret (``UNISON_JOB_SECRET``, unless
    ``UNISON_CLUSTER_TOKEN`` provides one) with which every value in the store is signed.

    Args:
        num_replicas: total number of replicas (processes), >= 2.
        timeout_s: how long the rendezvous and each collective may take.

    Returns:
        ``(placement, store, job)``: this process's placement (rank 0), the rendezvous store
        (pass it to :func:`unison.comm.connect`) and the :class:`LocalJob` record.
    """
    rerun_command()  # fail before making a store if there is nothing to re-run
    workdir = tempfile.mkdtemp(prefix="unison-replicas-")  # mode 0700: this user only
    store = private_file_store(workdir, num_replicas, timeout_s)
    job = LocalJob(world_size=num_replicas, store=store, workdir=workdir)
    shell = ipython_shell()
    if shell is not None:
        job.mirror = CellMirror(shell, workdir, timeout_s)
    # This process is replica 0: it reads the secret from its own environment like the others.
    os.environ.update(launcher_secret_env())

    def env_for(rank: int, error_file: str) -> dict[str, str]:
        return {
            ENV_RANK: str(rank),
            ENV_WORLD_SIZE: str(num_replicas),
            ENV_LOCAL_RANK: str(rank),
            ENV_LOCAL_WORLD_SIZE: str(num_replicas),
            ENV_MASTER_ADDR: "127.0.0.1",
            ENV_STORE_DIR: workdir,
            ENV_ERROR_FILE: error_file,
        }

    spawn_replicas(job, range(1, num_replicas), env_for)
    watch_replicas(job, "replica 0")
    return job.placement(), store, job


def install_replica_hooks(placement: ProcessPlacement) -> None:
    """In a replica started by a launcher: report our traceback to replica 0 and die with it."""
    error_file = placement.error_file
    if error_file:
        previous_hook = sys.excepthook

        def replica_excepthook(tp: type[BaseException], value: BaseException, tb: Any) -> None:
            with open(error_file, "w", encoding="utf-8") as fh:
                fh.write("".join(traceback.format_exception(tp, value, tb)))
            previous_hook(tp, value, tb)

        sys.excepthook = replica_excepthook
    parent = os.environ.get(ENV_PARENT_PID)
    if parent:
        threading.Thread(target=_watch_parent, args=(int(parent),), daemon=True, name="unison-parent-watch").start()


def _watch_parent(parent_pid: int) -> None:
    while True:
        if os.getppid() != parent_pid:
            os._exit(1)
        time.sleep(0.5)
