"""Keras 2's (tf_keras) own names on unison against tf_keras 2.21 on TF 2.21: the random-generator
switch, ``RadialConstraint``, ``MeanTensor``, ``PyMetric``, ``BaseLogger``, the experimental
``BackupAndRestore``, ``model_from_yaml``'s refusal, the legacy object (de)serializers (Keras 3's
``keras.legacy.saving`` too), the premade ``LinearModel``/``WideDeepModel``,
``SharpnessAwareMinimization``, ``SidecarEvaluator`` and ``BackupAndRestore``'s resumed fit (both
dialects)."""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

K2 = ("tf_keras",)
RNG_NAMES = (
    "tf_keras:backend.experimental.disable_tf_random_generator",
    "tf_keras:backend.experimental.enable_tf_random_generator",
    "tf_keras:backend.experimental.is_tf_random_generator_enabled",
)


@same_as_tf(*RNG_NAMES, dialects=K2)
def test_tf_random_generator_switch(tf):
    exp = tf.keras.backend.experimental
    before = exp.is_tf_random_generator_enabled()
    try:
        exp.enable_tf_random_generator()
        on = exp.is_tf_random_generator_enabled()
        exp.disable_tf_random_generator()
        off = exp.is_tf_random_generator_enabled()
    finally:
        (exp.enable_tf_random_generator if before else exp.disable_tf_random_generator)()
    return before, on, off


@same_as_tf(*RNG_NAMES, edge=True, dialects=K2)
def test_tf_random_generator_switch_twice(tf):
    exp = tf.keras.backend.experimental
    before = exp.is_tf_random_generator_enabled()
    try:
        exp.disable_tf_random_generator()
        exp.disable_tf_random_generator()  # twice: still off, no error
        twice_off = exp.is_tf_random_generator_enabled()
        exp.enable_tf_random_generator()
        exp.enable_tf_random_generator()
        twice_on = exp.is_tf_random_generator_enabled()
    finally:
        (exp.enable_tf_random_generator if before else exp.disable_tf_random_generator)()
    return twice_off, twice_on


RADIAL = ("tf_keras:constraints.RadialConstraint", "tf_keras:constraints.radial_constraint")


@pytest.mark.parametrize("size", [2, 3, 4, 5])
@same_as_tf(*RADIAL, dialects=K2)
def test_radial_constraint(tf, size):
    w = np.arange(size * size * 6, dtype="float32").reshape(size, size, 2, 3) * 0.5 - 3.0
    by_class = tf.keras.constraints.RadialConstraint()(tf.constant(w))
    by_alias = tf.keras.constraints.radial_constraint()(tf.constant(w))
    by_name = tf.keras.constraints.get("radial_constraint")(tf.constant(w))
    return by_class, by_alias, by_name


@pytest.mark.parametrize("shape", [(3, 3, 2), (3, 2, 1, 1), (1, 1, 2, 2)])
@same_as_tf(*RADIAL, edge=True, dialects=K2)
def test_radial_constraint_refuses_other_shapes(tf, shape):
    return tf.keras.constraints.RadialConstraint()(tf.zeros(shape))


@same_as_tf("tf_keras:metrics.MeanTensor", dialects=K2)
def test_mean_tensor(tf):
    m = tf.keras.metrics.MeanTensor()
    m.update_state([0.0, 1.0, 2.0, 3.0])
    m.update_state([4.0, 5.0, 6.0, 7.0])
    first = m.result()
    m.update_state([12.0, 10.0, 8.0, 6.0], sample_weight=[0.0, 0.2, 0.5, 1.0])
    second = m.result()
    rows = tf.keras.metrics.MeanTensor(dtype="float64")
    rows.update_state([[1.0, 2.0], [3.0, 4.0]], sample_weight=[1.0, 0.0])
    rows.update_state([[5.0, 6.0], [7.0, 8.0]])
    total = m.total
    m.reset_state()
    return first, second, rows.result(), total, m.result(), m.get_config()


