"""Keras optimizers, schedules, initializers, regularizers and constraints against Keras 3 and Keras 2.

An optimizer takes a few steps from the same variables on fixed gradients (``apply_gradients``)
and the variables are compared after each; a schedule is evaluated at several steps; a
deterministic initializer is compared exactly, a random one by shape, dtype and statistics (its
numbers come from another generator); a regularizer's penalty and a constraint's projection are
compared on fixed weights. Every table runs against both dialects (``dialects=BOTH``).
"""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

BOTH = ("keras", "tf_keras")

W0 = (np.sin(np.arange(6)) * 0.5).reshape(2, 3).astype(np.float32)
B0 = np.array([0.1, -0.2, 0.3], np.float32)
GRADS = [
    ((np.cos(np.arange(6) + k) * 0.3).reshape(2, 3).astype(np.float32), np.array([0.2, -0.1, 0.05 * k], np.float32))
    for k in range(3)
]

OPTIMIZERS = (
    ("SGD", {"learning_rate": 0.1}),
    ("Adam", {"learning_rate": 0.01}),
    ("AdamW", {"learning_rate": 0.01, "weight_decay": 0.1}),
    ("RMSprop", {"learning_rate": 0.01, "epsilon": 0.1}),
    ("Adagrad", {"learning_rate": 0.1}),
    ("Adadelta", {"learning_rate": 1.0}),
    ("Adamax", {"learning_rate": 0.02}),
    ("Nadam", {"learning_rate": 0.01}),
    ("Ftrl", {"learning_rate": 0.1}),
    ("Lion", {"learning_rate": 0.01}),
)
OPTIMIZERS_EDGE = (
    ("SGD", {"learning_rate": 0.1, "momentum": 0.9, "nesterov": True}),
    ("Adam", {"learning_rate": 0.01, "amsgrad": True, "beta_1": 0.5}),
    ("AdamW", {"learning_rate": 0.01, "weight_decay": 0.0, "clipnorm": 0.1}),
    ("RMSprop", {"learning_rate": 0.01, "momentum": 0.5, "centered": True}),
    ("Adagrad", {"learning_rate": 0.1, "initial_accumulator_value": 0.5, "clipvalue": 0.05}),
    ("Adadelta", {"learning_rate": 0.5, "rho": 0.5}),
    ("Adamax", {"learning_rate": 0.02, "beta_2": 0.5}),
    ("Nadam", {"learning_rate": 0.01, "beta_1": 0.5}),
    ("Ftrl", {"learning_rate": 0.1, "l1_regularization_strength": 0.01, "l2_regularization_strength": 0.1}),
    ("Lion", {"learning_rate": 0.01, "beta_1": 0.5, "global_clipnorm": 0.1}),
)
OPTIMIZER_NAMES = (
    "keras:optimizers.SGD",
    "keras:optimizers.Adam",
    "keras:optimizers.AdamW",
    "keras:optimizers.RMSprop",
    "keras:optimizers.Adagrad",
    "keras:optimizers.Adadelta",
    "keras:optimizers.Adamax",
    "keras:optimizers.Nadam",
    "keras:optimizers.Ftrl",
    "keras:optimizers.Lion",
    "keras:optimizers.Optimizer",
    "keras:optimizers.get",
)


def _steps(tf, name: str, kwargs: dict):
    w = tf.Variable(W0)
    b = tf.Variable(B0)
    optimizer = getattr(tf.keras.optimizers, name)(**kwargs)
    out = []
    for gw, gb in GRADS:
        optimizer.apply_gradients([(tf.constant(gw), w), (tf.constant(gb), b)])
        out.append((w.numpy(), b.numpy()))
    config = optimizer.get_config()
    clone = type(optimizer).from_config(config)
    # (Keras 2's get() does not know "lion")
    by_name = tf.keras.optimizers.get(name.lower()) if name != "Lion" else optimizer
    return {
        "steps": out,
        "iterations": int(optimizer.iterations.numpy()),
        "learning_rate": float(np.asarray(optimizer.learning_rate)),
        "clone_learning_rate": float(np.asarray(clone.learning_rate)),
        "is_an_optimizer": isinstance(optimizer, tf.keras.optimizers.Optimizer),
        "by_name": type(by_name).__name__,
    }


@pytest.mark.parametrize(("name", "kwargs"), OPTIMIZERS)
@same_as_tf(*OPTIMIZER_NAMES, dialects=BOTH, rtol=1e-5, atol=1e-5)
def test_optimizer_steps(tf, name, kwargs):
    return _steps(tf, name, kwargs)


