"""Callbacks, model helpers, the serialisation registry, mixed precision and data utils, unison
against Keras 3 and Keras 2 on TF 2.21.

The training runs start from the same weights (``set_weights``) with plain SGD on a small
regression, so histories, learning rates and stopping epochs are comparable.
"""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

BOTH = ("keras", "tf_keras")


def _data():
    x = np.linspace(-1.0, 1.0, 32, dtype="float32").reshape(16, 2)
    y = (x @ np.array([[0.5], [-1.5]], dtype="float32") + 0.25).astype("float32")
    return x, y


def _model(keras, lr: float = 0.1):
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.set_weights([np.array([[0.1], [0.2]], dtype="float32"), np.array([0.0], dtype="float32")])
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=lr), loss="mse")
    return model


@same_as_tf(
    "keras:callbacks.History",
    "keras:callbacks.Callback",
    "keras:callbacks.LambdaCallback",
    "keras:callbacks.CallbackList",
    rtol=1e-4,
    atol=1e-5,
    dialects=BOTH,
)
def test_history_and_lambda_callback(tf):
    keras = tf.keras
    x, y = _data()
    model = _model(keras)
    ends = []

    class Counter(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            ends.append(epoch)

    lam = keras.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: ends.append(10 + epoch))
    history = model.fit(x, y, batch_size=16, epochs=3, verbose=0, shuffle=False, callbacks=[Counter(), lam])
    assert isinstance(history, keras.callbacks.History)
    calls = []

    class Recorder(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            calls.append("begin")

    callback_list = keras.callbacks.CallbackList([Recorder()], model=model)
    callback_list.on_train_begin()
    return {"loss": history.history["loss"], "epochs": history.epoch, "ends": ends, "calls": calls}


@same_as_tf("keras:callbacks.EarlyStopping", rtol=1e-4, atol=1e-5, dialects=BOTH)
def test_early_stopping_restores_best(tf):
    keras = tf.keras
    x, y = _data()
    model = _model(keras, lr=1.5)  # diverges: the loss grows from the 1st epoch
    stop = keras.callbacks.EarlyStopping(monitor="loss", patience=2, restore_best_weights=True)
    history = model.fit(x, y, batch_size=16, epochs=20, verbose=0, shuffle=False, callbacks=[stop])
    return {"epochs": len(history.history["loss"]), "stopped": stop.stopped_epoch, "weights": model.get_weights()}


@same_as_tf(
    "keras:callbacks.LearningRateScheduler", "keras:callbacks.ReduceLROnPlateau", rtol=1e-4, atol=1e-6, dialects=BOTH
)
def test_learning_rate_callbacks(tf):
    keras = tf.keras
    x, y = _data()
    model = _model(keras)
    sched = keras.callbacks.LearningRateScheduler(lambda epoch, lr: lr * 0.5)
    model.fit(x, y, batch_size=16, epochs=3, verbose=0, shuffle=False, callbacks=[sched])
    after_schedule = float(np.asarray(model.optimizer.learning_rate))
    model2 = _model(keras, lr=1.5)
    plateau = keras.callbacks.ReduceLROnPlateau(monitor="loss", factor=0.1, patience=1, min_lr=1e-4)
    model2.fit(x, y, batch_size=16, epochs=4, verbose=0, shuffle=False, callbacks=[plateau])
    return after_schedule, float(np.asarray(model2.optimizer.learning_rate))


@same_as_tf("keras:callbacks.CSVLogger", rtol=1e-4, atol=1e-5, dialects=BOTH)
def test_csv_logger_file(tf, tmp_path):
    keras = tf.keras
    x, y = _data()
    path = str(tmp_path / "log.csv")
    _model(keras).fit(
        x, y, batch_size=16, epochs=2, verbose=0, shuffle=False, callbacks=[keras.callbacks.CSVLogger(path)]
    )
    with open(path) as f:
        rows = [line.strip().split(",") for line in f if line.strip()]
    return (
        rows[0],
        np.array([[float(v) for v in row[:2]] for row in rows[1:]], dtype="float64"),
        [row[2:] for row in rows[1:]],
    )


@same_as_tf("keras:models.clone_model", "keras:models.model_from_json", "keras:models.Sequential", dialects=BOTH)
def test_clone_and_model_from_json(tf):
    keras = tf.keras
    model = _model(keras)
    clone = keras.models.clone_model(model)
    again = keras.models.model_from_json(model.to_json())
    return {
        "clone_shapes": [list(w.shape) for w in clone.get_weights()],
        "json_shapes": [list(w.shape) for w in again.get_weights()],
        "json_layers": [type(layer).__name__ for layer in again.layers],
        "is_sequential": isinstance(again, keras.Sequential),
    }


@same_as_tf(
    "keras:models.save_model",
    "keras:models.load_model",
    "keras:saving.save_model",
    "keras:saving.load_model",
    "keras:models.Model",
    dialects=BOTH,
)
def test_save_and_load_model(tf, tmp_path):
    keras = tf.keras
    inputs = keras.Input((2,))
    model = keras.models.Model(inputs, keras.layers.Dense(3, name="out")(inputs))
    model.set_weights([np.arange(6, dtype="float32").reshape(2, 3) / 10.0, np.ones(3, dtype="float32")])
    path = str(tmp_path / "m.keras")
    keras.models.save_model(model, path)
    loaded = keras.saving.load_model(path)
    x = np.array([[1.0, -2.0]], dtype="float32")
    return loaded.predict(x, verbose=0), [layer.name for layer in loaded.layers if layer.weights]


@same_as_tf(
    "keras:saving.register_keras_serializable",
    "keras:saving.get_registered_name",
    "keras:saving.get_registered_object",
    "keras:saving.get_custom_objects",
    "keras:saving.custom_object_scope",
    "keras:utils.register_keras_serializable",
    "keras:utils.get_registered_name",
    "keras:utils.get_registered_object",
    "keras:utils.get_custom_objects",
    "keras:utils.custom_object_scope",
    "keras:utils.CustomObjectScope",
    dialects=BOTH,
)
def test_serialization_registry(tf):
    keras = tf.keras

    @keras.saving.register_keras_serializable(package="Conf")
    class Twice(keras.layers.Layer):
        def call(self, inputs):
            return inputs * 2.0

    def plain(x):
        return x

    name = keras.saving.get_registered_name(Twice)
    found = keras.saving.get_registered_object(name) is Twice
    with keras.saving.custom_object_scope({"plain_fn": plain}):
        in_scope = keras.utils.get_registered_object("plain_fn") is plain
    with keras.utils.CustomObjectScope({"plain_fn2": plain}):
        in_scope2 = (
            "plain_fn2" in keras.utils.get_custom_objects() or keras.saving.get_registered_object("plain_fn2") is plain
        )
    return {
        "name": name,
        "found": found,
        "in_scope": in_scope,
        "in_scope2": in_scope2,
        "unregistered": keras.utils.get_registered_name(plain),
        "in_custom_objects": name in keras.saving.get_custom_objects(),
    }


@same_as_tf(
    "keras:mixed_precision.Policy",
    "keras:mixed_precision.global_policy",
    "keras:mixed_precision.set_global_policy",
    dialects=BOTH,
)
def test_mixed_precision_policy(tf):
    mp = tf.keras.mixed_precision
    before = mp.global_policy().name
    policy = mp.Policy("mixed_bfloat16")
    mp.set_global_policy("mixed_float16")
    try:
        during = (mp.global_policy().name, mp.global_policy().compute_dtype, mp.global_policy().variable_dtype)
    finally:
        mp.set_global_policy(before)
    return {
        "before": before,
        "policy": (policy.name, policy.compute_dtype, policy.variable_dtype),
        "during": during,
        "after": mp.global_policy().name,
    }


@same_as_tf("keras:utils.img_to_array", "keras:utils.array_to_img", dialects=BOTH)
def test_img_array_round_trip(tf):
    image = (np.arange(4 * 5 * 3, dtype="float32").reshape(4, 5, 3) * 4.0) % 256.0
    pil = tf.keras.utils.array_to_img(image, scale=False)
    back = tf.keras.utils.img_to_array(pil)
    return pil.size, pil.mode, back


@same_as_tf("keras:utils.unpack_x_y_sample_weight", dialects=BOTH)
def test_unpack_x_y_sample_weight(tf):
    unpack = tf.keras.utils.unpack_x_y_sample_weight
    x, y, w = np.ones(2), np.zeros(2), np.full(2, 3.0)
    return [[v is None for v in unpack(data)] for data in ((x,), (x, y), (x, y, w), x)]


@pytest.mark.parametrize(("sequence_length", "sequence_stride", "sampling_rate"), [(3, 1, 1), (4, 2, 2)])
@same_as_tf("keras:utils.timeseries_dataset_from_array", dialects=BOTH)
def test_timeseries_dataset_from_array(tf, sequence_length, sequence_stride, sampling_rate):
    data = np.arange(20, dtype="float32").reshape(10, 2)
    targets = np.arange(10, dtype="int32")
    ds = tf.keras.utils.timeseries_dataset_from_array(
        data,
        targets,
        sequence_length=sequence_length,
        sequence_stride=sequence_stride,
        sampling_rate=sampling_rate,
        batch_size=2,
        shuffle=False,
    )
    return [(np.asarray(a), np.asarray(b)) for a, b in ds]


@pytest.mark.parametrize("targets", [None, "ids"])
@same_as_tf("keras:utils.timeseries_dataset_from_array", edge=True, dialects=BOTH)
def test_timeseries_dataset_too_short_is_empty(tf, targets):
    # fewer time steps than one window: Keras returns an empty dataset (no error)
    data = np.arange(5, dtype="float32")
    ds = tf.keras.utils.timeseries_dataset_from_array(
        data, None if targets is None else np.arange(5), sequence_length=10, batch_size=4
    )
    return [np.asarray(b if targets is None else b[0]) for b in ds], int(ds.cardinality())


@same_as_tf("keras:utils.pack_x_y_sample_weight", dialects=BOTH)
def test_pack_x_y_sample_weight(tf, dialect):
    pack = tf.keras.utils.pack_x_y_sample_weight
    x, y, w = np.ones(2), np.zeros(2), np.full(2, 3.0)
    packed = [pack(x), pack(x, y), pack(x, y, w)]
    if dialect == "keras":  # Keras 2 returns a list x as it is, Keras 3 (unison) as (x,)
        packed.append(pack([x, y]))
    kinds = [type(p).__name__ if isinstance(p, (tuple, list)) else "array" for p in packed]
    return kinds, [len(p) if isinstance(p, tuple) else 0 for p in packed]


@same_as_tf("keras:utils.get_source_inputs", dialects=BOTH)
def test_get_source_inputs(tf, dialect):
    keras = tf.keras
    a, b = keras.Input((2,), name="a"), keras.Input((2,), name="b")
    summed = keras.layers.Add()([keras.layers.Dense(2)(a), b])
    sources = keras.utils.get_source_inputs(summed)
    # Keras 3 has it in utils too, and answers False for a non-symbolic value (Keras 2 raises)
    is_keras_tensor = keras.utils.is_keras_tensor if dialect == "keras" else keras.backend.is_keras_tensor
    plain = is_keras_tensor(np.ones(2)) if dialect == "keras" else False
    return [s.name for s in sources], is_keras_tensor(summed), plain


@same_as_tf("keras:utils.clear_session", dialects=("keras",))
def test_clear_session_resets_default_names(tf):
    keras = tf.keras
    keras.layers.Dense(1)
    keras.utils.clear_session()
    return keras.layers.Dense(1).name, keras.layers.Dense(1).name


@same_as_tf("keras:utils.Progbar", dialects=BOTH)
def test_progbar_counts(tf):
    bar = tf.keras.utils.Progbar(4, verbose=0)
    bar.update(1, values=[("loss", 2.0)])
    bar.add(2, values=[("loss", 1.0)])
    return bar.target, bar._seen_so_far


@same_as_tf(
    "keras:Layer",
    "keras:Loss",
    "keras:Metric",
    "keras:Optimizer",
    "keras:Sequential",
    "keras:KerasTensor",
    rtol=1e-5,
    atol=1e-6,
    dialects=("keras",),
)
def test_top_level_base_classes(tf):
    keras = tf.keras

    class Scale(keras.Layer):
        def build(self, input_shape):
            self.w = self.add_weight(shape=(input_shape[-1],), initializer="ones")

        def call(self, inputs):
            return inputs * self.w

    class Mae(keras.Loss):
        def call(self, y_true, y_pred):
            return keras.ops.mean(keras.ops.abs(y_true - y_pred), axis=-1)

    class Total(keras.Metric):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.total = self.add_variable(shape=(), initializer="zeros", name="total")

        def update_state(self, values, sample_weight=None):
            self.total.assign_add(keras.ops.sum(values))

        def result(self):
            return self.total

    model = keras.Sequential([keras.Input((3,)), Scale()])
    x = np.array([[1.0, -2.0, 3.0]], dtype="float32")
    metric = Total()
    metric.update_state(np.array([1.0, 2.5], dtype="float32"))
    loss = Mae()(np.zeros((2, 3), dtype="float32"), np.ones((2, 3), dtype="float32") * 2.0)
    return {
        "out": model.predict(x, verbose=0),
        "weights": [list(w.shape) for w in model.weights],
        "loss": np.asarray(loss),
        "metric": np.asarray(metric.result()),
        "optimizer": isinstance(keras.optimizers.SGD(), keras.Optimizer),
        "input": isinstance(keras.Input((2,)), keras.KerasTensor),
    }


@same_as_tf("keras:Variable", dialects=("keras",))
def test_keras_variable(tf):
    v = tf.keras.Variable(np.array([1.0, 2.0], dtype="float32"), trainable=False, name="v")
    v.assign_add(np.array([0.5, 0.5], dtype="float32"))
    return np.asarray(v), list(v.shape), v.trainable


@same_as_tf("keras:mixed_precision.LossScaleOptimizer", rtol=1e-4, atol=1e-6, dialects=BOTH)
def test_loss_scale_optimizer_trains_as_its_inner_optimizer(tf):
    # the loss scale cancels out: the weights after fit are plain SGD's
    keras = tf.keras
    x, y = _data()
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.set_weights([np.array([[0.1], [0.2]], dtype="float32"), np.array([0.0], dtype="float32")])
    optimizer = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.SGD(learning_rate=0.1))
    model.compile(optimizer=optimizer, loss="mse")
    history = model.fit(x, y, batch_size=8, epochs=2, verbose=0, shuffle=False)
    return history.history["loss"], model.get_weights()