@pytest.mark.parametrize("case", ["no_value", "other_shape", "given_shape"])
@same_as_tf("tf_keras:metrics.MeanTensor", edge=True, dialects=K2)
def test_mean_tensor_edges(tf, case):
    if case == "no_value":
        return tf.keras.metrics.MeanTensor().result()
    if case == "other_shape":
        m = tf.keras.metrics.MeanTensor()
        m.update_state([1.0, 2.0])
        return m.update_state([1.0, 2.0, 3.0])
    m = tf.keras.metrics.MeanTensor(shape=(1, 3))
    return m.result()


def _count_metric(tf):
    class ExactMatches(tf.keras.metrics.experimental.PyMetric):
        def __init__(self, name="exact_matches", **kwargs):
            super().__init__(name=name, **kwargs)

        def update_state(self, y_true, y_pred, sample_weight=None):
            hits = np.asarray(y_true.numpy() == np.round(y_pred.numpy()), "float64")
            weights = np.ones_like(hits) if sample_weight is None else sample_weight.numpy()
            self.hits += float((hits * weights).sum())
            self.seen += float(weights.sum())

        def result(self):
            return self.hits / self.seen if self.seen else 0.0

        def reset_state(self):
            self.hits, self.seen = 0.0, 0.0

    return ExactMatches


@same_as_tf("tf_keras:metrics.experimental.PyMetric", dialects=K2)
def test_py_metric(tf):
    metric = _count_metric(tf)()
    metric.update_state(tf.constant([1.0, 2.0, 3.0]), tf.constant([1.1, 2.6, 2.9]))
    first = metric.result()
    metric.update_state([0.0, 1.0], [0.2, 0.2], sample_weight=[2.0, 1.0])
    return first, metric.result(), metric.name


@same_as_tf("tf_keras:metrics.experimental.PyMetric", edge=True, dialects=K2)
def test_py_metric_reset_and_float64(tf):
    metric = _count_metric(tf)(dtype="float64")
    empty = metric.result()
    metric.update_state([1.0], [1.0])
    metric.reset_state()
    return empty, metric.result()


def _drive_base_logger(logger, batches, metrics):
    logger.set_params({"metrics": metrics})
    logger.on_epoch_begin(0)
    for i, logs in enumerate(batches):
        logger.on_batch_end(i, dict(logs))
    logs = {"loss": -1.0}
    logger.on_epoch_end(0, logs)
    return logs


@same_as_tf("tf_keras:callbacks.BaseLogger", dialects=K2)
def test_base_logger_averages(tf):
    batches = [{"size": 4, "loss": 1.0, "acc": 0.5}, {"size": 2, "loss": 4.0, "acc": 1.0, "num_steps": 2}]
    plain = _drive_base_logger(tf.keras.callbacks.BaseLogger(), batches, ["loss", "acc", "absent"])
    stateful = _drive_base_logger(tf.keras.callbacks.BaseLogger(stateful_metrics=["acc"]), batches, ["loss", "acc"])
    return plain, stateful


@pytest.mark.parametrize("case", ["no_size", "no_logs"])
@same_as_tf("tf_keras:callbacks.BaseLogger", edge=True, dialects=K2)
def test_base_logger_without_sizes(tf, case):
    logger = tf.keras.callbacks.BaseLogger()
    if case == "no_size":
        return _drive_base_logger(logger, [{"loss": 1.0}], ["loss"])
    logger.set_params({"metrics": ["loss"]})
    logger.on_epoch_begin(0)
    logger.on_batch_end(0, None)
    logs = {"loss": 3.0}
    logger.on_epoch_end(0, logs)
    logger.on_epoch_end(0, None)
    return logs, logger.seen


