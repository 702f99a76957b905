"""One system's CNN training step, timed: TF's custom-training tutorial CNN, batch 64, on CPU.

``BENCH_SYSTEM``: ``unison`` or ``tensorflow`` (the same program, ``import unison as tf`` or
``import tensorflow as tf``: the tutorial's custom loop, MirroredStrategy with one CPU replica,
``strategy.run`` of a GradientTape step inside ``tf.function``, then ``model.fit`` of the same
model), or ``plain`` (the same model and loop written in plain PyTorch, NCHW, ``torch.optim.Adam``).
``BENCH_POLICY``: ``float32`` or ``mixed_bfloat16`` (Keras's global policy; plain PyTorch: the
step under ``torch.autocast("cpu", torch.bfloat16)``). ``BENCH_THREADS``: compute threads.
Each mode runs one untimed warm-up epoch of ``BENCH_ROWS`` random images, then one timed epoch;
the step time is reported as wall time and as this process's CPU time (which a loaded shared
machine inflates less). ``BENCH_PROFILE=1`` adds the top kernels of the loop step (torch
profiler; TensorFlow's own profiler's framework-op statistics). ``BENCH_ACCURACY_EPOCHS=n``
trains the custom loop on the first ``BENCH_ACCURACY_ROWS`` MNIST training images
(``UNISON_DATA_DIR``) instead and reports the test accuracy on the 10,000 test images.
Prints one JSON line.
"""

import gzip
import importlib
import json
import os
import sys
import time

import numpy as np

SYSTEM = os.environ.get("BENCH_SYSTEM", "unison")
POLICY = os.environ.get("BENCH_POLICY", "float32")
ROWS = int(os.environ.get("BENCH_ROWS", 1920))
THREADS = int(os.environ.get("BENCH_THREADS", 1))
PROFILE = os.environ.get("BENCH_PROFILE") == "1"
ACCURACY_EPOCHS = int(os.environ.get("BENCH_ACCURACY_EPOCHS", 0))
ACCURACY_ROWS = int(os.environ.get("BENCH_ACCURACY_ROWS", 60000))
BATCH = 64
TOP = 12


def clocks():
    return time.perf_counter(), time.process_time()


def per_step(begin, end, steps):
    return {"wall_ms": (end[0] - begin[0]) / steps * 1e3, "cpu_ms": (end[1] - begin[1]) / steps * 1e3}


def mnist():
    root = os.path.join(os.environ.get("UNISON_DATA_DIR", "/work/shared/data"), "mnist")

    def read(name, offset):
        with gzip.open(os.path.join(root, name)) as f:
            return np.frombuffer(f.read(), np.uint8, offset=offset)

    x_train = read("train-images-idx3-ubyte.gz", 16).reshape(-1, 28, 28, 1).astype(np.float32) / 255
    x_test = read("t10k-images-idx3-ubyte.gz", 16).reshape(-1, 28, 28, 1).astype(np.float32) / 255
    return (
        x_train,
        read("train-labels-idx1-ubyte.gz", 8).astype(np.int64),
        x_test,
        read("t10k-labels-idx1-ubyte.gz", 8).astype(np.int64),
    )


def data():
    if ACCURACY_EPOCHS:
        x_train, y_train, x_test, y_test = mnist()
        return x_train[:ACCURACY_ROWS], y_train[:ACCURACY_ROWS], x_test, y_test
    rng = np.random.default_rng(0)
    return rng.random((ROWS, 28, 28, 1), dtype=np.float32), rng.integers(0, 10, ROWS).astype(np.int64), None, None