@same_as_tf("tf_keras:models.model_from_config", dialects=("tf_keras",))
def test_model_from_config(tf):
    keras = tf.keras
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(3, name="d")])
    again = keras.models.model_from_config({"class_name": "Sequential", "config": model.get_config()})
    return [type(layer).__name__ for layer in again.layers], [list(w.shape) for w in again.get_weights()]


@same_as_tf("tf_keras:models.model_from_config", edge=True, dialects=("tf_keras",))
def test_model_from_config_of_a_bare_config_raises(tf):
    keras = tf.keras
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(3)])
    return keras.models.model_from_config(model.get_config())


@same_as_tf(
    "keras:backend.is_float_dtype",
    "keras:backend.is_int_dtype",
    "keras:backend.result_type",
    "keras:backend.standardize_dtype",
    dialects=("keras",),
)
def test_backend_dtype_helpers(tf):
    backend = tf.keras.backend
    names = ["float16", "float32", "int8", "int32", "uint8", "bool"]
    return {
        "float": [backend.is_float_dtype(n) for n in names],
        "int": [backend.is_int_dtype(n) for n in names],
        "standard": [backend.standardize_dtype(n) for n in names],
        "result": [
            backend.result_type("int32", "float32"),
            backend.result_type("int8", "int32"),
            backend.result_type("float16", "float32"),
        ],
    }