@same_as_tf("tf_keras:callbacks.experimental.BackupAndRestore", dialects=K2)
def test_experimental_backup_and_restore(tf, tmp_path):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cb = tf.keras.callbacks.experimental.BackupAndRestore(str(tmp_path / "backup"))
    return isinstance(cb, tf.keras.callbacks.BackupAndRestore), cb.save_freq, cb.delete_checkpoint


@same_as_tf("tf_keras:callbacks.experimental.BackupAndRestore", edge=True, dialects=K2)
def test_experimental_backup_and_restore_options(tf, tmp_path):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cb = tf.keras.callbacks.experimental.BackupAndRestore(str(tmp_path / "b"), save_freq=3, delete_checkpoint=False)
    return cb.save_freq, cb.delete_checkpoint


@same_as_tf("tf_keras:models.model_from_yaml", dialects=K2)
def test_model_from_yaml_is_refused(tf):
    return tf.keras.models.model_from_yaml("class_name: Sequential\nconfig: {}\n")


@same_as_tf("tf_keras:models.model_from_yaml", edge=True, dialects=K2)
def test_model_from_yaml_is_refused_with_custom_objects(tf):
    return tf.keras.models.model_from_yaml("", custom_objects={"x": 1})


LEGACY_NAMES = ("tf_keras:utils.legacy.serialize_keras_object", "tf_keras:utils.legacy.deserialize_keras_object")
KERAS3_LEGACY_NAMES = ("keras:legacy.saving.serialize_keras_object", "keras:legacy.saving.deserialize_keras_object")


def _legacy(tf, dialect):
    return tf.keras.utils.legacy if dialect == "tf_keras" else tf.keras.legacy.saving


def _scale_class(tf):
    class Scale:
        def __init__(self, factor=1.0, activation=None):
            self.factor = factor
            self.activation = activation

        def get_config(self):
            return {"factor": self.factor, "activation": self.activation, "label": "s"}

        @classmethod
        def from_config(cls, config):
            config = dict(config)
            config.pop("label")
            return cls(**config)

    return Scale


@same_as_tf(*LEGACY_NAMES, dialects=K2)
def test_legacy_serialize_round_trip(tf, dialect):
    return _legacy_round_trip(tf, dialect)


@same_as_tf(*KERAS3_LEGACY_NAMES, dialects=("keras",))
def test_keras3_legacy_saving_round_trip(tf, dialect):
    return _legacy_round_trip(tf, dialect)


def _legacy_round_trip(tf, dialect):
    legacy = _legacy(tf, dialect)
    Scale = _scale_class(tf)

    def halve(x):
        return x / 2

    inner = Scale(0.5)
    outer = Scale(2.0, activation=inner)
    data = legacy.serialize_keras_object(outer)
    # the reader rebuilds nested objects in the dict it is given: give it a second copy
    back = legacy.deserialize_keras_object(legacy.serialize_keras_object(outer), module_objects={"Scale": Scale})
    dense = legacy.serialize_keras_object(tf.keras.layers.Dense(3))
    layer = legacy.deserialize_keras_object(dense, module_objects={"Dense": tf.keras.layers.Dense})
    named = legacy.serialize_keras_object(halve)
    fn = legacy.deserialize_keras_object(named, custom_objects={"halve": halve})
    return (
        data,
        type(back.activation).__name__,
        back.activation.factor,
        back.factor,
        dense["class_name"],
        sorted(set(dense) - {"config"}),
        type(layer).__name__,
        layer.units,
        named,
        fn is halve,
        legacy.serialize_keras_object(None),
        legacy.deserialize_keras_object(None),
    )


@pytest.mark.parametrize("case", ["no_config", "unknown_class", "unknown_name", "bad_form", "not_serializable"])
@same_as_tf(*LEGACY_NAMES, edge=True, dialects=K2)
def test_legacy_serialize_mistakes(tf, dialect, case):
    return _legacy_mistake(tf, dialect, case)


