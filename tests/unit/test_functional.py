"""The functional API: keras.Input, layers on symbolic tensors, keras.Model(inputs, outputs)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import unison as tf
from unison import keras
from unison.keras.models.functional import Functional

pytestmark = pytest.mark.timeout(120)


def _two_layer() -> keras.Model:
    inputs = keras.Input(shape=(4,), name="x")
    hidden = keras.layers.Dense(8, activation="relu")(inputs)
    return keras.Model(inputs=inputs, outputs=keras.layers.Dense(3, activation="softmax")(hidden))


def test_input_is_symbolic_with_batch_axis_none() -> None:
    x = keras.Input(shape=(5, 2), dtype="int32", name="ids")
    assert x.shape == (None, 5, 2) and x.dtype == torch.int32 and x.name == "ids"  # Keras's dtype
    y = keras.layers.Dense(3)(keras.Input(shape=(5,)))
    assert y.shape == (None, 3)


def test_model_inputs_outputs_is_functional_and_matches_layers_by_hand() -> None:
    model = _two_layer()
    assert isinstance(model, Functional) and isinstance(model, keras.Model)
    d1, d2 = model.layers
    x = torch.randn(6, 4)
    expected = torch.softmax(torch.nn.functional.linear(torch.relu(d1(x)), d2.kernel.t(), d2.bias), dim=-1)
    torch.testing.assert_close(model(x), expected)
    assert model.count_params() == 4 * 8 + 8 + 8 * 3 + 3
    keys = list(model.state_dict())
    assert keys == ["graph_layers.0.kernel", "graph_layers.0.bias", "graph_layers.1.kernel", "graph_layers.1.bias"]


def test_fit_evaluate_predict_learn() -> None:
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(256, 4)).astype("float32")
    y = (x[:, 0] > 0).astype("int64") + (x[:, 1] > 0).astype("int64")
    model = _two_layer()
    model.compile(optimizer=keras.optimizers.Adam(0.05), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    hist = model.fit(x, y, batch_size=32, epochs=8, verbose=0)
    assert hist.history["loss"][-1] < 0.6 * hist.history["loss"][0]
    loss, acc = model.evaluate(x, y, verbose=0)
    assert acc > 0.8
    assert model.predict(x[:7], verbose=0).shape == (7, 3)


def test_multiple_and_dict_inputs_and_outputs() -> None:
    a, b = keras.Input(shape=(3,), name="a"), keras.Input(shape=(2,), name="b")
    h = keras.layers.Dense(4, name="h")(a)
    merged = keras.layers.Concatenate()([h, b])
    model = keras.Model({"a": a, "b": b}, {"out": keras.layers.Dense(1, name="out")(merged), "h": h})
    xa, xb = torch.randn(5, 3), torch.randn(5, 2)
    out = model({"a": xa, "b": xb})
    assert set(out) == {"out", "h"} and out["out"].shape == (5, 1)
    torch.testing.assert_close(out["h"], model.get_layer("h")(xa))
    listed = keras.Model([a, b], [h, merged])
    assert listed([xa, xb])[0].shape == (5, 4)
    with pytest.raises(ValueError, match=r"lacks \['b'\]"):
        model({"a": xa})
    with pytest.raises(ValueError, match="expects 2 inputs"):
        listed(xa)


def test_torch_functions_and_operators_on_symbolic_tensors() -> None:
    ids = keras.Input(shape=(6,), dtype="int64", name="ids")
    emb = keras.layers.Embedding(10, 4)(ids)
    pooled = torch.mean(emb, dim=1)  # what tf.reduce_mean(emb, axis=1) does
    out = keras.layers.Dense(1)(pooled * 2 + 1)
    model = keras.Model(ids, out)
    x = torch.randint(0, 10, (3, 6))
    e = model.layers[0](x)
    d = model.layers[1]
    torch.testing.assert_close(model(x), d(e.mean(1) * 2 + 1))
    sliced = keras.Model(ids, emb[:, 0])
    torch.testing.assert_close(sliced(x), e[:, 0])


def test_shared_layer_is_one_module_and_nested_sequential() -> None:
    shared = keras.layers.Dense(2, name="shared")
    a, b = keras.Input(shape=(3,), name="a"), keras.Input(shape=(3,), name="b")
    model = keras.Model([a, b], keras.layers.Add()([shared(a), shared(b)]))
    assert model.count_params() == 8
    inner = keras.Sequential([keras.layers.Dense(2, input_shape=(3,))])
    x = keras.Input(shape=(3,))
    outer = keras.Model(x, keras.layers.Dense(1)(inner(x)))
    assert outer.count_params() == 8 + 3
    assert outer(torch.zeros(4, 3)).shape == (4, 1)


def test_summary_lists_layers_with_shapes() -> None:
    lines: list[str] = []
    _two_layer().summary(print_fn=lines.append)
    text = "\n".join(lines)
    assert "(None, 8)" in text and "(None, 3)" in text and "Total params: 67" in text


def test_disconnected_graph_names_output_and_missing_input() -> None:
    a, b = keras.Input(shape=(3,), name="in_a"), keras.Input(shape=(3,), name="in_b")
    out = keras.layers.Add()([keras.layers.Dense(3)(a), b])
    with pytest.raises(ValueError, match=r"Graph disconnected.*\['in_b'\]"):
        keras.Model(a, out)
    with pytest.raises(ValueError, match=r"\['in_b'\] do not reach any output"):
        keras.Model([a, b], keras.layers.Dense(1)(a))


def test_bad_arguments_raise_clear_errors() -> None:
    with pytest.raises(ValueError, match="inputs=.*Received"):
        keras.Model(inputs=[torch.zeros(2)], outputs=keras.Input(shape=(2,)))
    x = keras.Input(shape=(3,))
    h = keras.layers.Dense(2)(x)
    keras.Model(h, keras.layers.Dense(1)(h))  # a layer's output as an input: allowed, as in Keras 3
    with pytest.raises(ValueError, match="Graph disconnected"):
        keras.Model(h, keras.layers.Dense(1)(x))  # the output is not computed from that input
    with pytest.raises(ValueError, match="shape="):
        keras.Input()
    with pytest.raises(ValueError, match="unsupported dtype"):
        keras.Input(shape=(2,), dtype="complex64")
    with pytest.raises(TypeError, match="no truth value"):
        bool(x)
    with pytest.raises(ValueError, match="expects shape"):
        keras.Model(x, h)(torch.zeros(3))


def test_input_layer_in_sequential_keras2_and_keras3_spellings() -> None:
    model = keras.Sequential(
        [
            keras.layers.InputLayer(input_shape=(28, 28)),
            keras.layers.Reshape(target_shape=(28, 28, 1)),
            keras.layers.Flatten(),
            keras.layers.Dense(10),
        ]
    )
    assert model.built and model.count_params() == 28 * 28 * 10 + 10
    assert model(torch.zeros(2, 28, 28)).shape == (2, 10)
    model3 = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(2)])
    assert model3.count_params() == 10
    with pytest.raises(ValueError, match="not both"):
        keras.layers.InputLayer(shape=(2,), input_shape=(2,))


def test_parameter_server_tutorial_preprocessing_and_model() -> None:
    # The shapes of TF's "Parameter server training" tutorial: a string preprocessing model keyed
    # by a dict, then a model whose dict key ("features") differs from its Input's name.
    vocab = ["avenger", "ironman", "batman", "hulk", "spiderman", "kingkong", "wonder_woman"]
    lookup = keras.layers.StringLookup(vocabulary=vocab, mask_token=None)
    raw = keras.Input(shape=(3,), dtype="string", name="feature")
    assert raw.dtype == "string"
    preprocess = keras.Model({"features": raw}, lookup(raw))
    ids = preprocess({"features": np.array([["batman", "hulk", "nope"]])})
    assert ids.tolist() == [[3, 4, 0]]
    model_input = keras.Input(shape=(3,), dtype="int64", name="model_input")
    emb = keras.layers.Embedding(len(lookup.get_vocabulary()), 16)(model_input)
    out = keras.layers.Dense(1, activation="sigmoid")(torch.mean(emb, dim=1))
    model = keras.Model({"features": model_input}, out)
    assert model({"features": ids}).shape == (1, 1)
    with pytest.raises(ValueError, match=r"lacks \['features'\]"):
        model({"model_input": ids})


def test_pickled_model_runs_and_carries_shapes_not_example_values() -> None:
    import pickle

    ids = keras.Input(shape=(3,), dtype="int64", name="ids")
    out = keras.layers.Dense(1)(torch.mean(keras.layers.Embedding(10, 4096)(ids), dim=1))
    model = keras.Model({"features": ids}, out)
    model.distribute_strategy = None  # type: ignore[assignment]  # strategies hold process groups
    blob = pickle.dumps(model)
    param_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    assert len(blob) < param_bytes + 64 * 1024  # the (2, 3, 4096) example activations stay behind
    again = pickle.loads(blob)
    x = torch.randint(0, 10, (5, 3))
    torch.testing.assert_close(again({"features": x}), model({"features": x}))
    assert again.outputs[0].shape == (None, 1)


class _FunctionalSubclass(keras.Model):
    def __init__(self, units: int = 3, **kwargs: object) -> None:
        inputs = keras.Input(shape=(4,))
        super().__init__(inputs=inputs, outputs=keras.layers.Dense(units)(inputs), **kwargs)
        self.units = units

    def get_config(self) -> dict:
        return {"units": self.units}


def test_subclass_calling_init_with_inputs_outputs_is_functional(tmp_path: object) -> None:
    model = _FunctionalSubclass(units=2, name="sub")
    assert isinstance(model, Functional) and isinstance(model, _FunctionalSubclass)
    assert model.name == "sub" and model.count_params() == 10
    assert model(torch.zeros(3, 4)).shape == (3, 2)
    path = f"{tmp_path}/sub.keras"
    model.save(path)
    loaded = keras.models.load_model(path, custom_objects={"_FunctionalSubclass": _FunctionalSubclass})
    assert isinstance(loaded, _FunctionalSubclass) and loaded.units == 2
    torch.testing.assert_close(loaded(torch.ones(1, 4)), model(torch.ones(1, 4)))


def test_weights_load_into_the_same_architecture_built_again(tmp_path: object) -> None:
    first, second = _two_layer(), _two_layer()  # the second one's layers are auto-named dense_2, dense_3
    path = f"{tmp_path}/w.weights.h5"
    first.save_weights(path)
    second.load_weights(path)
    x = torch.randn(3, 4)
    torch.testing.assert_close(second(x), first(x))


class _PositionalEmbedding(keras.layers.Layer):
    # keras.io's "English-to-Spanish translation with a sequence-to-sequence Transformer"
    def __init__(self, sequence_length: int, vocab_size: int, embed_dim: int) -> None:
        super().__init__()
        self.token_embeddings = keras.layers.Embedding(input_dim=vocab_size, output_dim=embed_dim)
        self.position_embeddings = keras.layers.Embedding(input_dim=sequence_length, output_dim=embed_dim)

    def call(self, inputs: Any) -> Any:
        length = tf.shape(inputs)[-1]
        positions = tf.range(start=0, limit=length, delta=1)
        return self.token_embeddings(inputs) + self.position_embeddings(positions)


def test_a_layer_whose_values_bound_a_variable_axis_traces_on_short_examples() -> None:
    # Keras traces shapes without values; unison runs examples (64 and 96 long on a None axis), which
    # a position embedding of input_dim=10 cannot index: it is traced on examples 2 and 3 long instead
    tokens = keras.Input(shape=(None,), dtype="int64")
    embedded = _PositionalEmbedding(10, 50, 8)(tokens)
    assert tuple(embedded.shape) == (None, None, 8)
    pooled = keras.layers.GlobalAveragePooling1D()(keras.layers.Dense(4)(embedded))
    model = keras.Model(tokens, pooled)
    out = model(torch.randint(0, 50, (3, 10)))
    assert tuple(out.shape) == (3, 4)
    with pytest.raises(ValueError, match="outside"):
        model(torch.randint(0, 50, (3, 11)))  # longer than the embedding: a real error at run time


def test_a_layer_that_fails_on_every_example_size_still_names_its_own_error() -> None:
    class Broken(keras.layers.Layer):
        def call(self, inputs: Any) -> Any:
            raise ValueError("broken on purpose")

    with pytest.raises(ValueError, match="broken on purpose"):
        Broken()(keras.Input(shape=(None,)))


def test_a_layers_output_can_be_a_models_input_as_in_keras_3() -> None:
    x = keras.Input(shape=(3,))
    hidden = keras.layers.Dense(4, name="first")(x)
    out = keras.layers.Dense(2, name="second")(hidden)
    head = keras.Model(hidden, out)  # starts at the intermediate tensor (keras.utils.FeatureSpace's pattern)
    assert [layer.name for layer in head.layers if hasattr(layer, "name")][-1] == "second"
    assert tuple(head(torch.zeros(5, 4)).shape) == (5, 2)
    with pytest.raises(ValueError, match="Graph disconnected"):
        keras.Model(x, keras.layers.Dense(1)(keras.Input(shape=(2,))))