def _fit_edge(keras, case):
    x, y = _data()
    model = _model(keras)
    cb = keras.callbacks
    if case == "history_no_epochs":
        history = model.fit(x, y, epochs=1, initial_epoch=1, verbose=0)  # nothing left to train
        return sorted(history.history), history.epoch
    if case == "early_stopping_unknown_monitor":  # warns and trains every epoch
        history = model.fit(x, y, batch_size=16, epochs=3, verbose=0, shuffle=False, callbacks=[cb.EarlyStopping()])
        return len(history.history["loss"])
    if case == "lambda_train_end_only":
        seen = []
        model.fit(x, y, epochs=2, verbose=0, callbacks=[cb.LambdaCallback(on_train_end=lambda logs: seen.append(1))])
        return seen
    if case == "bare_callback":
        history = model.fit(x, y, batch_size=16, epochs=2, verbose=0, shuffle=False, callbacks=[cb.Callback()])
        return history.history["loss"]
    if case == "empty_callback_list":
        callbacks = cb.CallbackList([], model=model)
        callbacks.on_epoch_begin(0)
        return len(list(callbacks.callbacks)) if hasattr(callbacks, "callbacks") else 0
    if case == "scheduler_keeps_rate":
        sched = cb.LearningRateScheduler(lambda epoch, lr: lr)
        model.fit(x, y, batch_size=16, epochs=2, verbose=0, shuffle=False, callbacks=[sched])
        return float(np.asarray(model.optimizer.learning_rate))
    if case == "plateau_floor":
        model = _model(keras, lr=1.5)
        plateau = cb.ReduceLROnPlateau(monitor="loss", factor=0.5, patience=0, min_lr=1.0)
        model.fit(x, y, batch_size=16, epochs=4, verbose=0, shuffle=False, callbacks=[plateau])
        return float(np.asarray(model.optimizer.learning_rate))
    raise AssertionError(case)