@pytest.mark.parametrize("case", ["no_config", "unknown_class", "unknown_name", "bad_form", "not_serializable"])
@same_as_tf(*KERAS3_LEGACY_NAMES, edge=True, dialects=("keras",))
def test_keras3_legacy_saving_mistakes(tf, dialect, case):
    return _legacy_mistake(tf, dialect, case)


def _legacy_mistake(tf, dialect, case):
    legacy = _legacy(tf, dialect)
    if case == "no_config":
        return legacy.deserialize_keras_object({"class_name": "Dense"}, module_objects={})
    if case == "unknown_class":
        return legacy.deserialize_keras_object({"class_name": "Nope", "config": {}}, module_objects={})
    if case == "unknown_name" and dialect == "keras":
        # Keras 3.15's legacy reader fails on any name outside custom_objects (an AttributeError of its own)
        return legacy.deserialize_keras_object("Dense", custom_objects={"Dense": tf.keras.layers.Dense}).units
    if case == "unknown_name":
        return legacy.deserialize_keras_object("nope", module_objects={})
    if case == "bad_form":
        return legacy.deserialize_keras_object(3, module_objects={})
    return legacy.serialize_keras_object(object())


def _linear_data():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(16, 3)).astype("float32")
    y = (x @ np.array([[0.5], [-1.0], [2.0]], "float32") + 0.3).astype("float32")
    return x, y


@same_as_tf("tf_keras:experimental.LinearModel", rtol=1e-4, atol=1e-5, dialects=K2)
def test_linear_model_trains(tf):
    keras = tf.keras
    x, y = _linear_data()
    model = keras.experimental.LinearModel(units=1)
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    history = model.fit(x, y, batch_size=8, epochs=3, verbose=0, shuffle=False)
    named = keras.experimental.LinearModel(units=2, activation="relu", kernel_initializer="ones")
    out = named({"b": tf.constant(x[:2, :2]), "a": tf.constant(x[:2, 2:])})
    return history.history["loss"], model.get_weights(), out, [w.shape for w in named.get_weights()]


@pytest.mark.parametrize("case", ["missing_key", "list_inputs", "no_bias_sigmoid"])
@same_as_tf("tf_keras:experimental.LinearModel", edge=True, rtol=1e-5, atol=1e-6, dialects=K2)
def test_linear_model_edges(tf, case):
    x, _ = _linear_data()
    keras = tf.keras
    if case == "missing_key":
        model = keras.experimental.LinearModel()
        model({"a": tf.constant(x[:, :1]), "b": tf.constant(x[:, 1:])})
        return model({"a": tf.constant(x[:, :1])})
    if case == "list_inputs":
        model = keras.experimental.LinearModel(units=2, kernel_initializer="ones", bias_initializer="ones")
        return model([tf.constant(x[:4, :1]), tf.constant(x[:4, 1:])]), len(model.get_weights())
    model = keras.experimental.LinearModel(use_bias=False, activation="sigmoid", kernel_initializer="ones")
    return model(tf.constant(x[:4])), len(model.get_weights())


def _wide_deep(tf, activation=None):
    keras = tf.keras
    dnn = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, activation="relu"), keras.layers.Dense(1)])
    dnn.set_weights(
        [
            np.linspace(-1.0, 1.0, 12, dtype="float32").reshape(3, 4),
            np.zeros(4, "float32"),
            np.linspace(0.5, -0.5, 4, dtype="float32").reshape(4, 1),
            np.zeros(1, "float32"),
        ]
    )
    return keras.experimental.WideDeepModel(keras.experimental.LinearModel(), dnn, activation=activation)


@same_as_tf("tf_keras:experimental.WideDeepModel", rtol=1e-4, atol=1e-5, dialects=K2)
def test_wide_deep_model_trains(tf):
    x, y = _linear_data()
    model = _wide_deep(tf)
    model.compile(optimizer=tf.keras.optimizers.SGD(0.05), loss="mse")
    history = model.fit(x, y, batch_size=8, epochs=2, verbose=0, shuffle=False)
    return history.history["loss"], model.linear_model.get_weights(), model.dnn_model.get_weights()


