"""The rest of Keras's layers (issue 35) on unison against Keras 3.15 and tf_keras 2.21.

EinsumDense, RMSNormalization, SpectralNormalization, GroupQueryAttention, ReversibleEmbedding,
Wrapper, InputSpec, layers.serialize/deserialize, and tf_keras's AbstractRNNCell and
layers.experimental (EinsumDense, RandomFourierFeatures, SyncBatchNormalization). Each layer is
built on the same input on both sides, given the same deterministic weights (``np.sin`` of a
range in ``get_weights()`` order, so a wrong weight order or shape fails), and compared on its
outputs, ``compute_output_shape``, ``count_params()``, the number of weights, and the outputs of
``from_config(get_config())``.
"""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

BOTH = ("keras", "tf_keras")


def _fill(weights: list, offset: float = 0.0) -> list:
    out = []
    for i, w in enumerate(weights):
        w = np.asarray(w)
        out.append((np.sin(np.arange(w.size) + i) * 0.5 + offset).reshape(w.shape).astype(w.dtype))
    return out


def _shape(shape) -> list:
    if hasattr(shape, "as_list"):
        shape = shape.as_list()
    return [-1 if d is None else int(d) for d in shape]


def _x(shape: tuple) -> np.ndarray:
    return (np.sin(np.arange(int(np.prod(shape)))) * 2.0).reshape(shape).astype(np.float32)


def _run(tf, layer, clone_of, x, training: bool = False) -> dict:
    x = tf.constant(x)
    layer(x)
    weights = _fill(layer.get_weights())
    layer.set_weights(weights)
    result = {
        "out": layer(x, training=False),
        "count_params": layer.count_params(),
        "n_weights": len(layer.get_weights()),
        "shapes": [list(np.shape(w)) for w in layer.get_weights()],
        "output_shape": _shape(layer.compute_output_shape(tuple(x.shape))),
    }
    if training:
        result["train"] = layer(x, training=True)
        result["weights_after"] = layer.get_weights()
    clone = clone_of(layer)
    clone(x)
    clone.set_weights(weights)
    result["clone_out"] = clone(x, training=False)
    return result


def _from_config(layer):
    return type(layer).from_config(layer.get_config())


EINSUM = (
    ("abc,cde->abde", (None, 3, 2), "de", (2, 4, 5), None),
    ("...b,bc->...c", 3, "c", (2, 4, 5), "relu"),
    ("ab,bc->ac", 4, None, (3, 5), None),
    ("abc,cd->abd", (None, 4), "d", (2, 3, 5), None),
    ("bqm,muh->bquh", (None, 2, 3), "uh", (2, 3, 4), None),
    ("bquh,uhm->bqm", (None, 4), "m", (2, 3, 2, 3), "tanh"),
)
EINSUM_EDGE = (
    ("ab...,bc->ac...", (3, None), "c", (2, 4, 5), None),  # axes passed through on the right
    ("...b,bc->...c", 2, "c", (0, 3, 4), None),  # an empty batch
    ("abcd,cde->abe", (2, 3), "be", (1, 2, 3, 4), None),  # two contracted axes, bias on two axes
    ("abcd,cde->abe", (None, 3), "be", (1, 2, 3, 4), None),  # a bias axis of unknown size: refused
)


@pytest.mark.parametrize(("equation", "output_shape", "bias_axes", "shape", "activation"), EINSUM)
@same_as_tf("keras:layers.EinsumDense", dialects=BOTH, rtol=1e-5, atol=1e-5)
def test_einsum_dense(tf, equation, output_shape, bias_axes, shape, activation):
    layer = tf.keras.layers.EinsumDense(equation, output_shape, activation=activation, bias_axes=bias_axes)
    return _run(tf, layer, _from_config, _x(shape))


@pytest.mark.parametrize(("equation", "output_shape", "bias_axes", "shape", "activation"), EINSUM_EDGE)
@same_as_tf("keras:layers.EinsumDense", edge=True, dialects=BOTH, rtol=1e-5, atol=1e-5)
def test_einsum_dense_edge(tf, equation, output_shape, bias_axes, shape, activation):
    layer = tf.keras.layers.EinsumDense(equation, output_shape, activation=activation, bias_axes=bias_axes)
    return _run(tf, layer, _from_config, _x(shape))