@pytest.mark.parametrize(("name", "kwargs"), OPTIMIZERS_EDGE)
@same_as_tf(*OPTIMIZER_NAMES, edge=True, dialects=BOTH, rtol=1e-5, atol=1e-5)
def test_optimizer_steps_with_options(tf, name, kwargs):
    return _steps(tf, name, kwargs)


def test_the_optimizer_tables_name_their_classes():
    assert [r[0] for r in OPTIMIZERS] == [n.split(".")[-1] for n in OPTIMIZER_NAMES[:-2]]
    assert [r[0] for r in OPTIMIZERS_EDGE] == [r[0] for r in OPTIMIZERS]


# ---------------------------------------------------------------------------------------------
# learning-rate schedules

SCHEDULES = (
    ("ExponentialDecay", {"initial_learning_rate": 0.1, "decay_steps": 3, "decay_rate": 0.5}),
    ("InverseTimeDecay", {"initial_learning_rate": 0.1, "decay_steps": 2, "decay_rate": 0.5}),
    ("PolynomialDecay", {"initial_learning_rate": 0.1, "decay_steps": 5, "end_learning_rate": 0.01, "power": 2.0}),
    ("CosineDecay", {"initial_learning_rate": 0.1, "decay_steps": 6, "alpha": 0.1}),
    ("PiecewiseConstantDecay", {"boundaries": [2, 5], "values": [0.1, 0.05, 0.01]}),
)
SCHEDULES_EDGE = (
    ("ExponentialDecay", {"initial_learning_rate": 0.1, "decay_steps": 3, "decay_rate": 0.5, "staircase": True}),
    ("InverseTimeDecay", {"initial_learning_rate": 0.1, "decay_steps": 2, "decay_rate": 0.5, "staircase": True}),
    ("PolynomialDecay", {"initial_learning_rate": 0.1, "decay_steps": 3, "cycle": True}),
    ("CosineDecay", {"initial_learning_rate": 0.0, "decay_steps": 4, "warmup_target": 0.1, "warmup_steps": 2}),
    ("PiecewiseConstantDecay", {"boundaries": [0], "values": [0.3, 0.2]}),
)
SCHEDULE_NAMES = (
    "keras:optimizers.schedules.ExponentialDecay",
    "keras:optimizers.schedules.InverseTimeDecay",
    "keras:optimizers.schedules.PolynomialDecay",
    "keras:optimizers.schedules.CosineDecay",
    "keras:optimizers.schedules.PiecewiseConstantDecay",
    "keras:optimizers.schedules.LearningRateSchedule",
    "keras:optimizers.schedules.serialize",
)


def _schedule(tf, name: str, kwargs: dict):
    schedules = tf.keras.optimizers.schedules
    schedule = getattr(schedules, name)(**kwargs)
    clone = type(schedule).from_config(schedule.get_config())
    values = [float(np.asarray(schedule(step))) for step in range(9)]
    return values, [float(np.asarray(clone(step))) for step in (0, 4, 8)], schedules.serialize(schedule)["class_name"]


@pytest.mark.parametrize(("name", "kwargs"), SCHEDULES)
@same_as_tf(*SCHEDULE_NAMES, dialects=BOTH, rtol=1e-5, atol=1e-7)
def test_schedule(tf, name, kwargs):
    return _schedule(tf, name, kwargs)


@pytest.mark.parametrize(("name", "kwargs"), SCHEDULES_EDGE)
@same_as_tf(*SCHEDULE_NAMES, edge=True, dialects=BOTH, rtol=1e-5, atol=1e-7)
def test_schedule_options(tf, name, kwargs):
    return _schedule(tf, name, kwargs)


@same_as_tf("keras:optimizers.schedules.LearningRateSchedule", dialects=BOTH, rtol=1e-6)
def test_a_schedule_subclass_drives_an_optimizer(tf):
    class Halving(tf.keras.optimizers.schedules.LearningRateSchedule):
        def __call__(self, step):
            return 0.1 * 0.5 ** tf.cast(step, "float32")

        def get_config(self):
            return {}

    w = tf.Variable(W0)
    optimizer = tf.keras.optimizers.SGD(learning_rate=Halving())
    for gw, _ in GRADS:
        optimizer.apply_gradients([(tf.constant(gw), w)])
    return w.numpy()


# ---------------------------------------------------------------------------------------------
# initializers