@pytest.mark.parametrize("case", ["pair_of_inputs", "sigmoid"])
@same_as_tf("tf_keras:experimental.WideDeepModel", edge=True, rtol=1e-5, atol=1e-6, dialects=K2)
def test_wide_deep_model_edges(tf, case):
    x, _ = _linear_data()
    if case == "sigmoid":
        return _wide_deep(tf, activation="sigmoid")(tf.constant(x[:4]))
    model = _wide_deep(tf)
    return model((tf.constant(x[:4, :2]), tf.constant(x[:4])))


def _sam_fit(tf, num_batch_splits, metrics=()):
    keras = tf.keras
    x, y = _linear_data()
    inner = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2, activation="tanh"), keras.layers.Dense(1)])
    inner.set_weights(
        [
            np.array([[0.2, -0.4], [0.1, 0.3], [-0.5, 0.2]], "float32"),
            np.array([0.05, -0.05], "float32"),
            np.array([[0.7], [-0.6]], "float32"),
            np.array([0.1], "float32"),
        ]
    )
    sam = keras.models.experimental.SharpnessAwareMinimization(inner, rho=0.1, num_batch_splits=num_batch_splits)
    sam.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse", metrics=list(metrics))
    history = sam.fit(x, y, batch_size=8, epochs=2, verbose=0, shuffle=False)
    return {k: v for k, v in history.history.items()}, inner.get_weights(), sam.rho, sam.num_batch_splits


@same_as_tf("tf_keras:models.experimental.SharpnessAwareMinimization", rtol=1e-4, atol=1e-5, dialects=K2)
def test_sharpness_aware_minimization(tf):
    return _sam_fit(tf, None, metrics=("mae",))


@same_as_tf("tf_keras:models.experimental.SharpnessAwareMinimization", edge=True, rtol=1e-4, atol=1e-5, dialects=K2)
def test_sharpness_aware_minimization_in_batch_splits(tf):
    return _sam_fit(tf, 2)


SIDECAR = (
    "tf_keras:utils.SidecarEvaluator",
    "tf_keras:experimental.SidecarEvaluator",
    "tf_keras:callbacks.SidecarEvaluatorModelExport",
)


