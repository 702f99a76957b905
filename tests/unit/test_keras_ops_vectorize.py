"""``keras.ops.vectorize`` against ``numpy.vectorize`` (Keras 3 on TensorFlow refuses it: "Not
supported with `vectorize()` with the TensorFlow backend", so there is no TF oracle to compare with)."""

from __future__ import annotations

import numpy as np
import pytest

from unison.keras import ops


def test_vectorize_broadcasts_like_numpy() -> None:
    a = np.sin(np.arange(12, dtype=np.float32)).reshape(3, 4)
    b = np.array([0.5, -1.0, 2.0, 3.0], np.float32)
    ours = ops.vectorize(lambda x, y: ops.where(x > y, x - y, x * y))(a, b)
    theirs = np.vectorize(lambda x, y: x - y if x > y else x * y)(a, b)
    np.testing.assert_allclose(ops.convert_to_numpy(ours), theirs, rtol=1e-6)
    assert tuple(ours.shape) == (3, 4)


def test_vectorize_with_a_signature_maps_core_slices() -> None:
    x = np.arange(12, dtype=np.float32).reshape(2, 2, 3)
    ours = ops.vectorize(lambda row: ops.sum(row * row), signature="(d)->()")(x)
    np.testing.assert_allclose(ops.convert_to_numpy(ours), np.sum(x * x, axis=-1))


def test_vectorize_excluded_arguments_pass_through() -> None:
    out = ops.vectorize(lambda x, scale: x * scale, excluded={1})(np.array([1.0, 2.0], np.float32), 3.0)
    assert ops.convert_to_numpy(out).tolist() == [3.0, 6.0]


def test_vectorize_of_mismatched_shapes_raises() -> None:
    with pytest.raises(ValueError, match="cannot be broadcast"):
        ops.vectorize(lambda a, b: a + b)(np.ones(3, np.float32), np.ones(4, np.float32))