@pytest.mark.parametrize(
    ("equation", "output_shape"),
    [("ab,bc", 3), ("ab,bc->ad", 3), ("abc,cd->abd", (5, 4))],
)
@same_as_tf("keras:layers.EinsumDense", edge=True, dialects=BOTH)
def test_einsum_dense_bad_equation_or_shape(tf, equation, output_shape):
    layer = tf.keras.layers.EinsumDense(equation, output_shape)
    return layer(tf.constant(_x((2, 3, 5))[:, 0] if equation.startswith("ab,") else _x((2, 3, 5))))


@same_as_tf("keras:layers.EinsumDense", dialects=BOTH, rtol=1e-5, atol=1e-5)
def test_einsum_dense_gradients(tf):
    layer = tf.keras.layers.EinsumDense("abc,cde->abde", (None, 3, 2), bias_axes="e")
    x = tf.constant(_x((2, 4, 5)))
    layer(x)
    layer.set_weights(_fill(layer.get_weights()))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.square(layer(x)))
    return tape.gradient(loss, layer.trainable_weights)


@same_as_tf("tf_keras:layers.experimental.EinsumDense", dialects=("tf_keras",), rtol=1e-5, atol=1e-5)
def test_experimental_einsum_dense(tf):
    layer = tf.keras.layers.experimental.EinsumDense("abc,cd->abd", (None, 4), bias_axes="d")
    return _run(tf, layer, _from_config, _x((2, 3, 5)))


@same_as_tf("tf_keras:layers.experimental.EinsumDense", edge=True, dialects=("tf_keras",), rtol=1e-5, atol=1e-5)
def test_experimental_einsum_dense_edge(tf):
    layer = tf.keras.layers.experimental.EinsumDense("...b,bc->...c", 2)
    return _run(tf, layer, _from_config, _x((1, 2, 3, 4)))


@pytest.mark.parametrize(("kwargs", "shape"), [({}, (2, 3, 4)), ({"epsilon": 0.5}, (2, 5))])
@same_as_tf("keras:layers.RMSNormalization", rtol=1e-5, atol=1e-5)
def test_rms_normalization(tf, kwargs, shape):
    return _run(tf, tf.keras.layers.RMSNormalization(**kwargs), _from_config, _x(shape))


@pytest.mark.parametrize(("kwargs", "shape"), [({"axis": [1, 2]}, (1, 3, 4)), ({"axis": -1}, (0, 3))])
@same_as_tf("keras:layers.RMSNormalization", edge=True, rtol=1e-5, atol=1e-5)
def test_rms_normalization_edge(tf, kwargs, shape):
    return _run(tf, tf.keras.layers.RMSNormalization(**kwargs), _from_config, _x(shape))


def _spectral(tf, inner: str, kwargs: dict, shape: tuple, power_iterations: int):
    layer = tf.keras.layers.SpectralNormalization(
        getattr(tf.keras.layers, inner)(**kwargs), power_iterations=power_iterations
    )
    x = tf.constant(_x(shape))
    layer(x)
    names = [w.name.split("/")[-1].split(":")[0] for w in layer.weights]
    layer.set_weights(_fill(layer.get_weights()))
    out = {
        "names": names,
        "infer": layer(x, training=False),
        "train": layer(x, training=True),
        "weights_after": layer.get_weights(),
        "train_again": layer(x, training=True),
        "count_params": layer.count_params(),
        "output_shape": _shape(layer.compute_output_shape(tuple(shape))),
    }
    clone = tf.keras.layers.SpectralNormalization.from_config(layer.get_config())
    clone(x)
    clone.set_weights(layer.get_weights())
    out["clone"] = clone(x, training=False)
    return out


@pytest.mark.parametrize(
    ("inner", "kwargs", "shape", "power_iterations"),
    [("Dense", {"units": 3}, (2, 4), 1), ("Conv2D", {"filters": 2, "kernel_size": 2}, (1, 4, 4, 3), 3)],
)
@same_as_tf("keras:layers.SpectralNormalization", rtol=1e-4, atol=1e-5)
def test_spectral_normalization(tf, inner, kwargs, shape, power_iterations):
    return _spectral(tf, inner, kwargs, shape, power_iterations)


