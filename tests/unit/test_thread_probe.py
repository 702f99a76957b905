"""The thread-count probe on a busy host (core/thread_probe.py, wired in core/contention.py).

The probe's decisions are tested on a synthetic clock; its wiring into the load watch with a
recorder for the thread count; the whole path in a real process with two real busy processes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from unison.core import contention, thread_probe
from unison.core.thread_probe import MIN_CALLS, REPROBE_S, ThreadProbe

pytestmark = pytest.mark.timeout(120)

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "src")


def _run_window(probe: ThreadProbe, clock: list[float], per_call: float, calls: int = MIN_CALLS + 1) -> None:
    """``calls`` boundaries ``per_call`` seconds apart (the first may only start the window)."""
    for _ in range(calls):
        clock[0] += per_call
        probe.tick(clock[0])


def _probe(per_call: dict[int, float]) -> tuple[ThreadProbe, list[int], list[float]]:
    applied: list[int] = []
    probe = ThreadProbe(2, applied.append)
    clock = [0.0]
    probe.start(clock[0])
    for _ in range(1000):  # until the three windows are timed
        if probe.state != "probing":
            break
        clock[0] += per_call[probe.threads]
        probe.tick(clock[0])
    return probe, applied, clock


def test_keeps_one_thread_when_it_is_clearly_faster() -> None:
    probe, applied, _ = _probe({2: 0.050, 1: 0.040})
    assert probe.state == "one" and probe.threads == 1
    assert applied == [1, 2, 1]  # the A-B-A windows, then the choice
    assert len(probe.times) == 3 and probe.times[1] == pytest.approx(0.040)


def test_keeps_torch_count_when_one_thread_is_slower_or_barely_faster() -> None:
    for one in (0.060, 0.049):  # slower; 2% faster is inside the noise margin
        probe, applied, _ = _probe({2: 0.050, 1: one})
        assert probe.state == "full" and probe.threads == 2
        assert applied == [1, 2]


def test_a_slow_first_window_does_not_favour_one_thread() -> None:
    """The model's first steps (building, first calls) land in the first window: the faster full window counts."""
    applied: list[int] = []
    probe, clock = ThreadProbe(2, applied.append), [0.0]
    probe.start(0.0)
    _run_window(probe, clock, 0.300)  # warm-up steps at full threads
    _run_window(probe, clock, 0.055)  # one thread: 10% slower than the steady full count
    _run_window(probe, clock, 0.050)
    assert probe.state == "full" and probe.threads == 2


def test_windows_need_enough_boundaries_and_time() -> None:
    probe, clock = ThreadProbe(2, lambda n: None), [0.0]
    probe.start(0.0)
    _run_window(probe, clock, 0.001, calls=MIN_CALLS + 5)  # enough calls but under MIN_WINDOW_S
    assert probe.times == []
    _run_window(probe, clock, 0.1, calls=3)
    assert len(probe.times) == 1 and probe.threads == 1


def test_steps_too_slow_to_compare_keep_torch_count() -> None:
    applied: list[int] = []
    probe, clock = ThreadProbe(2, applied.append), [0.0]
    probe.start(0.0)
    _run_window(probe, clock, thread_probe.MAX_WINDOW_S / 2, calls=3)
    assert probe.state == "full" and applied == []


def test_probes_again_after_a_while_and_stop_restores_the_count() -> None:
    probe, applied, clock = _probe({2: 0.050, 1: 0.030})
    assert probe.state == "one"
    clock[0] += REPROBE_S / 2
    probe.tick(clock[0])
    assert probe.state == "one"
    clock[0] += REPROBE_S
    probe.tick(clock[0])
    assert probe.state == "probing" and probe.threads == 2  # a new probe starts at torch's count
    probe.tick(clock[0] + 0.1)
    probe.stop()
    assert probe.state == "stopped" and probe.threads == 2
    probe.tick(clock[0] + 1000.0)
    assert probe.state == "stopped"


@pytest.fixture
def watch(monkeypatch):
    """A fresh watch, throttled by hand; torch's thread count replaced by a recorder."""
    fresh = contention._Watch()
    fresh.state, fresh.cpus, fresh.default_threads = "watching", {0, 1}, 2
    monkeypatch.setattr(contention, "_watch", fresh)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.delenv("UNISON_BUSY_HOST_THREADS", raising=False)
    threads = {"n": 2, "set": []}

    def torch_threads(n: int | None = None) -> int:
        if n is not None:
            threads["n"] = n
            threads["set"].append(n)
        return threads["n"]

    monkeypatch.setattr(contention, "_torch_threads", torch_threads)
    monkeypatch.setattr(contention, "_check", lambda w, now: None)  # the load check is tested elsewhere
    clock = [100.0]
    monkeypatch.setattr(contention, "_now", lambda: clock[0])
    return fresh, threads, clock


