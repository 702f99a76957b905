"""Horovod's Keras elastic program (model.fit inside hvd.elastic.run) for test_elastic_inplace.py.

Shaped like Horovod's examples/elastic/tensorflow2/tensorflow2_keras_mnist_elastic.py: a
KerasState, the reset callback that scales the learning rate by hvd.size(), and fit with
UpdateEpochStateCallback, UpdateBatchStateCallback and CommitStateCallback; the data is a small
synthetic problem. Writes the same files as elastic_inplace_script.py ($OUT/pid.<worker>,
steps.<worker>, started.<worker>, result.<worker>) and honours the same $OUT/hold file.
"""

import faulthandler
import json
import os
import signal
import time

import numpy as np

import unison as hvd
from unison import keras

EPOCHS, STEPS, BATCH, BASE_LR = 6, 12, 16, 0.05


def main() -> None:
    faulthandler.register(signal.SIGUSR1)  # `kill -USR1 PID` prints where a worker is
    out = os.environ["OUT"]
    hvd.init()
    worker = os.environ.get("UNISON_ELASTIC_WORKER") or str(hvd.rank())
    with open(os.path.join(out, f"pid.{worker}"), "w") as f:
        f.write(str(os.getpid()))
    hold = os.path.join(out, "hold")
    rng = np.random.default_rng(0)
    centers = rng.normal(size=(4, 8)).astype("float32") * 2.0
    labels = np.repeat(np.arange(4), 256)
    data = (centers[labels] + rng.normal(size=(len(labels), 8))).astype("float32")
    keras.utils.set_random_seed(int(worker))  # different starting weights: sync() must give rank 0's
    model = keras.Sequential(
        [keras.Input(shape=(8,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(4)]
    )
    opt = hvd.DistributedOptimizer(keras.optimizers.SGD(BASE_LR * hvd.size()))
    model.compile(optimizer=opt, loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    state = hvd.elastic.KerasState(model, batch=0, epoch=0)

    def on_state_reset() -> None:
        state.model.optimizer.learning_rate = BASE_LR * hvd.size()

    state.register_reset_callbacks([on_state_reset])
    log = open(os.path.join(out, f"steps.{worker}"), "a")

    class Log(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            entry = dict(rank=hvd.rank(), size=hvd.size(), pid=os.getpid(), epoch=state.epoch, batch=state.batch)
            lr = float(state.model.optimizer.learning_rate)
            log.write(json.dumps({**entry, "time": time.time(), "lr": lr}) + "\n")
            log.flush()
            if os.path.exists(hold):
                time.sleep(0.08)
            while os.path.exists(hold) and state.epoch == EPOCHS - 1 and state.batch == STEPS - 2:
                time.sleep(0.05)  # hold before the last step until the test is done
                state.check_host_updates()

    callbacks = [
        Log(),  # before the state callbacks: it sees the batch just run
        hvd.elastic.UpdateEpochStateCallback(state),
        hvd.elastic.UpdateBatchStateCallback(state),
        hvd.elastic.CommitStateCallback(state),
    ]

    @hvd.elastic.run
    def train(state: hvd.elastic.KerasState) -> None:
        with open(os.path.join(out, f"started.{worker}"), "a") as f:  # each (re-)entry, after sync
            f.write(json.dumps(dict(rank=hvd.rank(), size=hvd.size(), epoch=state.epoch, batch=state.batch)) + "\n")
        perm = np.random.default_rng(state.epoch).permutation(len(labels))
        shard = perm[hvd.rank() :: hvd.size()][: STEPS * BATCH]
        # fixed per-worker batch; a resumed epoch runs its remaining steps (Horovod's example
        # restarts the epoch's count instead)
        state.model.fit(
            data[shard],
            labels[shard],
            batch_size=BATCH,
            epochs=EPOCHS - state.epoch,
            shuffle=False,
            callbacks=callbacks,
            verbose=0,
        )

    train(state)
    pred = model.predict(data, verbose=0).argmax(1)
    acc = float((pred == labels).mean())
    with open(os.path.join(out, f"result.{worker}"), "w") as f:
        json.dump(dict(acc=acc, rank=hvd.rank(), size=hvd.size(), pid=os.getpid()), f)


if __name__ == "__main__":  # pytest's doctest collection imports this file: run nothing then
    main()
