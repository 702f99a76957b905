"""``layer.get_config()`` of unison's Keras layers against Keras 3.15's (TF 2.21).

Keras 3 lists every constructor argument (defaults applied) plus ``name``, ``trainable`` and
``dtype``; programs read these keys (``clone_model``, ``model.to_json()``, ``.keras`` files that
Keras loads). The first test compares the key set of every ``keras.layers`` class that constructs
with no arguments, ``(4,)`` or ``(4, 3)`` (or the keywords of :data:`KEYWORD_CASES`); keys may differ only as :data:`KEY_DIFFERENCES` lists,
each with its reason. The others compare the values for representative layers.
"""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

_API = __file__.rsplit("/", 1)[0] + "/api/keras3.txt"
LAYER_CLASSES = tuple(
    sorted(
        line.strip()[len("layers.") :]
        for line in open(_API, encoding="utf-8")
        if line.startswith("layers.") and line[len("layers.")].isupper() and "." not in line.strip()[len("layers.") :]
    )
)

# Layers left out: what (), (4,) or (4, 3) makes of them is not one comparable layer.
SKIPPED = {
    "Discretization": "Keras 3 takes Discretization(4) (bin_boundaries=4) and fails only when called",
    "EinsumDense": "needs an equation string",
    "Pipeline": "needs a list of layers",
    "InputSpec": "not a layer",
    "Input": "a function making a symbolic tensor, not a layer class",
    "FlaxLayer": "a JAX-backend layer; unison has none",
    "JaxLayer": "a JAX-backend layer; unison has none",
    "TFSMLayer": "loads a TF SavedModel; unison has none",
}

_LOOKUP = "Keras's lookup options unison does not have (TF-IDF weights, OOV hashing, sparse outputs)"
# Keys that may be in one side's config and not the other's, per layer (each with its reason).
KEY_DIFFERENCES: dict[str, tuple[tuple[str, ...], str]] = {
    "IntegerLookup": (
        (
            "idf_weights",
            "oov_method",
            "pad_to_max_tokens",
            "salt",
            "sparse",
            "vocabulary_dtype",
            "vocabulary_size",
        ),
        _LOOKUP,
    ),
    "StringLookup": (
        ("idf_weights", "oov_method", "pad_to_max_tokens", "salt", "sparse", "vocabulary_size"),
        _LOOKUP,
    ),
    "Layer": (("activity_regularizer", "autocast"), "the bare base class: unison's takes no autocast"),
    "MultiHeadAttention": (("sliding_window", "use_gate"), "Keras 3.15's newer attention options"),
    "TextVectorization": (
        ("ragged", "sparse", "vocabulary_size"),
        "unison's TextVectorization gives dense outputs; vocabulary_size is computed, not an argument",
    ),
}


# Layers Keras makes only from keyword arguments (unison gives these defaults, or takes 4 as the shape).
KEYWORD_CASES = {
    "InputLayer": {"shape": (4,)},
    "GaussianNoise": {"stddev": 0.1},
    "RandomRotation": {"factor": 0.1},
}


def _first_layer(cls):
    if cls.__name__ in KEYWORD_CASES:
        return cls(**KEYWORD_CASES[cls.__name__])
    for args in ((), (4,), (4, 3)):
        try:
            return cls(*args)
        except Exception:  # noqa: BLE001 - the next argument list, as the docstring says
            continue
    return None


@same_as_tf("keras:layers.Layer", "keras:layers.serialize")
def test_every_layer_config_has_keras_keys(tf):
    out = {}
    for name in LAYER_CLASSES:
        cls = getattr(tf.keras.layers, name, None)
        if name in SKIPPED:
            continue
        if cls is None:
            out[name] = "absent"
            continue
        layer = _first_layer(cls)
        if layer is None:
            out[name] = "needs other arguments"
            continue
        allowed = set(KEY_DIFFERENCES.get(name, ((), ""))[0])
        out[name] = sorted(set(layer.get_config()) - allowed)
    return out


def _values(config: dict) -> dict:
    """A config without its (counter-made) name, and without Keras 3.15's einsum fan axes of an
    initializer (``input_axes``/``output_axes``, None here: tf_keras has no such argument)."""
    out = {}
    for key, value in config.items():
        if key == "name":
            continue
        if isinstance(value, dict) and value.get("module") == "keras.initializers":
            inner = {k: v for k, v in value["config"].items() if not (k in ("input_axes", "output_axes") and v is None)}
            value = {**value, "config": inner}
        out[key] = value
    return out


