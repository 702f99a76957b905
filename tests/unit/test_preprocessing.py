"""Keras preprocessing layers: lookups, Normalization, Rescaling, CategoryEncoding, Hashing."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from unison import keras
from unison.keras import layers
from unison.keras.layers.preprocessing import stable_hash

pytestmark = pytest.mark.timeout(120)


def test_string_lookup_index_layout_mask_oov_and_bytes() -> None:
    lookup = layers.StringLookup(vocabulary=["a", "b", "c"], mask_token="", num_oov_indices=2)
    assert lookup.get_vocabulary() == ["", "[UNK]", "[UNK]", "a", "b", "c"]
    assert lookup.get_vocabulary(include_special_tokens=False) == ["a", "b", "c"]
    out = lookup(np.array([["a", ""], ["c", "b"]]))
    assert out.dtype == torch.int64 and out.tolist() == [[3, 0], [5, 4]]
    assert lookup(np.array([b"a"], dtype=object)).tolist() == [3]
    oov = lookup(np.array(["zz", "yy", "zz"])).tolist()
    assert all(i in (1, 2) for i in oov) and oov[0] == oov[2]
    plain = layers.StringLookup(vocabulary=["a", "b", "c"])
    assert plain(["a", "x"]).tolist() == [1, 0]


def test_string_lookup_adapt_invert_and_multi_hot() -> None:
    lookup = layers.StringLookup()
    lookup.adapt(np.array(["b", "a", "b", "c", "c", "c", "d", "a"]))
    assert lookup.get_vocabulary() == ["[UNK]", "c", "b", "a", "d"]  # by count, ties descending
    capped = layers.StringLookup(max_tokens=3)
    capped.adapt([["b", "a", "b"], ["c", "c", "c"]])
    assert capped.get_vocabulary() == ["[UNK]", "c", "b"]
    inverse = layers.StringLookup(vocabulary=lookup.get_vocabulary(), invert=True)
    assert inverse(np.array([1, 0, 4, 99])).tolist() == [b"c", b"[UNK]", b"d", b"[UNK]"]  # TF: bytes
    hot = layers.StringLookup(vocabulary=["a", "b"], output_mode="multi_hot")
    assert hot(np.array([["a", "b"], ["z", "z"]])).tolist() == [[0, 1, 1], [1, 0, 0]]


def test_integer_lookup() -> None:
    lookup = layers.IntegerLookup()
    lookup.adapt(np.array([5, 5, 7, 7, 7, 9]))
    assert lookup.get_vocabulary() == [-1, 7, 5, 9]
    assert lookup(torch.tensor([[7, 5], [9, 42]])).tolist() == [[1, 2], [3, 0]]
    masked = layers.IntegerLookup(vocabulary=[12, 36], mask_token=0)
    assert masked(np.array([0, 36, 12, 3])).tolist() == [0, 3, 2, 1]
    with pytest.raises(ValueError, match="takes integers"):
        lookup(np.array([1.5]))
    strict = layers.IntegerLookup(vocabulary=[1, 2], num_oov_indices=0)
    with pytest.raises(ValueError, match="num_oov_indices=0"):
        strict(np.array([3]))


def test_normalization_adapt_and_given_statistics() -> None:
    data = np.array([[1.0, 10.0], [3.0, 30.0], [5.0, 50.0]], dtype="float32")
    norm = layers.Normalization()
    norm.adapt(data)
    out = norm(data)
    torch.testing.assert_close(out.mean(0), torch.zeros(2), atol=1e-6, rtol=0)
    torch.testing.assert_close(out.std(0, unbiased=False), torch.ones(2), atol=1e-5, rtol=0)
    fixed = layers.Normalization(mean=3.0, variance=4.0)
    assert fixed(np.array([5.0])).tolist() == [1.0]
    assert layers.Normalization(mean=3.0, variance=4.0, invert=True)(np.array([1.0])).tolist() == [5.0]
    whole = layers.Normalization(axis=None)
    whole.adapt(data)
    assert whole.mean.shape == (1, 1) and abs(float(whole.mean) - data.mean()) < 1e-5  # Keras: the data's rank
    # Keras 3: a layer neither adapted nor given statistics passes inputs through (mean 0,
    # variance 1) and has Keras's weights mean, variance and count (EfficientNet starts so)
    fresh = layers.Normalization()
    assert fresh(np.array([[2.0, 3.0]])).tolist() == [[2.0, 3.0]]
    assert [tuple(w.shape) for w in fresh.weights] == [(2,), (2,), ()] and fresh.count_params() == 5
    with pytest.raises(ValueError, match="both mean and variance"):
        layers.Normalization(mean=1.0)


def test_rescaling_and_category_encoding() -> None:
    assert layers.Rescaling(1 / 255)(np.array([255, 0], dtype="uint8")).tolist() == [1.0, 0.0]
    assert layers.Rescaling(2.0, offset=-1.0)(torch.tensor([1.0])).tolist() == [1.0]
    ids = torch.tensor([[0, 1], [3, 3]])
    assert layers.CategoryEncoding(4, "multi_hot")(ids).tolist() == [[1, 1, 0, 0], [0, 0, 0, 1]]
    assert layers.CategoryEncoding(4, "count")(ids).tolist() == [[1, 1, 0, 0], [0, 0, 0, 2]]
    assert layers.CategoryEncoding(3, "one_hot")(torch.tensor([[0], [2]])).tolist() == [[1, 0, 0], [0, 0, 1]]
    with pytest.raises(ValueError, match="0 <= values < num_tokens=4"):
        layers.CategoryEncoding(4)(torch.tensor([[4]]))
    with pytest.raises(ValueError, match="output_mode"):
        layers.CategoryEncoding(4, "tf_idf")


def test_hashing_is_the_documented_deterministic_hash() -> None:
    words = np.array([f"w{i}" for i in range(200)])
    bins = layers.Hashing(7)(words)
    assert bins.tolist() == [stable_hash(w) % 7 for w in words.tolist()]
    assert set(bins.tolist()) == set(range(7))  # spreads over every bin
    masked = layers.Hashing(4, mask_value="")(np.array(["", "a", "b"])).tolist()
    assert masked[0] == 0 and all(1 <= b <= 3 for b in masked[1:])
    salted = layers.Hashing(1000, salt=1)(words)
    assert not torch.equal(salted, layers.Hashing(1000)(words))
    assert layers.Hashing(7)(np.array([12, 12])).tolist() == [stable_hash("12") % 7] * 2
    with pytest.raises(ValueError, match="num_bins"):
        layers.Hashing(0)


def test_inside_a_model_and_saved_with_it(tmp_path: Any) -> None:
    ids = keras.Input(shape=(3,), dtype="int64", name="ids")
    feats = keras.Input(shape=(2,), name="feats")
    lookup = layers.IntegerLookup()
    lookup.adapt(np.array([10, 20, 20, 30, 30, 30]))
    norm = layers.Normalization()
    norm.adapt(np.array([[0.0, 5.0], [2.0, 15.0]]))
    enc = layers.CategoryEncoding(lookup.vocabulary_size(), "count")(lookup(ids))
    out = layers.Concatenate()([enc, norm(layers.Rescaling(1.0)(feats))])
    model = keras.Model([ids, feats], out)
    x = [torch.tensor([[30, 30, 99]]), torch.tensor([[1.0, 10.0]])]
    assert model(x).tolist() == [[1.0, 2.0, 0.0, 0.0, 0.0, 0.0]]
    model.save(str(tmp_path / "p.keras"))
    again = keras.models.load_model(str(tmp_path / "p.keras"))
    assert again(x).tolist() == model(x).tolist()


def test_text_vectorization_vocabulary_saves_with_the_model(tmp_path: Any) -> None:
    vectorize = layers.TextVectorization(output_sequence_length=4)
    vectorize.adapt(["foo bar", "bar baz", "baz bada boom"])
    model = keras.Sequential([vectorize])
    model.save(str(tmp_path / "t.keras"))
    again = keras.models.load_model(str(tmp_path / "t.keras"))
    assert again.layers[0].get_vocabulary() == vectorize.get_vocabulary()
    assert again.layers[0](["foo qux bar"]).tolist() == [[4, 1, 3, 0]]


@pytest.mark.parametrize("layer", ["StringLookup", "IntegerLookup"])
def test_binary_is_keras_deprecated_name_for_multi_hot(layer: str) -> None:
    # Keras 3's IndexLookup and CategoryEncoding still map output_mode="binary" to "multi_hot"
    # (keras.io's structured-data example of TF 2.5 uses it)
    vocab = ["a", "b", "c"] if layer == "StringLookup" else [7, 8, 9]
    cls = getattr(keras.layers, layer)
    binary = cls(vocabulary=vocab, output_mode="binary")
    multi = cls(vocabulary=vocab, output_mode="multi_hot")
    data = np.array([[vocab[0], vocab[2]], [vocab[1], vocab[1]]], dtype=object if layer == "StringLookup" else "int64")
    assert binary.output_mode == "multi_hot"
    assert torch.equal(torch.as_tensor(binary(data)), torch.as_tensor(multi(data)))
    assert torch.as_tensor(binary(data)).tolist() == [[0.0, 1.0, 0.0, 1.0], [0.0, 0.0, 1.0, 0.0]]
    encoding = keras.layers.CategoryEncoding(num_tokens=4, output_mode="binary")
    assert torch.as_tensor(encoding(torch.tensor([[0, 3]]))).tolist() == [[1.0, 0.0, 0.0, 1.0]]


def test_structured_data_dict_of_features_with_a_string_column_trains() -> None:
    # keras.io "Structured data classification from scratch": a dict of columns from a DataFrame, one
    # keras.Input(shape=(1,)) per column, a string column through StringLookup(output_mode="binary"),
    # numeric ones through Normalization adapted on a tf.data map; fit on the batched dataset
    import unison as tf

    rng = np.random.default_rng(0)
    n = 96
    columns = {
        "age": rng.integers(29, 77, n),
        "thal": rng.choice(["fixed", "normal", "reversible"], n),
    }
    labels = rng.integers(0, 2, n)
    ds = tf.data.Dataset.from_tensor_slices((columns, labels)).shuffle(n).batch(32)
    age = keras.Input(shape=(1,), name="age")
    thal = keras.Input(shape=(1,), name="thal", dtype="string")
    norm = keras.layers.Normalization()
    norm.adapt(ds.map(lambda x, y: x["age"]).map(lambda x: tf.expand_dims(x, -1)))
    lookup = keras.layers.StringLookup(output_mode="binary")
    lookup.adapt(ds.map(lambda x, y: x["thal"]).map(lambda x: tf.expand_dims(x, -1)))
    features = keras.layers.concatenate([norm(age), lookup(thal)])
    assert tuple(features.shape) == (None, 5)  # 1 + the OOV slot and 3 strings
    out = keras.layers.Dense(1, activation="sigmoid")(keras.layers.Dense(8, activation="relu")(features))
    model = keras.Model([age, thal], out)
    model.compile("adam", "binary_crossentropy", metrics=["accuracy"])
    history = model.fit(ds, epochs=2, verbose=0)
    assert len(history.history["loss"]) == 2 and np.isfinite(history.history["loss"]).all()
    one = {"age": tf.convert_to_tensor([60]), "thal": tf.convert_to_tensor(["fixed"])}
    assert np.asarray(model.predict(one, verbose=0)).shape == (1, 1)  # one row, not one unbatched example