@pytest.mark.parametrize(
    "case",
    [
        "history_no_epochs",
        "early_stopping_unknown_monitor",
        "lambda_train_end_only",
        "bare_callback",
        "empty_callback_list",
        "scheduler_keeps_rate",
        "plateau_floor",
    ],
)
@same_as_tf(
    "keras:callbacks.History",
    "keras:callbacks.EarlyStopping",
    "keras:callbacks.LambdaCallback",
    "keras:callbacks.Callback",
    "keras:callbacks.CallbackList",
    "keras:callbacks.LearningRateScheduler",
    "keras:callbacks.ReduceLROnPlateau",
    edge=True,
    rtol=1e-4,
    atol=1e-6,
    dialects=BOTH,
)
def test_callback_edge_cases(tf, case):
    return _fit_edge(tf.keras, case)


@pytest.mark.parametrize(
    "case",
    ["pack_none", "source_of_input", "unpack_list", "array_to_img_scaled", "timeseries_window", "progbar_unknown"],
)
@same_as_tf(
    "keras:utils.pack_x_y_sample_weight",
    "keras:utils.get_source_inputs",
    "keras:utils.unpack_x_y_sample_weight",
    "keras:utils.array_to_img",
    "keras:utils.img_to_array",
    "keras:utils.timeseries_dataset_from_array",
    "keras:utils.Progbar",
    edge=True,
    dialects=BOTH,
)
def test_utils_edge_cases(tf, case):
    utils = tf.keras.utils
    if case == "pack_none":
        return utils.pack_x_y_sample_weight(np.ones(2), None, None)
    if case == "source_of_input":
        x = tf.keras.Input((2,), name="only")
        return [t.name for t in utils.get_source_inputs(x)]
    if case == "unpack_list":
        return [v is None for v in utils.unpack_x_y_sample_weight([np.ones(2), np.zeros(2)])]
    if case == "array_to_img_scaled":
        image = np.linspace(-1.0, 1.0, 2 * 3 * 3, dtype="float32").reshape(2, 3, 3)
        return utils.img_to_array(utils.array_to_img(image, scale=True))
    if case == "timeseries_window":
        ds = utils.timeseries_dataset_from_array(
            np.arange(10, dtype="float32"), None, sequence_length=4, start_index=2, end_index=9, batch_size=8
        )
        return [np.asarray(b) for b in ds]
    if case == "progbar_unknown":
        bar = utils.Progbar(None, verbose=0)
        bar.update(3)
        return bar.target is None, bar._seen_so_far
    raise AssertionError(case)