VALUE_CASES = (
    ("Dense", (4,), {}),
    ("Conv2D", (4, 3), {"strides": 2, "padding": "same"}),
    ("LSTM", (3,), {"return_sequences": True}),
    ("BatchNormalization", (), {"momentum": 0.9}),
    ("Dropout", (0.5,), {"seed": 3}),
    ("Embedding", (10, 3), {"mask_zero": True}),
    ("Conv1D", (2, 3), {}),
    ("MaxPooling1D", (3,), {}),
    ("LeakyReLU", (), {}),
    ("MultiHeadAttention", (2, 3), {}),
    ("StringLookup", (), {}),  # oov_token: None given means "[UNK]"
    ("ZeroPadding2D", ((1, 2),), {}),  # saved as ((1, 1), (2, 2))
)
# unison's BatchNormalization defaults to synchronized=True (a documented choice: statistics over
# the global batch under a strategy, so N replicas train as one device, docs/semantics.md); Keras 3's
# to False. unison reduces no buffers across replicas, so its unsynchronised moving statistics would
# drift apart per replica: keeping the default keeps one model.
_VALUE_DIFFERENCES = {"BatchNormalization": ("synchronized",)}


@pytest.mark.parametrize("name,args,kwargs", VALUE_CASES, ids=[c[0] for c in VALUE_CASES])
@same_as_tf(
    "keras:layers.Dense",
    "keras:layers.Conv2D",
    "keras:layers.LSTM",
    "keras:layers.BatchNormalization",
    "keras:layers.Dropout",
    "keras:layers.Embedding",
    "keras:layers.Conv1D",
    "keras:layers.MaxPooling1D",
    "keras:layers.LeakyReLU",
    "keras:layers.MultiHeadAttention",
    "keras:layers.StringLookup",
    "keras:layers.ZeroPadding2D",
)
def test_layer_config_values(tf, name, args, kwargs):
    config = _values(getattr(tf.keras.layers, name)(*args, **kwargs).get_config())
    skipped = set(KEY_DIFFERENCES.get(name, ((), ""))[0]) | set(_VALUE_DIFFERENCES.get(name, ()))
    return {k: v for k, v in config.items() if k not in skipped}


# Arguments Keras 3 saves in a normal form: a factor f as (-f, f) or (0, f), a list value_range,
# the output dtype of Hashing (a policy) and HashedCrossing (a name). One oracle run for all.
_FORM_CASES = (
    ("RandomRotation", {"factor": 0.2}, ("factor",)),
    ("RandomRotation", {"factor": [-0.1, 0.3]}, ("factor",)),
    ("RandomContrast", {"factor": 0.2}, ("factor", "value_range")),
    ("RandomBrightness", {"factor": -0.2}, ("factor", "value_range")),
    ("RandomHue", {"factor": 0.2}, ("factor", "value_range")),
    ("RandomSaturation", {"factor": 0.2, "value_range": (0, 1)}, ("factor", "value_range")),
    ("RandomColorDegeneration", {"factor": 1}, ("factor", "value_range")),
    ("RandomSharpness", {"factor": 0.2}, ("factor", "value_range")),
    ("RandomInvert", {}, ("factor", "value_range")),
    ("RandomPosterization", {"factor": 3}, ("factor", "value_range")),
    ("Solarization", {"addition_factor": 0.3}, ("addition_factor", "threshold_factor", "value_range")),
    ("RandomShear", {"x_factor": 0.2}, ("x_factor", "y_factor")),
    ("RandomGaussianBlur", {}, ("factor", "value_range")),
    ("RandomErasing", {"factor": 0.5}, ("factor", "value_range")),
    ("CutMix", {}, ("factor",)),
    ("AutoContrast", {}, ("value_range",)),
    ("Equalization", {"value_range": (0, 1)}, ("value_range",)),
    ("Hashing", {"num_bins": 3}, ("dtype",)),
    ("Hashing", {"num_bins": 3, "output_mode": "one_hot"}, ("dtype",)),
    ("HashedCrossing", {"num_bins": 3}, ("dtype",)),
    ("HashedCrossing", {"num_bins": 3, "dtype": "int32"}, ("dtype",)),
)


