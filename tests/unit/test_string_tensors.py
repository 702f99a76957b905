"""String tensors from tf.data behave as TF's: .numpy(), shapes, tf.string, shape ops, printing."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import unison as tf

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def text_dir(tmp_path):
    for label in ("neg", "pos"):
        (tmp_path / label).mkdir()
        for i in range(3):
            (tmp_path / label / f"{i}.txt").write_text(f"{label.upper()} review <br />{i}")
    return tmp_path


def _first_batch(text_dir):
    ds = tf.keras.utils.text_dataset_from_directory(str(text_dir), batch_size=4, shuffle=False)
    return next(iter(ds))


def test_text_batch_numpy_shape_dtype(text_dir):
    text_batch, label_batch = _first_batch(text_dir)
    assert text_batch.shape == (4,)
    assert text_batch.dtype == tf.string
    values = text_batch.numpy()
    assert type(values) is np.ndarray and values.tolist()[0] == b"NEG review <br />0"
    assert text_batch[0].numpy() == b"NEG review <br />0"  # an element is a scalar string tensor
    assert text_batch[0].shape == ()
    assert [t.numpy() for t in text_batch][3] == b"POS review <br />0"
    assert label_batch.numpy().tolist() == [0, 0, 0, 1]


def test_shape_ops_on_a_string_batch(text_dir):
    text_batch, _ = _first_batch(text_dir)
    expanded = tf.expand_dims(text_batch, -1)
    assert expanded.shape == (4, 1) and expanded.dtype == tf.string
    assert tf.shape(expanded).tolist() == [4, 1]
    assert tf.reshape(text_batch, [2, 2]).numpy()[1, 0] == b"NEG review <br />2"
    assert tf.concat([text_batch, text_batch], axis=0).shape == (8,)
    assert tf.stack([text_batch, text_batch], axis=1).shape == (4, 2)
    assert int(tf.size(text_batch)) == 4 and int(tf.rank(expanded)) == 2
    with pytest.raises(TypeError, match="cannot mix string and numeric"):
        tf.concat([text_batch, tf.constant([1.0])], axis=0)


def test_tf_strings_and_comparison(text_dir):
    text_batch, _ = _first_batch(text_dir)
    clean = tf.strings.regex_replace(tf.strings.lower(text_batch), "<br />", " ")
    assert clean.dtype == tf.string and clean.numpy()[0] == b"neg review  0"
    assert tf.strings.length(text_batch).tolist() == [18] * 4
    equal = text_batch == text_batch[0]
    assert isinstance(equal, torch.Tensor) and equal.dtype == torch.bool
    assert equal.tolist() == [True, False, False, False]
    assert (text_batch != b"x").all()


def test_text_line_dataset_elements(tmp_path):
    path = tmp_path / "lines.txt"
    path.write_text("one\ntwo\nthree\n")
    line = next(iter(tf.data.TextLineDataset(str(path))))
    assert line.numpy() == b"one" and line.shape == () and line.dtype == tf.string
    batch = next(iter(tf.data.TextLineDataset(str(path)).batch(2)))
    assert batch.numpy().tolist() == [b"one", b"two"]
    # as_numpy_iterator gives plain numpy values, as TF's
    assert list(tf.data.TextLineDataset(str(path)).as_numpy_iterator()) == [b"one", b"two", b"three"]


def test_printing_in_tf_form():
    assert str(tf.constant([b"a", b"bc"])) == "tf.Tensor([b'a' b'bc'], shape=(2,), dtype=string)"
    assert str(tf.constant(b"a")) == "tf.Tensor(b'a', shape=(), dtype=string)"
    assert repr(tf.constant([b"a"])) == "<tf.Tensor: shape=(1,), dtype=string, numpy=array([b'a'], dtype=object)>"


def test_tf_string_dtype_equality():
    assert tf.string == np.dtype(object) and np.dtype(object) == tf.string
    assert tf.string != tf.float32 and np.dtype("float32") != tf.string
    assert tf.constant([1.0]).dtype != tf.string


def test_text_models_train_and_predict_on_strings(text_dir):
    # TF's text-classification tutorial: a model with TextVectorization inside, fit on a string
    # dataset, then an export model that predicts on tf.constant strings.
    ds = tf.keras.utils.text_dataset_from_directory(str(text_dir), batch_size=4, seed=1)
    vectorize = tf.keras.layers.TextVectorization(max_tokens=20, output_sequence_length=4)
    vectorize.adapt(ds.map(lambda x, y: x))
    layers = tf.keras.layers
    model = tf.keras.Sequential(
        [
            tf.keras.Input(shape=(1,), dtype="string"),
            vectorize,
            layers.Embedding(20, 4),
            layers.Flatten(),
            layers.Dense(1),
        ]
    )
    model.compile(optimizer="adam", loss=tf.keras.losses.BinaryCrossentropy(from_logits=True))
    model.fit(ds.map(lambda x, y: (tf.expand_dims(x, -1), y)), epochs=1, verbose=0)
    export = tf.keras.Sequential([model, layers.Activation("sigmoid")])
    export.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    loss, accuracy = export.evaluate(ds.map(lambda x, y: (tf.expand_dims(x, -1), y)), verbose=0)
    assert 0.0 <= accuracy <= 1.0
    probabilities = export.predict(tf.constant([["good movie"], ["bad film"], ["so so"]]), batch_size=2, verbose=0)
    assert probabilities.shape == (3, 1) and ((probabilities > 0) & (probabilities < 1)).all()
