"""torch's idle OpenMP threads spin while the host is quiet and sleep at once while it is busy.

torch splits each large CPU op over OpenMP threads that meet at a barrier. unison lets an idle
thread spin for about a millisecond before it sleeps (:mod:`unison.core.threads`): on a quiet host
that keeps a small model's step at TensorFlow's speed, where a sleeping thread takes tens of
microseconds to wake for each of a step's ~100 parallel regions. On a host whose cores other
processes keep busy (other jobs, a second replica, data-pipeline workers) spinning is the slow case:
the spinning thread holds a core that the thread everyone waits for needs (the tutorial CNN's step:
87 ms spinning, 28-36 ms sleeping at once, two busy processes on 2 cores).

libgomp reads its spin count once, but documents a second one: "if there are more OpenMP threads
than available CPUs", idle threads spin ~100 times (microseconds) instead. So at step boundaries
(``tf.function`` calls, ``apply_gradients``, ``fit``/``evaluate``/``predict`` batches,
``DistributedOptimizer.step``), at most every half second, unison reads how busy the process's CPUs
were (``/proc/stat``, the CPUs of its affinity mask) less its own CPU time. While other processes
use half a core or more (:func:`busy`), a parked helper thread holds an idle OpenMP team of enough
threads to exceed the CPUs (sleeping, no work); once the host is quiet again on two checks in a
row, the helper ends and its threads with it. While the host is busy, :mod:`unison.core.thread_probe`
also times the main thread's steps with one torch thread against torch's count and keeps the
faster; torch's count comes back when the host is quiet.

Nothing happens when the user chose a wait policy (``OMP_WAIT_POLICY``, ``GOMP_SPINCOUNT``,
``KMP_BLOCKTIME``), with ``UNISON_OMP_TUNING=0``, off Linux, or where torch's OpenMP runtime is
not libgomp.

Example:
    >>> busy(other_busy=2.0)  # two busy processes
    True
    >>> busy(other_busy=0.1)  # a quiet host
    False
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
import time
from typing import Any

from unison.core.thread_probe import ThreadProbe

__all__ = [
    "INTERVAL_S",
    "busy",
    "busy_seconds",
    "follow_load",
    "note_default_threads",
    "openmp_runtime_paths",
    "probe",
    "start",
    "state",
    "throttled",
]

INTERVAL_S = 0.5  # between two reads of /proc/stat: 50 scheduler ticks per CPU, ~20 us to read
BUSY_CORES = 0.5  # other processes' use of this process's CPUs, in cores, above which nobody spins


def _now() -> float:
    return time.monotonic()


def _own_cpu() -> float:
    """This process's CPU time, all threads (its own share of the busy CPUs)."""
    return time.process_time()


def busy(other_busy: float) -> bool:
    """Whether other processes' use of our CPUs (in cores) makes spinning the slow case."""
    return other_busy >= BUSY_CORES


def busy_seconds(cpus: set[int], path: str = "/proc/stat") -> float | None:
    """Seconds the CPUs in ``cpus`` have spent busy since boot (all processes), or None if unknown.

    Busy is every field of a ``cpuN`` line but idle and iowait: user, nice, system, irq, softirq
    and steal (time a hypervisor gave to other machines is not ours to use either).
    """
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    total = 0
    try:
        with open(path, encoding="ascii") as f:
            for line in f:
                if not line.startswith("cpu") or line.startswith("cpu "):
                    continue
                fields = line.split()
                if int(fields[0][3:]) in cpus:
                    values = [int(v) for v in fields[1:9]]
                    total += sum(values) - values[3] - values[4]
    except (OSError, ValueError, IndexError):
        return None
    return total / tick


def openmp_runtime_paths(names: tuple[str, ...] = ("libgomp",)) -> list[str]:
    """Paths of the OpenMP runtimes this process loaded (torch's), from ``/proc/self/maps``; [] off Linux."""
    try:
        with open("/proc/self/maps", encoding="utf-8") as maps:
            return sorted({line.split()[-1] for line in maps if any(n in line for n in names)})
    except OSError:
        return []


def _libgomp() -> Any:
    """The libgomp torch loaded (its ``GOMP_parallel`` entry point), or None."""
    for path in openmp_runtime_paths():
        try:
            lib = ctypes.CDLL(path)
            lib.GOMP_parallel.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint, ctypes.c_uint]
            lib.GOMP_parallel.restype = None
            return lib
        except (OSError, AttributeError):
            continue
    return None


class _Park:
    """A helper thread holding an idle OpenMP team, so libgomp counts more threads than CPUs."""

    def __init__(self, lib: Any, threads: int) -> None:
        self._release = threading.Event()
        self._ready = threading.Event()
        # The team's work is libc's free(NULL): nothing, on every thread, without the GIL.
        nothing = ctypes.cast(ctypes.CDLL(None).free, ctypes.c_void_p)

        def hold() -> None:
            try:
                lib.GOMP_parallel(nothing, None, threads, 0)
            finally:
                self._ready.set()
            self._release.wait()  # when this thread ends, libgomp ends its team's threads

        self._thread = threading.Thread(target=hold, name="unison-omp-park", daemon=True)
        self._thread.start()
        self._ready.wait(5.0)

    def end(self) -> None:
        self._release.set()
        self._thread.join(5.0)


