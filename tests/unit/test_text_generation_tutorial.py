"""TF's "Text generation with an RNN" tutorial's surface: characters to ids and back on ragged rows,
``reduce_join``/``join`` giving string tensors whose ``.numpy()`` is bytes, ``GRU.get_initial_state``,
a Model subclass calling ``super().__init__(self)``, and the tutorial's train-then-generate loop."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import unison as tf


def _lookups(vocab: list[str]) -> tuple[Any, Any]:
    ids_from_chars = tf.keras.layers.StringLookup(vocabulary=list(vocab), mask_token=None)
    chars_from_ids = tf.keras.layers.StringLookup(
        vocabulary=ids_from_chars.get_vocabulary(), invert=True, mask_token=None
    )
    return ids_from_chars, chars_from_ids


def test_characters_to_ids_and_back_on_ragged_rows() -> None:
    ids_from_chars, chars_from_ids = _lookups(sorted(set("abcdefgxyz")))
    chars = tf.strings.unicode_split(["abcdefg", "xyz"], input_encoding="UTF-8")
    ids = ids_from_chars(chars)
    assert isinstance(ids, tf.RaggedTensor)
    assert ids.to_list() == [[1, 2, 3, 4, 5, 6, 7], [8, 9, 10]]  # index 0 is [UNK]
    back = chars_from_ids(ids)
    assert isinstance(back, tf.RaggedTensor)
    joined = tf.strings.reduce_join(back, axis=-1)
    assert joined.numpy().tolist() == [b"abcdefg", b"xyz"]  # TF's strings are bytes
    assert tf.strings.reduce_join(back, axis=None).numpy() == b"abcdefgxyz"
    one = chars_from_ids(ids_from_chars(tf.strings.unicode_split("b", "UTF-8"))[0])
    assert one.numpy().decode("utf-8") == "b"
    with pytest.raises(ValueError, match="looks up ragged rows in 'int' mode only"):
        tf.keras.layers.StringLookup(vocabulary=["a"], output_mode="multi_hot")(chars)
    with pytest.raises(ValueError, match="along its rows"):
        tf.strings.reduce_join(back, axis=0)


def test_string_tensors_give_bytes_and_compare_with_str() -> None:
    t = tf.constant(["ROMEO:"])
    assert t.numpy().tolist() == [b"ROMEO:"] and t[0].numpy() == b"ROMEO:"
    assert "tf.Tensor([b'ROMEO:'], shape=(1,), dtype=string)" == str(t)
    joined = tf.strings.join([t, tf.constant([b"x"]), t])
    assert joined[0].numpy().decode("utf-8") == "ROMEO:xROMEO:"
    assert bool((t == "ROMEO:")[0]) and bool((t == b"ROMEO:")[0]) and not bool((t != "ROMEO:")[0])


def test_gru_initial_state_from_inputs_or_batch_size() -> None:
    gru = tf.keras.layers.GRU(4, return_sequences=True, return_state=True)
    x = torch.zeros(3, 5, 2)
    states = gru.get_initial_state(x)  # tf_keras: the inputs
    assert [tuple(s.shape) for s in states] == [(3, 4)] and not any(bool(s.any()) for s in states)
    assert [tuple(s.shape) for s in tf.keras.layers.LSTM(4).get_initial_state(2)] == [(2, 4), (2, 4)]  # Keras 3
    out, state = gru(x, initial_state=states)
    assert tuple(out.shape) == (3, 5, 4) and tuple(state.shape) == (3, 4)


class _CharModel(tf.keras.Model):
    def __init__(self, vocab_size: int, embedding_dim: int, rnn_units: int) -> None:
        super().__init__(self)  # as the tutorial writes it: tf_keras ignores the stray argument
        self.embedding = tf.keras.layers.Embedding(vocab_size, embedding_dim)
        self.gru = tf.keras.layers.GRU(rnn_units, return_sequences=True, return_state=True)
        self.dense = tf.keras.layers.Dense(vocab_size)

    def call(self, inputs: Any, states: Any = None, return_state: bool = False, training: bool = False) -> Any:
        x = self.embedding(inputs, training=training)
        if states is None:
            states = self.gru.get_initial_state(x)
        x, states = self.gru(x, initial_state=states, training=training)
        x = self.dense(x, training=training)
        return (x, states) if return_state else x


def test_the_tutorials_train_then_generate_loop() -> None:
    text = "to be or not to be that is the question\n" * 20
    ids_from_chars, chars_from_ids = _lookups(sorted(set(text)))
    all_ids = ids_from_chars(tf.strings.unicode_split(text, "UTF-8"))
    sequences = tf.data.Dataset.from_tensor_slices(all_ids).batch(21, drop_remainder=True)
    dataset = sequences.map(lambda s: (s[:-1], s[1:])).shuffle(100).batch(8, drop_remainder=True)
    model = _CharModel(len(ids_from_chars.get_vocabulary()), 8, 16)
    model.compile(optimizer="adam", loss=tf.losses.SparseCategoricalCrossentropy(from_logits=True))
    history = model.fit(dataset, epochs=2, verbose=0)
    assert history.history["loss"][1] < history.history["loss"][0]
    skip_ids = ids_from_chars(["[UNK]"])[:, None]
    mask = tf.sparse.to_dense(
        tf.SparseTensor(
            values=[-float("inf")] * len(skip_ids),
            indices=skip_ids,
            dense_shape=[len(ids_from_chars.get_vocabulary())],
        )
    )
    states, next_char, result = None, tf.constant(["to", "be"]), []
    for _ in range(5):
        input_ids = ids_from_chars(tf.strings.unicode_split(next_char, "UTF-8")).to_tensor()
        logits, states = model(inputs=input_ids, states=states, return_state=True)
        predicted = tf.squeeze(tf.random.categorical(logits[:, -1, :] + mask, num_samples=1), axis=-1)
        next_char = chars_from_ids(predicted)
        result.append(next_char)
    text_out = tf.strings.join(result)
    assert text_out.shape == (2,) and all(len(s) == 5 for s in text_out.numpy().tolist())
    assert b"[UNK]" not in b"".join(text_out.numpy().tolist())
    assert np.asarray(mask)[0] == -np.inf


def test_saved_model_names_why_a_defined_keras_class_is_not_rebuilt(tmp_path: Any) -> None:
    class Holder(tf.keras.Model):
        def __init__(self) -> None:
            super().__init__()
            self.dense = tf.keras.layers.Dense(2)

        @tf.function
        def step(self, x: Any) -> Any:
            return self.dense(x)

    holder = Holder()
    holder.step(torch.zeros(1, 3))
    tf.saved_model.save(holder, str(tmp_path / "m"))
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    with pytest.raises(AttributeError, match="restore the variables into it"):
        loaded.step(torch.zeros(1, 3))


def test_a_printed_float32_scalar_shows_numpys_digits_as_tf() -> None:
    # TF 2.21: print(tf.constant(3.0439334)) -> tf.Tensor(3.0439334, ...); repr keeps the Python float
    t = tf.constant(3.0439334)
    assert str(t) == "tf.Tensor(3.0439334, shape=(), dtype=float32)"
    assert repr(t) == "<tf.Tensor: shape=(), dtype=float32, numpy=3.043933391571045>"
