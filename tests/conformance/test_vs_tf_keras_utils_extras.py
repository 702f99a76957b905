"""Keras 2's (tf_keras) utilities on unison against tf_keras 2.21: the enqueuers, ``TimedThread``,
``StepsPerExecutionTuner``, and ``audio_dataset_from_directory`` (Keras 3.15's too) on WAV files
written with the standard library's ``wave``."""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

K2 = ("tf_keras",)
BOTH = ("keras", "tf_keras")
ENQUEUERS = ("tf_keras:utils.OrderedEnqueuer", "tf_keras:utils.SequenceEnqueuer", "tf_keras:utils.GeneratorEnqueuer")


def _tens(tf, fail_at=None):
    class Tens(tf.keras.utils.Sequence):
        def __len__(self):
            return 3

        def __getitem__(self, i):
            if i == fail_at:
                raise ValueError(f"item {i} is broken")
            return np.full((2,), i * 10, "int64")

    return Tens()


@same_as_tf(*ENQUEUERS, dialects=K2)
def test_enqueuers(tf):
    utils = tf.keras.utils
    ordered = utils.OrderedEnqueuer(_tens(tf), shuffle=False)
    states = [ordered.is_running()]
    ordered.start(workers=2, max_queue_size=3)
    states.append(ordered.is_running())
    stream = ordered.get()
    items = [next(stream) for _ in range(7)]
    ordered.stop()
    states.append(ordered.is_running())

    def gen():
        yield from ([1.0, 2.0], [3.0, 4.0], [5.0, 6.0])

    generated = utils.GeneratorEnqueuer(gen())
    generated.start(workers=1, max_queue_size=2)
    from_gen = list(generated.get())
    generated.stop()
    return items, from_gen, states, isinstance(ordered, utils.SequenceEnqueuer), generated.is_running()


@pytest.mark.parametrize("case", ["broken_item", "broken_generator", "stop_before_start"])
@same_as_tf(*ENQUEUERS, edge=True, dialects=K2)
def test_enqueuer_edges(tf, case):
    utils = tf.keras.utils
    if case == "broken_item":
        enqueuer = utils.OrderedEnqueuer(_tens(tf, fail_at=2))
        enqueuer.start(workers=1, max_queue_size=2)
        stream = enqueuer.get()
        return [next(stream) for _ in range(3)]
    if case == "broken_generator":

        def gen():
            yield 1
            raise ValueError("the generator broke")

        enqueuer = utils.GeneratorEnqueuer(gen())
        enqueuer.start(workers=1, max_queue_size=2)
        return list(enqueuer.get())
    base = utils.SequenceEnqueuer(_tens(tf))
    return base.is_running(), utils.OrderedEnqueuer([]).is_running()


def _ticker(tf):
    import threading

    class Ticker(tf.keras.utils.TimedThread):
        def __init__(self):
            super().__init__(interval=0.01, name="ticker")
            self.ticks = 0
            self.ticked = threading.Event()

        def on_interval(self):
            self.ticks += 1
            if self.ticks >= 2:
                self.ticked.set()

    return Ticker()


@same_as_tf("tf_keras:utils.TimedThread", dialects=K2)
def test_timed_thread(tf):
    ticker = _ticker(tf)
    before = ticker.is_alive()
    with ticker:
        ticked = ticker.ticked.wait(10)
        alive = ticker.is_alive()
    ticker.thread.join(10)
    return before, ticked, alive, ticker.is_alive(), ticker.thread.daemon, ticker.thread.name


@same_as_tf("tf_keras:utils.TimedThread", edge=True, dialects=K2)
def test_timed_thread_twice_and_unimplemented(tf):
    ticker = _ticker(tf)
    ticker.start()
    first = ticker.thread
    ticker.start()  # already running: a warning, the same thread
    same = ticker.thread is first
    ticker.stop()
    first.join(10)
    ticker.stop()
    try:
        tf.keras.utils.TimedThread(1.0).on_interval()
        unimplemented = None
    except NotImplementedError as e:
        unimplemented = type(e).__name__
    return same, ticker.is_alive(), unimplemented


@same_as_tf("tf_keras:utils.StepsPerExecutionTuner", dialects=K2)
def test_steps_per_execution_tuner(tf):
    spe = tf.Variable(4, dtype=tf.int64)
    optimizer = tf.keras.optimizers.SGD(0.1)
    tuner = tf.keras.utils.StepsPerExecutionTuner(optimizer, spe, interval=0.01, change_spe_interval=2)
    thread = tuner.start()
    same = tuner.start() is thread
    tuner.stop()
    thread.join(10)
    # no step ran: nothing measured, nothing changed
    value = int(tuner.steps_per_execution.numpy())
    tuner.steps_per_execution = 16
    return same, value, tuner.init_spe, int(spe.numpy()), tuner.interval, tuner.spe_change_threshold