@pytest.mark.parametrize("case", ["missing_object", "scope_of_two", "registered_function"])
@same_as_tf(
    "keras:saving.get_registered_object",
    "keras:saving.get_custom_objects",
    "keras:saving.register_keras_serializable",
    "keras:saving.get_registered_name",
    "keras:utils.get_registered_object",
    "keras:utils.custom_object_scope",
    "keras:utils.get_custom_objects",
    "keras:utils.register_keras_serializable",
    "keras:utils.get_registered_name",
    edge=True,
    dialects=BOTH,
)
def test_registry_edge_cases(tf, case):
    saving = tf.keras.saving
    if case == "missing_object":
        return saving.get_registered_object("NoSuchThing_xyz") is None
    if case == "scope_of_two":

        def one(x):
            return x

        def two(x):
            return x

        with tf.keras.utils.custom_object_scope({"one_fn": one, "two_fn": two}):
            inside = [saving.get_registered_object("one_fn") is one, saving.get_registered_object("two_fn") is two]
        return inside, saving.get_registered_object("two_fn") is None, "two_fn" in saving.get_custom_objects()
    if case == "registered_function":

        @saving.register_keras_serializable(package="ConfEdge", name="halve")
        def halve(x):
            return x / 2

        return saving.get_registered_name(halve), saving.get_registered_object("ConfEdge>halve") is halve
    raise AssertionError(case)


