"""The elastic agent of ``unison launch --min-workers A --max-workers B``: workers come and go, the job stays.

Unlike ``--max-restarts`` (torchrun restarts every process when one fails), this agent never
restarts a worker. It serves the job's store (values signed with the job's secret), starts the
workers and watches them:

- a worker that exits with an error (or is killed) is *lost*: the agent publishes the next
  generation without it, and the survivors (``hvd.elastic.run``) roll back to their last commit
  in memory and re-form at the new size;
- with ``--host-discovery-script`` (Horovod's option) the agent runs the script every second;
  it prints ``HOST:SLOTS`` lines, and when a host's slots grow (a new host: from 0) the agent
  starts new workers there (up to ``--max-workers``), which the running workers take in at
  their next ``state.commit()``;
- fewer than ``--min-workers`` workers (at start, or after a loss) is an error that every
  worker and the agent report with the counts, within ``--elastic-timeout`` at most.

**One host** (the default): the store listens on the loopback interface, the script prints
``localhost:SLOTS`` and the workers are this agent's children.

**Several hosts** (``--master CHIEF_ADDR:PORT --host-exec 'TEMPLATE'``): the agent runs on the
chief host and its store listens on ``CHIEF_ADDR:PORT``, which every host must reach; it is
signed with the secret derived from ``UNISON_CLUSTER_TOKEN``, which must be set (the same) on
every host. A worker on another host is started as ``TEMPLATE`` (``{host}`` replaced by the
host's name from the discovery script, then split like a shell command line) followed by
``env -C CWD UNISON_ELASTIC_STORE=... UNISON_ELASTIC_WORKER=... PYTHON SCRIPT ARGS``, so the
same Python, script path and working directory must exist there. Horovod's driver uses ssh:
``--host-exec 'ssh -o BatchMode=yes {host}'`` (the remote shell must then have the token in
its environment, for example through ``SendEnv``/``AcceptEnv`` or its profile); the tests use
``--host-exec 'ip netns exec NS-{host}'``. The local process (``ssh``) stands for the worker:
when it ends, the worker is lost. Workers reach each other over gloo on the interface their
route to ``CHIEF_ADDR`` leaves by (``GLOO_SOCKET_IFNAME`` overrides it).

Lost workers are not replaced by themselves (Horovod blacklists a failing host); a discovery
script that reports more slots adds workers, and one that stops naming a host (while naming
others) stops that host's workers, which the others then re-form without.

Example::

    unison launch --nproc-per-node 3 --min-workers 2 --max-workers 4 train.py
    UNISON_CLUSTER_TOKEN=... unison launch --min-workers 2 --max-workers 4 --master 10.0.0.1:29400 \
        --host-discovery-script ./hosts.sh --host-exec 'ssh -o BatchMode=yes {host}' train.py
"""

from __future__ import annotations

import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from typing import Any

from unison.cluster.secret import job_secret, launcher_secret_env
from unison.cluster.spec import parse_address
from unison.comm.elastic import ENV_ELASTIC_STORE, ENV_ELASTIC_WORKER, Generation, failed_key, publish, publish_error
from unison.comm.store import AuthenticatedStore, serve_tcp_store
from unison.launch.local import _die_with_parent

_POLL_S = 0.05
_DISCOVERY_EVERY_S = 1.0
_FAILURE_GRACE_S = 1.0  # a reported collective failure without a lost worker: re-form at the same size
LOCAL_HOST = "localhost"


def is_local(host: str) -> bool:
    """Whether ``host`` names this machine (its workers start as the agent's own children)."""
    return host in {"localhost", "127.0.0.1", socket.gethostname()}