@same_as_tf("keras:layers.SpectralNormalization", edge=True, rtol=1e-4, atol=1e-5)
def test_spectral_normalization_edge(tf):
    # a kernel of zeros is left alone in training (Keras's cond), and power_iterations=0 is refused
    layer = tf.keras.layers.SpectralNormalization(tf.keras.layers.Dense(2, kernel_initializer="zeros"))
    x = tf.constant(_x((2, 3)))
    out = [layer(x, training=True), layer.get_weights()[0]]
    try:
        tf.keras.layers.SpectralNormalization(tf.keras.layers.Dense(2), power_iterations=0)
    except ValueError as exc:
        out.append(type(exc).__name__)
    return out


@same_as_tf("keras:layers.Wrapper", dialects=BOTH, rtol=1e-5, atol=1e-5)
def test_wrapper_subclass(tf):
    class Doubled(tf.keras.layers.Wrapper):
        def call(self, inputs):
            return 2.0 * self.layer(inputs)

    layer = Doubled(tf.keras.layers.Dense(3))
    x = tf.constant(_x((2, 4)))
    layer(x)
    layer.set_weights(_fill(layer.get_weights()))
    config = layer.get_config()
    inner = config["layer"]["class_name"]
    clone = Doubled.from_config(config)
    clone(x)
    clone.set_weights(layer.get_weights())
    return layer(x), layer.count_params(), inner, clone(x)


@same_as_tf("keras:layers.Wrapper", edge=True, dialects=BOTH)
def test_wrapper_refuses_a_non_layer(tf):
    return tf.keras.layers.Wrapper("dense")


def _gqa(tf, kwargs: dict, q_shape: tuple, v_shape: tuple, call: dict):
    layer = tf.keras.layers.GroupQueryAttention(**kwargs)
    q, v = tf.constant(_x(q_shape)), tf.constant(_x(v_shape)[::-1].copy())
    layer(q, v)
    layer.set_weights(_fill(layer.get_weights()))
    out, scores = layer(q, v, return_attention_scores=True, **call)
    clone = tf.keras.layers.GroupQueryAttention.from_config(layer.get_config())
    clone(q, v)
    clone.set_weights(layer.get_weights())
    return {
        "out": layer(q, v, **call),
        "scored_out": out,
        "scores": scores,
        "shapes": [list(np.shape(w)) for w in layer.get_weights()],
        "count_params": layer.count_params(),
        "output_shape": _shape(layer.compute_output_shape(q_shape, v_shape)),
        "clone": clone(q, v, **call),
    }


@pytest.mark.parametrize(
    ("kwargs", "q_shape", "v_shape", "call"),
    [
        ({"head_dim": 3, "num_query_heads": 4, "num_key_value_heads": 2}, (2, 4, 6), (2, 5, 6), {}),
        ({"head_dim": 2, "num_query_heads": 2, "num_key_value_heads": 1, "use_bias": False}, (1, 3, 4), (1, 3, 4), {}),
    ],
)
@same_as_tf("keras:layers.GroupQueryAttention", rtol=1e-4, atol=1e-5)
def test_group_query_attention(tf, kwargs, q_shape, v_shape, call):
    return _gqa(tf, kwargs, q_shape, v_shape, call)


@pytest.mark.parametrize(
    ("kwargs", "q_shape", "v_shape", "call"),
    [
        (
            {"head_dim": 2, "num_query_heads": 4, "num_key_value_heads": 4},
            (2, 4, 3),
            (2, 4, 3),
            {"use_causal_mask": True},
        ),
        (
            {"head_dim": 2, "num_query_heads": 2, "num_key_value_heads": 2, "sliding_window": 2},
            (1, 5, 4),
            (1, 5, 4),
            {},
        ),
        ({"head_dim": 2, "num_query_heads": 2, "num_key_value_heads": 1, "use_gate": True}, (1, 3, 4), (1, 2, 4), {}),
    ],
)
@same_as_tf("keras:layers.GroupQueryAttention", edge=True, rtol=1e-4, atol=1e-5)
def test_group_query_attention_edge(tf, kwargs, q_shape, v_shape, call):
    return _gqa(tf, kwargs, q_shape, v_shape, call)


@same_as_tf("keras:layers.GroupQueryAttention", edge=True)
def test_group_query_attention_indivisible_heads(tf):
    return tf.keras.layers.GroupQueryAttention(head_dim=2, num_query_heads=3, num_key_value_heads=2)


def _ids(shape: tuple, high: int) -> np.ndarray:
    return (np.arange(int(np.prod(shape))) * 7 % high).reshape(shape).astype(np.int32)


