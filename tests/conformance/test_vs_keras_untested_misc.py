"""Small Keras names that had no conformance test, against Keras 3.15 and Keras 2 (tf_keras) on TF 2.21:
``config.enable_unsafe_deserialization``, ``metrics.binary_accuracy``,
``ops.vectorize``, ``distribution.get_device_count``, ``optimizers.legacy.*`` (Keras 3's dialect),
and tf_keras's ``activations.hard_sigmoid``, ``backend.backend``, ``backend.set_learning_phase``,
``layers.InputLayer``, ``layers.RandomHeight``/``RandomWidth``, ``layers.SpectralNormalization`` and
``utils.experimental.DatasetCreator``.
(``config.set_backend`` is compared in ``test_vs_keras_torch_backend.py``.)"""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

BOTH = ("keras", "tf_keras")
K2 = ("tf_keras",)


def _arr(t):
    return t.numpy() if hasattr(t, "numpy") else np.asarray(t)


def _dtype(dtype):
    return getattr(dtype, "name", None) or str(dtype).replace("torch.", "")


def _shape(shape):
    return tuple(None if d is None else int(d) for d in shape)


# --------------------------------------------------------------------------------------------
# config.enable_unsafe_deserialization


def _safe_mode_restorer(tf):
    """A function putting deserialization's safe mode back (a global of each library)."""
    keras = tf.keras
    if keras.__name__ == "keras":  # Keras 3 keeps it in its global state
        from keras.src.backend.common import global_state

        before = global_state.get_global_attribute("safe_mode_saving")
        return lambda: global_state.set_global_attribute("safe_mode_saving", before)
    config = keras.config  # unison's module holds the setting

    before = config._Settings.safe_mode
    return lambda: setattr(config._Settings, "safe_mode", before)


def _lambda_round_trip(tf, enable: bool):
    import os
    import tempfile

    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Lambda(lambda t: t * 3.0 - 1.0)])
    restore = _safe_mode_restorer(tf)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "lam.keras")
        model.save(path)
        try:
            if enable:
                tf.keras.config.enable_unsafe_deserialization()
            loaded = tf.keras.saving.load_model(path)
            return _arr(loaded(np.array([[1.0, 2.0]], np.float32)))
        finally:
            restore()


@same_as_tf("keras:config.enable_unsafe_deserialization")
def test_unsafe_deserialization_loads_a_lambda(tf):
    return _lambda_round_trip(tf, enable=True)


@same_as_tf("keras:config.enable_unsafe_deserialization", edge=True)
def test_without_unsafe_deserialization_a_lambda_is_refused(tf):
    return _lambda_round_trip(tf, enable=False)


# --------------------------------------------------------------------------------------------
# metrics.binary_accuracy


BINARY_DIFFERS = (
    "unison's metrics.binary_accuracy gives one value per example (the mean over the last axis), as "
    "Keras 2 does; Keras 3.15 gives one per element: Keras 3's result is compared after that mean"
)


def _per_example(tf, y_true, y_pred, **kwargs):
    out = np.asarray(_arr(tf.keras.metrics.binary_accuracy(y_true, y_pred, **kwargs)))
    return out.mean(axis=-1) if out.ndim == np.ndim(y_true) else out


@same_as_tf("keras:metrics.binary_accuracy", differs=BINARY_DIFFERS)
def test_binary_accuracy(tf):
    y_true = np.array([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]], np.float32)
    y_pred = np.array([[0.9, 0.6, 0.4], [0.1, 0.2, 0.7]], np.float32)
    return _per_example(tf, y_true, y_pred)


@same_as_tf("keras:metrics.binary_accuracy", edge=True, differs=BINARY_DIFFERS)
def test_binary_accuracy_threshold_ints_and_nan(tf):
    y_true = np.array([[1, 0], [0, 1]], np.int32)
    y_pred = np.array([[0.7, 0.7], [np.nan, 0.8]], np.float32)
    empty = np.zeros((0, 2), np.float32)
    return _per_example(tf, y_true, y_pred, threshold=0.75), _per_example(tf, empty, empty)


# --------------------------------------------------------------------------------------------
# ops.vectorize


VECTORIZE_DIFFERS = (
    "Keras 3's TensorFlow backend refuses every vectorize() call (ValueError 'Not supported with "
    "vectorize() with the TensorFlow backend'); unison vectorizes as Keras's JAX and torch backends do, "
    "so Keras's side is numpy.vectorize, whose rule Keras documents"
)