DETERMINISTIC_INITIALIZERS = (
    ("Zeros", {}, (2, 3)),
    ("Ones", {}, (2, 3)),
    ("Constant", {"value": 0.5}, (3,)),
    ("Identity", {}, (3, 3)),
)
DETERMINISTIC_INITIALIZERS_EDGE = (
    ("Zeros", {}, (0, 3)),
    ("Ones", {}, ()),
    ("Constant", {"value": -2}, (2, 1, 2)),
    ("Identity", {}, (2, 4)),
)
DETERMINISTIC_INITIALIZER_NAMES = (
    "keras:initializers.Zeros",
    "keras:initializers.Ones",
    "keras:initializers.Constant",
    "keras:initializers.Identity",
    "keras:initializers.get",
    "keras:initializers.Initializer",
)


def _deterministic(tf, name: str, kwargs: dict, shape: tuple):
    initializers = tf.keras.initializers
    init = getattr(initializers, name)(**kwargs)
    clone = type(init).from_config(init.get_config())
    return init(shape), clone(shape, dtype="float32"), isinstance(init, initializers.Initializer)


@pytest.mark.parametrize(("name", "kwargs", "shape"), DETERMINISTIC_INITIALIZERS)
@same_as_tf(*DETERMINISTIC_INITIALIZER_NAMES, dialects=BOTH)
def test_deterministic_initializer(tf, name, kwargs, shape):
    return _deterministic(tf, name, kwargs, shape)


@pytest.mark.parametrize(("name", "kwargs", "shape"), DETERMINISTIC_INITIALIZERS_EDGE)
@same_as_tf(*DETERMINISTIC_INITIALIZER_NAMES, edge=True, dialects=BOTH)
def test_deterministic_initializer_edge(tf, name, kwargs, shape):
    return _deterministic(tf, name, kwargs, shape)


# random initializers: (name, kwargs, expected mean, expected std) of a (200, 300) draw, checked
# by tolerance in the body on both sides (the draws differ), then compared as statistics
RANDOM_INITIALIZERS = (
    ("RandomNormal", {"mean": 0.5, "stddev": 0.2}),
    ("RandomUniform", {"minval": -0.3, "maxval": 0.1}),
    ("TruncatedNormal", {"stddev": 0.4}),
    ("GlorotNormal", {}),
    ("GlorotUniform", {}),
    ("HeNormal", {}),
    ("HeUniform", {}),
    ("LecunNormal", {}),
    ("LecunUniform", {}),
    ("VarianceScaling", {"scale": 3.0, "mode": "fan_out", "distribution": "uniform"}),
    ("Orthogonal", {"gain": 1.5}),
)
RANDOM_INITIALIZER_NAMES = (
    "keras:initializers.RandomNormal",
    "keras:initializers.RandomUniform",
    "keras:initializers.TruncatedNormal",
    "keras:initializers.GlorotNormal",
    "keras:initializers.GlorotUniform",
    "keras:initializers.HeNormal",
    "keras:initializers.HeUniform",
    "keras:initializers.LecunNormal",
    "keras:initializers.LecunUniform",
    "keras:initializers.VarianceScaling",
    "keras:initializers.Orthogonal",
)


def _statistics(tf, name: str, kwargs: dict, shape: tuple):
    init = getattr(tf.keras.initializers, name)(seed=7, **kwargs)
    again = getattr(tf.keras.initializers, name)(seed=7, **kwargs)
    x = np.asarray(init(shape))
    stats = {
        "shape": list(x.shape),
        "dtype": str(x.dtype),
        # rounded statistics: equal when both draw from the same distribution
        "mean": round(float(x.mean()) * 20) / 20,
        "std": round(float(x.std()) * 20) / 20,
        "min_bound": round(float(x.min()) * 5) / 5 if "Uniform" in name else None,
        "same_seed_same_values": bool(np.array_equal(x, np.asarray(again(shape)))),
    }
    if name == "Orthogonal":
        flat = x.reshape(-1, x.shape[-1])
        stats["orthogonal"] = bool(np.allclose(flat.T @ flat, 2.25 * np.eye(flat.shape[1]), atol=1e-3))
    return stats


@pytest.mark.parametrize(("name", "kwargs"), RANDOM_INITIALIZERS)
@same_as_tf(*RANDOM_INITIALIZER_NAMES, dialects=BOTH)
def test_random_initializer_statistics(tf, name, kwargs):
    return _statistics(tf, name, kwargs, (300, 200))


