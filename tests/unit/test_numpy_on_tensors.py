"""numpy functions on unison tensors behave as on TF's EagerTensors: numpy converts the tensor
and returns numpy values (np.mean(t, axis=0) used to reach torch's Tensor.mean, which has no axis=)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import unison as tf

VALUES = np.array([[1.0, 2.0, 6.0], [3.0, 4.0, -1.0]], dtype=np.float32)


@pytest.mark.parametrize(
    ("fn", "kwargs"),
    [
        (np.mean, {"axis": 0}),
        (np.mean, {"axis": 1, "keepdims": True}),
        (np.sum, {"axis": 1}),
        (np.std, {"axis": 0}),
        (np.var, {"axis": 0, "ddof": 1}),
        (np.max, {"axis": 0}),
        (np.min, {"axis": 1}),
        (np.argmax, {"axis": 1}),
        (np.argmin, {}),
        (np.prod, {"axis": 0}),
        (np.cumsum, {"axis": 1}),
        (np.round, {"decimals": 1}),
        (np.median, {"axis": 0}),
        (np.sort, {"axis": 0}),
        (np.any, {"axis": 0}),
    ],
)
def test_reductions_match_numpy_on_the_same_values(fn, kwargs) -> None:
    got = fn(tf.constant(VALUES), **kwargs)
    want = fn(VALUES, **kwargs)
    assert not isinstance(got, torch.Tensor)  # TF gives numpy values back
    np.testing.assert_array_equal(got, want)
    assert np.asarray(got).dtype == np.asarray(want).dtype


def test_joining_and_mixed_arguments() -> None:
    t = tf.constant(VALUES)
    np.testing.assert_array_equal(np.concatenate([t, VALUES], axis=0), np.concatenate([VALUES, VALUES]))
    np.testing.assert_array_equal(np.stack((t, t)), np.stack((VALUES, VALUES)))
    assert np.allclose(t, VALUES)
    assert np.shape(t) == (2, 3) and np.ndim(t) == 2 and np.size(t) == 6 and np.size(t, 1) == 3


def test_tensors_in_autograd_graphs_and_variables() -> None:
    w = torch.tensor(VALUES, requires_grad=True)
    y = w * 2
    np.testing.assert_array_equal(np.mean(y, axis=0), (VALUES * 2).mean(axis=0))
    v = tf.Variable(VALUES)
    np.testing.assert_array_equal(np.mean(v, axis=0), VALUES.mean(axis=0))
    y.sum().backward()  # the graph is untouched by the conversion
    assert w.grad is not None


def test_torch_operations_are_unchanged() -> None:
    t = tf.constant(VALUES)
    assert isinstance(t.mean(dim=0), torch.Tensor)
    assert isinstance(torch.mean(t, dim=0), torch.Tensor)