@pytest.mark.parametrize("case", ["clone_functional", "json_functional", "sequential_empty", "model_two_inputs"])
@same_as_tf(
    "keras:models.clone_model",
    "keras:models.model_from_json",
    "keras:models.Sequential",
    "keras:models.Model",
    edge=True,
    dialects=BOTH,
)
def test_model_helpers_edge_cases(tf, case):
    keras = tf.keras
    a, b = keras.Input((2,), name="a"), keras.Input((3,), name="b")
    merged = keras.layers.Concatenate()([keras.layers.Dense(2, name="da")(a), b])
    functional = keras.models.Model([a, b], keras.layers.Dense(1, name="head")(merged))
    if case == "clone_functional":
        clone = keras.models.clone_model(functional)
        return [list(w.shape) for w in clone.get_weights()], len(clone.inputs)
    if case == "json_functional":
        again = keras.models.model_from_json(functional.to_json())
        return [layer.name for layer in again.layers if layer.weights], [list(w.shape) for w in again.get_weights()]
    if case == "sequential_empty":
        return len(keras.models.Sequential().layers)
    if case == "model_two_inputs":
        functional.set_weights([np.full(w.shape, 0.5, dtype="float32") for w in functional.get_weights()])
        return functional.predict([np.ones((1, 2), "float32"), np.ones((1, 3), "float32")], verbose=0)
    raise AssertionError(case)


@same_as_tf(
    "keras:models.save_model",
    "keras:models.load_model",
    "keras:saving.save_model",
    "keras:saving.load_model",
    edge=True,
    dialects=BOTH,
)
def test_save_and_load_a_sequential_with_batch_norm(tf, tmp_path):
    keras = tf.keras
    model = keras.Sequential([keras.Input((3,)), keras.layers.BatchNormalization(), keras.layers.Dense(2)])
    model.set_weights([np.full(w.shape, 0.5 + i, dtype="float32") for i, w in enumerate(model.get_weights())])
    path = str(tmp_path / "bn.keras")
    keras.saving.save_model(model, path)
    loaded = keras.models.load_model(path)
    return loaded.get_weights(), loaded.predict(np.ones((1, 3), "float32"), verbose=0)


@pytest.mark.parametrize("name", ["float16", "bfloat16", "mixed_float16"])
@same_as_tf(
    "keras:mixed_precision.Policy",
    "keras:mixed_precision.global_policy",
    "keras:mixed_precision.set_global_policy",
    edge=True,
    dialects=BOTH,
)
def test_policy_names(tf, name):
    mp = tf.keras.mixed_precision
    policy = mp.Policy(name)
    before = mp.global_policy().name
    mp.set_global_policy(policy)
    try:
        during = mp.global_policy().name
    finally:
        mp.set_global_policy(before)
    return policy.compute_dtype, policy.variable_dtype, during, mp.global_policy().name


