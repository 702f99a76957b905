"""Keras 3's ``gradient_accumulation_steps``: k batches of b update as one batch of k*b."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import unison as tf

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "distributed"))
from accumulation_fns import accumulated_fit  # noqa: E402

pytestmark = pytest.mark.timeout(120)


def test_k_batches_of_b_equal_one_batch_of_k_times_b() -> None:
    whole = accumulated_fit(None, None, 32)
    accumulated = accumulated_fit(None, 4, 8)
    for got, want in zip(accumulated["weights"], whole["weights"]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert accumulated["iterations"] == 4 * whole["iterations"] == 48  # iterations count batches, as in Keras 3
    # the epoch's loss covers the same examples with the same weights at each update: equal means
    assert accumulated["history"]["accuracy"] == pytest.approx(whole["history"]["accuracy"], abs=1e-6)


def test_bad_accumulation_settings() -> None:
    with pytest.raises(ValueError, match="gradient_accumulation_steps` must be an integer >= 1"):
        tf.keras.optimizers.SGD(gradient_accumulation_steps=0)
    opt = tf.keras.optimizers.SGD(gradient_accumulation_steps=2)
    assert opt.get_config()["gradient_accumulation_steps"] == 2
    w = torch.nn.Parameter(torch.ones(2))
    with pytest.raises(NotImplementedError, match="fit\\(\\)'s built-in step only"):
        opt.apply_gradients([(torch.ones(2), w)])