def _vectorize(tf, where, pyfunc, args, **kwargs):
    ops = tf.keras.ops if where == "ops" else tf.keras.ops.numpy
    try:
        return _arr(ops.vectorize(pyfunc, **kwargs)(*args))
    except ValueError as exc:
        if "TensorFlow backend" not in str(exc):
            raise
        return np.vectorize(pyfunc, **kwargs)(*args)


@pytest.mark.parametrize("where", ["ops", "ops.numpy"])
@same_as_tf("keras:ops.vectorize", "keras:ops.numpy.vectorize", differs=VECTORIZE_DIFFERS)
def test_vectorize(tf, where):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    col, row = np.arange(2, dtype=np.int32).reshape(2, 1), np.arange(3, dtype=np.int32)
    return (
        _vectorize(tf, where, lambda a, b: a * 2.0 + b, (x, np.float32(1.0))),
        _vectorize(tf, where, lambda a, b: a * b - a, (col, row)),
    )


@pytest.mark.parametrize("where", ["ops", "ops.numpy"])
@same_as_tf("keras:ops.vectorize", "keras:ops.numpy.vectorize", edge=True, differs=VECTORIZE_DIFFERS)
def test_vectorize_with_a_signature_and_excluded(tf, where):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    return (
        _vectorize(tf, where, lambda a, b: (a * b).sum(), (x, np.ones(3, np.float32)), signature="(n),(n)->()"),
        _vectorize(tf, where, lambda a, k: a * k, (x, np.float32(3.0)), excluded={1}),
    )


# --------------------------------------------------------------------------------------------
# distribution.get_device_count


DEVICE_COUNT_DIFFERS = (
    "Keras 3's TensorFlow backend has no get_device_count (AttributeError; its JAX and torch backends "
    "count the devices): Keras's side is compared through len(keras.distribution.list_devices(kind))"
)


def _device_count(tf, *kind):
    try:
        return tf.keras.distribution.get_device_count(*kind)
    except AttributeError:  # Keras 3 on TensorFlow: the documented count of the same devices
        return len(tf.keras.distribution.list_devices(*kind))


@same_as_tf("keras:distribution.get_device_count", differs=DEVICE_COUNT_DIFFERS)
def test_device_count_of_cpus(tf):
    return _device_count(tf, "cpu")


@same_as_tf("keras:distribution.get_device_count", edge=True, differs=DEVICE_COUNT_DIFFERS)
def test_device_count_default_and_gpus_on_a_cpu_machine(tf):
    if tf.config.list_physical_devices("GPU"):  # compared on CPU machines (CI); a GPU changes both
        pytest.skip("this machine has a GPU")
    return _device_count(tf), _device_count(tf, "gpu")


# --------------------------------------------------------------------------------------------
# optimizers.legacy in Keras 3's dialect


LEGACY_K3 = ("SGD", "Adam", "RMSprop", "Adagrad", "Ftrl")
LEGACY_K3_NAMES = tuple(f"keras:optimizers.legacy.{n}" for n in (*LEGACY_K3, "Optimizer"))
LEGACY_DIFFERS = (
    "Keras 3's keras.optimizers.legacy.* raise ImportError on use, naming tf_keras as the way to keep "
    "them; unison serves tf_keras's legacy optimizers there on purpose (one keras for both dialects), "
    "so the Keras side is compared through the tf_keras class its message points at"
)


def _legacy(tf, name: str):
    cls = getattr(tf.keras.optimizers.legacy, name)
    try:
        return cls(learning_rate=0.1), "served"
    except ImportError as exc:
        assert "tf_keras" in str(exc)  # Keras 3's message names the way out, which the comparison takes
        import tf_keras

        return getattr(tf_keras.optimizers.legacy, name)(learning_rate=0.1), "served"


@pytest.mark.parametrize("name", LEGACY_K3)
@same_as_tf(*LEGACY_K3_NAMES, differs=LEGACY_DIFFERS, rtol=1e-4, atol=1e-5)
def test_keras3_legacy_optimizer_steps_like_tf_keras(tf, name):
    w = tf.Variable(np.array([1.0, -2.0, 0.5], np.float32))
    optimizer, how = _legacy(tf, name)
    out = []
    for k in range(3):
        optimizer.apply_gradients([(tf.constant(np.array([0.3, -0.1, 0.2], np.float32) * (k + 1)), w)])
        out.append(w.numpy())
    return out, how, type(optimizer).__name__


