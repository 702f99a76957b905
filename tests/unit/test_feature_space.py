"""keras.layers.Discretization, keras.layers.HashedCrossing and keras.utils.FeatureSpace against TF.

Every expected value below was printed by TensorFlow 2.21 / Keras 3.15 (/work/tfvenv) running the
same calls on the same data: HashedCrossing's bins (tf.sparse.cross_hashed: FingerprintCat64 over
the values from the key 0xDECAFCAFFE), Discretization's adapted boundaries (Keras's approximate
quantiles, batch by batch), and FeatureSpace's encoded outputs (column order, one-hot positions,
normalised values, cross bins) in "concat" and "dict" modes.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import unison as tf
from unison import keras
from unison.keras import layers
from unison.keras.utils import FeatureSpace

# ---- HashedCrossing --------------------------------------------------------------------------


def test_hashed_crossing_bins_equal_tf():
    cross = layers.HashedCrossing(num_bins=5)  # Keras's docstring example
    assert cross((np.array(["A", "B", "A", "B", "A"]), np.array([101, 101, 101, 102, 102]))).tolist() == [1, 4, 1, 1, 3]
    cross = layers.HashedCrossing(num_bins=1000003)
    strings = (np.array(["fixed", "normal", "reversible", "", "x" * 70]), np.array(["a", "b", "c", "d", "e"]))
    assert cross(strings).tolist() == [592990, 38273, 141358, 269937, 337783]
    ints = (np.array([0, 1, 2, -1, 2**40]), np.array([3, 0, 1, 7, 5]))
    assert cross(ints).tolist() == [642281, 39642, 469786, 844837, 730629]
    three = (np.array([[1], [2]]), np.array([["u"], ["v"]]), np.array([[4], [9]]))
    assert layers.HashedCrossing(num_bins=97)(three).tolist() == [[88], [24]]
    wide = layers.HashedCrossing(num_bins=2**62)((np.array([1, 2]), np.array([3, 4])))
    assert wide.tolist() == [197663391106339939, 1821187506227133835] and wide.dtype == torch.int64
    scalar = layers.HashedCrossing(num_bins=10)((np.array(3), np.array("q")))
    assert scalar.shape == () and int(scalar) == 3


def test_hashed_crossing_one_hot_and_tensors():
    cross = layers.HashedCrossing(num_bins=4, output_mode="one_hot")
    out = cross((torch.tensor([[1], [2], [3]]), torch.tensor([[5], [6], [7]])))
    assert out.tolist() == [[0.0, 1.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]]
    assert out.dtype == torch.float32


def test_hashed_crossing_rejects_bad_inputs():
    cross = layers.HashedCrossing(num_bins=4)
    with pytest.raises(ValueError, match="at least two inputs"):
        cross(np.array([1, 2]))
    with pytest.raises(ValueError, match="equal shape"):
        cross((np.array([1, 2]), np.array([1, 2, 3])))
    with pytest.raises(ValueError, match="integer or string dtype"):
        cross((np.array([1.5, 2.0]), np.array([1, 2])))
    with pytest.raises(ValueError, match=r"\(batch_size, 1\)"):
        cross((np.zeros((2, 3), "int64"), np.zeros((2, 3), "int64")))
    with pytest.raises(ValueError, match="output_mode"):
        layers.HashedCrossing(num_bins=4, output_mode="multi_hot")


# ---- Discretization --------------------------------------------------------------------------


def _normal_and_ages():
    rng = np.random.default_rng(0)
    normal = rng.normal(size=1000).astype("float32")
    ages = rng.integers(29, 78, size=242).astype("float32")
    return normal, ages


def test_discretization_adapted_boundaries_equal_tf():
    x = np.array([[-1.5, 1.0, 3.4, 0.5], [0.0, 3.0, 1.3, 0.0]])
    layer = layers.Discretization(num_bins=4, epsilon=0.01)
    layer.adapt(x)
    assert layer.bin_boundaries == [0.0, 0.5, 1.2999999523162842]
    assert layer(x).tolist() == [[0, 2, 3, 2], [1, 3, 3, 1]]

    normal, ages = _normal_and_ages()
    layer = layers.Discretization(num_bins=10)
    layer.adapt(tf.data.Dataset.from_tensor_slices(normal).batch(32))  # merged batch by batch
    np.testing.assert_allclose(
        layer.bin_boundaries,
        [-1.2280832529067993, -0.8231291770935059, -0.534364640712738, -0.2905389964580536, -0.04544960707426071,
         0.20401743054389954, 0.4992164969444275, 0.8045989274978638, 1.2558908462524414],
        rtol=0, atol=1e-6,
    )  # fmt: skip
    layer.adapt(normal)  # one batch: other (closer) quantiles, as in Keras
    np.testing.assert_allclose(
        layer.bin_boundaries,
        [-1.2590657472610474, -0.8496066927909851, -0.5555245280265808, -0.3048001825809479, -0.07557335495948792,
         0.17602071166038513, 0.4516851305961609, 0.7710492014884949, 1.2295007705688477],
        rtol=0, atol=1e-6,
    )  # fmt: skip
    layer = layers.Discretization(num_bins=30)
    layer.adapt(tf.data.Dataset.from_tensor_slices(ages[:, None]).batch(32))
    assert len(layer.bin_boundaries) == 29
    np.testing.assert_allclose(
        [layer.bin_boundaries[i] for i in (0, 1, 2, 3, 4, 5, 23, 26, 27, 28)],
        [29.825910568237305, 32.51016616821289, 33.99985885620117, 34.97988510131836, 36.00904083251953,
         38.39652633666992, 69.0, 72.23123168945312, 74.13594055175781, 75.98895263671875],
        rtol=0, atol=1e-4,
    )  # fmt: skip
    layer = layers.Discretization(num_bins=8)
    layer.adapt(np.array([3.0, 1.0, 2.0, 5.0, 4.0]))  # fewer values than bins: the values themselves
    assert layer.bin_boundaries == [1.0, 2.0, 3.0, 4.0]


def test_discretization_output_modes_equal_tf():
    one_hot = layers.Discretization(bin_boundaries=[0.0, 1.0, 2.0], output_mode="one_hot")
    assert one_hot(np.array([[-1.5], [1.0], [3.4], [0.5]])).tolist() == [
        [1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0], [0.0, 1.0, 0.0, 0.0]
    ]  # fmt: skip
    multi = layers.Discretization(bin_boundaries=[0.0, 1.0, 2.0], output_mode="multi_hot")
    assert multi(np.array([[-1.5, 1.0], [3.4, 0.5]])).tolist() == [[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0]]
    count = layers.Discretization(bin_boundaries=[0.0, 1.0, 2.0], output_mode="count")
    assert count(np.array([[-1.5, -1.0], [3.4, 0.5]])).tolist() == [[2.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 1.0]]
    # the boundaries compare as float32, as TF's Bucketize
    ints = layers.Discretization(bin_boundaries=[0.1, 0.2])(np.array([0.1, 0.2, 0.30000001, 0.19999999]))
    assert ints.tolist() == [1, 2, 2, 1] and ints.dtype == torch.int32  # Keras's dtype


def test_discretization_errors_and_config():
    with pytest.raises(ValueError, match="either `num_bins` or `bin_boundaries`"):
        layers.Discretization()
    with pytest.raises(ValueError, match="Both `num_bins` and `bin_boundaries`"):
        layers.Discretization(num_bins=3, bin_boundaries=[1.0])
    with pytest.raises(ValueError, match=r"call `layer.adapt\(data\)`"):
        layers.Discretization(num_bins=3)(np.array([1.0]))
    with pytest.raises(ValueError, match="Cannot adapt"):
        layers.Discretization(bin_boundaries=[1.0]).adapt(np.array([1.0, 2.0]))
    layer = layers.Discretization(num_bins=3)
    layer.adapt(np.arange(30, dtype="float32"))
    clone = layers.Discretization.from_config(layer.get_config())
    assert clone.bin_boundaries == layer.bin_boundaries and clone.num_bins == 3


# ---- FeatureSpace ----------------------------------------------------------------------------


def _doc_space():
    raw = {
        "float_values": [0.0, 0.1, 0.2, 0.3],
        "string_values": ["zero", "one", "two", "three"],
        "int_values": [0, 1, 2, 3],
    }
    space = FeatureSpace(
        features={
            "float_values": "float_normalized",
            "string_values": "string_categorical",
            "int_values": "integer_categorical",
        },
        crosses=[("string_values", "int_values")],
        output_mode="concat",
    )
    space.adapt(tf.data.Dataset.from_tensor_slices(raw))
    return space, raw


def test_feature_space_docstring_example_equals_tf():
    space, raw = _doc_space()
    out = space(raw)
    assert tuple(out.shape) == (4, 43) and out.dtype == torch.float32
    assert [torch.nonzero(row).flatten().tolist() for row in out] == [
        [0, 5, 7, 32],
        [0, 4, 10, 29],
        [0, 3, 8, 38],
        [0, 2, 9, 31],
    ]
    np.testing.assert_allclose(out[:, 0].numpy(), [-1.34164, -0.44721, 0.44721, 1.34164], atol=1e-5)
    single = space({name: values[1] for name, values in raw.items()})  # one unbatched sample
    assert tuple(single.shape) == (43,) and torch.equal(single, out[1])


def _typed_data(n: int = 70):
    rng = np.random.default_rng(1)
    return {
        "f": rng.normal(size=n).astype("float32"),
        "fr": rng.uniform(0, 10, size=n).astype("float32"),
        "fn": rng.normal(5, 2, size=n).astype("float32"),
        "fd": rng.uniform(0, 100, size=n).astype("float32"),
        "ic": rng.integers(0, 6, size=n),
        "sc": rng.choice(["a", "b", "c", "dd"], size=n),
        "ih": rng.integers(0, 1000, size=n),
        "sh": rng.choice(["x", "y", "z", "w", "v"], size=n),
    }


def test_feature_space_every_feature_type_equals_tf():
    data = _typed_data()
    space = FeatureSpace(
        features={
            "f": FeatureSpace.float(),
            "fr": FeatureSpace.float_rescaled(scale=0.5, offset=1.0),
            "fn": "float_normalized",
            "fd": FeatureSpace.float_discretized(num_bins=7),
            "ic": FeatureSpace.integer_categorical(max_tokens=5),
            "sc": FeatureSpace.string_categorical(num_oov_indices=2),
            "ih": FeatureSpace.integer_hashed(num_bins=16),
            "sh": "string_hashed",
        },
        crosses=[FeatureSpace.cross(("ic", "sc"), crossing_dim=8), FeatureSpace.cross(("fd", "sh"), crossing_dim=11)],
        hashing_dim=9,
        output_mode="concat",
    )
    ds = tf.data.Dataset.from_tensor_slices(data).batch(16)
    space.adapt(ds)
    out = torch.cat([space(x) for x in ds]).numpy()
    assert out.shape == (70, 65)
    np.testing.assert_allclose(
        space.preprocessors["fd"].bin_boundaries, [9.2089, 15.4354, 28.8328, 45.1039, 61.6384, 79.6546], atol=1e-4
    )
    tf_column_sums = [
        -5.361199855804443, 9.0, 10.0, 10.0, 10.0, 10.0, 10.0, 11.0, -0.0, 245.02760314941406, 14.0, 16.0, 15.0,
        13.0, 12.0, 8.0, 4.0, 6.0, 2.0, 4.0, 6.0, 2.0, 8.0, 2.0, 2.0, 4.0, 0.0, 5.0, 5.0, 5.0, 7.0, 0.0, 0.0, 22.0,
        22.0, 16.0, 10.0, 14.0, 0.0, 12.0, 0.0, 17.0, 0.0, 0.0, 0.0, 27.0, 7.0, 7.0, 5.0, 5.0, 3.0, 15.0, 11.0, 7.0,
        5.0, 5.0, 0.0, 6.0, 2.0, 9.0, 19.0, 8.0, 11.0, 15.0, 0.0,
    ]  # fmt: skip
    np.testing.assert_allclose(out.sum(0), tf_column_sums, atol=2e-3)
    assert [np.nonzero(row)[0].tolist() for row in out[:6]] == [
        [0, 5, 8, 9, 14, 27, 34, 45, 51, 59],
        [0, 5, 8, 9, 14, 29, 34, 39, 55, 59],
        [0, 1, 8, 9, 12, 30, 35, 39, 49, 60],
        [0, 3, 8, 9, 10, 25, 34, 41, 46, 61],
        [0, 6, 8, 9, 13, 15, 35, 39, 46, 59],
        [0, 5, 8, 9, 10, 30, 34, 45, 51, 61],
    ]
    np.testing.assert_allclose(out[0, [0, 8, 9]], [0.3456, -1.0331, 3.4111], atol=1e-4)


def test_feature_space_dict_mode_equals_tf():
    data = _typed_data()
    space = FeatureSpace(
        features={
            "sc": FeatureSpace.string_categorical(output_mode="int"),
            "ic": FeatureSpace.integer_categorical(output_mode="int"),
        },
        crosses=[FeatureSpace.cross(feature_names=("sc", "ic"), crossing_dim=32, output_mode="int")],
        output_mode="dict",
    )
    space.adapt({"sc": data["sc"], "ic": data["ic"]})  # a dict of arrays, as Keras takes
    out = space({"sc": data["sc"][:6], "ic": data["ic"][:6]})
    assert sorted(out) == ["ic", "sc", "sc_X_ic"]
    assert {k: v.flatten().tolist() for k, v in out.items()} == {
        "ic": [4, 4, 2, 5, 3, 5],
        "sc": [2, 2, 3, 2, 3, 2],
        "sc_X_ic": [11, 11, 19, 14, 1, 14],
    }
    assert all(tuple(v.shape) == (6, 1) for v in out.values())


def test_feature_space_in_dataset_map_and_functional_models():
    space, raw = _doc_space()
    labels = np.array([0.0, 1.0, 0.0, 1.0], "float32")
    ds = tf.data.Dataset.from_tensor_slices((raw, labels)).batch(2)
    mapped = ds.map(lambda x, y: (space(x), y), num_parallel_calls=tf.data.AUTOTUNE)
    batches = list(mapped)
    assert [tuple(x.shape) for x, _ in batches] == [(2, 43), (2, 43)]

    inputs = space.get_inputs()
    assert sorted(inputs) == ["float_values", "int_values", "string_values"]
    assert all(tuple(kt.shape) == (None, 1) for kt in inputs.values())
    encoded = space.get_encoded_features()
    assert encoded is space.get_encoded_features() and tuple(encoded.shape) == (None, 43)
    hidden = layers.Dense(4, activation="relu")(encoded)
    predictions = layers.Dense(1, activation="sigmoid")(hidden)
    training_model = keras.Model(inputs=encoded, outputs=predictions)  # the encoded features as inputs
    training_model.compile(optimizer="adam", loss="binary_crossentropy")
    history = training_model.fit(mapped, epochs=2, verbose=0)
    assert len(history.history["loss"]) == 2
    inference_model = keras.Model(inputs=inputs, outputs=predictions)  # raw values in, the space inside
    raw_in = {name: tf.convert_to_tensor(values) for name, values in raw.items()}
    from_raw = inference_model.predict(raw_in, verbose=0)
    from_encoded = training_model.predict(space(raw).numpy(), verbose=0)
    np.testing.assert_allclose(np.asarray(from_raw), np.asarray(from_encoded), atol=1e-6)


def test_feature_space_preset_layers_need_no_adapt():
    space = FeatureSpace(
        features={
            "x": FeatureSpace.float_discretized(bin_boundaries=[0.0, 1.0]),
            "h": FeatureSpace.string_hashed(num_bins=3),
            "r": FeatureSpace.float_rescaled(scale=2.0),
        }
    )
    out = space({"x": np.array([-1.0, 0.5, 3.0]), "h": np.array(["a", "b", "c"]), "r": np.array([1.0, 2.0, 3.0])})
    assert tuple(out.shape) == (3, 3 + 3 + 1)
    assert out[:, 3].tolist() == [2.0, 4.0, 6.0]  # in name order: h (3 bins), r, x (3 bins)
    assert out[:, 4:].tolist()[0] == [1.0, 0.0, 0.0] and out[:, 4:].tolist()[2] == [0.0, 0.0, 1.0]


# ---- the user's mistakes ---------------------------------------------------------------------


def test_feature_space_unknown_feature_type():
    with pytest.raises(
        ValueError, match=r"Invalid feature type for feature 'age': 'float_normalised'.*float_normalized"
    ):
        FeatureSpace(features={"age": "float_normalised"})
    with pytest.raises(ValueError, match="non-empty dict"):
        FeatureSpace(features={})
    with pytest.raises(ValueError, match="output_mode"):
        FeatureSpace(features={"a": "float"}, output_mode="stack")


def test_feature_space_cross_of_missing_feature():
    with pytest.raises(ValueError, match=r"names \['thal'\], which `features` lacks.*Add them to `features`"):
        FeatureSpace(features={"sex": "integer_categorical", "ca": "integer_categorical"}, crosses=[("sex", "thal")])
    with pytest.raises(ValueError, match=r"names \['b'\]"):
        FeatureSpace(features={"a": "integer_categorical"}, crosses=[FeatureSpace.cross(("a", "b"), crossing_dim=4)])
    with pytest.raises(ValueError, match="float feature"):
        FeatureSpace(features={"a": "integer_categorical", "x": "float_normalized"}, crosses=[("a", "x")])
    with pytest.raises(ValueError, match="at least two feature names"):
        FeatureSpace.cross(("a",), crossing_dim=4)


def test_feature_space_used_before_adapt():
    space = FeatureSpace(features={"a": "integer_categorical", "x": "float_normalized"})
    with pytest.raises(ValueError, match=r"has not been adapted.*feature_space.adapt\(dataset\)"):
        space({"a": np.array([1]), "x": np.array([0.5])})
    with pytest.raises(ValueError, match="has not been adapted"):
        space.get_encoded_features()
    with pytest.raises(ValueError, match="has not been adapted"):
        space.get_inputs()


def test_feature_space_bad_adapt_and_call_data():
    space = FeatureSpace(features={"a": "integer_categorical", "x": "float_normalized"})
    labelled = tf.data.Dataset.from_tensor_slices(({"a": [1, 2], "x": [0.5, 1.5]}, [0, 1])).batch(2)
    with pytest.raises(ValueError, match=r"\(features, labels\) pairs: pass dataset.map\(lambda x, y: x\)"):
        space.adapt(labelled)
    with pytest.raises(ValueError, match=r"features \['x'\] are missing"):
        space.adapt({"a": [1, 2]})
    with pytest.raises(ValueError, match="can only be called on a tf.data.Dataset"):
        space.adapt(np.array([1.0, 2.0]))
    space.adapt({"a": [1, 2], "x": [0.5, 1.5]})
    with pytest.raises(ValueError, match="only be called with a dict"):
        space(np.array([1.0]))
    with pytest.raises(ValueError, match=r"features \['x'\] are missing from the dict passed"):
        space({"a": np.array([1])})
    ints = FeatureSpace(features={"a": FeatureSpace.integer_categorical(output_mode="int"), "x": "float"})
    with pytest.raises(ValueError, match=r"feature 'a' has not been encoded.*output_mode='dict'"):
        ints.adapt({"a": [1, 2], "x": [0.5, 1.5]})  # adapt builds the encoded features, as in Keras


def test_model_with_feature_space_saves_and_loads(tmp_path):
    data = _typed_data(40)
    space = FeatureSpace(
        features={
            "fn": "float_normalized",
            "fd": FeatureSpace.float_discretized(num_bins=5),
            "ic": FeatureSpace.integer_categorical(num_oov_indices=0),
            "sc": "string_categorical",
            "sh": FeatureSpace.string_hashed(num_bins=4),
        },
        crosses=[("ic", "sc")],
        crossing_dim=8,
    )
    space.adapt(tf.data.Dataset.from_tensor_slices({k: data[k] for k in ("fn", "fd", "ic", "sc", "sh")}).batch(8))
    model = keras.Model(space.get_inputs(), layers.Dense(1)(space.get_encoded_features()))
    raw = {k: data[k][:5] for k in ("fn", "fd", "ic", "sc", "sh")}
    before = np.asarray(model.predict(raw, verbose=0))
    model.save(tmp_path / "m.keras")
    loaded = keras.models.load_model(tmp_path / "m.keras")
    np.testing.assert_allclose(np.asarray(loaded.predict(raw, verbose=0)), before, atol=1e-6)
    clone = FeatureSpace.from_config(space.get_config())  # an adapted space rebuilt from its config
    assert torch.equal(clone(raw), space(raw))
    with pytest.raises(NotImplementedError, match="Save a model built from the space"):
        space.save(tmp_path / "space.keras")