def discover_hosts(script: str) -> dict[str, int]:
    """Run the host discovery script; ``{host: slots}`` from its ``HOST:SLOTS`` lines, in their order.

    Raises:
        ValueError: the script cannot run or fails, or a line is malformed.
    """
    try:
        done = subprocess.run([script], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ValueError(
            f"--host-discovery-script {script!r} could not be run: {exc}. Give the path of an executable "
            "program that prints 'HOST:SLOTS' lines and returns within 30 s."
        ) from None
    if done.returncode != 0:
        raise ValueError(
            f"--host-discovery-script {script!r} exited with {done.returncode}: {done.stderr.strip()[-500:]!r}. "
            "It must print 'HOST:SLOTS' lines and exit 0."
        )
    hosts: dict[str, int] = {}
    for line in done.stdout.splitlines():
        line = line.strip()
        if not line:
            continue
        host, _, count = line.partition(":")
        try:
            slots = int(count) if count else 1
        except ValueError:
            slots = -1
        if not host or slots < 0:
            raise ValueError(f"--host-discovery-script printed {line!r}; expected 'HOST:SLOTS' (e.g. 'localhost:2').")
        name = LOCAL_HOST if is_local(host) else host
        hosts[name] = hosts.get(name, 0) + slots
    return hosts


def discover_slots(script: str) -> int:
    """The slots the discovery script reports on every host together (see :func:`discover_hosts`)."""
    return sum(discover_hosts(script).values())


def check_hosts(hosts: dict[str, int], args: Any) -> None:
    """Refuse another host when the agent was not told how to reach it (``--master``, ``--host-exec``).

    Raises:
        ValueError: naming the host and the options that would start workers there.
    """
    remote = [h for h in hosts if not is_local(h)]
    if remote and not (getattr(args, "master", None) and getattr(args, "host_exec", None)):
        raise ValueError(
            f"--host-discovery-script reported host {remote[0]!r}, another host than this one. An elastic job "
            "across hosts needs --master CHIEF_ADDR:PORT (an address of this host that every host reaches: the "
            "membership store listens there) and --host-exec 'TEMPLATE' (how to run a command on {host}, e.g. "
            "'ssh -o BatchMode=yes {host}'), with UNISON_CLUSTER_TOKEN set on every host. On one host, print "
            "'localhost:SLOTS'."
        )


class ElasticAgent:
    """Starts, watches and re-forms the workers of one elastic job (see the module docstring)."""

    def __init__(self, args: Any) -> None:
        self.args = args
        self.min_workers: int = args.min_workers
        self.max_workers: int = args.max_workers
        secret_env = launcher_secret_env()
        self.secret = job_secret({**os.environ, **secret_env})
        self.env = {**os.environ, **secret_env}
        master = getattr(args, "master", None)
        # across hosts the store listens on the chief's address (the CLI required the cluster token)
        self.store_host, port = parse_address(master, "--master") if master else ("127.0.0.1", 0)
        server = serve_tcp_store(self.store_host, port, 1, float(args.elastic_timeout))
        self.port = server.port
        self.server = server
        self.store = AuthenticatedStore(server, self.secret) if self.secret is not None else server
        self.procs: dict[int, subprocess.Popen[bytes]] = {}
        self.host_of: dict[int, str] = {}
        self.members: list[int] = []
        self.generation = -1
        self.next_id = 0

    def _spawn(self, count: int, host: str = LOCAL_HOST) -> list[int]:
        program = [sys.executable, *(["-m"] if self.args.module else []), self.args.script, *self.args.script_args]
        started = []
        for _ in range(count):
            worker = self.next_id
            self.next_id += 1
            env = dict(self.env)
            env[ENV_ELASTIC_STORE] = f"{self.store_host}:{self.port}"
            env[ENV_ELASTIC_WORKER] = str(worker)
            if self.store_host == "127.0.0.1":  # one host: gloo on the loopback
                env.setdefault("GLOO_SOCKET_IFNAME", "lo")
            argv = program
            if not is_local(host):
                # what the remote worker needs besides the cluster token (never put on a command line)
                chosen = {k: env[k] for k in (ENV_ELASTIC_STORE, ENV_ELASTIC_WORKER, "PYTHONUNBUFFERED") if k in env}
                remote = ["env", "-C", os.getcwd(), *(f"{k}={v}" for k, v in chosen.items())]
                argv = [*shlex.split(self.args.host_exec.replace("{host}", host)), *remote, *program]
            self.procs[worker] = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent)
            self.host_of[worker] = host
            started.append(worker)
        return started

    def _publish(self) -> None:
        self.generation += 1
        hosts = tuple(self.host_of[w] for w in self.members)
        publish(self.store, Generation(self.generation, tuple(self.members), hosts))

    def _say(self, text: str) -> None:
        sys.stderr.write(f"unison launch: {text}\n")
        sys.stderr.flush()

    def _hosts(self) -> dict[str, int]:
        """``{host: slots}``: the discovery script's answer, or ``--nproc-per-node`` slots on this host."""
        script = self.args.host_discovery_script
        if not script:
            return {LOCAL_HOST: self.args.nproc_per_node}
        hosts = discover_hosts(script)
        check_hosts(hosts, self.args)
        return hosts

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
        hosts = self._hosts()
        deadline = time.monotonic() + self.args.elastic_timeout
        while sum(hosts.values()) < self.min_workers and self.args.host_discovery_script:
            if time.monotonic() >= deadline:
                break
            time.sleep(_DISCOVERY_EVERY_S)
            hosts = self._hosts()
        if sum(hosts.values()) < self.min_workers:
            return self._too_few(sum(hosts.values()), f"available after waiting {self.args.elastic_timeout:.0f}s")
        for host, slots in hosts.items():  # fill the hosts in the script's order, up to --max-workers
            self.members += self._spawn(min(slots, self.max_workers - len(self.members)), host)
        self._publish()
        where = ", ".join(f"{h}: {[w for w in self.members if self.host_of[w] == h]}" for h in hosts)
        self._say(
            f"elastic job started: workers {self.members} (generation 0; {where}), "
            f"store on {self.store_host}:{self.port}"
        )
        last_slots, next_discovery, failure_seen = hosts, time.monotonic() + _DISCOVERY_EVERY_S, 0.0
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
                    on = "" if is_local(self.host_of[worker]) else f" on host {self.host_of[worker]}"
                    self._say(f"worker {worker}{on} (pid {self.procs[worker].pid}) {how}; re-forming without it")
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
                hosts = self._hosts()
                gone = [w for w in self.members if self.host_of[w] not in hosts]
                if gone and hosts:  # Horovod's removed host: its workers stop, the others re-form
                    names = sorted({self.host_of[w] for w in gone})
                    self._say(f"host(s) {', '.join(names)} no longer discovered: stopping worker(s) {gone}")
                    for worker in gone:
                        if self.procs[worker].poll() is None:
                            self.procs[worker].kill()  # seen as lost by the next poll
                for host, slots in hosts.items():  # a host's slots grew (a new host: from 0)
                    room = self.max_workers - len(self.members)
                    grown = slots - last_slots.get(host, 0)
                    if grown > 0 and room > 0 and self.members:
                        added = self._spawn(min(grown, room), host)
                        on = "" if is_local(host) else f" on host {host}"
                        self._say(f"new slots found{on}: starting worker(s) {added}")
                        self.members += added
                        changed = True
                last_slots = hosts
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
