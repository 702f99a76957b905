"""Replica functions of test_debug.py: hangs of each kind, a straggler, a timeline."""

from __future__ import annotations

import time
from typing import Any

import torch

import unison
from unison.comm.communicator import joined

TIMEOUT_S = 3.0


def culprit_sleeps(comm: Any) -> None:
    # a replica that is slow before a collective (it stops early once the job has given up)
    deadline = time.monotonic() + 30
    while not comm.explainer.incident and time.monotonic() < deadline:
        time.sleep(0.05)
    comm.all_reduce(torch.ones(4))


def culprit_broadcasts(comm: Any) -> None:
    comm.broadcast(torch.ones(4), src=0)


def culprit_broadcasts_as_all_reduce(comm: Any) -> None:
    # a broadcast under the all-reduce's name: only the recorded operation kind tells them apart
    comm.broadcast(torch.ones(4), src=0, name="all_reduce")


def culprit_other_shape(comm: Any) -> None:
    comm.all_reduce(torch.ones(8))


def innocent_all_reduce(comm: Any) -> None:
    comm.all_reduce(torch.ones(4))


CULPRITS = {
    "sleep": culprit_sleeps,
    "op": culprit_broadcasts,
    "op_same_name": culprit_broadcasts_as_all_reduce,
    "shape": culprit_other_shape,
}


def _start_together(folder: str, world: int, rank: int) -> None:
    # The short collective timeout also bounds the rendezvous: replicas that finished importing
    # torch seconds apart on a loaded machine would time out there, before the test begins.
    import os

    open(os.path.join(folder, f"ready.{rank}"), "w").close()
    deadline = time.monotonic() + 120
    while not all(os.path.exists(os.path.join(folder, f"ready.{r}")) for r in range(world)):
        assert time.monotonic() < deadline, "the other replicas never started"
        time.sleep(0.01)


def hang(scenario: str, culprit: int, folder: str) -> dict[str, Any]:
    """Two agreed all-reduces, then the culprit misbehaves at collective #3; returns what each saw."""
    import os

    _start_together(folder, int(os.environ["UNISON_WORLD_SIZE"]), int(os.environ["UNISON_RANK"]))
    unison.init(timeout_seconds=TIMEOUT_S)
    comm = joined()
    assert comm is not None
    for _ in range(2):
        comm.all_reduce(torch.ones(4))
    if unison.rank() == culprit and scenario == "exit":
        return {"error": "", "elapsed": 0.0}
    started = time.monotonic()
    try:
        if unison.rank() == culprit:
            CULPRITS[scenario](comm)
        else:
            innocent_all_reduce(comm)
    except unison.errors.UnisonError as exc:
        return {"error": f"{type(exc).__name__}: {exc}", "elapsed": time.monotonic() - started}
    return {"error": "", "elapsed": time.monotonic() - started}


def straggling_loop(slow_rank: int, steps: int = 12) -> dict[str, Any]:
    """A raw loop in which ``slow_rank`` computes 40 ms longer each step; returns its straggler report."""
    import warnings

    unison.init(timeout_seconds=60)
    torch.manual_seed(0)
    model = torch.nn.Linear(32, 4)
    opt = unison.DistributedOptimizer(
        torch.optim.SGD(model.parameters(), lr=0.01), named_parameters=model.named_parameters()
    )
    x = torch.randn(16, 32)
    for _ in range(steps):
        if unison.rank() == slow_rank:
            time.sleep(0.04)  # the straggler's extra work (not synchronisation)
        model(x).sum().backward()
        opt.step()
        opt.zero_grad()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = unison.debug.straggler_report()
    return {
        "stragglers": report.stragglers,
        "shares": {t.rank: t.wait_share for t in report.ranks},
        "warnings": [str(w.message) for w in caught],
        "table": report.table(),
    }


def fit_slowed(slow_rank: int) -> dict[str, Any]:
    """A 2-replica fit(verbose=2) in which ``slow_rank`` is slower each step; its output and wait time."""
    import contextlib
    import io

    import numpy as np

    import unison as tf

    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    rank = strategy.extended.replica_id
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu"), tf.keras.layers.Dense(4)])
        model.compile(optimizer="sgd", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))

    class Slow(tf.keras.callbacks.Callback):
        def on_train_batch_begin(self, batch: int, logs: Any = None) -> None:
            if rank == slow_rank:
                time.sleep(0.03)  # this replica's extra work each step

    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(640, 8)).astype("float32"), rng.integers(0, 4, size=640)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        model.fit(x, y, batch_size=32, epochs=1, verbose=2, callbacks=[Slow()])
    timings = unison.debug.straggler.active_timings()
    assert timings is not None
    return {"out": out.getvalue(), "wait_s": timings.total_wait_s, "rank": rank}


def join_with_other_torch(odd_worker: int) -> str:
    """Worker ``odd_worker`` claims another torch version; returns what creating the strategy raised."""
    import json
    import os

    from unison.cluster.resolvers import TFConfigClusterResolver

    if TFConfigClusterResolver().task_id == odd_worker:
        os.environ["UNISON_DOCTOR_FAKE_VERSIONS"] = json.dumps({"torch": "0.0-test"})
    try:
        unison.distribute.MultiWorkerMirroredStrategy(
            communication_options=unison.distribute.experimental.CommunicationOptions(timeout_seconds=20)
        )
    except unison.errors.UnisonError as exc:
        return f"{type(exc).__name__}: {exc}"
    return "joined"


def straggling_report_text(slow_rank: int) -> str:
    """For docs/debugging.md: the warning and table of a 3-replica loop with one slow replica."""
    res = straggling_loop(slow_rank, steps=20)
    return "\n".join(res["warnings"]) + "\n" + res["table"]
