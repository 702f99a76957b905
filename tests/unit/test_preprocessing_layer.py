"""PreprocessingLayer (Keras 2's adapt base) and the ``layers.experimental.preprocessing`` path."""

from __future__ import annotations

import numpy as np
import pytest

from unison.keras import layers
from unison.keras.layers.experimental import preprocessing


class _Sum(preprocessing.PreprocessingLayer):
    def build(self, input_shape):
        self.reset_state()
        self.built = True

    def reset_state(self):
        super().reset_state()
        self.total, self.sizes = 0.0, []

    def update_state(self, data):
        self.total += float(np.sum(data))
        self.sizes.append(len(data))


def test_adapt_cuts_an_array_into_batches_and_reads_steps():
    layer = _Sum()
    layer.adapt(np.arange(5.0), batch_size=2)
    assert (layer.total, layer.sizes, layer.is_adapted) == (10.0, [2, 2, 1], True)
    layer.adapt(np.arange(5.0), batch_size=2, steps=1)  # built now: the state starts again
    assert (layer.total, layer.sizes) == (1.0, [2])


def test_adapt_takes_an_iterable_of_batches_and_their_features():
    layer = _Sum()
    layer.adapt([(np.ones(3), np.zeros(3)), (np.ones(2), np.zeros(2))].__iter__())
    assert (layer.total, layer.sizes) == (5.0, [3, 2])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"steps": 0}, "`steps` must be a positive integer"), ({"batch_size": -1}, "`batch_size` must be a positive")],
)
def test_bad_adapt_arguments_are_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        _Sum().adapt(np.arange(4.0), **kwargs)


def test_adapt_of_something_not_data_is_an_error():
    with pytest.raises(ValueError, match="Received: data of type int"):
        _Sum().adapt(3)


def test_a_subclass_without_update_state_says_what_to_implement():
    with pytest.raises(NotImplementedError, match="implements update_state"):
        preprocessing.PreprocessingLayer().adapt(np.ones(2))


def test_bad_steps_per_execution_is_an_error():
    with pytest.raises(ValueError, match="steps_per_execution"):
        _Sum().compile(steps_per_execution=0)


def test_the_builtin_adaptable_layers_report_is_adapted():
    norm = layers.Normalization()
    assert not norm.is_adapted
    norm.adapt(np.arange(4.0).reshape(2, 2))
    lookup = preprocessing.StringLookup()
    lookup.adapt(np.array(["a", "b"]))
    assert norm.is_adapted and lookup.is_adapted
    assert preprocessing.TextVectorization is layers.TextVectorization