def torch_profile(step, steps=10):
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(steps):
            step()
    rows = sorted(prof.key_averages(), key=lambda e: e.self_cpu_time_total, reverse=True)
    total = sum(e.self_cpu_time_total for e in rows)
    return {
        "total_ms": total / steps / 1e3,
        "top": [(e.key, e.self_cpu_time_total / steps / 1e3, e.count // steps) for e in rows[:TOP]],
    }


def tf_profile(tf, step, steps=10):
    import glob
    import tempfile

    from tensorflow.python.profiler.internal import _pywrap_profiler_plugin as plugin

    logdir = tempfile.mkdtemp()
    tf.profiler.experimental.start(logdir)
    for _ in range(steps):
        step()
    tf.profiler.experimental.stop()
    xplane = sorted(glob.glob(os.path.join(logdir, "plugins", "profile", "*", "*.xplane.pb")))[-1]
    raw, ok = plugin.xspace_to_tools_data([xplane], "framework_op_stats", {})
    if not ok:
        return {"error": raw.decode(errors="replace")[:200]}
    table = json.loads(raw)[0]
    cols = [c["id"] for c in table["cols"]]
    by_type: dict[str, list[float]] = {}
    for row in table["rows"]:
        r = dict(zip(cols, [c.get("v") if isinstance(c, dict) else c for c in row["c"]]))
        if r.get("host_or_device") not in (None, "Host", "Device") or r.get("type") in ("IDLE",):
            continue
        entry = by_type.setdefault(r["type"], [0.0, 0])
        entry[0] += float(r["total_self_time"])
        entry[1] += int(r["occurrences"])
    rows = sorted(by_type.items(), key=lambda kv: kv[1][0], reverse=True)
    total = sum(v[0] for _, v in rows)
    return {"total_ms": total / steps / 1e3, "top": [(k, v[0] / steps / 1e3, v[1] // steps) for k, v in rows[:TOP]]}


def run_keras(module_name):
    tf = importlib.import_module(module_name)
    if module_name == "tensorflow":
        tf.config.threading.set_intra_op_parallelism_threads(THREADS)
        tf.config.threading.set_inter_op_parallelism_threads(THREADS)
    else:
        import torch

        torch.set_num_threads(THREADS)
    tf.keras.mixed_precision.set_global_policy(POLICY)
    x_train, y_train, x_test, y_test = data()
    rows = len(x_train)
    strategy = tf.distribute.MirroredStrategy()
    dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(rows).batch(BATCH)
    dist_dataset = strategy.experimental_distribute_dataset(dataset)

    def create_model():
        regularizer = tf.keras.regularizers.L2(1e-5)
        return tf.keras.Sequential(
            [
                tf.keras.layers.Conv2D(32, 3, activation="relu", kernel_regularizer=regularizer),
                tf.keras.layers.MaxPooling2D(),
                tf.keras.layers.Conv2D(64, 3, activation="relu", kernel_regularizer=regularizer),
                tf.keras.layers.MaxPooling2D(),
                tf.keras.layers.Flatten(),
                tf.keras.layers.Dense(64, activation="relu", kernel_regularizer=regularizer),
                # float32 logits, as Keras's mixed-precision guide writes the last layer
                tf.keras.layers.Dense(10, kernel_regularizer=regularizer, dtype="float32"),
            ]
        )

    with strategy.scope():
        loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")

        def compute_loss(labels, predictions, model_losses):
            loss = tf.nn.compute_average_loss(loss_object(labels, predictions))
            if model_losses:
                loss += tf.nn.scale_regularization_loss(tf.add_n(model_losses))
            return loss

        train_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="train_accuracy")
        model = create_model()
        optimizer = tf.keras.optimizers.Adam(learning_rate=0.001)

    def train_step(inputs):
        images, labels = inputs
        with tf.GradientTape() as tape:
            predictions = model(images, training=True)
            loss = compute_loss(labels, predictions, model.losses)
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        train_accuracy.update_state(labels, predictions)
        return loss

    @tf.function
    def distributed_train_step(dataset_inputs):
        per_replica_losses = strategy.run(train_step, args=(dataset_inputs,))
        return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica_losses, axis=None)

    def epoch():
        total_loss, num_batches = 0.0, 0
        for x in dist_dataset:
            total_loss += distributed_train_step(x)
            num_batches += 1
        return float(total_loss / num_batches), num_batches

    if ACCURACY_EPOCHS:
        for _ in range(ACCURACY_EPOCHS):
            loss, _ = epoch()
        logits = model.predict(x_test, batch_size=1000, verbose=0)
        return {"test_accuracy": float(np.mean(np.argmax(np.asarray(logits), -1) == y_test)), "loss": loss}

    out = {}
    epoch()  # warm-up: tracing (TF), lazy builds (unison)
    begin = clocks()
    loss, steps = epoch()
    out["loop"] = {**per_step(begin, clocks(), steps), "loss": loss}
    if PROFILE:
        batch = next(iter(dist_dataset))
        step = lambda: float(distributed_train_step(batch))  # noqa: E731
        out["profile"] = tf_profile(tf, step) if module_name == "tensorflow" else torch_profile(step)

    with strategy.scope():
        fit_model = create_model()
        fit_model.compile(
            optimizer=tf.keras.optimizers.Adam(learning_rate=0.001),
            loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            metrics=["accuracy"],
        )
    marks = []

    class Clock(tf.keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            marks.append(clocks())

    fit_model.fit(x_train, y_train, batch_size=BATCH, epochs=1, verbose=0)  # warm-up
    history = fit_model.fit(x_train, y_train, batch_size=BATCH, epochs=1, verbose=0, callbacks=[Clock()])
    # from the end of the first step to the end of the last: the steps, not fit's setup
    out["fit"] = {**per_step(marks[0], marks[-1], len(marks) - 1), "loss": float(history.history["loss"][-1])}
    return out


def run_plain():
    import torch
    import torch.nn.functional as F
    from torch import nn

    torch.set_num_threads(THREADS)
    x_train, y_train, x_test, y_test = data()
    images = torch.from_numpy(np.ascontiguousarray(x_train.transpose(0, 3, 1, 2)))
    labels = torch.from_numpy(y_train)
    rows = len(images)
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from tutorial_cnn import tutorial_cnn

    model = tutorial_cnn()
    kernels = [m.weight for m in model if isinstance(m, (nn.Conv2d, nn.Linear))]
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-7)
    bf16 = POLICY == "mixed_bfloat16"

    def step(x, y):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            logits = model(x).float()
        loss = F.cross_entropy(logits, y) + 1e-5 * sum(k.square().sum() for k in kernels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        return loss.detach()

    def epoch():
        total, steps = 0.0, 0
        order = torch.randperm(rows)
        for start in range(0, rows, BATCH):
            idx = order[start : start + BATCH]
            total += step(images[idx], labels[idx])
            steps += 1
        return float(total / steps), steps

    if ACCURACY_EPOCHS:
        for _ in range(ACCURACY_EPOCHS):
            loss, _ = epoch()
        with torch.no_grad():
            test = torch.from_numpy(np.ascontiguousarray(x_test.transpose(0, 3, 1, 2)))
            pred = model(test).argmax(1).numpy()
        return {"test_accuracy": float(np.mean(pred == y_test)), "loss": loss}
    epoch()
    begin = clocks()
    loss, steps = epoch()
    out = {"eager": {**per_step(begin, clocks(), steps), "loss": loss}}
    if PROFILE:
        x, y = images[:BATCH], labels[:BATCH]
        out["profile"] = torch_profile(lambda: step(x, y))
    return out


if __name__ == "__main__":
    result = run_plain() if SYSTEM == "plain" else run_keras(SYSTEM)
    print(json.dumps(result))
    sys.stdout.flush()