@pytest.mark.parametrize(("name", "kwargs"), RANDOM_INITIALIZERS)
@same_as_tf(*RANDOM_INITIALIZER_NAMES, edge=True, dialects=BOTH)
def test_random_initializer_of_a_conv_kernel(tf, name, kwargs):
    return _statistics(tf, name, kwargs, (3, 3, 40, 64))


# ---------------------------------------------------------------------------------------------
# regularizers and constraints

REGULARIZERS = (
    ("L1", {"l1": 0.1}),
    ("L2", {"l2": 0.2}),
    ("L1L2", {"l1": 0.1, "l2": 0.3}),
    ("l1", {"l1": 0.05}),
    ("l2", {"l2": 0.05}),
    ("l1_l2", {"l1": 0.01, "l2": 0.02}),
)
REGULARIZER_NAMES = (
    "keras:regularizers.L1",
    "keras:regularizers.L2",
    "keras:regularizers.L1L2",
    "keras:regularizers.l1",
    "keras:regularizers.l2",
    "keras:regularizers.l1_l2",
    "keras:regularizers.get",
    "keras:regularizers.Regularizer",
)


def _regularizer(tf, name: str, kwargs: dict, weights: np.ndarray):
    regularizers = tf.keras.regularizers
    reg = getattr(regularizers, name)(**kwargs)
    clone = type(reg).from_config(reg.get_config())
    by_name = regularizers.get({"class_name": type(reg).__name__, "config": reg.get_config()})
    w = tf.constant(weights)
    return reg(w), clone(w), by_name(w), isinstance(reg, regularizers.Regularizer)


@pytest.mark.parametrize(("name", "kwargs"), REGULARIZERS)
@same_as_tf(*REGULARIZER_NAMES, dialects=BOTH, rtol=1e-5, atol=1e-6)
def test_regularizer(tf, name, kwargs):
    return _regularizer(tf, name, kwargs, W0)


@pytest.mark.parametrize(("name", "kwargs"), REGULARIZERS)
@same_as_tf(*REGULARIZER_NAMES, edge=True, dialects=BOTH, rtol=1e-5, atol=1e-6)
def test_regularizer_of_empty_weights(tf, name, kwargs):
    return _regularizer(tf, name, kwargs, np.zeros((0, 3), np.float32))


CONSTRAINTS = (
    ("MaxNorm", {"max_value": 0.5}),
    ("MinMaxNorm", {"min_value": 0.3, "max_value": 0.6, "rate": 0.5}),
    ("NonNeg", {}),
    ("UnitNorm", {}),
    ("max_norm", {"max_value": 0.4, "axis": 1}),
    ("min_max_norm", {"min_value": 0.1, "max_value": 0.2}),
    ("non_neg", {}),
    ("unit_norm", {"axis": 1}),
)
CONSTRAINT_NAMES = (
    "keras:constraints.MaxNorm",
    "keras:constraints.MinMaxNorm",
    "keras:constraints.NonNeg",
    "keras:constraints.UnitNorm",
    "keras:constraints.max_norm",
    "keras:constraints.min_max_norm",
    "keras:constraints.non_neg",
    "keras:constraints.unit_norm",
    "keras:constraints.get",
    "keras:constraints.serialize",
    "keras:constraints.deserialize",
    "keras:constraints.Constraint",
)


def _constraint(tf, name: str, kwargs: dict, weights: np.ndarray):
    constraints = tf.keras.constraints
    c = getattr(constraints, name)(**kwargs)
    rebuilt = constraints.deserialize(constraints.serialize(c))
    by_get = constraints.get(constraints.serialize(c))
    w = tf.constant(weights)
    return c(w), rebuilt(w), by_get(w), isinstance(c, constraints.Constraint)


@pytest.mark.parametrize(("name", "kwargs"), CONSTRAINTS)
@same_as_tf(*CONSTRAINT_NAMES, dialects=BOTH, rtol=1e-5, atol=1e-6)
def test_constraint(tf, name, kwargs):
    return _constraint(tf, name, kwargs, W0)


@pytest.mark.parametrize(("name", "kwargs"), CONSTRAINTS)
@same_as_tf(*CONSTRAINT_NAMES, edge=True, dialects=BOTH, rtol=1e-5, atol=1e-6)
def test_constraint_of_zero_weights(tf, name, kwargs):
    return _constraint(tf, name, kwargs, np.zeros((2, 3), np.float32))
