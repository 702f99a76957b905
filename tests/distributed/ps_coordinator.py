"""A coordinator program for the restart test: trains with BackupAndRestore under
ParameterServerStrategy, optionally dying right after an epoch's backup; writes what it saw."""

from __future__ import annotations

import json
import os
import pickle
import sys

import numpy as np
import torch

import unison as tf
from unison.cluster import ClusterSpec, SimpleClusterResolver

W = np.linspace(-1.0, 1.0, 10).astype("float32")


def dataset_fn(input_context):
    rng = np.random.default_rng(input_context.input_pipeline_id)

    def batches():
        while True:
            x = rng.standard_normal((32, 10)).astype("float32")
            yield x, (x @ W > 0).astype("int64")

    return batches()


class Observe(tf.keras.callbacks.Callback):
    """Records what the parameter servers hold when the first epoch of this run begins."""

    def __init__(self, strategy, crash_after):
        super().__init__()
        self.strategy, self.crash_after, self.seen = strategy, crash_after, None

    def on_epoch_begin(self, epoch, logs=None):
        if self.seen is None:
            kernel = self.model.layers[0].kernel
            self.seen = {
                "epoch": epoch,
                "kernel": self.strategy.read_variable(kernel).numpy(),
                "adam_step": float(
                    self.strategy.optimizer_state(self.model.optimizer.torch_optimizer)[0].get("step", 0)
                ),
            }

    def on_epoch_end(self, epoch, logs=None):
        if epoch + 1 == self.crash_after:
            sys.stdout.flush()
            os._exit(3)  # a coordinator crash, right after BackupAndRestore wrote this epoch's backup


def main() -> None:
    cluster = json.loads(os.environ["PS_TEST_CLUSTER"])
    out, backup_dir, crash_after = sys.argv[1], sys.argv[2], int(sys.argv[3])
    strategy = tf.distribute.ParameterServerStrategy(
        SimpleClusterResolver(ClusterSpec(cluster), task_type="chief", task_id=0), timeout_seconds=30
    )
    torch.manual_seed(0)
    with strategy.scope():
        model = tf.keras.Sequential(
            [
                tf.keras.layers.Dense(16, activation="relu", input_shape=(10,)),
                tf.keras.layers.Dense(2, activation="softmax"),
            ]
        )
        model.compile(tf.keras.optimizers.Adam(0.01), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    backup = tf.keras.callbacks.BackupAndRestore(backup_dir, delete_checkpoint=False)
    observe = Observe(strategy, crash_after)
    history = model.fit(
        tf.keras.utils.experimental.DatasetCreator(dataset_fn),
        epochs=4,
        steps_per_epoch=30,
        callbacks=[backup, observe],
        verbose=0,
    )
    with open(out, "wb") as f:
        pickle.dump({"history": history.history, "restored_from": backup.restored_from, "seen": observe.seen}, f)


if __name__ == "__main__":
    main()
