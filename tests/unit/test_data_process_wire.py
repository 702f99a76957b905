"""What a ``map`` in worker processes sends back (data/processes.py's wire): every kind of element
arrives as the same type and value the map gives in threads."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import unison as tf
from unison.data import processes

pytestmark = pytest.mark.skipif(not processes.available(), reason="worker processes need fork")


def _element(i):
    sparse = tf.SparseTensor(indices=[[0, 1]], values=tf.reshape(tf.cast(i, tf.float32), [1]), dense_shape=[2, 3])
    words = tf.SparseTensor(indices=[[0]], values=tf.constant(["w"]), dense_shape=[4])
    return {
        "sparse": sparse,
        "words": words,
        "scalar": tf.cast(i, tf.int64) * 3,  # a 0-d tensor (its numpy() is a NumPy scalar)
        "bf16": tf.cast(tf.fill([2], i), tf.bfloat16),
        "big": tf.fill([70_000], tf.cast(i, tf.float32)),  # above the inline size: its own message
        "text": tf.constant("t"),
    }


def _run(workers: int) -> list:
    options = tf.data.Options()
    options.threading.worker_processes = workers
    ds = tf.data.Dataset.range(6).map(_element, num_parallel_calls=tf.data.AUTOTUNE).with_options(options)
    return list(ds)


def _describe(element: dict) -> dict:
    out = {}
    for key, value in element.items():
        if isinstance(value, tf.SparseTensor):
            out[key] = ("sparse", value.indices.tolist(), np.asarray(value.values).tolist(), value.dense_shape.tolist())
        else:
            plain = value.float() if getattr(value, "dtype", None) == torch.bfloat16 else value
            out[key] = (type(value).__name__, str(getattr(value, "dtype", "")), np.asarray(plain).tolist())
    return out


def test_elements_from_worker_processes_match_the_threads_ones() -> None:
    ours, want = _run(2), _run(0)
    assert [_describe(e) for e in ours] == [_describe(e) for e in want]
    assert isinstance(ours[0]["sparse"], tf.SparseTensor) and ours[0]["bf16"].dtype == torch.bfloat16
    assert ours[5]["scalar"].shape == () and int(ours[5]["scalar"]) == 15


def test_a_later_with_options_keeps_map_parallelization_off() -> None:
    off = tf.data.Options()
    off.experimental_optimization.map_parallelization = False
    ds = tf.data.Dataset.range(3).with_options(off).with_options(tf.data.Options())
    assert ds.options().experimental_optimization.map_parallelization is False
