"""A hang explained: when a collective fails, every replica's recorder and stack, compared.

A collective that times out only knows that some peer did not come. The peers know why: one
sleeps, one issued another collective, one exited. So every replica keeps a watchdog thread
that looks at one counter in the job's rendezvous store every ``interval_s`` (one small store
request; the store is the control channel, not the stuck collective). A replica whose collective
fails raises that counter (an *incident*) and publishes a snapshot of itself; each watchdog
that sees the counter publishes its own replica's snapshot: its flight recorder
(:mod:`unison.debug.flight`), what it is doing now, and the Python stack of its training thread,
taken from the watchdog thread while the training thread sleeps, computes or waits. The first
replica to raise the counter waits (at most :meth:`HangExplainer.budget_s`) for every snapshot,
compares them and publishes one report; every replica raises with that same report, and a
replica that issues a collective after the incident raises it at once instead of hanging.

Snapshots are JSON written through the job's store (signed by
:class:`~unison.comm.store.AuthenticatedStore` when the job has a secret), never pickles.

Example:
    >>> snaps = {0: {"rank": 0, "seq": 3, "state": "waiting", "records": [
    ...              {"seq": 3, "op": "all_reduce", "shape": [4], "dtype": "float32", "site": "t.py:9 in step"}]},
    ...          1: {"rank": 1, "seq": 2, "state": "idle", "records": []}}
    >>> first_divergence(snaps)[0]
    3
"""

from __future__ import annotations

import atexit
import json
import os
import socket
import threading
import time
from multiprocessing.util import Finalize
from typing import Any

from unison.debug.flight import FlightRecorder, format_record
from unison.debug.stacks import format_stack, stack_of

_INCIDENT = "unison/debug/incident"
_REPORT = "unison/debug/report"
_REPORT_RECORDS = 6  # collectives per rank in the report (dump() prints the whole ring)
_REPORT_FRAMES = 14  # innermost stack frames per rank in the report
STUCK_EXIT_CODE = 75  # a replica ended by its watchdog: stuck in its own code after a peer's failure


def _snapshot_key(rank: int) -> str:
    return f"unison/debug/snapshot/{rank}"


