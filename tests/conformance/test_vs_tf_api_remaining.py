"""Names of TF 2.21 that came late to unison, against TensorFlow: ``tf.parallel_stack``,
``tf.math.approx_min_k`` (``tf.nn``'s too) and ``tf.io.match_filenames_once``.

``approx_min_k`` has no CPU kernel in TF's eager mode, so it is compared under
``tf.function(jit_compile=True)``, where XLA's CPU kernel computes it (unison's ``tf.function``
runs the same Python eagerly).
"""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf


@same_as_tf("parallel_stack")
def test_parallel_stack_in_a_function(tf):
    stacked = tf.function(lambda a, b: tf.parallel_stack([a, b]))
    return stacked(tf.constant([[1.0, 2.0]]), tf.constant([[3.0, 4.0]])), stacked(tf.constant(1), tf.constant(2))


@same_as_tf("parallel_stack", edge=True)
def test_parallel_stack_eagerly(tf):
    return tf.parallel_stack([tf.ones([2]), tf.zeros([2])])


@same_as_tf("math.approx_min_k", "nn.approx_min_k")
def test_approx_min_k_under_xla(tf):
    x = tf.constant([[3.0, 1.0, 2.0, 5.0], [0.0, -1.0, 7.0, 7.0], [1.0, 1.0, 1.0, 1.0]])
    last = tf.function(lambda t: tf.math.approx_min_k(t, 2), jit_compile=True)
    first = tf.function(lambda t: tf.nn.approx_min_k(t, 2, reduction_dimension=0), jit_compile=True)
    return tuple(last(x)), tuple(first(x))


@same_as_tf("math.approx_min_k", "nn.approx_min_k", edge=True)
@pytest.mark.parametrize("case", ["infinities_and_ties", "half", "k_too_big"])
def test_approx_min_k_edges(tf, case):
    x = {
        "infinities_and_ties": tf.constant([[np.inf, 2.0, -np.inf, 2.0]]),
        "half": tf.constant([[2.0, 1.0, 3.0]], tf.float16),
        "k_too_big": tf.constant([[2.0, 1.0]]),
    }[case]
    k = 2 if case == "half" else 3
    return tuple(tf.function(lambda t: tf.math.approx_min_k(t, k), jit_compile=True)(x))


def _files(tf, names):
    import os
    import tempfile

    d = tempfile.mkdtemp()
    for n in names:
        open(os.path.join(d, n), "w").close()
    return d


@same_as_tf(
    "io.match_filenames_once",
    differs="TF returns a string tf.Variable holding the matches; unison has no string variables and returns that value",
)
def test_match_filenames_once(tf):
    import os

    d = _files(tf, ["b.txt", "a.txt", "c.csv"])
    found = tf.io.match_filenames_once(os.path.join(d, "*.txt"))
    open(os.path.join(d, "z.txt"), "w").close()  # made after the call: not in the value
    return [os.path.basename(f) for f in np.asarray(found.numpy()).tolist()]


@same_as_tf("io.match_filenames_once", edge=True)
def test_match_filenames_once_without_matches(tf):
    d = _files(tf, [])
    found = tf.io.match_filenames_once(d + "/*.none").numpy()
    return found.shape, found.dtype == object


@same_as_tf("data.experimental.enable_debug_mode")
def test_data_debug_mode_runs_functions_per_element(tf):
    import importlib

    calls = []

    def double(x):
        calls.append(1)
        return x * 2

    tf.data.experimental.enable_debug_mode()
    try:
        ds = tf.data.Dataset.range(5).map(double, num_parallel_calls=4).map(lambda x: x + 1)
        first = [int(v) for v in ds]
        before = len(calls)
        second = [int(v) for v in ds]
        per_pass = len(calls) - before  # TF traces once more on the first pass; then one call per element
    finally:  # TF's private switch back (unison keeps the same function beside its own)
        importlib.import_module(tf.data.experimental.enable_debug_mode.__module__).toggle_debug_mode(False)
    return first, second, per_pass


@same_as_tf("data.experimental.enable_debug_mode", edge=True)
def test_data_debug_mode_takes_no_arguments(tf):
    return tf.data.experimental.enable_debug_mode(True)