@same_as_tf(*LEGACY_K3_NAMES, edge=True, differs=LEGACY_DIFFERS)
def test_keras3_legacy_optimizer_with_a_bad_argument(tf):
    optimizer, _ = _legacy(tf, "SGD")
    base = tf.keras.optimizers.legacy.Optimizer
    try:
        instance = isinstance(optimizer, base)
    except TypeError:
        instance = None
    if tf.keras.__name__ == "keras":  # Keras 3's base is the refusing class: compare with tf_keras's
        import tf_keras

        instance = isinstance(optimizer, tf_keras.optimizers.legacy.Optimizer)
    try:
        optimizer.__class__(learning_rate=0.1, no_such_option=1)
        bad = "accepted"
    except TypeError as exc:
        bad = type(exc).__name__
    return instance, bad


# --------------------------------------------------------------------------------------------
# tf_keras: activations.hard_sigmoid, backend.backend, backend.set_learning_phase


HARD_SIGMOID_DIFFERS = (
    "unison's activations.hard_sigmoid is Keras 3's relu6(x + 3) / 6; tf_keras's is clip(0.2 x + 0.5): "
    "compared where the two agree (0, the saturation beyond +-3, NaN), the slope is Keras 3's"
)


@same_as_tf("tf_keras:activations.hard_sigmoid", dialects=K2, differs=HARD_SIGMOID_DIFFERS)
def test_keras2_hard_sigmoid(tf):
    return tf.keras.activations.hard_sigmoid(tf.constant([-9.0, -3.0, 0.0, 3.0, 9.0]))


@same_as_tf("tf_keras:activations.hard_sigmoid", edge=True, dialects=K2, differs=HARD_SIGMOID_DIFFERS)
def test_keras2_hard_sigmoid_of_float64_nan_and_empty(tf):
    return (
        tf.keras.activations.hard_sigmoid(tf.constant([np.nan, -np.inf, np.inf, 0.0], tf.float64)),
        tf.keras.activations.hard_sigmoid(tf.zeros((0, 2))),
    )


@same_as_tf(
    "tf_keras:backend.backend",
    dialects=K2,
    differs="unison's backend is 'torch', tf_keras's 'tensorflow': compared as 'a known backend name'",
)
def test_keras2_backend_name(tf):
    name = tf.keras.backend.backend()
    return name in ("tensorflow", "torch"), name == tf.keras.backend.backend()


@same_as_tf("tf_keras:backend.backend", edge=True, dialects=K2)
def test_keras2_backend_name_is_a_lower_case_string(tf):
    name = tf.keras.backend.backend()
    return isinstance(name, str), name.islower(), name.strip() == name


def _learning_phases(tf, values):
    import warnings

    K = tf.keras.backend
    seen = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            for v in values:
                try:
                    K.set_learning_phase(v)
                    seen.append(int(K.learning_phase()))
                except ValueError as exc:
                    seen.append(type(exc).__name__)
        finally:
            K.set_learning_phase(0)
            if tf.__name__.startswith("unison"):
                # never set again, so later tests' layers follow Keras's default rather than phase 0
                from unison.keras.backend.common import _SET_PHASE

                _SET_PHASE.clear()
    return seen


@same_as_tf("tf_keras:backend.set_learning_phase", dialects=K2)
def test_keras2_set_learning_phase(tf):
    return _learning_phases(tf, [1, 0])


@same_as_tf("tf_keras:backend.set_learning_phase", edge=True, dialects=K2)
def test_keras2_set_learning_phase_refuses_two(tf):
    return _learning_phases(tf, [2, -1, True])


# --------------------------------------------------------------------------------------------
# tf_keras: layers.InputLayer, RandomHeight, RandomWidth, SpectralNormalization


@same_as_tf("tf_keras:layers.InputLayer", dialects=K2)
def test_keras2_input_layer(tf):
    layer = tf.keras.layers.InputLayer(input_shape=(3, 2))
    model = tf.keras.Sequential([layer, tf.keras.layers.Flatten()])
    return _shape(layer.output.shape), _dtype(layer.output.dtype), _shape(model.output_shape)


@same_as_tf("tf_keras:layers.InputLayer", edge=True, dialects=K2)
def test_keras2_input_layer_with_a_batch_size_and_ints(tf):
    layer = tf.keras.layers.InputLayer(input_shape=(None,), batch_size=4, dtype="int32")
    return _shape(layer.output.shape), _dtype(layer.output.dtype)