@same_as_tf("keras:mixed_precision.LossScaleOptimizer", edge=True, rtol=1e-4, atol=1e-6, dialects=("keras",))
def test_loss_scale_optimizer_scale(tf):
    opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1), initial_scale=8.0)
    return float(np.asarray(opt.scale_loss(np.float32(2.0)))), float(np.asarray(opt.learning_rate))


@same_as_tf(
    "keras:Layer",
    "keras:Loss",
    "keras:Metric",
    "keras:Optimizer",
    "keras:Sequential",
    "keras:KerasTensor",
    "keras:Variable",
    edge=True,
    dialects=("keras",),
)
def test_top_level_edge_cases(tf):
    keras = tf.keras

    class NoWeights(keras.Layer):
        def call(self, inputs):
            return inputs + 1.0

    class Squared(keras.Loss):
        def call(self, y_true, y_pred):
            return keras.ops.square(y_true - y_pred)

    class Count(keras.Metric):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.n = self.add_variable(shape=(), initializer="zeros", name="n")

        def update_state(self, values, sample_weight=None):
            self.n.assign_add(1.0)

        def result(self):
            return self.n

    metric = Count()
    metric.update_state(np.ones(2))
    metric.reset_state()
    layer = NoWeights()
    out = layer(np.zeros((1, 2), "float32"))
    # (reduction="sum" of a loss whose call keeps a feature axis differs: unison sums per-example means)
    summed = Squared()(np.zeros((2, 2), "float32"), np.full((2, 2), 3.0, "float32"))
    v = keras.Variable(np.array([1, 2], dtype="int32"), dtype="int32", trainable=False)
    symbolic = keras.Input((4,))
    return {
        "out": np.asarray(out),
        "layer_weights": len(layer.weights),
        "sum": np.asarray(summed),
        "reset": np.asarray(metric.result()),
        "variable": (np.asarray(v), np.asarray(v).dtype.name),
        "symbolic_shape": list(symbolic.shape),
        "is_keras_tensor": isinstance(keras.layers.Dense(1)(symbolic), keras.KerasTensor),
        "optimizer_base": issubclass(keras.optimizers.Adam, keras.Optimizer),
        "empty_sequential": len(keras.Sequential().weights),
    }


@same_as_tf(
    "keras:backend.is_float_dtype",
    "keras:backend.is_int_dtype",
    "keras:backend.result_type",
    "keras:backend.standardize_dtype",
    edge=True,
    dialects=("keras",),
)
def test_backend_dtype_helpers_edge(tf):
    backend = tf.keras.backend
    return (
        backend.standardize_dtype(float),
        backend.result_type("bool", "int8"),
        backend.is_float_dtype("bfloat16"),
        backend.is_int_dtype("bool"),
    )


@same_as_tf("keras:callbacks.CSVLogger", edge=True, rtol=1e-4, atol=1e-5, dialects=BOTH)
def test_csv_logger_with_validation(tf, tmp_path):
    keras = tf.keras
    x, y = _data()
    path = str(tmp_path / "val.csv")
    _model(keras).fit(
        x,
        y,
        batch_size=16,
        epochs=2,
        verbose=0,
        shuffle=False,
        validation_data=(x, y),
        callbacks=[keras.callbacks.CSVLogger(path)],
    )
    with open(path) as f:
        rows = [line.strip().split(",") for line in f if line.strip()]
    return rows[0], np.array([[float(v) for v in row] for row in rows[1:]], dtype="float64")


@same_as_tf(
    "keras:utils.CustomObjectScope",
    "keras:utils.custom_object_scope",
    "keras:saving.CustomObjectScope",
    "keras:saving.custom_object_scope",
    edge=True,
    dialects=("keras",),
)
def test_custom_object_scope_lets_a_model_load(tf, tmp_path):
    keras = tf.keras

    class Doubling(keras.layers.Layer):
        def call(self, inputs):
            return inputs * 2.0

    model = keras.Sequential([keras.Input((2,)), Doubling(name="doubling")])
    path = str(tmp_path / "custom.keras")
    model.save(path)
    with keras.saving.CustomObjectScope({"Doubling": Doubling}):
        first = keras.models.load_model(path).predict(np.ones((1, 2), "float32"), verbose=0)
    with keras.utils.custom_object_scope({"Doubling": Doubling}):
        second = keras.models.load_model(path).predict(np.ones((1, 2), "float32"), verbose=0)
    return first, second