def _sidecar(tf, tmp_path, weight_sets, max_evaluations):
    import os
    import warnings

    keras = tf.keras
    x, y = _linear_data()
    folder = tmp_path / tf.__name__
    trained = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    checkpoint = tf.train.Checkpoint(model=trained)
    for weights in weight_sets:
        trained.set_weights(weights)
        checkpoint.save(str(folder / "ckpts" / "ckpt"))
    fresh = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1, kernel_initializer="zeros")])
    fresh.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse", metrics=["mae"])
    seen = []
    export = keras.callbacks.SidecarEvaluatorModelExport(
        export_filepath=str(folder / "best" / "best-{epoch:02d}.weights.h5"),
        checkpoint_filepath=str(folder / "ckpts" / "ckpt-{epoch}"),
        monitor="loss",
        save_weights_only=True,
    )
    log = keras.callbacks.LambdaCallback(on_test_end=lambda logs: seen.append(dict(logs)))
    data = tf.data.Dataset.from_tensor_slices((x, y)).batch(8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        old = keras.experimental.SidecarEvaluator(fresh, data, str(folder / "ckpts"), max_evaluations=max_evaluations)
    evaluator = keras.utils.SidecarEvaluator(
        fresh, data, str(folder / "ckpts"), max_evaluations=max_evaluations, callbacks=[log, export]
    )
    evaluator.start()
    exported = sorted(os.listdir(folder / "best"))
    return fresh.get_weights(), seen, exported, isinstance(old, keras.utils.SidecarEvaluator)


W1 = [np.array([[0.5], [-1.0], [2.0]], "float32"), np.array([0.3], "float32")]
W2 = [np.array([[0.1], [0.2], [0.3]], "float32"), np.array([-0.2], "float32")]


@same_as_tf(*SIDECAR, rtol=1e-5, atol=1e-6, dialects=K2)
def test_sidecar_evaluator(tf, tmp_path):
    return _sidecar(tf, tmp_path, [W1], max_evaluations=1)


@same_as_tf(*SIDECAR, edge=True, rtol=1e-5, atol=1e-6, dialects=K2)
def test_sidecar_evaluator_takes_the_newest_checkpoint(tf, tmp_path):
    return _sidecar(tf, tmp_path, [W1, W2], max_evaluations=2)


def _backup_fit(tf, tmp_path, interrupt_at):
    import os

    keras = tf.keras
    x, y = _linear_data()
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1, kernel_initializer="zeros")])
    model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse")
    backup = str(tmp_path / tf.__name__ / "backup")

    class Interrupt(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            if epoch == interrupt_at:
                raise RuntimeError("interrupted")

    first = None
    if interrupt_at is not None:
        try:
            model.fit(
                x,
                y,
                batch_size=8,
                epochs=3,
                verbose=0,
                shuffle=False,
                callbacks=[keras.callbacks.BackupAndRestore(backup), Interrupt()],
            )
        except RuntimeError as e:
            first = str(e)
    history = model.fit(
        x, y, batch_size=8, epochs=3, verbose=0, shuffle=False, callbacks=[keras.callbacks.BackupAndRestore(backup)]
    )
    # the backup's files are gone after a finished fit (tf_keras keeps the empty folder, Keras 3 not)
    left = [name for _, _, files in os.walk(backup) for name in files]
    return first, history.history["loss"], history.epoch, model.get_weights(), left


@same_as_tf("keras:callbacks.BackupAndRestore", rtol=1e-5, atol=1e-6, dialects=("keras", "tf_keras"))
def test_backup_and_restore_uninterrupted(tf, tmp_path):
    return _backup_fit(tf, tmp_path, None)


@same_as_tf("keras:callbacks.BackupAndRestore", edge=True, rtol=1e-5, atol=1e-6, dialects=("keras", "tf_keras"))
def test_backup_and_restore_resumes_after_an_interruption(tf, tmp_path):
    return _backup_fit(tf, tmp_path / "resume", 1)


def _remote_monitor_posts(tf, reachable=True):
    import http.server
    import json
    import threading
    import urllib.parse

    received = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
            if self.headers.get("Content-Type", "").startswith("application/json"):
                received.append(("json", self.path, json.loads(body)))
            else:
                form = urllib.parse.parse_qs(body)
                received.append(("form", self.path, {k: json.loads(v[0]) for k, v in form.items()}))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    port = server.server_address[1]
    if not reachable:
        server.shutdown()
        server.server_close()
    keras = tf.keras
    x, y = _linear_data()
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1, kernel_initializer="zeros")])
    model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse")
    root = f"http://127.0.0.1:{port}"
    monitors = [
        keras.callbacks.RemoteMonitor(root=root, path="/form/", field="payload"),
        keras.callbacks.RemoteMonitor(root=root, path="/json/", send_as_json=True),
    ]
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        history = model.fit(x, y, batch_size=8, epochs=2, verbose=0, shuffle=False, callbacks=monitors)
    if reachable:
        server.shutdown()
        server.server_close()
    return received, history.history["loss"]


@same_as_tf("keras:callbacks.RemoteMonitor", rtol=1e-5, atol=1e-6, dialects=("keras", "tf_keras"))
def test_remote_monitor_posts_each_epoch(tf):
    return _remote_monitor_posts(tf)


@same_as_tf("keras:callbacks.RemoteMonitor", edge=True, rtol=1e-5, atol=1e-6, dialects=("keras", "tf_keras"))
def test_remote_monitor_without_a_server_keeps_training(tf):
    return _remote_monitor_posts(tf, reachable=False)