@pytest.mark.parametrize(
    "kwargs",
    [{"tie_weights": True}, {"tie_weights": False, "logit_soft_cap": 0.5}],
)
@same_as_tf("keras:layers.ReversibleEmbedding", rtol=1e-5, atol=1e-6)
def test_reversible_embedding(tf, kwargs):
    layer = tf.keras.layers.ReversibleEmbedding(6, 3, **kwargs)
    ids = tf.constant(_ids((2, 4), 6))
    layer(ids)
    layer.set_weights(_fill(layer.get_weights()))
    h = layer(ids)
    clone = tf.keras.layers.ReversibleEmbedding.from_config(layer.get_config())
    clone(ids)
    clone.set_weights(layer.get_weights())
    return {
        "embed": h,
        "logits": layer(h, reverse=True),
        "count_params": layer.count_params(),
        "shape": _shape(layer.compute_output_shape((2, 4))),
        "reverse_shape": _shape(layer.compute_output_shape((2, 4, 3), reverse=True)),
        "clone": clone(h, reverse=True),
    }


@same_as_tf("keras:layers.ReversibleEmbedding", edge=True, rtol=1e-5, atol=1e-6)
def test_reversible_embedding_mask_zero(tf):
    layer = tf.keras.layers.ReversibleEmbedding(5, 2, mask_zero=True)
    ids = tf.constant(_ids((2, 3), 3))
    layer(ids)
    layer.set_weights(_fill(layer.get_weights()))
    h = layer(ids)
    return h, layer(h, reverse=True), layer.compute_mask(ids)


