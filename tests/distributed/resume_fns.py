"""Programs the exact-resume and preemption tests run as real worker processes.

``train_ids`` trains with ``BackupAndRestore(save_freq=...)`` on arrays, a shuffled ``tf.data``
pipeline or ``distribute_datasets_from_function``, and logs, per replica, the example ids of
every training step it runs (``epoch step id,id,...``, flushed each step). ``kill_at=(epoch,
step)`` makes every replica SIGKILL itself before that step: the job dies as a machine would.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from typing import Any

import numpy as np
import torch

import unison.testing.multi_worker as harness

HERE = os.path.dirname(os.path.abspath(__file__))
ROWS, BATCH, EPOCHS, SAVE_FREQ = 48, 8, 3, 2  # 6 steps per epoch, a backup every 2 steps
KINDS = ("arrays", "tfdata", "from_function")


def make_data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    x = rng.normal(size=(ROWS, 7)).astype("float32")
    x[:, 0] = np.arange(ROWS)  # column 0 is the example id; the model never reads it
    y = (x[:, 1:5].argmax(1)).astype("int64")
    return x, y


class IdModel(torch.nn.Module):
    """A linear classifier on columns 1: that logs the ids (column 0) of the rows it trains on."""

    def __init__(self) -> None:
        super().__init__()
        self.dense = torch.nn.Linear(6, 4)
        self.where: tuple[int, int] | None = None  # (epoch, step) set by the callback
        self.log: Any = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.training and self.where is not None and self.log is not None:
            ids = ",".join(str(int(i)) for i in x[:, 0].tolist())
            self.log.write(f"{self.where[0]} {self.where[1]} {ids}\n")
            self.log.flush()
        return torch.softmax(self.dense(x[:, 1:]), dim=-1)


def _strategy(single: bool) -> Any:
    import unison as tf

    if single:
        return tf.distribute.get_strategy()
    options = tf.distribute.experimental.CommunicationOptions(timeout_seconds=60)
    if "TF_CONFIG" not in os.environ:  # under `unison launch`: its environment says who is who
        return tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)
    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    return tf.distribute.MultiWorkerMirroredStrategy(resolver, options)


def _wait_for_sigterm(log_dir: str, name: str, watcher: Any) -> None:
    """Tell the test this worker is ready for its SIGTERM, then wait until the signal arrived."""
    open(os.path.join(log_dir, name), "w").close()
    deadline = time.monotonic() + 60
    while watcher.notice_at is None:
        assert time.monotonic() < deadline, "no SIGTERM came"
        time.sleep(0.01)


def train_ids(
    backup_dir: str,
    log_dir: str,
    kind: str,
    kill_at: list[int] | None = None,
    single: bool = False,
    preempt_at: list[int] | None = None,
) -> dict:
    """``preempt_at=(epoch, step)``: worker 1 waits there for a SIGTERM from the test
    (``BackupAndRestore(save_before_preemption=True)``)."""
    import unison as tf

    strategy = _strategy(single)
    rank = strategy.extended.replica_id
    attempt_env = os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")
    with open(os.path.join(log_dir, f"pid.{attempt_env}.{rank}"), "w") as fh:
        fh.write(str(os.getpid()))
    torch.manual_seed(0)
    module = IdModel()
    with strategy.scope():
        model = tf.keras.Model(module)
        model.compile(optimizer=tf.keras.optimizers.SGD(0.1, momentum=0.9), loss="sparse_categorical_crossentropy")
    x, y = make_data()
    if kind == "arrays":
        data: dict[str, Any] = {"x": x, "y": y, "batch_size": BATCH}
    elif kind == "tfdata":
        # an unseeded shuffle that reshuffles every epoch: the order of the resumed epoch must be replayed
        data = {"x": tf.data.Dataset.from_tensor_slices((x, y)).shuffle(ROWS).batch(BATCH)}
    else:

        def dataset_fn(ctx: Any) -> Any:
            per_replica = ctx.get_per_replica_batch_size(BATCH)
            ds = tf.data.Dataset.from_tensor_slices((x, y)).shard(ctx.num_input_pipelines, ctx.input_pipeline_id)
            return ds.shuffle(ROWS).batch(per_replica)

        data = {"x": strategy.distribute_datasets_from_function(dataset_fn)}
    attempt = len([n for n in os.listdir(log_dir) if n.startswith(f"ids.{rank}.")])
    module.log = open(os.path.join(log_dir, f"ids.{rank}.{attempt}"), "w")

    class Where(tf.keras.callbacks.Callback):
        epoch = 0

        def on_epoch_begin(self, epoch: int, logs: Any = None) -> None:
            Where.epoch = epoch

        def on_train_batch_begin(self, batch: int, logs: Any = None) -> None:
            if kill_at is not None and [Where.epoch, batch] == list(kill_at):
                os.kill(os.getpid(), signal.SIGKILL)  # kill -9: no handler, no flush, no goodbye
            if preempt_at is not None and [Where.epoch, batch] == list(preempt_at) and rank == 1 and attempt == 0:
                _wait_for_sigterm(log_dir, "ready-for-sigterm", backup._watcher)
            module.where = (Where.epoch, batch)

        def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
            module.where = None

    backup = tf.keras.callbacks.BackupAndRestore(
        backup_dir, save_freq=100 if preempt_at else SAVE_FREQ, save_before_preemption=preempt_at is not None
    )
    try:
        model.fit(**data, epochs=EPOCHS, verbose=0, callbacks=[backup, Where()])
    except SystemExit as exc:  # the preemption backup is written: record where, then exit as told
        with open(os.path.join(log_dir, f"saved.{attempt}.{rank}"), "w") as fh:
            fh.write(f"{backup.saved_at[0]} {backup.saved_at[1]} {exc.code}")
        raise
    module.log.close()
    return {
        "weights": [p.detach().clone().numpy() for p in module.parameters()],
        "restored_from": backup.restored_from,
        "replicas": strategy.num_replicas_in_sync,
    }


LOOP_STEPS = 18  # 3 epochs of 6 steps; worker 1 is preempted after step 8 (in epoch 2)


def preempted_loop(ckpt_dir: str, log_dir: str, single: bool = False) -> dict:
    """A custom loop under ``PreemptionCheckpointHandler``: ``handler.run(distributed_train_step)``.

    The checkpoint holds the model, the optimizer and the distributed iterator of a shuffled,
    repeated tf.data pipeline, so the restarted job continues with the next batch.
    """
    import unison as tf

    strategy = _strategy(single)
    rank = strategy.extended.replica_id
    attempt = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    with open(os.path.join(log_dir, f"pid.{attempt}.{rank}"), "w") as fh:
        fh.write(str(os.getpid()))
    torch.manual_seed(0)
    with strategy.scope():
        net = torch.nn.Linear(6, 4)
        opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    x, y = make_data()
    dataset = tf.data.Dataset.from_tensor_slices((x[:, 1:], y)).shuffle(ROWS, seed=5).repeat().batch(BATCH)
    iterator = iter(strategy.experimental_distribute_dataset(dataset))
    ckpt = tf.train.Checkpoint(model=net, optimizer=opt, iterator=iterator)
    handler = tf.distribute.experimental.PreemptionCheckpointHandler(
        getattr(strategy, "cluster_resolver", None), ckpt, ckpt_dir
    )
    started_at = handler.total_run_calls
    open(os.path.join(log_dir, f"resumed.{attempt}.{rank}"), "w").close()  # restored: its mtime is a figure

    def step(xb: torch.Tensor, yb: torch.Tensor) -> torch.Tensor:
        per_example = torch.nn.functional.cross_entropy(net(xb), yb, reduction="none")
        loss = tf.nn.compute_average_loss(per_example, global_batch_size=BATCH)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.detach()

    def distributed_train_step(xb: torch.Tensor, yb: torch.Tensor) -> Any:
        return strategy.run(step, args=(xb, yb))

    try:
        while handler.total_run_calls < LOOP_STEPS:
            if handler.total_run_calls == 8 and rank == 1 and attempt == 0 and not single:
                _wait_for_sigterm(log_dir, "ready-for-sigterm", handler._watcher)
            xb, yb = next(iterator)
            handler.run(distributed_train_step, xb, yb)
    except SystemExit as exc:
        with open(os.path.join(log_dir, f"saved.{attempt}.{rank}"), "w") as fh:
            fh.write(f"{handler.saved_at} {exc.code}")
        raise
    handler.close()
    return {
        "weights": [p.detach().clone().numpy() for p in net.parameters()],
        "started_at": started_at,
        "attempt": attempt,
        "replicas": strategy.num_replicas_in_sync,
    }


def read_ids(log_dir: str) -> dict[int, list[tuple[int, int, list[int]]]]:
    """attempt -> [(epoch, step, ids)] over every replica's log of that attempt."""
    out: dict[int, list[tuple[int, int, list[int]]]] = {}
    for name in sorted(os.listdir(log_dir)):
        if not name.startswith("ids."):
            continue
        attempt = int(name.rsplit(".", 1)[1])
        with open(os.path.join(log_dir, name)) as fh:
            lines = fh.read().split("\n")[:-1]  # a killed writer may leave half a line
        for line in lines:
            epoch, step, ids = line.split(" ")
            out.setdefault(attempt, []).append((int(epoch), int(step), [int(i) for i in ids.split(",") if i]))
    return out


class Zygote:
    """The harness's zygote, started with this module's functions by name."""

    def __init__(self, zygote: harness.Zygote | None = None) -> None:
        self.inner = zygote or harness.shared_zygote()

    def start(self, fn: str, tmp: str, index: int, config: str, kwargs: dict) -> harness.Worker:
        return self.inner.start(f"resume_fns:{fn}", tmp, index, config, kwargs, sys_path=[HERE])


if __name__ == "__main__":  # `python resume_fns.py FUNCTION RESULT_FILE ARGS_JSON` (under a launcher)
    sys.argv[1] = f"resume_fns:{sys.argv[1]}"
    harness._main()
