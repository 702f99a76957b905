"""Programs the multi-worker tests run as real worker processes.

Workers are started through :mod:`unison.testing.multi_worker` (forked from a zygote, or as
``python multi_worker_fns.py FUNCTION RESULT_FILE ARGS_JSON`` under a launcher), each with its own
``TF_CONFIG`` as a TF user starts workers by hand; each pickles its function's result. The same
functions also run in the test process itself (one process on the global batch: the reference).
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

import unison.testing.multi_worker as harness
from unison.testing.multi_worker import Worker

HERE = os.path.dirname(os.path.abspath(__file__))
N_ROWS, BATCH = 19 * 16 + 2, 16  # 20 Adam steps, an uneven last batch


def make_data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 12)).astype("float32")
    y = (x[:, :4].argmax(1) + (x[:, 4] > 1)).astype("int64") % 4
    return x, y


def strategy_from_env(replicas_per_worker: int = 1, timeout: float = 60.0) -> Any:
    import unison as tf

    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver(num_accelerators={"CPU": replicas_per_worker})
    options = tf.distribute.experimental.CommunicationOptions(timeout_seconds=timeout)
    return tf.distribute.MultiWorkerMirroredStrategy(resolver, options)


def _mlp(tf: Any) -> Any:
    return tf.keras.Sequential(
        [
            tf.keras.layers.Dense(32, activation="relu", input_shape=(12,)),
            tf.keras.layers.BatchNormalization(),
            tf.keras.layers.Dense(4, activation="softmax"),
        ]
    )


def keras_and_custom_loops(
    replicas_per_worker: int = 1, single: bool = False, keras_only: bool = False, default: bool = False
) -> dict:
    """Keras fit, a custom loop (strategy.run) and distribute_datasets_from_function, all in one run.

    ``default``: ``MultiWorkerMirroredStrategy()`` exactly as a user writes it (the launcher's
    environment decides), instead of an explicit TF_CONFIG resolver.
    """
    import unison as tf

    if single:
        strategy = tf.distribute.get_strategy()
    elif default:
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
    else:
        strategy = strategy_from_env(replicas_per_worker)
    torch.manual_seed(0)
    with strategy.scope():
        model = _mlp(tf)
        model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    x, y = make_data(N_ROWS)
    xv, yv = make_data(101, seed=1)
    history = model.fit(x, y, batch_size=BATCH, epochs=1, validation_data=(xv, yv), verbose=0)
    out = {
        "keras": [w.copy() for w in model.get_weights()],
        "history": history.history,
        "replicas": strategy.num_replicas_in_sync,
        "chief": bool(strategy.extended.should_checkpoint),
    }
    if keras_only:
        return out

    # a raw PyTorch loop inside strategy.run, fed by experimental_distribute_dataset
    torch.manual_seed(1)
    with strategy.scope():
        net = torch.nn.Sequential(torch.nn.Linear(12, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))
        opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    batches = [
        (torch.from_numpy(x[i : i + BATCH]), torch.from_numpy(y[i : i + BATCH])) for i in range(0, N_ROWS, BATCH)
    ]

    def step(xb: torch.Tensor, yb: torch.Tensor, global_n: int) -> torch.Tensor:
        per_example = F.cross_entropy(net(xb), yb, reduction="none")
        loss = tf.nn.compute_average_loss(per_example, global_batch_size=global_n)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return per_example.sum().detach()

    for (xb, yb), (gx, _) in zip(strategy.experimental_distribute_dataset(batches), batches):
        strategy.run(step, args=(xb, yb, len(gx)))
    out["custom"] = [p.detach().numpy().copy() for p in net.parameters()]

    # one input pipeline per replica: each takes its own rows of every global batch
    def dataset_fn(ctx: Any) -> list:
        from unison.distribute.input import shard_bounds

        rows = []
        for i in range(0, N_ROWS, BATCH):
            a, b = shard_bounds(len(x[i : i + BATCH]), ctx.num_input_pipelines, ctx.input_pipeline_id)
            rows.append((x[i : i + BATCH][a:b], y[i : i + BATCH][a:b]))
        return rows

    torch.manual_seed(2)
    with strategy.scope():
        model2 = _mlp(tf)
        model2.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    model2.fit(strategy.distribute_datasets_from_function(dataset_fn), epochs=1, verbose=0)
    out["from_function"] = [w.copy() for w in model2.get_weights()]
    return out


def train_with_backup(
    backup_dir: str, stop_after: int = 0, epochs: int = 2, save_freq: int = 5, single: bool = False
) -> dict:
    """Keras fit with BackupAndRestore; ``stop_after`` > 0 interrupts every replica at that step."""
    import unison as tf

    strategy = tf.distribute.get_strategy() if single else strategy_from_env()
    torch.manual_seed(0)
    with strategy.scope():
        model = _mlp(tf)
        model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    x, y = make_data(N_ROWS)

    class Interrupt(tf.keras.callbacks.Callback):
        seen = 0

        def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
            Interrupt.seen += 1
            if Interrupt.seen == stop_after:
                raise KeyboardInterrupt(f"interrupted after {stop_after} steps")

    backup = tf.keras.callbacks.BackupAndRestore(backup_dir, save_freq=save_freq)
    callbacks = [backup] + ([Interrupt()] if stop_after else [])
    try:
        model.fit(x, y, batch_size=BATCH, epochs=epochs, verbose=0, callbacks=callbacks)
    except KeyboardInterrupt:
        return {"interrupted": True}
    return {
        "weights": [w.copy() for w in model.get_weights()],
        "restored_from": backup.restored_from,
        "replicas": strategy.num_replicas_in_sync,
    }


def collective_loop(marker_dir: str, timeout: float) -> dict:
    """Reduce forever (until a peer disappears); writes a marker once training is under way."""
    strategy = strategy_from_env(timeout=timeout)
    rank = strategy.extended.replica_id
    with open(os.path.join(marker_dir, f"pid.{rank}"), "w") as fh:
        fh.write(str(os.getpid()))
    for i in range(10**9):
        strategy.reduce("SUM", torch.ones(256))
        if i == 50:
            open(os.path.join(marker_dir, f"running.{rank}"), "w").close()
    return {}


def just_join(timeout: float) -> dict:
    """Create the strategy (the rendezvous) and reduce once."""
    strategy = strategy_from_env(timeout=timeout)
    return {"sum": strategy.reduce("SUM", torch.ones(1)).item()}


def fault_program(backup_dir: str, work_dir: str, single: bool = False) -> dict | None:
    """2 epochs x 70 steps with BackupAndRestore(save_freq=50), run under `unison launch`.

    Records its pid per attempt and, on the chief, every step it completes (``progress``).
    """
    import unison as tf

    attempt = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    if single:
        strategy = tf.distribute.get_strategy()
    else:
        strategy = tf.distribute.MultiWorkerMirroredStrategy(
            communication_options=tf.distribute.experimental.CommunicationOptions(timeout_seconds=30)
        )
    rank = strategy.extended.replica_id
    with open(os.path.join(work_dir, f"pid.{attempt}.{rank}"), "w") as fh:
        fh.write(str(os.getpid()))
    torch.manual_seed(0)
    with strategy.scope():
        model = tf.keras.Sequential(
            [
                tf.keras.layers.Dense(32, activation="relu", input_shape=(12,)),
                tf.keras.layers.Dense(4, activation="softmax"),
            ]
        )
        model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    x, y = make_data(FAULT_ROWS)
    progress = open(os.path.join(work_dir, "progress"), "a") if rank == 0 else None

    class Progress(tf.keras.callbacks.Callback):
        epoch = 0

        def on_epoch_begin(self, epoch: int, logs: Any = None) -> None:
            Progress.epoch = epoch

        def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
            if progress is not None:
                progress.write(f"{attempt} {Progress.epoch * FAULT_STEPS + batch}\n")
                progress.flush()

    backup = tf.keras.callbacks.BackupAndRestore(backup_dir, save_freq=50)
    model.fit(x, y, batch_size=16, epochs=2, verbose=0, callbacks=[backup, Progress()])
    if rank != 0:
        return None
    return {
        "weights": [w.copy() for w in model.get_weights()],
        "restored_from": backup.restored_from,
        "attempt": attempt,
        "replicas": strategy.num_replicas_in_sync,
    }


FAULT_STEPS = 70
FAULT_ROWS = FAULT_STEPS * 16


def atomic_kill_trials(backup_dir: str, trials: int, seed: int) -> dict:
    """Kill a training process (SIGKILL) at random moments while it backs up every step.

    Each trial forks a child that first checks that the newest backup is complete, restores it
    through BackupAndRestore (reporting where it resumed) and trains on, backing up after every
    step; the parent kills it at a random moment. Forking after the imports keeps trials fast.
    """
    import random
    import signal
    import traceback

    import unison as tf
    from unison.train.files import BackupFiles, loads

    torch.set_num_threads(1)  # no OpenMP pool in the parent, so forking is safe
    rng = random.Random(seed)
    gen = np.random.default_rng(seed)
    x = gen.normal(size=(256, 256)).astype("float32")
    y = gen.integers(0, 4, size=256).astype("int64")

    def build() -> Any:
        torch.manual_seed(0)
        model = tf.keras.Sequential(
            [
                tf.keras.layers.Dense(1024, activation="relu", input_shape=(256,)),
                tf.keras.layers.Dense(256, activation="relu"),
                tf.keras.layers.Dense(4, activation="softmax"),
            ]
        )
        model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
        return model

    build().fit(x[:16], y[:16], epochs=1, verbose=0)  # load everything lazy before forking
    status = backup_dir + ".status"
    resumed, errors, mid_write = [], [], 0
    for trial in range(trials):
        if os.path.exists(status):
            os.remove(status)
        pid = os.fork()
        if pid == 0:  # the child: check, restore, train until killed
            try:
                files = BackupFiles(backup_dir, prefix="backup").checkpoints()
                if files:
                    with open(files[-1], "rb") as fh:
                        loads(fh.read(), files[-1])  # the newest backup is always complete
                backup = tf.keras.callbacks.BackupAndRestore(backup_dir, save_freq=1, delete_checkpoint=False)

                class Report(tf.keras.callbacks.Callback):
                    """Says where the backup callback (which runs first) resumed."""

                    def __init__(self, restorer: Any) -> None:
                        super().__init__()
                        self.restorer = restorer

                    def on_train_begin(self, logs: Any = None) -> None:
                        with open(status + ".tmp", "w") as fh:
                            fh.write(json.dumps(self.restorer.restored_from))
                        os.replace(status + ".tmp", status)

                build().fit(x, y, batch_size=8, epochs=10**6, verbose=0, callbacks=[backup, Report(backup)])
            except BaseException:
                with open(status, "w") as fh:
                    fh.write(json.dumps({"error": traceback.format_exc()}))
                os._exit(1)
            os._exit(0)
        deadline = time.monotonic() + 120
        while not os.path.exists(status) and time.monotonic() < deadline:
            time.sleep(0.01)
        report = json.loads(open(status).read()) if os.path.exists(status) else {"error": "no report"}
        if isinstance(report, dict):
            errors.append(f"trial {trial}: {report['error']}")
        else:
            resumed.append(None if report is None else report[0] * 32 + report[1])
        time.sleep(rng.uniform(0.05, 0.5))  # a random moment of the child's save-every-step loop
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        mid_write += any(name.startswith(".tmp-") for name in os.listdir(backup_dir))
    final = BackupFiles(backup_dir, prefix="backup").restore_latest()
    return {
        "resumed": resumed,
        "errors": errors,
        "mid_write": mid_write,
        "final_step": None if final is None else final["epoch"] * 32 + final["step"],
    }


# --- starting workers ---------------------------------------------------------------------------
def start_worker(
    fn: str, tmp: str, index: int, config: str, kwargs: dict, prefix: list[str] | None = None, **extra_env: str
) -> Worker:
    """Start one worker as a fresh ``python`` process running this module's ``fn(**kwargs)``."""
    return harness.start_worker(
        f"multi_worker_fns:{fn}", tmp, index, config, kwargs, prefix=prefix, sys_path=[HERE], **extra_env
    )


class Zygote:
    """The harness's zygote, started with this module's functions by name."""

    def __init__(self, zygote: harness.Zygote | None = None) -> None:
        self.inner = zygote or harness.Zygote()

    def start(self, fn: str, tmp: str, index: int, config: str, kwargs: dict, netns: str | None = None) -> Worker:
        return self.inner.start(f"multi_worker_fns:{fn}", tmp, index, config, kwargs, netns=netns, sys_path=[HERE])


def shared_zygote() -> Zygote:
    """One zygote for the whole test session (its start-up is paid once)."""
    return Zygote(harness.shared_zygote())


if __name__ == "__main__":  # `python multi_worker_fns.py FUNCTION RESULT_FILE ARGS_JSON` (under a launcher)
    sys.argv[1] = f"multi_worker_fns:{sys.argv[1]}"
    harness._main()
