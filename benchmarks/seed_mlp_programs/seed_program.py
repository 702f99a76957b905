"""The seed program (shared/SEED_EXAMPLE.md), run on unison or on TensorFlow.

Lines marked ``# bench`` are the only additions: timers around the program's phases, the epoch
count and ``verbose`` from the command line, the device list for two replicas, and for TensorFlow
(which has one CPU device) two logical CPUs and MNIST read from the local IDX files (Keras would
download its own copy). Everything else is the seed program as a user writes it.

    python seed_program.py --framework unison --replicas 1 --epochs 5
    python seed_program.py --framework tensorflow --replicas 2 --epochs 5
"""

import argparse  # bench
import os  # bench
import time  # bench

import _record  # bench

_p = argparse.ArgumentParser()  # bench
_p.add_argument("--framework", choices=["unison", "tensorflow"], default="unison")  # bench
_p.add_argument("--replicas", type=int, choices=[1, 2], default=1)  # bench
_p.add_argument("--epochs", type=int, default=5)  # bench
_p.add_argument("--verbose", type=int, default=2)  # bench
ARGS = _p.parse_args()  # bench

if ARGS.framework == "unison":  # bench
    import unison as tf
else:  # bench
    import tensorflow as tf  # bench

    if ARGS.replicas == 2:  # bench: TF sees one CPU device; split it into two logical ones
        _cpu = tf.config.list_physical_devices("CPU")[0]  # bench
        tf.config.set_logical_device_configuration(_cpu, [tf.config.LogicalDeviceConfiguration()] * 2)  # bench

# choose the distribution strategy
if ARGS.replicas == 1:  # bench
    strategy = tf.distribute.MirroredStrategy()
else:  # bench
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

# define the model inside the strategy's scope
with strategy.scope():
    model = tf.keras.Sequential(
        [
            tf.keras.layers.Dense(128, activation="relu", input_shape=(784,)),
            tf.keras.layers.Dense(10, activation="softmax"),
        ]
    )

    # compile it with the distributed optimizer
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
t_ready = time.time()  # bench

# load the data set
if ARGS.framework == "unison":  # bench
    (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
else:  # bench
    import _idx_mnist  # bench

    (x_train, y_train), (x_test, y_test) = _idx_mnist.load_data()  # bench
x_train = x_train.reshape(-1, 784).astype("float32") / 255
x_test = x_test.reshape(-1, 784).astype("float32") / 255
t_loaded = time.time()  # bench

# train
t_fit0, cpu_fit0 = time.time(), time.process_time()  # bench
history = model.fit(x_train, y_train, epochs=ARGS.epochs, validation_data=(x_test, y_test), verbose=ARGS.verbose)
t_fit1, cpu_fit1 = time.time(), time.process_time()  # bench

if ARGS.framework == "unison":  # bench
    import torch  # bench

    _threads = torch.get_num_threads()  # bench
    _rank = int(os.environ.get("UNISON_RANK", "0"))  # bench: set by unison in the re-run replicas
else:  # bench
    _threads = tf.config.threading.get_intra_op_parallelism_threads()  # bench: 0 = TF's default
    _rank = 0  # bench: TF runs both replicas in this one process
_record.emit(
    f"{ARGS.framework}{ARGS.replicas}",
    _rank,
    strategy.num_replicas_in_sync,  # bench
    t_ready=t_ready,
    t_loaded=t_loaded,
    t_fit0=t_fit0,
    t_fit1=t_fit1,  # bench
    cpu_fit0=cpu_fit0,
    cpu_fit1=cpu_fit1,  # bench
    history=history.history,
    threads=_threads,
)  # bench