@same_as_tf("keras:layers.InputSpec", dialects=BOTH)
def test_input_spec(tf):
    spec = tf.keras.layers.InputSpec(ndim=3, axes={-1: 4})
    config = spec.get_config()
    clone = tf.keras.layers.InputSpec.from_config(config)

    class Checked(tf.keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.input_spec = tf.keras.layers.InputSpec(ndim=3, axes={-1: 4})

        def call(self, inputs):
            return inputs * 2.0

    layer = Checked()
    return {
        "ndim": config["ndim"],
        "axes": {str(k): v for k, v in config["axes"].items()},
        "clone_ndim": clone.ndim,
        "ok": layer(tf.constant(_x((1, 2, 4)))),
    }


@same_as_tf("keras:InputSpec")
def test_top_level_input_spec(tf):
    spec = tf.keras.InputSpec(shape=(None, 3), allow_last_axis_squeeze=True)
    return spec.get_config(), repr(spec) == repr(tf.keras.layers.InputSpec(shape=(None, 3)))


@same_as_tf("keras:InputSpec", edge=True)
def test_top_level_input_spec_bad_axes(tf):
    return tf.keras.InputSpec(ndim=2, axes={2: 4})


@pytest.mark.parametrize("shape", [(2, 4), (1, 2, 5)])
@same_as_tf("keras:layers.InputSpec", edge=True, dialects=BOTH)
def test_input_spec_refuses_a_wrong_input(tf, shape):
    class Checked(tf.keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.input_spec = tf.keras.layers.InputSpec(ndim=3, axes={-1: 4})

        def call(self, inputs):
            return inputs

    return Checked()(tf.constant(_x(shape)))


@same_as_tf("keras:layers.serialize", "keras:layers.deserialize", dialects=BOTH, rtol=1e-6, atol=1e-6)
def test_layers_serialize_roundtrip(tf):
    layer = tf.keras.layers.Dense(3, activation="relu", name="dense_roundtrip")
    entry = tf.keras.layers.serialize(layer)
    clone = tf.keras.layers.deserialize(entry)
    x = tf.constant(_x((2, 4)))
    clone(x)
    clone.set_weights(_fill(clone.get_weights()))
    return {
        "class_name": entry["class_name"],
        "units": entry["config"]["units"],
        "name": clone.name,
        "type": type(clone).__name__,
        "out": clone(x),
    }


@same_as_tf("keras:layers.serialize", "keras:layers.deserialize", edge=True)
def test_layers_deserialize_unknown_class(tf):
    # Keras 3 raises TypeError (tf_keras returns the class name as a string)
    return tf.keras.layers.deserialize({"class_name": "NoSuchLayer", "config": {}})


@same_as_tf("tf_keras:layers.AbstractRNNCell", dialects=("tf_keras",), rtol=1e-5, atol=1e-5)
def test_abstract_rnn_cell(tf):
    class MinimalCell(tf.keras.layers.AbstractRNNCell):
        def __init__(self, units, **kwargs):
            super().__init__(**kwargs)
            self.units = units

        @property
        def state_size(self):
            return self.units

        @property
        def output_size(self):
            return self.units

        def build(self, input_shape):
            self.kernel = self.add_weight(name="kernel", shape=(input_shape[-1], self.units))
            self.recurrent_kernel = self.add_weight(name="recurrent_kernel", shape=(self.units, self.units))

        def call(self, inputs, states):
            output = tf.tanh(tf.matmul(inputs, self.kernel) + tf.matmul(states[0], self.recurrent_kernel))
            return output, [output]

    cell = MinimalCell(3)
    layer = tf.keras.layers.RNN(cell, return_sequences=True)
    x = tf.constant(_x((2, 4, 2)))
    layer(x)
    layer.set_weights(_fill(layer.get_weights()))
    return layer(x), cell.get_initial_state(batch_size=2, dtype=tf.float32)


@same_as_tf("tf_keras:layers.AbstractRNNCell", edge=True, dialects=("tf_keras",))
def test_abstract_rnn_cell_without_call(tf):
    class Empty(tf.keras.layers.AbstractRNNCell):
        pass

    return Empty().state_size


def _rff(tf, kwargs: dict, shape: tuple):
    layer = tf.keras.layers.experimental.RandomFourierFeatures(**kwargs)
    x = tf.constant(_x(shape))
    layer(x)
    weights = layer.get_weights()
    filled = [np.array([1.5], np.float32), *_fill(weights[1:])]
    layer.set_weights(filled)
    clone = type(layer).from_config(layer.get_config())
    clone(x)
    clone.set_weights(filled)
    return {
        "out": layer(x),
        "names": [w.name.split("/")[-1].split(":")[0] for w in layer.weights],
        "trainable": len(layer.trainable_weights),
        "count_params": layer.count_params(),
        "output_shape": _shape(layer.compute_output_shape(shape)),
        "clone": clone(x),
    }


@same_as_tf("tf_keras:layers.experimental.RandomFourierFeatures", dialects=("tf_keras",), rtol=1e-5, atol=1e-5)
def test_random_fourier_features(tf):
    return _rff(tf, {"output_dim": 5}, (3, 4))


@pytest.mark.parametrize("kwargs", [{"output_dim": 2, "kernel_initializer": "laplacian", "trainable": True}])
@same_as_tf(
    "tf_keras:layers.experimental.RandomFourierFeatures", edge=True, dialects=("tf_keras",), rtol=1e-5, atol=1e-5
)
def test_random_fourier_features_edge(tf, kwargs):
    return _rff(tf, kwargs, (1, 3))


@same_as_tf("tf_keras:layers.experimental.SyncBatchNormalization", dialects=("tf_keras",), rtol=1e-4, atol=1e-5)
def test_sync_batch_normalization(tf):
    layer = tf.keras.layers.experimental.SyncBatchNormalization(momentum=0.5)
    x = tf.constant(_x((4, 3)))
    layer(x)
    layer.set_weights(_fill(layer.get_weights(), offset=1.0))
    return layer(x, training=False), layer(x, training=True), layer.get_weights(), layer.count_params()


@same_as_tf(
    "tf_keras:layers.experimental.SyncBatchNormalization", edge=True, dialects=("tf_keras",), rtol=1e-4, atol=1e-5
)
def test_sync_batch_normalization_edge(tf):
    layer = tf.keras.layers.experimental.SyncBatchNormalization(axis=1, center=False)
    x = tf.constant(_x((2, 3, 2)))
    return layer(x, training=True), [np.shape(w) for w in layer.get_weights()]


@same_as_tf("keras:layers.serialize", "keras:layers.deserialize", edge=True, dialects=BOTH, rtol=1e-6, atol=1e-6)
def test_layers_serialize_a_wrapper(tf):
    # a layer inside a layer: the inner one is serialized within, and rebuilt by deserialize
    layer = tf.keras.layers.TimeDistributed(tf.keras.layers.Dense(2))
    entry = tf.keras.layers.serialize(layer)
    names = entry["class_name"], entry["config"]["layer"]["class_name"]  # Keras 3's deserialize pops "layer"
    clone = tf.keras.layers.deserialize(entry)
    x = tf.constant(_x((1, 3, 4)))
    clone(x)
    clone.set_weights(_fill(clone.get_weights()))
    return names, clone(x)