class _Watch:
    """The state of the checks (one per process)."""

    def __init__(self) -> None:
        self.state = "off"  # "watching" or "off"
        self.cpus: set[int] = set()
        self.last_wall = 0.0
        self.last_busy: float | None = None
        self.last_own = 0.0
        self.quiet_checks = 0  # quiet checks in a row while throttled
        self.park: _Park | None = None
        self.lock = threading.Lock()
        self.default_threads = 0  # torch's count as unison left it at import; 0: never probe
        self.probe: ThreadProbe | None = None
        self.probe_declined = False  # this busy spell: the user chose a count, or changed it during a probe


_watch = _Watch()


def start(wait_state: str) -> str:
    """Begin watching when unison chose the spin count (``wait_state == "spin"``); return the state."""
    try:
        cpus = set(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = set()
    on = wait_state == "spin" and bool(cpus) and os.path.exists("/proc/stat")
    _watch.state = "watching" if on else "off"
    _watch.cpus = cpus
    if on:
        # The first sample now: the first step then acts on the load seen since import (model
        # building, data loading), not half a second into training.
        _watch.last_wall, _watch.last_own = _now(), _own_cpu()
        _watch.last_busy = busy_seconds(cpus)
    return _watch.state


def state() -> str:
    """``"watching"``, or ``"off"`` (see the module notes for when)."""
    return _watch.state


def throttled() -> bool:
    """Whether idle OpenMP threads sleep at once now (other processes were busy at the last check)."""
    return _watch.park is not None


def _throttle(on: bool) -> None:
    w = _watch
    if on and w.park is None:
        lib = _libgomp()
        if lib is None:
            w.state = "off"
            return
        import torch  # loaded by now: its threads, plus this team, must exceed the CPUs

        w.park = _Park(lib, max(2, len(w.cpus) - torch.get_num_threads() + 2))
    elif not on and w.park is not None:
        w.park.end()
        w.park = None


def note_default_threads(threads: int) -> None:
    """Record torch's thread count as unison left it at import (a different count later is a user's choice)."""
    _watch.default_threads = threads


def probe() -> ThreadProbe | None:
    """The thread-count probe of the current busy spell, if one runs (see :mod:`unison.core.thread_probe`)."""
    return _watch.probe


def _torch_threads(threads: int | None = None) -> int:
    torch = sys.modules["torch"]
    if threads is not None:
        torch.set_num_threads(threads)
    return int(torch.get_num_threads())


def _probe_allowed(w: _Watch) -> bool:
    return (
        w.default_threads > 1
        and "torch" in sys.modules
        and "OMP_NUM_THREADS" not in os.environ
        and os.environ.get("UNISON_BUSY_HOST_THREADS", "1") != "0"
        and _torch_threads() == w.default_threads
    )


def _follow_with_threads(w: _Watch, now: float) -> None:
    """On the main thread: run the thread-count probe while throttled, end it once the host is quiet."""
    if w.park is not None:
        if w.probe is None:
            if not w.probe_declined and _probe_allowed(w):
                w.probe = ThreadProbe(w.default_threads, _torch_threads)
                w.probe.start(now)
            else:
                w.probe_declined = True
        elif _torch_threads() != w.probe.threads:  # someone chose a count meanwhile: theirs stays
            w.probe, w.probe_declined = None, True
        else:
            w.probe.tick(now)
    elif w.probe is not None or w.probe_declined:
        if w.probe is not None and _torch_threads() == w.probe.threads:
            w.probe.stop()
        w.probe, w.probe_declined = None, False


def follow_load() -> bool | None:
    """At a step boundary: throttle or free OpenMP's spinning for the load now; the new state if it changed."""
    w = _watch
    if w.state != "watching":
        return None
    now = _now()
    changed = _check(w, now)
    if (
        w.park is not None or w.probe is not None or w.probe_declined
    ) and threading.current_thread() is threading.main_thread():
        _follow_with_threads(w, now)
    return changed


def _check(w: _Watch, now: float) -> bool | None:
    """The load check, at most every :data:`INTERVAL_S` (see :func:`follow_load`)."""
    if now - w.last_wall < INTERVAL_S or not w.lock.acquire(blocking=False):
        return None
    try:
        busy_now, own = busy_seconds(w.cpus), _own_cpu()
        if busy_now is None:
            w.state = "off"
            return None
        previous_busy, previous_own, elapsed = w.last_busy, w.last_own, now - w.last_wall
        w.last_wall, w.last_busy, w.last_own = now, busy_now, own
        if previous_busy is None or elapsed > 60 * INTERVAL_S:  # a first sample, or a stale one
            return None
        other = max(0.0, (busy_now - previous_busy) - (own - previous_own)) / elapsed
        if busy(other):
            w.quiet_checks = 0
            if w.park is None:
                _throttle(True)
                return True
            return None
        if w.park is None:
            return None
        w.quiet_checks += 1
        if w.quiet_checks < 2:  # spin again only when the next check agrees
            return None
        w.quiet_checks = 0
        _throttle(False)
        return False
    finally:
        w.lock.release()
