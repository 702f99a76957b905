"""While other processes keep the cores busy: time one intra-op thread against torch's count, keep the faster.

On a shared host no fixed thread count is best. With two busy processes on this project's 2 cores
(idle threads already sleeping at once, :mod:`unison.core.contention`), one torch thread made the
tutorial CNN's step 15% faster (20.4 ms against 24.0) and the FCN's 8% (57.4 against 62.4): their
many small parallel regions each wait for the team's descheduled thread. The same single thread
made the DCGAN 13% slower (430 against 379 ms), the text model 23% and the Transformer 14%: their
large kernels gain more from a second thread's share of the cores than they lose at the barriers
(``benchmarks/results/after_session14.md``). So unison measures, per process, at step boundaries.

While the host is busy, a probe times three windows of steps: torch's thread count, one thread,
torch's count again (each window at least :data:`MIN_CALLS` step boundaries and
:data:`MIN_WINDOW_S` seconds; the boundary right after a switch is not timed, it carries the
switch's one-time costs). One thread is kept when its time per boundary is below :data:`GAIN`
times the faster of the two other windows (the A-B-A order guards against a load that drifts
during the probe, and the first window may still hold the model's first, slow steps); otherwise
torch's count comes back. The probe repeats every :data:`REPROBE_S` seconds while
the host stays busy, and the count comes back as soon as the host is quiet.

Results may differ in the last bits while one thread is used, as with any thread count: torch
splits some reductions by thread. Nothing changes when the user chose a count (``OMP_NUM_THREADS``,
``torch.set_num_threads``, ``tf.config.threading``, a multi-replica launch), when torch has one
thread anyway, or with ``UNISON_BUSY_HOST_THREADS=0``. The probe acts only on the main thread's
step boundaries: OpenMP keeps the thread count per calling thread.

Example:
    >>> counts = []
    >>> probe = ThreadProbe(2, counts.append)
    >>> probe.start(0.0)
    >>> probe.state
    'probing'
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["GAIN", "MAX_WINDOW_S", "MIN_CALLS", "MIN_WINDOW_S", "REPROBE_S", "ThreadProbe"]

MIN_CALLS = 6  # step boundaries per timed window
MIN_WINDOW_S = 0.25  # and at least this long: ~10 of the CNN's loaded steps
MAX_WINDOW_S = 20.0  # fewer boundaries than MIN_CALLS by then: steps too slow to compare, keep torch's count
REPROBE_S = 60.0  # while the host stays busy, measure again after this long (the load may have changed)
GAIN = 0.95  # one thread must be at least 5% faster: noise must not flip the count


class ThreadProbe:
    """Times step boundaries with ``full`` threads and with one; keeps the faster (see the module notes).

    ``set_threads(n)`` applies a thread count (``torch.set_num_threads`` in use). The probe is pure
    bookkeeping on the ``now`` values it is given, so it is tested with a synthetic clock.

    States: ``"probing"`` (a window is being timed), ``"one"`` or ``"full"`` (settled until the
    next probe), ``"stopped"`` (the host is quiet again; torch's count is back).
    """

    def __init__(self, full: int, set_threads: Callable[[int], object]) -> None:
        self.full = full
        self._set = set_threads
        self.state = "stopped"
        self.threads = full  # the count this probe last applied
        self.times: list[float] = []  # seconds per boundary of each finished window
        self._window_start: float | None = None
        self._calls = 0
        self._settled_at = 0.0

    def _apply(self, threads: int) -> None:
        if threads != self.threads:
            self._set(threads)
            self.threads = threads
        self._window_start, self._calls = None, 0

    def start(self, now: float) -> None:
        """Begin a probe: the first window runs with torch's count."""
        self.state, self.times = "probing", []
        self._apply(self.full)
        self._window_start, self._calls = now, 0  # no switch happened: this boundary starts the window

    def stop(self) -> None:
        """The host is quiet: torch's count back, no more probing."""
        self._apply(self.full)
        self.state = "stopped"

    def _settle(self, threads: int, now: float) -> None:
        self._apply(threads)
        self.state, self._settled_at = ("one" if threads == 1 else "full"), now

    def tick(self, now: float) -> None:
        """A step boundary on the main thread while the host is busy."""
        if self.state in ("one", "full"):
            if now - self._settled_at >= REPROBE_S:
                self.start(now)
            return
        if self.state != "probing":
            return
        if self._window_start is None:  # the first boundary after a switch starts the window
            self._window_start = now
            return
        self._calls += 1
        elapsed = now - self._window_start
        if self._calls < MIN_CALLS or elapsed < MIN_WINDOW_S:
            if elapsed > MAX_WINDOW_S:  # steps this slow: a probe would take minutes; keep torch's count
                self._settle(self.full, now)
            return
        self.times.append(elapsed / self._calls)
        if len(self.times) == 1:
            self._apply(1)
        elif len(self.times) == 2:
            self._apply(self.full)
        else:
            one, full = self.times[1], min(self.times[0], self.times[2])
            self._settle(1 if one < GAIN * full else self.full, now)