@same_as_tf("tf_keras:utils.StepsPerExecutionTuner", edge=True, dialects=K2)
def test_steps_per_execution_tuner_stopped_twice(tf):
    spe = tf.Variable(1, dtype=tf.int64)
    tuner = tf.keras.utils.StepsPerExecutionTuner(tf.keras.optimizers.SGD(0.1), spe, interval=0.01)
    tuner.stop()
    tuner.stop()
    thread = tuner.start()  # a stopped tuner's thread ends at once
    thread.join(10)
    return thread.is_alive(), int(spe.numpy()), tuner.init_spe, tuner.change_spe_interval


def _write_wavs(root, files):
    import os
    import wave

    for rel, (channels, values) in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with wave.open(path, "wb") as w:
            w.setnchannels(channels)
            w.setsampwidth(2)
            w.setframerate(8000)
            w.writeframes(np.asarray(values, "<i2").tobytes())
    return str(root)


FILES = {
    "down/a.wav": (1, [0, 16384, -16384]),
    "down/b.wav": (1, [100, -200, 300, -400, 500]),
    "up/c.wav": (1, [32767, -32768]),
    "up/d.wav": (1, [1, 2, 3, 4]),
    "up/notes.txt": (1, [0]),
}


def _batches(dataset):
    return [tuple(np.asarray(part) for part in batch) for batch in dataset]


@same_as_tf("keras:utils.audio_dataset_from_directory", dialects=BOTH)
def test_audio_dataset_from_directory(tf, tmp_path):
    root = _write_wavs(tmp_path, {**FILES, "up/notes.txt": (1, [0])})
    (tmp_path / "up" / "ignored.txt").write_text("not audio")
    ds = tf.keras.utils.audio_dataset_from_directory(root, batch_size=3, shuffle=False)
    split = tf.keras.utils.audio_dataset_from_directory(
        root, batch_size=2, shuffle=False, validation_split=0.5, subset="training", seed=1
    )
    return _batches(ds), ds.class_names, _batches(split)


@pytest.mark.parametrize("case", ["fixed_length", "no_labels", "ragged_and_length", "empty", "bad_label_mode"])
@same_as_tf("keras:utils.audio_dataset_from_directory", edge=True, dialects=BOTH)
def test_audio_dataset_edges(tf, tmp_path, case):
    make = tf.keras.utils.audio_dataset_from_directory
    if case == "empty":
        (tmp_path / "a").mkdir(exist_ok=True)
        return make(str(tmp_path), shuffle=False)
    root = _write_wavs(tmp_path, {"x/a.wav": (2, [1, 2, 3, 4, 5, 6]), "y/b.wav": (2, [7, 8])})
    if case == "fixed_length":
        return _batches(make(root, batch_size=None, output_sequence_length=2, shuffle=False, label_mode="binary"))
    if case == "no_labels":
        # (tf_keras's padded batches need labels: a fixed length batches without padding)
        return [np.asarray(b) for b in make(root, labels=None, batch_size=2, shuffle=False, output_sequence_length=3)]
    if case == "ragged_and_length":
        return make(root, ragged=True, output_sequence_length=3)
    return make(root, label_mode="onehot")


@same_as_tf("tf_keras:utils.experimental.DatasetCreator", rtol=1e-5, atol=1e-6, dialects=K2)
def test_dataset_creator_in_fit(tf):
    keras = tf.keras
    x = np.linspace(-1.0, 1.0, 24, dtype="float32").reshape(8, 3)
    y = x.sum(axis=1, keepdims=True) * 0.5

    def dataset_fn(input_context):
        batch = input_context.get_per_replica_batch_size(4)
        return tf.data.Dataset.from_tensor_slices((x, y)).batch(batch).repeat()

    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1, kernel_initializer="zeros")])
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    creator = keras.utils.experimental.DatasetCreator(dataset_fn)
    history = model.fit(creator, epochs=2, steps_per_epoch=2, verbose=0)
    return history.history["loss"], model.get_weights()


@pytest.mark.parametrize("case", ["not_callable", "bad_options"])
@same_as_tf("tf_keras:utils.experimental.DatasetCreator", edge=True, dialects=K2)
def test_dataset_creator_mistakes(tf, case):
    creator = tf.keras.utils.experimental.DatasetCreator
    if case == "not_callable":
        return creator(3)
    return creator(lambda ctx: None, input_options="fast")
