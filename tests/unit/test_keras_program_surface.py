"""What keras.io's and TensorFlow's tutorial programs (examples/keras_io, examples/tf_tutorials) needed.

Each test pins one Keras 3 behaviour those programs rely on, independent of the programs themselves.
"""

from __future__ import annotations

import io
import re
from contextlib import redirect_stdout
from pathlib import Path

import numpy as np
import pytest
import torch

import unison as tf
from unison import keras


def _text_tree(root: Path) -> Path:
    for label, words in (("pos", "good fine"), ("neg", "bad awful"), ("unsup", "neither")):
        (root / label).mkdir(parents=True)
        for i in range(4):
            (root / label / f"{i}_1.txt").write_text(f"{words} {i}")
    return root


def test_class_names_may_be_a_subset_of_the_folders(tmp_path):
    # keras.io's IMDB example passes class_names=["pos", "neg"] with train/unsup beside them
    root = _text_tree(tmp_path / "train")
    ds = keras.utils.text_dataset_from_directory(root, class_names=["pos", "neg"], shuffle=False, batch_size=16)
    assert ds.class_names == ["pos", "neg"]
    texts, labels = next(iter(ds))
    assert len(texts) == 8  # unsup's files are left out
    assert [t.numpy().decode("utf-8").split()[0] for t in texts] == ["good"] * 4 + ["bad"] * 4  # the given order
    assert labels.tolist() == [0] * 4 + [1] * 4
    with pytest.raises(ValueError, match=r"Expected: \['neg', 'pos', 'unsup'\] \(or a subset of it\)"):
        keras.utils.text_dataset_from_directory(root, class_names=["pos", "cow"])


def test_string_input_model_evaluates_a_dataset_of_raw_strings():
    # keras.io's "end-to-end model": keras.Input(shape=(1,), dtype="string") -> TextVectorization -> model
    texts = np.array(["good film", "bad film", "good good", "bad bad"] * 4)
    labels = np.array([1, 0, 1, 0] * 4, dtype="float32")
    vectorize = keras.layers.TextVectorization(max_tokens=10, output_sequence_length=3)
    vectorize.adapt(texts)
    inputs = keras.Input(shape=(1,), dtype="string")
    x = keras.layers.Embedding(10, 4)(vectorize(inputs))
    outputs = keras.layers.Dense(1, activation="sigmoid")(keras.layers.GlobalAveragePooling1D()(x))
    model = keras.Model(inputs, outputs)
    model.compile(loss="binary_crossentropy", optimizer="adam", metrics=["accuracy"])
    ds = tf.data.Dataset.from_tensor_slices((texts, labels)).batch(8)  # batches of shape (8,): one rank short
    loss, accuracy = model.evaluate(ds, verbose=0)
    assert np.isfinite(loss) and 0.0 <= accuracy <= 1.0
    assert model.predict(ds, verbose=0).shape == (16, 1)


def test_one_label_array_feeds_the_only_output_with_a_loss():
    # keras.io's miniature GPT: outputs=[logits, embeddings], loss=[loss_fn, None], y one array
    torch.manual_seed(0)
    inputs = keras.Input(shape=(5,), dtype="int32")
    h = keras.layers.Embedding(8, 6)(inputs)
    logits = keras.layers.Dense(8)(h)
    model = keras.Model(inputs, [logits, h])
    model.compile("adam", loss=[keras.losses.SparseCategoricalCrossentropy(from_logits=True), None])
    x = np.random.default_rng(0).integers(0, 8, (64, 5))
    history = model.fit(x, (x + 1) % 8, epochs=3, batch_size=16, verbose=0)
    losses = history.history["loss"]
    assert len(losses) == 3 and losses[-1] < losses[0], losses
    assert set(history.history) == {"loss"}  # Keras 3: no `<output>_loss` beside the only loss
    assert [p.shape for p in model.predict(x[:2], verbose=0)] == [(2, 5, 8), (2, 5, 6)]


def test_epoch_line_of_a_dataset_of_unknown_length_counts_its_steps(tmp_path):
    path = tmp_path / "lines.txt"
    path.write_text("a\nb\nc\n")
    ds = tf.data.TextLineDataset([str(path)]).map(lambda s: (np.ones((1, 2), "float32"), np.ones((1, 1), "float32")))
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    out = io.StringIO()
    with redirect_stdout(out):
        model.fit(ds, epochs=1, verbose=2)
    assert re.search(r"^3/3 - .* - loss: [\d.e+-]+$", out.getvalue(), re.M), out.getvalue()


def test_sequential_adds_the_last_axis_of_size_1_as_a_functional_model_does():
    # TF's regression tutorial: Normalization(input_shape=[1,]) then fit/predict on a 1-D array
    model = keras.Sequential([keras.layers.Dense(1, input_shape=[1])])
    model.compile("adam", "mae")
    x = np.linspace(0.0, 1.0, 32).astype("float32")
    model.fit(x, 2 * x, epochs=1, verbose=0)
    assert model.predict(x[:4], verbose=0).shape == (4, 1)
    assert model.output_shape == (None, 1)


def test_output_shape_of_sequential_and_functional_models():
    seq = keras.Sequential([keras.layers.Dense(7 * 7 * 4, input_shape=(10,)), keras.layers.Reshape((7, 7, 4))])
    assert seq.output_shape == (None, 7, 7, 4)
    inputs = keras.Input((3,))
    two = keras.Model(inputs, [keras.layers.Dense(2)(inputs), keras.layers.Dense(5)(inputs)])
    assert two.output_shape == [(None, 2), (None, 5)]
    with pytest.raises(AttributeError):  # as Keras 3: a Sequential never built has no output yet
        _ = keras.Sequential([keras.layers.Dense(1)]).output_shape


def test_pandas_frames_and_series_are_arrays_to_fit_evaluate_and_predict():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=40), "b": rng.normal(size=40), "flag": [True, False] * 20})
    frame = pd.get_dummies(frame, columns=["flag"], dtype=float)
    target = frame.pop("a") * 2.0
    model = keras.Sequential([keras.layers.Dense(1)])
    model.compile("adam", "mae")
    history = model.fit(frame, target, validation_split=0.25, epochs=2, verbose=0)
    assert set(history.history) == {"loss", "val_loss"}
    assert np.isfinite(model.evaluate(frame, target, verbose=0))
    assert model.predict(frame[:5], verbose=0).shape == (5, 1)
    one = keras.Sequential([keras.layers.Dense(1, input_shape=[1])])  # a Series: one feature per row
    assert one.predict(frame["b"], verbose=0).shape == (40, 1)
