"""Argument errors of Keras 2's ``K.ctc_*`` functions and Keras 3's ``losses.ctc``/``Circle`` reductions.

Values are compared with Keras in tests/conformance/test_vs_keras_losses_ctc_circle.py.
"""

from __future__ import annotations

import pytest
import torch

from unison.errors import InvalidArgumentError
from unison.keras import backend as K
from unison.keras import losses

pytestmark = pytest.mark.timeout(60)

PROBS = torch.full((2, 4, 3), 1 / 3)


def test_ctc_batch_cost_wants_length_columns() -> None:
    with pytest.raises(ValueError, match=r"`input_length` must have shape \(samples, 1\)"):
        K.ctc_batch_cost(torch.tensor([[0], [1]]), PROBS, torch.tensor([4, 4]), torch.tensor([[1], [1]]))


def test_ctc_batch_cost_refuses_an_empty_label_as_tf_does() -> None:
    with pytest.raises(InvalidArgumentError, match="labels length is zero in batch 1"):
        K.ctc_batch_cost(torch.tensor([[0], [1]]), PROBS, torch.tensor([[4], [4]]), torch.tensor([[1], [0]]))


def test_ctc_decode_checks_top_paths_and_rank() -> None:
    with pytest.raises(ValueError, match="top_paths must be in"):
        K.ctc_decode(PROBS, torch.tensor([4, 4]), greedy=False, beam_width=2, top_paths=3)
    with pytest.raises(ValueError, match=r"\(samples, time, classes\)"):
        K.ctc_decode(PROBS[0], torch.tensor([4]))


def test_dense_to_sparse_wants_one_length_per_row() -> None:
    with pytest.raises(ValueError, match="one length per sample"):
        K.ctc_label_dense_to_sparse(torch.tensor([[1, 2]]), torch.tensor([1, 2]))


def test_keras3_ctc_checks_ranks() -> None:
    with pytest.raises(ValueError, match="y_pred.shape=\\(4, 3\\)"):
        losses.ctc(torch.tensor([[1]]), PROBS[0])


def test_circle_mean_counts_only_nonzero_losses() -> None:
    emb = torch.nn.functional.normalize(torch.tensor([[1.0, 0.0], [1.0, 0.2], [0.0, 1.0]]), dim=1)
    labels = torch.tensor([0, 0, 1])
    each = losses.circle(labels, emb, gamma=1.0)
    assert float(each[2]) == 0.0  # no positive for the last embedding
    mean = losses.Circle(gamma=1.0)(labels, emb)
    assert float(mean) == pytest.approx(float(each.sum() / 2))
    assert float(losses.Circle(gamma=1.0, reduction="sum")(labels, emb)) == pytest.approx(float(each.sum()))