class HangExplainer:
    """The watchdog of one replica and, when a collective fails, the report of every replica.

    Args:
        store: the job's rendezvous store (``set``/``get``/``check``/``add``).
        rank: this replica's rank.
        world_size: number of replicas.
        recorder: this process's flight recorder.
        timeout_s: the job's collective timeout (the watchdog's interval is derived from it).
    """

    def __init__(self, store: Any, rank: int, world_size: int, recorder: FlightRecorder, timeout_s: float) -> None:
        self.store = store
        self.rank = rank
        self.world_size = world_size
        self.recorder = recorder
        self.timeout_s = timeout_s
        self.interval_s = self.interval_for(timeout_s)
        self.incident = False  # read by every collective: one attribute, no store request
        self.missing: list[int] = []  # ranks that had not issued the failed collective (after explain)
        # Set when this process raised a collective's failure: its program knows. A replica that
        # never does (stuck in its own code while the others gave up) is ended by the watchdog.
        self.raised = False
        self.exit_when_stuck = True
        self._published = False
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="unison-hang-watchdog", daemon=True)

    @staticmethod
    def interval_for(timeout_s: float) -> float:
        """Seconds between two looks at the incident counter for a job timing out after ``timeout_s``."""
        return max(0.1, min(1.0, timeout_s / 10.0))

    @classmethod
    def budget_s(cls, timeout_s: float) -> float:
        """The most an explanation takes (gathering snapshots); a job's timeout includes it."""
        return max(1.5, min(3.0, 3 * cls.interval_for(timeout_s) + 0.5))

    def start(self) -> None:
        """Start the watchdog; at exit, leave a last snapshot (``exited``) for the others."""
        self._thread.start()
        atexit.register(self._at_exit)
        # multiprocessing's children leave through os._exit after its finalizers, skipping atexit
        Finalize(None, self._at_exit, exitpriority=100)

    def stop(self) -> None:
        """Stop the watchdog (the process group is being torn down).

        Its thread ends at its next poll; it is not waited for, since a poll blocked on a store
        behind a lost link would hold up the shutdown that reports that loss.
        """
        self._stopped.set()

    # --- this replica ------------------------------------------------------------------------
    def snapshot(self, state: str, reason: str = "") -> dict[str, Any]:
        """This replica now: what it does, its recorder and its training thread's stack."""
        current = self.recorder.current()
        thread = self.recorder.last_thread() if current is None else current.thread
        if thread is None or thread not in {t.ident for t in threading.enumerate()}:
            thread = threading.main_thread().ident
        records = self.recorder.records()
        return {
            "rank": self.rank,
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "state": state,
            "reason": reason,
            "seq": max((r["seq"] for r in records), default=0),
            "current": None if current is None else current.seq,
            "records": records,
            "stack": stack_of(thread) if state != "exited" else [],
        }

    def publish(self, state: str, reason: str = "") -> None:
        """Write this replica's snapshot into the store (once: the first state is the one that counts)."""
        with self._lock:
            if self._published:
                return
            self._published = True
        if state != "exited" and self.recorder.current() is not None:
            state = "waiting"
        self.store.set(_snapshot_key(self.rank), json.dumps(self.snapshot(state, reason)))

    def _watch(self) -> None:
        while not self._stopped.wait(self.interval_s):
            try:
                if int(self.store.add(_INCIDENT, 0)) > 0:
                    self.incident = True
                    self.publish("idle")
                    break
            except Exception:  # the store is gone (job ending) or unreachable: nothing to watch
                return
        else:
            return
        self._exit_if_stuck()

    def stuck_bound_s(self) -> float:
        """How long after another replica's failure a replica that never reaches a collective lives."""
        return self.timeout_s + self.budget_s(self.timeout_s)

    def _exit_if_stuck(self) -> None:
        """Another replica's collective failed. If this replica's program does not reach a
        collective (and raise the job's report) within the collective timeout, it is stuck in
        its own code and nothing would ever end it without a launcher: print the report and exit."""
        waited_from = time.monotonic()
        if self._stopped.wait(self.stuck_bound_s()) or self.raised or not self.exit_when_stuck:
            return
        report: list[str] = []
        reader = threading.Thread(target=self._read_report, args=(report,), daemon=True)
        reader.start()
        reader.join(1.0)
        snap = self.snapshot("idle")
        stack = format_stack(snap["stack"][-_REPORT_FRAMES:])
        text = (
            f"unison: rank {self.rank} of {self.world_size} (pid {os.getpid()}) exits: a collective of this job "
            f"failed on another replica {time.monotonic() - waited_from:.0f}s ago, and this replica's program has "
            f"not reached a collective since (the collective timeout is {self.timeout_s:.0f}s), so it would never "
            "end. It was running:\n"
            f"{stack}\n" + (report[0] if report else "(the job's report could not be read: its store is gone)") + "\n"
        )
        try:
            from unison.debug.timeline import flush_active

            flush_active()  # the evidence first
        except Exception:
            pass
        try:
            os.write(2, text.encode(errors="replace"))
        finally:
            os._exit(STUCK_EXIT_CODE)

    def _read_report(self, out: list[str]) -> None:
        try:
            if self.store.check([_REPORT]):
                value = self.store.get(_REPORT)
                out.append(value.decode() if isinstance(value, bytes) else str(value))
        except Exception:
            pass

    def _at_exit(self) -> None:
        self.stop()
        if self.world_size < 2:
            return
        # Bounded: a store behind a cut link must not hold the process at exit.
        worker = threading.Thread(target=self._publish_quietly, args=("exited",), daemon=True)
        worker.start()
        worker.join(1.0)

    def _publish_quietly(self, state: str) -> None:
        try:
            self.publish(state)
        except Exception:
            pass  # the store went away first: the others will say this replica published nothing

    # --- the failure path ----------------------------------------------------------------------
    def explain(self, op: str, seq: int, reason: str) -> str:
        """Declare an incident at collective ``seq`` and return the job's report (the same everywhere).

        Bounded by :meth:`budget_s` (plus one second for a store that stopped answering).
        """
        self.raised = True
        try:
            from unison.debug.timeline import flush_active

            flush_active()  # the evidence on disk before a launcher tears the job down
        except Exception:
            pass
        result: list[str] = []
        worker = threading.Thread(target=self._explain, args=(op, seq, reason, result), daemon=True)
        worker.start()
        worker.join(self.budget_s(self.timeout_s))
        if result:
            return result[0]
        return (
            f"(No hang report: the job's rendezvous store did not answer within "
            f"{self.budget_s(self.timeout_s):.1f}s; its host is unreachable or stopped.)"
        )

    def _explain(self, op: str, seq: int, reason: str, result: list[str]) -> None:
        try:
            self.incident = True
            first = int(self.store.add(_INCIDENT, 1)) == 1
            self.publish("failed" if seq > 0 else "idle", f"{op} (#{seq}): {reason}" if seq > 0 else reason)
            deadline = time.monotonic() + self.budget_s(self.timeout_s) - 0.6
            if not first:
                text = self._wait_report(deadline)
                if text is not None:
                    result.append(text)
                    return
            snaps = self._gather(deadline)
            text = format_report(snaps, self.world_size, self.budget_s(self.timeout_s))
            if first:
                self.store.set(_REPORT, text)
            result.append(text)
        except Exception as exc:  # the store failed mid-way: say so rather than hide the collective's error
            result.append(f"(No hang report: the rendezvous store failed: {type(exc).__name__}: {exc})")
        finally:
            self._record_missing(seq)

    def _record_missing(self, seq: int) -> None:
        try:
            snaps = self._read_snapshots()
        except Exception:
            return
        self.missing = missing_at(snaps, self.world_size, seq)

    def _wait_report(self, deadline: float) -> str | None:
        while time.monotonic() < deadline + 0.3:
            if self.store.check([_REPORT]):
                value = self.store.get(_REPORT)
                return value.decode() if isinstance(value, bytes) else str(value)
            time.sleep(0.05)
        return None

    def _read_snapshots(self) -> dict[int, dict[str, Any]]:
        snaps: dict[int, dict[str, Any]] = {}
        for r in range(self.world_size):
            if self.store.check([_snapshot_key(r)]):
                raw = self.store.get(_snapshot_key(r))
                try:
                    snap = json.loads(raw.decode() if isinstance(raw, bytes) else raw)
                except (ValueError, UnicodeDecodeError):
                    continue  # not ours: a malformed value names nobody
                if isinstance(snap, dict):
                    snaps[r] = snap
        return snaps

    def _gather(self, deadline: float) -> dict[int, dict[str, Any]]:
        while True:
            snaps = self._read_snapshots()
            if len(snaps) == self.world_size or time.monotonic() > deadline:
                return snaps
            time.sleep(0.05)

    def report_after_incident(self, op: str, seq: int) -> str:
        """The report, for a replica that issues collective ``seq`` after another replica's failed."""
        self.raised = True
        self.publish("idle")
        text = self._wait_report(time.monotonic() + self.budget_s(self.timeout_s))
        return text if text is not None else self.explain(op, seq, "issued after another replica's collective failed")


