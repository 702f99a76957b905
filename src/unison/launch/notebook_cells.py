"""``MirroredStrategy(["/cpu:0", "/cpu:1"])`` typed straight into a notebook cell: mirrored cells.

A script's replica 0 starts the other replicas by re-running the script's command, so every
replica runs the same program up to the strategy and on from there. A notebook has no command to
re-run; its program is the cells the kernel ran. So in an IPython kernel (Jupyter, or any IPython
shell) replica 0, the kernel, starts each other replica as :func:`replica_main`, an IPython shell
of its own, and hands it the cells over the replica's private standard input (a pipe from its own
parent, never the network):

* at the strategy's creation, every cell run so far, the current one included (the replica runs
  them as the script's re-run would: up to the strategy, which joins the kernel's job, and on);
* then every cell the kernel runs, as it starts running it (IPython's ``pre_run_cell`` event).

After each cell the kernel waits until every replica has run it too (``post_run_cell``), so the
replicas stay in step cell by cell, and says in the cell which replica failed where the kernel did
not, with its traceback. Replica output goes to its log file in the job's private folder, as a
script's does. A replica that dies is reported and the others are stopped (the kernel stays). The
replicas end with the kernel (a restart or shutdown) and with the job's end.

The cells run before the strategy run again on each replica when it starts, as a script's lines
before the strategy do when it is re-run: put heavy cells after the strategy's cell. A
``notebook_launcher`` call among them is the kernel's alone (a replica skips it, getting ``None``).
Cells with side effects outside Python (``!pip install``, writing files) run on every replica, as
a re-run script's lines do; only replica 0 prints and writes Keras's files.

Example (notebook cells)::

    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])   # starts replica 1
    with strategy.scope():
        model = make_model()
    model.compile(...)
    model.fit(x, y, epochs=2)        # the next cell: both replicas run it
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from typing import Any

__all__ = ["CellMirror", "ipython_shell", "replica_main"]

MODULE = "unison.launch.notebook_cells"
ENV_MIRRORED_REPLICA = "UNISON_MIRRORED_CELLS_REPLICA"
_POLL_S = 0.02


def ipython_shell() -> Any:
    """The IPython shell running this program (a Jupyter kernel's included), or ``None``."""
    ipython = sys.modules.get("IPython")
    get = getattr(ipython, "get_ipython", None)
    shell = get() if get is not None else None
    return shell if shell is not None and hasattr(shell, "events") else None


def _status_file(workdir: str, rank: int) -> str:
    return os.path.join(workdir, f"replica-{rank}.cells")


class CellMirror:
    """The kernel's side: sends cells to the replica shells and waits for each cell's end there."""

    def __init__(self, shell: Any, workdir: str, timeout_s: float) -> None:
        self.shell = shell
        self.workdir = workdir
        self.timeout_s = timeout_s
        self.children: list[Any] = []  # launch.local._Child, each with a stdin pipe
        self.sent = 0
        self.closed = False

    def start(self, children: list[Any]) -> None:
        """Send the cells run so far (the current one included) and follow the next ones."""
        self.children = children
        history = list(getattr(self.shell.history_manager, "input_hist_raw", []))[1:]
        for cell in history:
            self._send(cell)
        self.shell.events.register("pre_run_cell", self._pre_run_cell)
        self.shell.events.register("post_run_cell", self._post_run_cell)

    def _send(self, cell: str) -> None:
        self.sent += 1
        line = (json.dumps({"index": self.sent, "cell": cell}) + "\n").encode()
        for child in self.children:
            if child.proc.poll() is None and child.proc.stdin is not None:
                try:
                    child.proc.stdin.write(line)
                    child.proc.stdin.flush()
                except OSError:
                    pass  # a replica that died: the job's watchdog reports it

    def _pre_run_cell(self, info: Any) -> None:
        if not self.closed:
            self._send(getattr(info, "raw_cell", "") or "")

    def _post_run_cell(self, result: Any) -> None:
        if self.closed:
            return
        failures = self.wait(self.sent)
        if failures and getattr(result, "success", True):
            for rank, text in failures:
                sys.stderr.write(
                    f"unison: this cell failed on replica {rank} (it ran on replica 0, the kernel): the replicas "
                    f"no longer hold the same state. Re-create the strategy after fixing the cause.\n"
                    f"--- traceback of replica {rank} ---\n{text.rstrip()}\n--- end of replica {rank} ---\n"
                )
            sys.stderr.flush()

    def wait(self, index: int) -> list[tuple[int, str]]:
        """Wait until every live replica ran cell ``index``; the replicas where it raised."""
        deadline = time.monotonic() + self.timeout_s
        failures: list[tuple[int, str]] = []
        for child in self.children:
            while True:
                status = _read_status(_status_file(self.workdir, child.rank)).get(index)
                if status is not None:
                    if status:
                        failures.append((child.rank, status))
                    break
                if child.proc.poll() is not None or time.monotonic() > deadline:
                    break  # dead (the watchdog reports it) or stuck in a collective (its timeout ends it)
                time.sleep(_POLL_S)
        return failures

    def close(self) -> None:
        """Stop following cells and end the replicas' input (they finish at its end)."""
        if self.closed:
            return
        self.closed = True
        for name, hook in (("pre_run_cell", self._pre_run_cell), ("post_run_cell", self._post_run_cell)):
            try:
                self.shell.events.unregister(name, hook)
            except ValueError:
                pass
        for child in self.children:
            if child.proc.stdin is not None:
                try:
                    child.proc.stdin.close()
                except OSError:
                    pass


def _read_status(path: str) -> dict[int, str]:
    """``{cell index: "" (ran) or the traceback (raised)}`` from a replica's status file."""
    out: dict[int, str] = {}
    try:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if line.endswith("\n"):
                    record = json.loads(line)
                    out[int(record["index"])] = record["error"]
    except (OSError, ValueError):
        pass
    return out


def replica_main() -> None:
    """A replica's shell: run each cell the kernel sends, in order, and record how it ended."""
    from IPython.core.interactiveshell import InteractiveShell

    from unison.cluster.placement import ENV_RANK, ENV_STORE_DIR

    os.environ[ENV_MIRRORED_REPLICA] = "1"  # notebook_launcher cells are the kernel's alone
    rank = int(os.environ[ENV_RANK])
    status = _status_file(os.environ[ENV_STORE_DIR], rank)
    shell = InteractiveShell.instance()
    for line in sys.stdin:
        message = json.loads(line)
        result = shell.run_cell(message["cell"], store_history=True)
        error = ""
        if not result.success:
            exc = result.error_in_exec or result.error_before_exec
            error = "".join(traceback.format_exception(exc)) if exc is not None else "the cell failed"
        with open(status, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"index": message["index"], "error": error}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    replica_main()
