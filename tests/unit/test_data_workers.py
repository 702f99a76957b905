"""map (+ batch) in forked worker processes: order, determinism, errors, shutdown, AUTOTUNE's choice."""

from __future__ import annotations

import gc
import multiprocessing as mp
import os
import signal
import time

import numpy as np
import pytest
import torch

import unison as tf
from unison.data import processes
from unison.data.transforms import AUTO_PROCESSES_MIN_ELEMENTS

D = tf.data.Dataset
pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(not processes.available(), reason="worker processes need fork"),
]


def _options(k):
    opts = tf.data.Options()
    opts.threading.worker_processes = k
    return opts


def _workers():
    return [p for p in mp.active_children() if p.name.startswith("unison-data-worker")]


def _wait_no_workers(timeout=10.0):
    deadline = time.monotonic() + timeout
    while _workers() and time.monotonic() < deadline:
        time.sleep(0.05)
    return _workers()


def _with_pid(x, y):
    return x * 2, {"y": y, "pid": torch.tensor(os.getpid())}


def test_autotune_fuses_map_and_batch_into_processes_in_order():
    n = AUTO_PROCESSES_MIN_ELEMENTS

    def base():
        return D.from_tensor_slices((np.arange(n), np.arange(n) % 7)).shuffle(n, seed=3)

    fused = base().map(_with_pid, num_parallel_calls=tf.data.AUTOTUNE).batch(64)
    reference = base().map(_with_pid).batch(64)
    got, want = list(fused), list(reference)
    assert [b[0].tolist() for b in got] == [b[0].tolist() for b in want]  # same elements, same order
    assert [b[1]["y"].tolist() for b in got] == [b[1]["y"].tolist() for b in want]
    pids = {int(p) for b in got for p in b[1]["pid"]}
    if processes.usable_cores() >= 2:
        assert os.getpid() not in pids and 1 <= len(pids) <= processes.usable_cores()
        # every batch is made by one worker (map and batch fused)
        assert all(len(set(b[1]["pid"].tolist())) == 1 for b in got)
    else:
        assert pids == {os.getpid()}
    assert not _wait_no_workers()


def test_autotune_keeps_threads_for_small_inputs_unfused_maps_and_when_told():
    small = D.from_tensor_slices((np.arange(100), np.arange(100))).map(_with_pid, num_parallel_calls=tf.data.AUTOTUNE)
    assert {int(p) for b in small.batch(10) for p in b[1]["pid"]} == {os.getpid()}
    n = AUTO_PROCESSES_MIN_ELEMENTS
    big = D.from_tensor_slices((np.arange(n), np.arange(n))).map(_with_pid, num_parallel_calls=tf.data.AUTOTUNE)
    assert {int(e[1]["pid"]) for e in big.take(50)} == {os.getpid()}  # no batch after it: threads
    threads_only = big.batch(64).with_options(_options(0))
    assert {int(p) for b in threads_only.take(3) for p in b[1]["pid"]} == {os.getpid()}
    fixed_calls = D.from_tensor_slices((np.arange(n), np.arange(n))).map(_with_pid, num_parallel_calls=2).batch(64)
    assert {int(p) for b in fixed_calls.take(3) for p in b[1]["pid"]} == {os.getpid()}


def test_processes_give_the_sequential_results_every_epoch_and_deterministic_false_the_same_set():
    def source():
        return D.from_tensor_slices({"a": np.arange(300), "s": np.array([f"r{i}" for i in range(300)])}).shuffle(
            300, seed=5
        )

    ds = source()

    def fn(el):
        return {"a": el["a"] * 3, "s": el["s"], "h": torch.full((2,), float(el["a"]), dtype=torch.bfloat16)}

    opts = _options(2)
    fused = ds.map(fn, num_parallel_calls=tf.data.AUTOTUNE).batch(32).with_options(opts)
    reference = source().map(fn).batch(32)  # its own shuffle node, reshuffled in step with ds's
    for _ in range(2):  # the shuffle reshuffles each epoch: both follow it alike
        got, want = list(fused), list(reference)
        assert [b["a"].tolist() for b in got] == [b["a"].tolist() for b in want]
        assert [b["s"].tolist() for b in got] == [b["s"].tolist() for b in want]
        assert got[0]["h"].dtype == torch.bfloat16 and torch.equal(got[0]["h"], want[0]["h"])
    loose = ds.map(fn, num_parallel_calls=tf.data.AUTOTUNE, deterministic=False).batch(32).with_options(opts)
    assert sorted(int(v) for b in loose for v in b["a"]) == [3 * i for i in range(300)]
    # an unbatched map in processes keeps the order too
    unfused = list(source().map(fn, num_parallel_calls=tf.data.AUTOTUNE).with_options(opts).take(40))
    assert [int(e["a"]) for e in unfused] == [int(e["a"]) for e in source().map(fn).take(40)]
    assert not _wait_no_workers()