# --- comparing the replicas ----------------------------------------------------------------------
def _signature(r: dict[str, Any]) -> tuple[str, str, tuple[int, ...], str]:
    # the operation kind too: a broadcast and an all-reduce given the same name differ
    return (str(r.get("op")), str(r.get("kind") or ""), tuple(r.get("shape") or ()), str(r.get("dtype")))


def _describe(r: dict[str, Any]) -> str:
    shape = "[" + ", ".join(str(d) for d in r.get("shape") or []) + "]"
    kind = r.get("kind") or ""
    what = f"{r.get('op')} ({kind})" if kind and kind.split("/")[0] != r.get("op") else r.get("op")
    return f"{what} {r.get('dtype')}{shape} at {r.get('site')}"


def first_divergence(snaps: dict[int, dict[str, Any]]) -> tuple[int, str] | None:
    """The first sequence number at which the replicas differ, and how; ``None`` if they agree.

    Replicas differ at ``k`` when they issued different collectives there (name, shape or
    dtype) or when one of them has not issued ``k`` while another has.
    """
    if not snaps:
        return None
    recs = {r: {int(x["seq"]): x for x in s.get("records", [])} for r, s in snaps.items()}
    last = {r: int(s.get("seq", 0)) for r, s in snaps.items()}
    # compare only where every replica's ring still holds its records
    start = max((min(rs) for rs in recs.values() if rs), default=1)
    for k in range(start, max(last.values()) + 1):
        issued = {r: recs[r][k] for r in snaps if k in recs[r]}
        behind = sorted(r for r in snaps if last[r] < k)
        if behind or len({_signature(x) for x in issued.values()}) > 1:
            parts = [f"rank {r} issued {_describe(x)}" for r, x in sorted(issued.items())]
            parts += [f"rank {r} never issued it (its last was #{last[r]}; {_doing(snaps[r])})" for r in behind]
            return k, f"collective #{k}: " + "; ".join(parts)
    return None


def missing_at(snaps: dict[int, dict[str, Any]], world_size: int, seq: int) -> list[int]:
    """Ranks that had not issued collective ``seq`` (or published nothing)."""
    return sorted(r for r in range(world_size) if r not in snaps or int(snaps[r].get("seq", 0)) < seq)


def _doing(snap: dict[str, Any]) -> str:
    state = snap.get("state")
    if state == "exited":
        return "the process exited"
    frames = [f for f in snap.get("stack", []) if "/unison/" not in f["file"]]
    where = f"in {frames[-1]['function']}()" if frames else ""
    if state in ("waiting", "failed") and snap.get("current"):
        return f"waiting in collective #{snap['current']}"
    return f"not in a collective, running {where}".rstrip()


def format_report(snaps: dict[int, dict[str, Any]], world_size: int, waited_s: float) -> str:
    """The hang report: divergence, missing ranks, then each replica's state, collectives and stack."""
    lines = ["--- unison hang report (every replica raises this same report) ---"]
    found = first_divergence(snaps)
    lines.append(f"First divergence: {found[1]}" if found else "First divergence: none in the recorded collectives.")
    silent = [r for r in range(world_size) if r not in snaps]
    if silent:
        lines.append(
            f"Ranks {silent} published nothing within {waited_s:.1f}s: they were killed, crashed in native "
            "code, or cannot reach the job's store."
        )
    for r in range(world_size):
        snap = snaps.get(r)
        if snap is None:
            continue
        head = f"rank {r} (pid {snap.get('pid')} on {snap.get('host')}): {_doing(snap)}"
        if snap.get("reason"):
            head += f"; failed: {snap['reason']}"
        lines.append(head)
        records = snap.get("records", [])[-_REPORT_RECORDS:]
        if records:
            lines.append("  last collectives:")
            lines += [f"    {format_record(x)}" for x in records]
        if snap.get("stack"):
            lines.append("  stack (most recent call last):")
            lines.append(format_stack(snap["stack"][-_REPORT_FRAMES:], indent="    "))
    return "\n".join(lines)
