"""The errors of Keras 2's text and sequence tools (their values are compared with tf_keras in
tests/conformance/test_vs_keras_preprocessing_text.py)."""

from __future__ import annotations

import numpy as np
import pytest

from unison.keras.preprocessing import sequence, text


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: text.hashing_trick("a", 1), ValueError, "must be an integer >= 2"),
        (lambda: text.hashing_trick("a", 5, hash_function="sha1"), ValueError, "'md5' or a callable"),
        (lambda: text.text_to_word_sequence(3), TypeError, "takes a string"),
        (lambda: text.Tokenizer(num_words=-1), ValueError, "non-negative integer"),
        (lambda: text.Tokenizer(words=3), TypeError, "Unrecognized keyword arguments"),
        (
            lambda: text.Tokenizer(num_words=3).sequences_to_matrix([[1]], mode="bag"),
            ValueError,
            "Unknown vectorization",
        ),
        (lambda: text.Tokenizer(num_words=3).sequences_to_matrix([[1]], mode="tfidf"), ValueError, "Fit the Tokenizer"),
        (lambda: text.tokenizer_from_json('{"config": {}}'), KeyError, "to_json"),
        (lambda: sequence.TimeseriesGenerator([1, 2], [1, 2], length=0), ValueError, "`length` must be a positive"),
        (lambda: sequence.TimeseriesGenerator([1, 2], [1], length=1), ValueError, "same length"),
        (lambda: sequence.TimeseriesGenerator([1, 2], [1, 2], length=2), ValueError, "Use a shorter `length`"),
    ],
)
def test_mistakes_are_errors_that_say_what_to_do(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_nb_words_is_the_old_name_of_num_words():
    assert text.Tokenizer(nb_words=7).num_words == 7


def test_timeseries_generator_shuffles_with_numpys_generator_within_its_rows():
    state = np.random.get_state()
    try:
        np.random.seed(0)
        gen = sequence.TimeseriesGenerator(np.arange(20), np.arange(20), length=3, shuffle=True, batch_size=50)
        samples, targets = gen[0]
    finally:
        np.random.set_state(state)
    assert samples.shape == (50, 3) and targets.min() >= 3 and targets.max() <= 19
    assert (samples[:, -1] == targets - 1).all()
    assert gen.to_json().startswith('{"class_name": "TimeseriesGenerator"')