def test_each_worker_draws_different_random_numbers():
    ds = D.range(256).map(lambda i: torch.rand(()), num_parallel_calls=tf.data.AUTOTUNE).batch(32)
    batches = [b.tolist() for b in ds.with_options(_options(2))]
    assert batches[0] != batches[1]  # workers 0 and 1 are seeded differently
    assert len({v for b in batches for v in b}) == 256


def _bad(x):
    if int(x) == 37:
        raise ValueError("thirty-seven")
    return x


class _Unpicklable(Exception):
    def __init__(self, a, b):
        super().__init__(f"{a}-{b}")


def _bad_unpicklable(x):
    if int(x) == 5:
        raise _Unpicklable(1, 2)
    return x


def test_an_error_in_a_worker_names_the_element_and_shows_the_traceback():
    ds = D.range(100).map(_bad, num_parallel_calls=tf.data.AUTOTUNE).batch(8).with_options(_options(2))
    seen = []
    with pytest.raises(ValueError, match="thirty-seven") as info:
        for b in ds:
            seen.append(b.tolist())
    notes = " ".join(info.value.__notes__)
    assert "on element 37 of its input" in notes and "in _bad" in notes and "Traceback in the worker" in notes
    assert [v for b in seen for v in b] == list(range(32))  # the batches before the failing one came out
    with pytest.raises(Exception, match="1-2") as info:
        list(D.range(20).map(_bad_unpicklable, num_parallel_calls=2).batch(4).with_options(_options(2)))
    assert "on element 5" in " ".join(info.value.__notes__)
    with pytest.raises(ValueError, match="different shapes"):
        list(
            D.range(10)
            .map(lambda x: torch.zeros(int(x) % 2 + 1), num_parallel_calls=2)
            .batch(4)
            .with_options(_options(2))
        )
    assert not _wait_no_workers()


def test_workers_stop_when_the_iterator_is_dropped_closed_or_interrupted():
    ds = D.range(10**6).map(lambda x: x + 1, num_parallel_calls=tf.data.AUTOTUNE).batch(16)
    ds = ds.prefetch(2).with_options(_options(2))  # started from the prefetch thread
    it = iter(ds)
    assert next(it).tolist() == list(range(1, 17))
    assert len(_workers()) == 2
    it.close()
    assert not _wait_no_workers()
    it = iter(ds)
    next(it)
    del it
    gc.collect()
    assert not _wait_no_workers()
    with pytest.raises(KeyboardInterrupt):
        for i, _ in enumerate(ds):
            if i == 3:
                raise KeyboardInterrupt
    gc.collect()
    assert not _wait_no_workers()


def test_workers_ignore_sigint_and_a_dead_worker_is_reported():
    ds = D.range(4000).map(lambda x: x, num_parallel_calls=2).batch(10).with_options(_options(2))
    it = iter(ds)
    next(it)
    for p in _workers():
        os.kill(p.pid, signal.SIGINT)  # Ctrl-C reaches the whole process group: workers leave it to us
    time.sleep(0.3)
    assert sum(len(b) for b in it) == 3990
    it = iter(D.range(10**6).map(lambda x: x, num_parallel_calls=2).batch(10).with_options(_options(2)))
    next(it)
    os.kill(_workers()[0].pid, signal.SIGKILL)
    with pytest.raises(RuntimeError, match="exited unexpectedly with exit code -9"):
        for _ in range(10**5):
            next(it)
    it.close()
    assert not _wait_no_workers()


def test_bad_worker_processes_option():
    with pytest.raises(ValueError, match="worker_processes must be None.*Received: -1"):
        list(D.range(4).map(lambda x: x, num_parallel_calls=2).with_options(_options(-1)))


def _os_error(x):
    if int(x) == 3:
        raise FileNotFoundError("no such image: 3.png")
    return x


def test_an_os_error_of_the_function_is_the_functions_error_not_a_dead_worker():
    with pytest.raises(FileNotFoundError, match="3.png") as info:
        list(D.range(10).map(_os_error, num_parallel_calls=2).batch(2).with_options(_options(2)))
    assert "on element 3" in " ".join(info.value.__notes__)
