"""``keras.config`` (Keras 3's global settings) on unison against Keras 3.15 on TF 2.21.

Every test restores what it changes (the settings are process-wide and later tests read them).
"""

from __future__ import annotations

import pytest
from tf_oracle import same_as_tf

NUMERIC_NAMES = (
    "keras:config.epsilon",
    "keras:config.set_epsilon",
    "keras:config.floatx",
    "keras:config.set_floatx",
    "keras:config.image_data_format",
    "keras:config.set_image_data_format",
)


@same_as_tf(*NUMERIC_NAMES)
def test_numeric_settings(tf):
    c = tf.keras.config
    before = (c.epsilon(), c.floatx(), c.image_data_format())
    try:
        c.set_epsilon(1e-4)
        c.set_floatx("float16")
        c.set_image_data_format("channels_first")
        changed = (c.epsilon(), c.floatx(), c.image_data_format(), tf.keras.backend.floatx())
    finally:
        c.set_epsilon(before[0])
        c.set_floatx(before[1])
        c.set_image_data_format(before[2])
    return before, changed, (c.epsilon(), c.floatx(), c.image_data_format())


@pytest.mark.parametrize(("setter", "value"), [("set_floatx", "int32"), ("set_image_data_format", "NHWC")])
@same_as_tf(*NUMERIC_NAMES, edge=True)
def test_numeric_settings_refuse_bad_values(tf, setter, value):
    c = tf.keras.config
    before = (c.epsilon(), c.floatx(), c.image_data_format())
    try:
        getattr(c, setter)(value)
    finally:
        c.set_epsilon(before[0])
        c.set_floatx(before[1])
        c.set_image_data_format(before[2])


POLICY_NAMES = ("keras:config.dtype_policy", "keras:config.set_dtype_policy")


@same_as_tf(*POLICY_NAMES)
def test_dtype_policy(tf):
    c = tf.keras.config
    before = c.dtype_policy()
    try:
        c.set_dtype_policy("mixed_bfloat16")
        mixed = c.dtype_policy()
        seen = (mixed.name, mixed.compute_dtype, mixed.variable_dtype, tf.keras.mixed_precision.global_policy().name)
    finally:
        c.set_dtype_policy(before)
    return before.name, seen, c.dtype_policy().name


@pytest.mark.parametrize("policy", ["float8", 3])
@same_as_tf(*POLICY_NAMES, edge=True)
def test_dtype_policy_refuses_bad_values(tf, policy):
    c = tf.keras.config
    before = c.dtype_policy()
    try:
        c.set_dtype_policy(policy)
    finally:
        c.set_dtype_policy(before)


SWITCH_NAMES = (
    "keras:config.enable_interactive_logging",
    "keras:config.disable_interactive_logging",
    "keras:config.is_interactive_logging_enabled",
    "keras:config.enable_traceback_filtering",
    "keras:config.disable_traceback_filtering",
    "keras:config.is_traceback_filtering_enabled",
    "keras:config.enable_flash_attention",
    "keras:config.disable_flash_attention",
    "keras:config.is_flash_attention_enabled",
    "keras:config.is_nnx_enabled",
)
SWITCHES = ("interactive_logging", "traceback_filtering", "flash_attention")


def _switch(tf, name: str, first: str):
    c = tf.keras.config
    read = getattr(c, f"is_{name}_enabled")
    before = read()
    other = "disable" if first == "enable" else "enable"
    try:
        getattr(c, f"{first}_{name}")()
        after_first = read()
        getattr(c, f"{other}_{name}")()
        after_other = read()
    finally:
        getattr(c, f"{'disable' if before is False else 'enable'}_{name}")()
    return before, after_first, after_other, read(), c.is_nnx_enabled()


@pytest.mark.parametrize("name", SWITCHES)
@same_as_tf(*SWITCH_NAMES)
def test_switches(tf, name):
    return _switch(tf, name, "disable")


@pytest.mark.parametrize("name", SWITCHES)
@same_as_tf(*SWITCH_NAMES, edge=True)
def test_switches_set_twice(tf, name):
    # enabling what is already on keeps it on (idempotent), then off
    c = tf.keras.config
    getattr(c, f"enable_{name}")()
    return _switch(tf, name, "enable")


CAP_NAMES = (
    "keras:config.max_epochs",
    "keras:config.set_max_epochs",
    "keras:config.max_steps_per_epoch",
    "keras:config.set_max_steps_per_epoch",
)


def _fit_with_caps(tf, epochs_cap, steps_cap):
    import numpy as np

    c = tf.keras.config
    before = (c.max_epochs(), c.max_steps_per_epoch())
    try:
        c.set_max_epochs(epochs_cap)
        c.set_max_steps_per_epoch(steps_cap)
        caps = (c.max_epochs(), c.max_steps_per_epoch())
        model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
        model.compile(optimizer="sgd", loss="mse")
        x, y = np.ones((40, 3), np.float32), np.ones((40, 1), np.float32)
        batches = []
        cb = tf.keras.callbacks.LambdaCallback(on_train_batch_end=lambda batch, logs: batches.append(batch))
        history = model.fit(x, y, batch_size=4, epochs=5, verbose=0, callbacks=[cb])
    finally:
        c.set_max_epochs(before[0])
        c.set_max_steps_per_epoch(before[1])
    return caps, len(history.history["loss"]), len(batches), (c.max_epochs(), c.max_steps_per_epoch())


@same_as_tf(*CAP_NAMES)
def test_fit_caps(tf):
    return _fit_with_caps(tf, 2, 3)


@same_as_tf(*CAP_NAMES, edge=True)
def test_fit_caps_above_the_request_change_nothing(tf):
    return _fit_with_caps(tf, 50, None)


@same_as_tf("keras:config.backend", "keras:backend.backend")
def test_backend_name(tf):
    name = tf.keras.config.backend()
    return name == tf.keras.backend.backend(), name in ("tensorflow", "torch", "jax", "numpy", "openvino")


@same_as_tf("keras:config.backend", "keras:backend.backend", edge=True)
def test_backend_name_survives_clear_session(tf):
    tf.keras.backend.clear_session()
    name = tf.keras.config.backend()
    return name == tf.keras.backend.backend(), isinstance(name, str) and name.islower()


@pytest.mark.parametrize("interactive", [True, False])
@same_as_tf(
    "keras:config.disable_interactive_logging", "keras:utils.Progbar", "keras:callbacks.ProgbarLogger", edge=True
)
def test_progress_output_follows_interactive_logging(tf, interactive):
    # with interactive logging off, Keras sends the bar and the "Epoch i/n" lines to its logger
    import contextlib
    import io

    import numpy as np

    keras = tf.keras
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    out = io.StringIO()
    before = keras.config.is_interactive_logging_enabled()
    try:
        if not interactive:
            keras.config.disable_interactive_logging()
        with contextlib.redirect_stdout(out):
            bar = keras.utils.Progbar(2, verbose=1)
            bar.update(1)
            bar.update(2, finalize=True)
            model.fit(np.ones((4, 2)), np.ones((4, 1)), epochs=2, batch_size=4, verbose=2)
    finally:
        keras.config.enable_interactive_logging() if before else keras.config.disable_interactive_logging()
    text = out.getvalue()
    return text == "", "Epoch 2/2" in text, text.count("2/2")
