"""Keras 3's newer optimizers (Adafactor, Lamb, Muon, ScheduleFreeAdamW), ``optimizers.LossScaleOptimizer``
and Keras 2's Adafactor on unison against Keras 3.15 / Keras 2 (tf_keras) on TF 2.21.

An optimizer takes three steps from the same weights on fixed gradients and the weights are compared
after each, with the optimizer's own config entries and a rebuilt copy's.
"""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

W0 = (np.sin(np.arange(6)) * 0.5).reshape(2, 3).astype(np.float32)
B0 = np.array([0.1, -0.2, 0.3], np.float32)
GRADS = [
    ((np.cos(np.arange(6) + k) * 0.3).reshape(2, 3).astype(np.float32), np.array([0.2, -0.1, 0.05 * k], np.float32))
    for k in range(3)
]

RECENT = (
    ("Adafactor", {"learning_rate": 0.1}),
    ("Lamb", {"learning_rate": 0.01}),
    ("Muon", {"learning_rate": 0.01}),
    ("ScheduleFreeAdamW", {"learning_rate": 0.01}),
)
RECENT_EDGE = (
    ("Adafactor", {"learning_rate": 0.05, "relative_step": False, "clip_threshold": 0.5, "weight_decay": 0.1}),
    ("Lamb", {"learning_rate": 0.01, "beta_1": 0.5, "clipnorm": 0.1}),
    ("Muon", {"learning_rate": 0.01, "nesterov": False, "rms_rate": None, "exclude_layers": ["kern"]}),
    ("ScheduleFreeAdamW", {"learning_rate": 0.01, "warmup_steps": 2, "weight_decay": 0.1}),
)
RECENT_NAMES = (
    "keras:optimizers.Adafactor",
    "keras:optimizers.Lamb",
    "keras:optimizers.Muon",
    "keras:optimizers.ScheduleFreeAdamW",
)


def _steps(tf, name, kwargs, w0=W0):
    keras = tf.keras
    # keras.Variable: Keras's Muon reads `variable.path`, which tf.Variable lacks
    w, b = keras.Variable(w0, name="kernel"), keras.Variable(B0, name="bias")
    optimizer = getattr(keras.optimizers, name)(**kwargs)
    out = []
    for gw, gb in GRADS:
        optimizer.apply_gradients([(tf.constant(gw), w), (tf.constant(gb), b)])
        out.append((np.array(w), np.array(b)))  # copies: a view would follow later steps
    # (plain lists: Keras's tracked list neither pickles nor goes back through from_config)
    config = {k: list(v) if isinstance(v, list) else v for k, v in optimizer.get_config().items()}
    own = {k: v for k, v in config.items() if k in kwargs or k in ("epsilon", "beta_2_decay", "momentum")}
    clone = type(optimizer).from_config(config)
    return {
        "steps": out,
        "iterations": int(np.asarray(optimizer.iterations)),
        "config": own,
        "clone": type(clone).__name__,
        "by_name": _by_name(keras, name),
        "is_an_optimizer": isinstance(optimizer, keras.optimizers.Optimizer),
    }


def _by_name(keras, name):
    try:
        return type(keras.optimizers.get(name.lower())).__name__
    except ValueError as e:  # Keras 3.15's get() does not know "lamb"
        return type(e).__name__


@pytest.mark.parametrize(("name", "kwargs"), RECENT, ids=[r[0] for r in RECENT])
@same_as_tf(*RECENT_NAMES, dialects=("keras",), rtol=1e-5, atol=1e-5)
def test_recent_optimizer_steps(tf, name, kwargs):
    return _steps(tf, name, kwargs)


@pytest.mark.parametrize(("name", "kwargs"), RECENT_EDGE, ids=[r[0] for r in RECENT_EDGE])
@same_as_tf(*RECENT_NAMES, edge=True, dialects=("keras",), rtol=1e-5, atol=1e-5)
def test_recent_optimizer_steps_with_options(tf, name, kwargs):
    return _steps(tf, name, kwargs)


@pytest.mark.parametrize("name", [r[0] for r in RECENT])
@same_as_tf(*RECENT_NAMES, edge=True, dialects=("keras",), rtol=1e-5, atol=1e-5)
def test_recent_optimizer_from_zero_weights(tf, name):
    # Adafactor's rms(w) and Lamb's trust ratio meet |w| = 0; Muon orthogonalises from zero momentum
    return _steps(tf, name, {"learning_rate": 0.01}, w0=np.zeros((2, 3), np.float32))


def test_the_recent_tables_name_their_classes():
    assert [r[0] for r in RECENT] == [n.split(".")[-1] for n in RECENT_NAMES]
    assert [r[0] for r in RECENT_EDGE] == [r[0] for r in RECENT]