def _kind_and_value(value):
    if isinstance(value, list):
        return "list", list(value)
    return type(value).__name__, value


@same_as_tf(
    *sorted({f"keras:layers.{name}" for name, _, _ in _FORM_CASES}),
    edge=True,
)
def test_configs_save_arguments_in_keras_forms(tf):
    out = []
    for name, kwargs, keys in _FORM_CASES:
        config = getattr(tf.keras.layers, name)(**kwargs).get_config()
        # a list and a tuple are different Python values (both are a JSON array when saved);
        # Keras's lists are its TrackedList, a list subclass
        out.append({k: _kind_and_value(config[k]) for k in keys})
    return out


@same_as_tf("keras:layers.Dense", edge=True)
def test_dense_config_of_set_arguments(tf):
    # objects given as arguments come back in Keras's serialised form; trainable is the current flag
    layer = tf.keras.layers.Dense(
        2,
        activation="relu",
        kernel_initializer=tf.keras.initializers.RandomNormal(stddev=0.5, seed=1),
        kernel_regularizer=tf.keras.regularizers.L2(0.1),
        bias_constraint=tf.keras.constraints.NonNeg(),
        dtype="float64",
    )
    layer.trainable = False
    return _values(layer.get_config())


@same_as_tf("keras:layers.BatchNormalization", edge=True)
def test_batch_normalization_weight_penalties(tf):
    # beta_regularizer/gamma_regularizer, listed in the config, penalise the weights as in Keras
    layer = tf.keras.layers.BatchNormalization(
        gamma_regularizer=tf.keras.regularizers.L2(0.1),
        beta_regularizer=tf.keras.regularizers.L1(0.5),
        beta_initializer="ones",
    )
    layer(tf.ones((2, 3)))
    config = layer.get_config()
    return len(layer.losses), layer.losses[0] + layer.losses[1], config["gamma_regularizer"], config["renorm"]


@same_as_tf("keras:layers.Conv2D", rtol=1e-5, atol=1e-5)
def test_conv2d_groups(tf):
    # groups, a key of Keras's config, splits the channels: kernel (kh, kw, in / groups, filters)
    layer = tf.keras.layers.Conv2D(4, 3, groups=2, padding="same")
    layer.build((2, 5, 5, 4))
    layer.set_weights(
        [np.sin(np.arange(np.prod(w.shape), dtype="float32")).reshape(w.shape) for w in layer.get_weights()]
    )
    x = np.cos(np.arange(2 * 5 * 5 * 4, dtype="float32")).reshape(2, 5, 5, 4)
    clone = tf.keras.layers.Conv2D.from_config(layer.get_config())
    return layer(tf.constant(x)), tuple(layer.kernel.shape), clone.get_config()["groups"]


@pytest.mark.parametrize("zero_output", [False, True])
@same_as_tf("keras:layers.ConvLSTM1D", edge=True, rtol=1e-5, atol=1e-6)
def test_conv_lstm_mask_and_zero_output_for_mask(tf, zero_output):
    # zero_output_for_mask, a key of Keras's config: masked steps keep the states and output zeros
    # (or repeat the last output); the mask's last step is masked, so the final output shows it too
    layer = tf.keras.layers.ConvLSTM1D(
        2, 3, padding="same", return_sequences=True, return_state=True, zero_output_for_mask=zero_output
    )
    x = np.cos(np.arange(2 * 4 * 5 * 3, dtype="float32")).reshape(2, 4, 5, 3)
    layer.build(x.shape)
    layer.set_weights(
        [np.sin(np.arange(np.prod(w.shape), dtype="float32")).reshape(w.shape) * 0.3 for w in layer.get_weights()]
    )
    mask = np.array([[True, True, False, True], [False, True, False, False]])
    return layer(tf.constant(x), mask=tf.constant(mask)), layer.get_config()["zero_output_for_mask"]