def _images():
    return np.arange(2 * 4 * 6 * 1, dtype=np.float32).reshape(2, 4, 6, 1)


@pytest.mark.parametrize("name", ["RandomHeight", "RandomWidth"])
@same_as_tf("tf_keras:layers.RandomHeight", "tf_keras:layers.RandomWidth", dialects=K2, rtol=1e-4, atol=1e-4)
def test_keras2_random_side_of_a_fixed_factor(tf, name):
    layer = getattr(tf.keras.layers, name)(factor=(0.5, 0.5))
    x = tf.constant(_images())
    return layer(x, training=True), layer(x, training=False), _shape(layer.compute_output_shape((2, 4, 6, 1)))


@pytest.mark.parametrize("name", ["RandomHeight", "RandomWidth"])
@same_as_tf("tf_keras:layers.RandomHeight", "tf_keras:layers.RandomWidth", edge=True, dialects=K2)
def test_keras2_random_side_refuses_a_factor_below_minus_one(tf, name):
    try:
        getattr(tf.keras.layers, name)(factor=(-1.5, 0.2))
    except ValueError as exc:
        return type(exc).__name__
    return "accepted"


SPECTRAL_DIFFERS = (
    "tf_keras 2.21's SpectralNormalization fails on its first call (its build makes a Keras 3 InputSpec: "
    "TypeError 'Layer input_spec must be an instance of InputSpec'); Keras's side is then Keras 3's class, "
    "whose rule tf_keras's copies"
)


def _spectral(tf, layer):
    wrapper = tf.keras.layers.SpectralNormalization(layer, power_iterations=1)
    try:
        wrapper.build((None, 3))
    except TypeError as exc:
        if "InputSpec" not in str(exc):
            raise
        import keras  # tf_keras's class is unusable in TF 2.21: Keras 3's, on a Keras 3 layer

        inner = keras.layers.Dense(2, use_bias=False) if layer.__class__.__name__ == "Dense" else keras.layers.Flatten()
        wrapper = keras.layers.SpectralNormalization(inner, power_iterations=1)
    return wrapper


@same_as_tf("tf_keras:layers.SpectralNormalization", dialects=K2, rtol=1e-4, atol=1e-5, differs=SPECTRAL_DIFFERS)
def test_keras2_spectral_normalization_of_a_rank_one_kernel(tf):
    # a rank-one kernel: one power iteration finds its norm from any start vector, so the random u is moot
    a, b = np.array([1.0, 2.0, 2.0], np.float32), np.array([3.0, 4.0], np.float32)
    layer = _spectral(tf, tf.keras.layers.Dense(2, use_bias=False))
    x = np.array([[1.0, 0.5, -1.0]], np.float32)
    layer(x)
    layer.layer.kernel.assign(np.outer(a, b))
    return _arr(layer(x, training=True)), _arr(layer(x, training=False))


@same_as_tf("tf_keras:layers.SpectralNormalization", edge=True, dialects=K2, differs=SPECTRAL_DIFFERS)
def test_keras2_spectral_normalization_needs_a_kernel(tf):
    try:
        _spectral(tf, tf.keras.layers.Flatten())(np.ones((1, 3), np.float32))
    except (ValueError, AttributeError) as exc:
        return type(exc).__name__
    return "accepted"


# --------------------------------------------------------------------------------------------
# tf_keras: utils.experimental.DatasetCreator


@same_as_tf("tf_keras:utils.experimental.DatasetCreator", dialects=K2)
def test_keras2_dataset_creator(tf):
    def dataset_fn(context):
        rows = np.arange(8, dtype=np.float32).reshape(8, 1) + 10 * context.input_pipeline_id
        return tf.data.Dataset.from_tensor_slices(rows).batch(context.get_per_replica_batch_size(4))

    creator = tf.keras.utils.experimental.DatasetCreator(dataset_fn)
    context = tf.distribute.InputContext(num_input_pipelines=2, input_pipeline_id=1, num_replicas_in_sync=2)
    return [b.numpy() for b in creator(context)]


@same_as_tf("tf_keras:utils.experimental.DatasetCreator", edge=True, dialects=K2)
def test_keras2_dataset_creator_of_a_non_function(tf):
    try:
        tf.keras.utils.experimental.DatasetCreator([1, 2, 3])
    except TypeError as exc:
        return type(exc).__name__
    return "accepted"
