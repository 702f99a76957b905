"""The elastic agent of ``unison launch --min-workers A --max-workers B``: workers come and go, the job stays.

Unlike ``--max-restarts`` (torchrun restarts every process when one fails), this agent never
restarts a worker. It serves the job's store on the loopback interface (values signed with the
job's secret), starts ``--nproc-per-node`` workers and watches them:

- a worker that exits with an error (or is killed) is *lost*: the agent publishes the next
  generation without it, and the survivors (``hvd.elastic.run``) roll back to their last commit
  in memory and re-form at the new size;
- with ``--host-discovery-script`` (Horovod's option) the agent runs the script every second;
  it prints ``localhost:SLOTS`` lines, and when the slots grow the agent starts new workers
  (up to ``--max-workers``), which the running workers take in at their next ``state.commit()``;
- fewer than ``--min-workers`` workers (at start, or after a loss) is an error that every
  worker and the agent report with the counts, within ``--elastic-timeout`` at most.

Lost workers are not replaced by themselves (Horovod blacklists a failing host); a discovery
script that reports more slots adds workers.

Example::

    unison launch --nproc-per-node 3 --min-workers 2 --max-workers 4 train.py
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from typing import Any

from unison.cluster.secret import job_secret, launcher_secret_env
from unison.comm.elastic import ENV_ELASTIC_STORE, ENV_ELASTIC_WORKER, Generation, failed_key, publish, publish_error
from unison.comm.store import AuthenticatedStore, serve_tcp_store
from unison.launch.local import _die_with_parent

_POLL_S = 0.05
_DISCOVERY_EVERY_S = 1.0
_FAILURE_GRACE_S = 1.0  # a reported collective failure without a lost worker: re-form at the same size


def discover_slots(script: str) -> int:
    """Run the host discovery script; the slots it reports on this host (``host:slots`` lines).

    Raises:
        ValueError: the script cannot run or fails, a line names another host (elastic jobs span
            one host here) or is malformed.
    """
    try:
        done = subprocess.run([script], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ValueError(
            f"--host-discovery-script {script!r} could not be run: {exc}. Give the path of an executable "
            "program that prints 'localhost:SLOTS' and returns within 30 s."
        ) from None
    if done.returncode != 0:
        raise ValueError(
            f"--host-discovery-script {script!r} exited with {done.returncode}: {done.stderr.strip()[-500:]!r}. "
            "It must print 'localhost:SLOTS' and exit 0."
        )
    out = done.stdout
    local = {"localhost", "127.0.0.1", socket.gethostname()}
    slots = 0
    for line in out.splitlines():
        line = line.strip()
        if not line:
            continue
        host, _, count = line.partition(":")
        if host not in local:
            raise ValueError(
                f"--host-discovery-script reported host {host!r}; unison's elastic agent runs the workers of "
                f"one host (localhost). Print 'localhost:SLOTS' lines."
            )
        try:
            slots += int(count) if count else 1
        except ValueError:
            raise ValueError(f"--host-discovery-script printed {line!r}; expected 'localhost:SLOTS'.") from None
    return slots


class ElasticAgent:
    """Starts, watches and re-forms the workers of one elastic job (see the module docstring)."""

    def __init__(self, args: Any) -> None:
        self.args = args
        self.min_workers: int = args.min_workers
        self.max_workers: int = args.max_workers
        secret_env = launcher_secret_env()
        self.secret = job_secret({**os.environ, **secret_env})
        self.env = {**os.environ, **secret_env}
        server = serve_tcp_store("127.0.0.1", 0, 1, float(args.elastic_timeout))
        self.port = server.port
        self.server = server
        self.store = AuthenticatedStore(server, self.secret) if self.secret is not None else server
        self.procs: dict[int, subprocess.Popen[bytes]] = {}
        self.members: list[int] = []
        self.generation = -1
        self.next_id = 0

    def _spawn(self, count: int) -> list[int]:
        program = [sys.executable, *(["-m"] if self.args.module else []), self.args.script, *self.args.script_args]
        started = []
        for _ in range(count):
            worker = self.next_id
            self.next_id += 1
            env = dict(self.env)
            env[ENV_ELASTIC_STORE] = f"127.0.0.1:{self.port}"
            env[ENV_ELASTIC_WORKER] = str(worker)
            env.setdefault("GLOO_SOCKET_IFNAME", "lo")
            self.procs[worker] = subprocess.Popen(
                program, env=env, stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent
            )
            started.append(worker)
        return started

    def _publish(self) -> None:
        self.generation += 1
        publish(self.store, Generation(self.generation, tuple(self.members)))

    def _say(self, text: str) -> None:
        sys.stderr.write(f"unison launch: {text}\n")
        sys.stderr.flush()

    def _slots(self) -> int:
        script = self.args.host_discovery_script
        return discover_slots(script) if script else self.args.nproc_per_node

    def _too_few(self, have: int, when: str) -> int:
        message = (
            f"the elastic job has {have} worker(s) {when}, fewer than --min-workers {self.min_workers}. "
            f"Fix: lower --min-workers, or give the job more workers (--nproc-per-node, or slots in the "
            f"--host-discovery-script)."
        )
        self._say(f"error: {message}")
        publish_error(self.store, message)
        deadline = time.monotonic() + 10.0
        while any(p.poll() is None for p in self.procs.values()) and time.monotonic() < deadline:
            time.sleep(_POLL_S)
        self.stop()
        return 1

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.kill()
        for proc in self.procs.values():
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass

    def run(self) -> int:
        """Run the job to its end; the exit status (0 when every remaining worker finished well)."""
        slots = self._slots()
        deadline = time.monotonic() + self.args.elastic_timeout
        while slots < self.min_workers and self.args.host_discovery_script and time.monotonic() < deadline:
            time.sleep(_DISCOVERY_EVERY_S)
            slots = self._slots()
        if slots < self.min_workers:
            return self._too_few(slots, f"available after waiting {self.args.elastic_timeout:.0f}s")
        self.members = self._spawn(min(slots, self.max_workers))
        self._publish()
        self._say(f"elastic job started: workers {self.members} (generation 0), store on 127.0.0.1:{self.port}")
        last_slots, next_discovery, failure_seen = slots, time.monotonic() + _DISCOVERY_EVERY_S, 0.0
        finished: list[int] = []  # workers that exited 0
        lost_after_finish = False
        while True:
            changed = False
            for worker in list(self.members):
                code = self.procs[worker].poll()
                if code is None:
                    continue
                self.members.remove(worker)
                if code == 0:
                    finished.append(worker)
                else:
                    lost_after_finish = lost_after_finish or bool(finished)
                    how = f"was killed by signal {signal.Signals(-code).name}" if code < 0 else f"exited with {code}"
                    self._say(f"worker {worker} (pid {self.procs[worker].pid}) {how}; re-forming without it")
                    changed = True
            if not any(p.poll() is None for p in self.procs.values()):
                break
            if not changed and self.members and self.store.add(failed_key(self.generation), 0) > 0:
                failure_seen = failure_seen or time.monotonic()
                if time.monotonic() - failure_seen > _FAILURE_GRACE_S:  # nobody died: re-form as we are
                    self._say(f"a collective of generation {self.generation} failed with no worker lost; re-forming")
                    changed = True
            if self.args.host_discovery_script and time.monotonic() >= next_discovery:
                next_discovery = time.monotonic() + _DISCOVERY_EVERY_S
                slots = self._slots()
                room = self.max_workers - len(self.members)
                if slots > last_slots and room > 0 and self.members:
                    added = self._spawn(min(slots - last_slots, room))
                    self._say(f"new slots found: starting worker(s) {added}")
                    self.members += added
                    changed = True
                last_slots = slots
            if changed:
                failure_seen = 0.0
                if len(self.members) < self.min_workers and not finished:
                    return self._too_few(len(self.members), "left")
                self._publish()
                self._say(f"generation {self.generation}: workers {self.members}")
            time.sleep(_POLL_S)
        return 0 if finished and not lost_after_finish else 1


def run_elastic(args: Any) -> int:
    """``unison launch`` with ``--min-workers``/``--max-workers``: run the elastic agent."""
    agent = ElasticAgent(args)
    try:
        return agent.run()
    except ValueError as exc:
        agent._say(f"error: {exc}")
        agent.stop()
        return 2
    finally:
        agent.stop()