@same_as_tf("keras:layers.Dense", "keras:layers.Conv2D", "keras:layers.LSTM", edge=True)
def test_a_float64_layer_computes_in_float64_from_its_first_call(tf):
    # autocast has no float64: the first call used to compute in float32 (weights cast only after it)
    x = np.linspace(-1.0, 1.0, 2 * 5 * 5 * 3).reshape(2, 5, 5, 3)
    ones = {"kernel_initializer": "ones", "bias_initializer": "zeros"}
    dense = tf.keras.layers.Dense(2, dtype="float64", **ones)
    conv = tf.keras.layers.Conv2D(2, 3, dtype="float64", **ones)
    lstm = tf.keras.layers.LSTM(3, dtype="float64", recurrent_initializer="ones", **ones)
    return dense(x[:, 0, 0]), conv(x), lstm(x[:, 0]), [w.numpy() for w in dense.weights]


@same_as_tf("keras:layers.BatchNormalization", "keras:layers.Embedding", "keras:layers.RMSNormalization", edge=True)
def test_float64_layers_keep_float64_weights_and_statistics(tf):
    # BatchNormalization's moving statistics (buffers) and Embedding's table used to stay float32
    x = np.linspace(-1.0, 2.0, 4 * 3).reshape(4, 3)
    bn = tf.keras.layers.BatchNormalization(dtype="float64")
    emb = tf.keras.layers.Embedding(5, 2, dtype="float64", embeddings_initializer="ones")
    rms = tf.keras.layers.RMSNormalization(dtype="float64")
    trained = bn(x, training=True)
    return (
        trained,
        bn(x, training=False),
        emb(np.array([[1, 4]])),
        rms(x),
        [w.numpy() for w in bn.weights + emb.weights],
    )


@same_as_tf(
    "keras:layers.ConvLSTM1D",
    "keras:layers.RNN",
    "keras:layers.GRUCell",
    "keras:layers.SpectralNormalization",
    "keras:layers.Normalization",
    edge=True,
)
def test_float64_recurrent_and_wrapper_layers_compute_in_float64(tf):
    # ConvLSTM kept float32 weights; a cell built in RNN's first step, and a wrapped layer's kernel
    # (SpectralNormalization's power iteration), met float64 inputs with float32 weights
    layers = tf.keras.layers
    ones = {"kernel_initializer": "ones", "recurrent_initializer": "ones"}
    x = np.linspace(-1.0, 1.0, 2 * 3 * 4).reshape(2, 3, 4)
    conv_lstm = layers.ConvLSTM1D(2, 2, dtype="float64", **ones)
    rnn = layers.RNN(layers.GRUCell(2, dtype="float64", **ones), dtype="float64")
    dense = layers.Dense(2, dtype="float64", kernel_initializer="ones")
    spectral = layers.SpectralNormalization(dense, dtype="float64")
    # SpectralNormalization's vector_u is random: its dtype is compared, not its values
    out = spectral(x[0], training=True)
    shape, dtype = tuple(int(d) for d in out.shape), np.asarray(out).dtype.name
    normalization = layers.Normalization(dtype="float64")
    normalization.adapt(x[0] * 1e-3 + 1.0)  # statistics that float32 would round
    normalized = normalization(x[0] * 1e-3 + 1.0)
    vector_u = np.asarray(spectral.vector_u).dtype.name
    mean = np.asarray(normalization.mean)  # (1, 4): the inputs' broadcast shape
    return conv_lstm(x.reshape(2, 3, 2, 2)), rnn(x), shape, dtype, vector_u, normalized, mean


# Keras keeps SGD's learning rate a float32 variable (0.1 is 0.10000000149 there): updates agree to ~1e-8
@same_as_tf("keras:Sequential", "keras:layers.LayerNormalization", "keras:layers.GRU", edge=True, rtol=1e-6)
def test_a_float64_sequential_model_trains_in_float64(tf):
    keras = tf.keras
    model = keras.Sequential(
        [
            keras.Input((3, 2)),
            keras.layers.GRU(2, dtype="float64", kernel_initializer="ones", recurrent_initializer="ones"),
            keras.layers.LayerNormalization(dtype="float64"),
            keras.layers.Dense(1, dtype="float64", kernel_initializer="ones"),
        ]
    )
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    x = np.linspace(0.0, 1.0, 4 * 3 * 2).reshape(4, 3, 2)
    model.fit(x, np.ones((4, 1)), epochs=1, batch_size=4, verbose=0)
    return model(x), [np.asarray(w) for w in model.weights]  # values and dtypes (float64)