KERAS2_ADAFACTOR = ("tf_keras:optimizers.Adafactor", "tf_keras:optimizers.experimental.Adafactor")


def _keras2_adafactor(tf, kwargs, grads):
    w, b = tf.Variable(W0), tf.Variable(B0)
    out = []
    for module in (tf.keras.optimizers, tf.keras.optimizers.experimental):
        optimizer = module.Adafactor(**kwargs)
        for gw, gb in grads:
            optimizer.apply_gradients([(tf.constant(gw), w), (tf.constant(gb), b)])
            out.append((w.numpy(), b.numpy()))
    return out, int(optimizer.iterations.numpy()), optimizer.get_config()["clip_threshold"]


@same_as_tf(*KERAS2_ADAFACTOR, dialects=("tf_keras",), rtol=1e-5, atol=1e-5)
def test_keras2_adafactor(tf):
    return _keras2_adafactor(tf, {"learning_rate": 0.1}, GRADS)


@same_as_tf(*KERAS2_ADAFACTOR, edge=True, dialects=("tf_keras",), rtol=1e-5, atol=1e-5)
def test_keras2_adafactor_on_nan_gradients(tf):
    nan = np.full((2, 3), np.nan, np.float32)
    return _keras2_adafactor(tf, {"learning_rate": 0.1, "relative_step": False}, [(nan, B0)])


@same_as_tf("keras:optimizers.LossScaleOptimizer", dialects=("keras",), rtol=1e-5, atol=1e-6)
def test_loss_scale_optimizer_under_optimizers(tf):
    keras = tf.keras
    w = keras.Variable(W0, name="kernel")
    optimizer = keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD(0.1), initial_scale=4.0)
    for gw, _ in GRADS:
        # gradients of the scaled loss: the optimizer divides them by the scale before SGD's step
        optimizer.apply_gradients([(tf.constant(gw * 4.0), w)])
    return (
        np.asarray(w),
        optimizer is not None and keras.optimizers.LossScaleOptimizer is keras.mixed_precision.LossScaleOptimizer,
        float(np.asarray(optimizer.scale_loss(np.float32(1.5)))),
    )


@same_as_tf("keras:optimizers.LossScaleOptimizer", edge=True, dialects=("keras",), rtol=1e-5, atol=1e-6)
def test_loss_scale_optimizer_skips_a_step_with_inf_gradients(tf):
    keras = tf.keras
    w = keras.Variable(W0, name="kernel")
    optimizer = keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD(0.1), initial_scale=4.0)
    overflow = GRADS[0][0].copy()
    overflow[0, 0] = np.inf
    out = []
    for g in (overflow, GRADS[1][0]):
        optimizer.apply_gradients([(tf.constant(g), w)])
        out.append((np.array(w), float(np.asarray(optimizer.dynamic_scale)), int(np.asarray(optimizer.iterations))))
    return out


def _map_raised(fn):
    try:
        fn()
    except (ValueError, TypeError) as e:
        return type(e).__name__
    return None


@same_as_tf("keras:optimizers.OptimizerMap", dialects=("keras",))
def test_optimizer_map_finds_optimizers_by_path(tf):
    o = tf.keras.optimizers
    m = o.OptimizerMap(default_optimizer=o.RMSprop())
    m["encoder/layer_0/dense"] = o.Adam()
    m["encoder/.*"] = o.SGD()
    m["decoder"] = o.Adam()
    # (class names: Keras numbers its optimizers' default names, adam_1, ...)
    paths = ("decoder", "encoder/layer_0/dense", "encoder/layer_0/attention/query", "decoder/x")
    names = [type(m[k]).__name__ for k in paths]
    del m["decoder"]
    return names, len(m), sorted(m), type(m["decoder"]).__name__, type(m.default_optimizer).__name__


@same_as_tf("keras:optimizers.OptimizerMap", edge=True, dialects=("keras",))
def test_optimizer_map_refuses_bad_entries(tf):
    o = tf.keras.optimizers
    m = o.OptimizerMap(o.SGD(), {"a.*": o.Adam(), ".*b": o.Adam()})

    def duplicate():
        m["a.*"] = o.SGD()

    def bad_value():
        m["c"] = "sgd"

    def scaled():
        m["d"] = o.LossScaleOptimizer(o.SGD())

    return (
        _map_raised(lambda: m["ab"]),  # two patterns match
        _map_raised(duplicate),
        _map_raised(bad_value),
        _map_raised(scaled),
        _map_raised(lambda: o.OptimizerMap("sgd")),
        _map_raised(lambda: o.OptimizerMap(o.SGD(), [("a", o.SGD())])),
    )
