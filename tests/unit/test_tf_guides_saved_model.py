"""tf.saved_model.save/load of Keras models (TF's "Save and load a model using a distribution strategy").

The loaded object's ``signatures["serving_default"]`` returns ``{output_name: tensor}`` with the
model's own numbers, ``loaded(x)`` runs the model, and whatever cannot be rebuilt without its
Python code (a tf.Module, custom signatures) is refused at save time with what to do instead.
"""

from __future__ import annotations

import json
import os

import pytest
import torch

import unison as tf

pytestmark = pytest.mark.timeout(60)


def _sequential():
    torch.manual_seed(0)
    return tf.keras.Sequential(
        [
            tf.keras.layers.Conv2D(4, 3, activation="relu", input_shape=(8, 8, 1)),
            tf.keras.layers.Flatten(),
            tf.keras.layers.Dense(3, name="logits"),
        ]
    )


def test_sequential_round_trip_serving_signature_matches_the_model(tmp_path):
    model = _sequential()
    x = torch.rand(5, 8, 8, 1)
    want = model(x, training=False).detach()
    path = str(tmp_path / "tf_save")
    tf.saved_model.save(model, path)
    assert sorted(os.listdir(path)) == ["keras_model.keras", "saved_model.json"]
    assert tf.saved_model.contains_saved_model(path)
    loaded = tf.saved_model.load(path)
    assert list(loaded.signatures) == ["serving_default"]
    infer = loaded.signatures["serving_default"]
    out = infer(x)
    assert list(out) == ["logits"]  # TF names a Sequential's serving output after its last layer
    torch.testing.assert_close(out["logits"], want)
    torch.testing.assert_close(infer(conv2d_input=x)["logits"], want)  # by name, as TF's signature
    torch.testing.assert_close(loaded(x), want)
    assert len(loaded.trainable_variables) == 4 and not out["logits"].requires_grad


def test_functional_model_signature_uses_input_and_output_layer_names(tmp_path):
    a = tf.keras.Input(shape=(3,), name="input_a")
    b = tf.keras.Input(shape=(2,), name="input_b")
    merged = tf.keras.layers.Concatenate()([a, b])
    model = tf.keras.Model(
        [a, b], [tf.keras.layers.Dense(1, name="score")(merged), tf.keras.layers.Dense(2, name="aux")(merged)]
    )
    xa, xb = torch.rand(4, 3), torch.rand(4, 2)
    want = [t.detach() for t in model([xa, xb])]
    tf.saved_model.save(model, str(tmp_path / "m"))
    meta = json.loads((tmp_path / "m" / "saved_model.json").read_text())
    sig = meta["signatures"]["serving_default"]
    assert [i["name"] for i in sig["inputs"]] == ["input_a", "input_b"] and sig["outputs"] == ["score", "aux"]
    infer = tf.saved_model.load(str(tmp_path / "m")).signatures["serving_default"]
    got = infer(input_b=xb, input_a=xa)
    torch.testing.assert_close(got["score"], want[0])
    torch.testing.assert_close(got["aux"], want[1])
    with pytest.raises(TypeError, match=r"takes inputs named \['input_a', 'input_b'\]"):
        infer(input_a=xa, other=xb)
    with pytest.raises(TypeError, match="takes 2 input"):
        infer(xa)


def test_load_inside_another_strategy_scope_serves_per_replica_batches(tmp_path):
    model = _sequential()
    tf.saved_model.save(model, str(tmp_path / "m"))
    strategy = tf.distribute.MirroredStrategy()
    with strategy.scope():
        infer = tf.saved_model.load(str(tmp_path / "m")).signatures["serving_default"]
        dist = strategy.experimental_distribute_dataset(
            tf.data.Dataset.from_tensor_slices(torch.rand(6, 8, 8, 1)).batch(3)
        )
        result = strategy.run(infer, args=(next(iter(dist)),))
    assert result["logits"].shape == (3, 3)


def test_what_cannot_be_rebuilt_is_refused_with_the_alternative(tmp_path):
    with pytest.raises(NotImplementedError, match="saves Keras models only; received a Linear.*tf.train.Checkpoint"):
        tf.saved_model.save(torch.nn.Linear(2, 1), str(tmp_path / "a"))
    model = _sequential()
    with pytest.raises(NotImplementedError, match=r"save\(signatures=\.\.\.\) is not supported"):
        tf.saved_model.save(model, str(tmp_path / "b"), signatures=lambda x: x)
    with pytest.raises(tf.errors.SavingError, match="not built yet"):
        tf.saved_model.save(tf.keras.Sequential([tf.keras.layers.Dense(2)]), str(tmp_path / "c"))
    with pytest.raises(TypeError, match="SaveOptions"):
        tf.saved_model.save(model, str(tmp_path / "d"), options={"x": 1})
    tf.saved_model.save(
        model, str(tmp_path / "e"), options=tf.saved_model.SaveOptions(experimental_io_device="/job:localhost")
    )
    assert tf.saved_model.contains_saved_model(str(tmp_path / "e"))


def test_loading_something_else_says_what_it_is(tmp_path):
    with pytest.raises(FileNotFoundError, match="holds no saved_model.json"):
        tf.saved_model.load(str(tmp_path))
    (tmp_path / "tfmodel").mkdir()
    (tmp_path / "tfmodel" / "saved_model.pb").write_bytes(b"")
    with pytest.raises(FileNotFoundError, match="TensorFlow SavedModel"):
        tf.saved_model.load(str(tmp_path / "tfmodel"))
    model = _sequential()
    model.save(str(tmp_path / "weights_only"))
    with pytest.raises(FileNotFoundError, match="it is a file"):
        tf.saved_model.load(str(tmp_path / "weights_only"))
    with pytest.raises(KeyError, match="exported signatures are"):
        tf.saved_model.save(model, str(tmp_path / "ok"))
        tf.saved_model.load(str(tmp_path / "ok")).signatures["predict"]
