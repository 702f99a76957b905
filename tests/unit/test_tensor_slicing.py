"""Negative slice steps on tensors (ops/tensor_slicing.py): numpy's result for every index form,
and torch's own errors wherever the index is wrong for another reason."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

import unison as tf
from unison.ops.tensor_slicing import negative_step_index

pytestmark = pytest.mark.timeout(60)

A = np.arange(2 * 5 * 7).reshape(2, 5, 7)


def _random_slice(rng: random.Random, n: int) -> slice:
    bounds = [None, *range(-n - 2, n + 2)]
    return slice(rng.choice(bounds), rng.choice(bounds), rng.choice([None, 1, 2, -1, -2, -3, -7]))


def test_random_slices_match_numpy():
    rng = random.Random(0)
    t = tf.constant(A)
    for _ in range(2000):
        index = tuple(_random_slice(rng, n) for n in A.shape[: rng.randint(1, 3)])
        if rng.random() < 0.3:
            index = (Ellipsis, *index[1:])
        got, want = t[index].numpy(), A[index]
        assert got.shape == want.shape and (got == want).all(), index


@pytest.mark.parametrize(
    "index",
    [
        np.s_[:, np.array([True, False, True, True, False]), ::-1],  # a boolean mask takes its axes
        np.s_[[1, 0], ::-1],  # integer-array indexing after the flip
        np.s_[None, ::-1, ..., 2],
        np.s_[-1, 3::-2],
    ],
    ids=["bool-mask", "int-list", "newaxis-ellipsis", "int-then-slice"],
)
def test_mixed_indexes_match_numpy(index):
    assert (tf.constant(A)[index].numpy() == A[index]).all()
    mask_as_tensor = tuple(torch.from_numpy(e) if isinstance(e, np.ndarray) else e for e in index)
    assert (tf.constant(A)[mask_as_tensor].numpy() == A[index]).all()


def test_the_gradient_flows_back_through_the_flip():
    x = torch.arange(5.0, requires_grad=True)
    (x[::-2] * torch.tensor([1.0, 10.0, 100.0])).sum().backward()
    assert x.grad.tolist() == [100.0, 0.0, 10.0, 0.0, 1.0]


def test_positive_steps_still_go_straight_to_torch():
    t = torch.arange(10)
    assert t[1:8:3].tolist() == [1, 4, 7]
    assert t[1:8:3]._base is t  # a view, as torch's indexing gives


def test_a_zero_step_still_raises_pythons_error():
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        tf.constant(A)[::0]


def test_too_many_indices_with_a_negative_step_say_so():
    with pytest.raises(IndexError, match="too many indices"):  # torch's own check comes first
        tf.constant(A)[0, 0, ::-1, 0]
    with pytest.raises(IndexError, match=r"rank 3 .*addresses 4 axes"):
        negative_step_index(torch.zeros(2, 3, 4), (0, 0, slice(None, None, -1), 0))


def test_two_ellipses_with_a_negative_step_say_so():
    with pytest.raises(IndexError, match="single ellipsis"):
        negative_step_index(torch.zeros(2, 3), (Ellipsis, slice(None, None, -1), Ellipsis))