def _boundaries(clock: list[float], per_call: float, n: int) -> None:
    for _ in range(n):
        clock[0] += per_call
        contention.follow_load()


def test_the_watch_probes_while_throttled_and_restores_when_quiet(watch) -> None:
    fresh, threads, clock = watch
    _boundaries(clock, 0.05, 3)
    assert contention.probe() is None  # quiet host: nothing probes
    fresh.park = object()  # type: ignore[assignment]  # the load check throttled
    _boundaries(clock, 0.05, 3 * (MIN_CALLS + 2))
    probe = contention.probe()
    # equal times: one thread is not worth it, torch's count stays
    assert probe is not None and probe.state == "full" and threads["set"] == [1, 2]
    fresh.park = None  # quiet again
    contention.follow_load()
    assert contention.probe() is None and threads["n"] == 2


def test_the_watch_restores_torch_count_after_one_thread_won(watch) -> None:
    fresh, threads, clock = watch
    fresh.park = object()  # type: ignore[assignment]
    contention.follow_load()
    for _ in range(3):  # one thread twice as fast
        _boundaries(clock, 0.1 if threads["n"] == 2 else 0.05, MIN_CALLS + 2)
    assert contention.probe() is not None and contention.probe().state == "one" and threads["n"] == 1
    fresh.park = None
    contention.follow_load()
    assert contention.probe() is None and threads["n"] == 2


def test_a_count_the_user_chose_is_left_alone(watch, monkeypatch) -> None:
    fresh, threads, clock = watch
    fresh.park = object()  # type: ignore[assignment]
    threads["n"] = 3  # torch.set_num_threads(3) by the user
    _boundaries(clock, 0.05, 40)
    assert contention.probe() is None and threads["set"] == []
    fresh.park = None
    contention.follow_load()
    threads["n"] = 2
    monkeypatch.setenv("UNISON_BUSY_HOST_THREADS", "0")
    fresh.park = object()  # type: ignore[assignment]
    _boundaries(clock, 0.05, 40)
    assert contention.probe() is None and threads["set"] == []


def test_a_count_changed_during_the_probe_stays(watch) -> None:
    fresh, threads, clock = watch
    fresh.park = object()  # type: ignore[assignment]
    _boundaries(clock, 0.05, 2)
    assert contention.probe() is not None
    threads["n"] = 4  # e.g. the user's tf.config.threading call
    _boundaries(clock, 0.05, 2)
    assert contention.probe() is None
    fresh.park = None
    contention.follow_load()
    assert threads["n"] == 4 and threads["set"] == []


def test_other_threads_boundaries_do_not_probe(watch) -> None:
    import threading

    fresh, threads, clock = watch
    fresh.park = object()  # type: ignore[assignment]
    worker = threading.Thread(target=_boundaries, args=(clock, 0.05, 40))
    worker.start()
    worker.join(30)
    assert contention.probe() is None and threads["set"] == []


PROGRAM = textwrap.dedent(
    """
    import subprocess, sys, time
    import unison as tf
    import torch
    from unison.core import contention
    full = torch.get_num_threads()
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    x = torch.randn(64, 64)
    step = tf.function(lambda x: (torch.tanh(x @ x) * 2).sum())
    try:
        deadline = time.monotonic() + 40
        while time.monotonic() < deadline:
            step(x)
            p = contention.probe()
            if p is not None and p.state in ("one", "full"):
                break
        p = contention.probe()
        state = None if p is None else p.state
        print("settled", state, torch.get_num_threads() == (1 if state == "one" else full))
    finally:
        for h in hogs:
            h.kill()
        for h in hogs:
            h.wait()
    deadline = time.monotonic() + 30
    while contention.probe() is not None and time.monotonic() < deadline:
        step(x)
        time.sleep(0.02)
    print("quiet", contention.probe() is None, torch.get_num_threads() == full)
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and libgomp: Linux")
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2 if hasattr(os, "sched_getaffinity") else True, reason="2 cores")
def test_two_busy_processes_start_a_probe_that_settles_and_ends() -> None:
    if contention._libgomp() is None:
        pytest.skip("torch's OpenMP runtime here is not libgomp")
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "KMP_BLOCKTIME")}
    for knob in ("UNISON_OMP_TUNING", "OMP_NUM_THREADS", "UNISON_BUSY_HOST_THREADS"):
        env.pop(knob, None)
    env["PYTHONPATH"] = SRC
    done = subprocess.run([sys.executable, "-c", PROGRAM], env=env, capture_output=True, text=True, timeout=100)
    assert done.returncode == 0, done.stderr[-2000:]
    settled, quiet = done.stdout.strip().splitlines()[-2:]
    assert settled in ("settled one True", "settled full True"), done.stdout
    assert quiet == "quiet True True"