@same_as_tf("keras:utils.clear_session", "keras:utils.is_keras_tensor", edge=True, dialects=("keras",))
def test_clear_session_twice_and_is_keras_tensor_of_a_layer_output(tf):
    keras = tf.keras
    keras.utils.clear_session()
    keras.utils.clear_session()
    outputs = keras.layers.Dense(1)(keras.Input((2,)))
    return keras.layers.Dense(1).name, keras.utils.is_keras_tensor(outputs)


@same_as_tf("keras:Model", "keras:Input", "keras:layers.Input", edge=True, dialects=BOTH)
def test_model_of_an_input_with_unknown_batch(tf):
    keras = tf.keras
    inputs = keras.Input(batch_shape=(None, 3))
    model = keras.Model(inputs, keras.layers.Dense(2)(inputs))
    return list(model.input_shape), list(model.output_shape), model.count_params()


@same_as_tf("keras:saving.CustomObjectScope", "keras:utils.is_keras_tensor", dialects=("keras",))
def test_saving_custom_object_scope_and_is_keras_tensor(tf):
    keras = tf.keras

    def plain(x):
        return x

    with keras.saving.CustomObjectScope({"plain_in_scope": plain}):
        inside = keras.saving.get_registered_object("plain_in_scope") is plain
    return inside, keras.utils.is_keras_tensor(keras.Input((2,))), keras.utils.is_keras_tensor(np.ones(2))


@same_as_tf(
    "keras:layers.Layer", "keras:layers.Dense", "keras:layers.BatchNormalization", dialects=("keras", "tf_keras")
)
def test_a_layer_built_by_hand_keeps_the_weights_set_before_its_first_call(tf):
    """``layer.build(shape)`` marks the layer built: the first call must not build again and
    replace the weights set in between (Keras wraps every ``build``)."""
    keras = tf.keras
    dense = keras.layers.Dense(2, kernel_constraint=keras.constraints.NonNeg())
    dense.build((None, 3))
    dense.set_weights([np.arange(6, dtype="float32").reshape(3, 2), np.array([0.5, -0.5], dtype="float32")])
    bn = keras.layers.BatchNormalization()
    bn.build((None, 2))
    bn.set_weights(
        [np.array([2.0, 3.0], "float32"), np.zeros(2, "float32"), np.ones(2, "float32"), np.ones(2, "float32") * 4]
    )

    class Scale(keras.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight(shape=(input_shape[-1],), initializer="ones", name="w")
            super().build(input_shape)

        def call(self, inputs):
            return inputs * self.w

    scale = Scale()
    scale.build((None, 2))
    scale.set_weights([np.array([10.0, -1.0], "float32")])
    x = np.array([[1.0, 2.0, 3.0]], dtype="float32")
    return {
        "built": [dense.built, bn.built, scale.built],
        "out": np.asarray(scale(bn(dense(x), training=False))),
        "weights": [np.asarray(w) for w in dense.get_weights() + bn.get_weights() + scale.get_weights()],
    }


@same_as_tf("keras:optimizers.SGD", "keras:Model", edge=True, dialects=BOTH)
def test_a_learning_rate_of_zero_leaves_the_weights(tf):
    keras = tf.keras
    x, y = _data()
    model = _model(keras, lr=0.0)
    before = [np.asarray(w).copy() for w in model.get_weights()]
    model.fit(x, y, batch_size=8, epochs=1, verbose=0)
    return float(np.asarray(model.optimizer.learning_rate)), before, model.get_weights()


@same_as_tf("keras:Model", "keras:Sequential", edge=True, dialects=BOTH)
def test_build_takes_an_unknown_batch_size(tf):
    keras = tf.keras
    model = keras.Sequential([keras.layers.Dense(3), keras.layers.Dense(1)])
    model.build((None, 4))
    return model.count_params(), [list(np.asarray(w).shape) for w in model.get_weights()]
