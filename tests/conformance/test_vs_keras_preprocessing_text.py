"""Keras 2's ``keras.preprocessing.text`` and ``keras.preprocessing.sequence`` tools against tf_keras.

Deterministic results are compared by value; ``one_hot`` (Python's ``hash``, which differs between
processes) by its properties; ``skipgrams`` by value after the same ``random.seed`` on both sides
(unison draws from Python's ``random`` in tf_keras's order).
"""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

K2 = ("tf_keras",)
TEXTS = ["The cat sat on the mat.", "The dog ate my homework!", "cat, dog; CAT"]


@same_as_tf("tf_keras:preprocessing.text.text_to_word_sequence", dialects=K2)
def test_text_to_word_sequence(tf):
    text = tf.keras.preprocessing.text
    return (
        text.text_to_word_sequence("Hello, World! a--b"),
        text.text_to_word_sequence("Keep,Case", lower=False, filters=",", split=" "),
        text.text_to_word_sequence("a|b||c", split="|"),
    )


@same_as_tf("tf_keras:preprocessing.text.text_to_word_sequence", edge=True, dialects=K2)
def test_text_to_word_sequence_of_nothing_but_filters(tf):
    return tf.keras.preprocessing.text.text_to_word_sequence("!!! ,,, ..."), 0


@same_as_tf("tf_keras:preprocessing.text.hashing_trick", dialects=K2)
def test_hashing_trick_with_md5(tf):
    text = tf.keras.preprocessing.text
    return text.hashing_trick("the quick brown fox the", 20, hash_function="md5"), text.hashing_trick(
        "a b", 7, hash_function=len
    )


@same_as_tf("tf_keras:preprocessing.text.one_hot", "tf_keras:preprocessing.text.hashing_trick", edge=True, dialects=K2)
def test_one_hot_indices_are_in_range_and_repeat_for_a_repeated_word(tf):
    words = tf.keras.preprocessing.text.one_hot("b a b c a", 5)
    return len(words), all(1 <= w < 5 for w in words), words[0] == words[2], words[1] == words[4]


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"num_words": 4}, {"oov_token": "<oov>"}, {"num_words": 3, "oov_token": "?"}, {"char_level": True}],
)
@same_as_tf("tf_keras:preprocessing.text.Tokenizer", dialects=K2)
def test_tokenizer(tf, kwargs):
    tok = tf.keras.preprocessing.text.Tokenizer(**kwargs)
    tok.fit_on_texts(TEXTS)
    seqs = tok.texts_to_sequences(["the cat ate a bird", "dog"])
    matrices = [tok.texts_to_matrix(TEXTS[:2], mode=m) for m in ("binary", "count", "freq", "tfidf")]
    return (
        tok.word_index,
        sorted(tok.word_counts.items()),
        sorted(tok.index_docs.items()),
        tok.document_count,
        seqs,
        tok.sequences_to_texts(seqs),
        *matrices,
    )


@same_as_tf("tf_keras:preprocessing.text.Tokenizer", edge=True, dialects=K2)
def test_tokenizer_matrix_before_fit_is_an_error(tf):
    return tf.keras.preprocessing.text.Tokenizer().sequences_to_matrix([[1, 2]])


@same_as_tf("tf_keras:preprocessing.text.Tokenizer", edge=True, dialects=K2)
def test_tokenizer_of_word_lists_and_fit_on_sequences(tf):
    tok = tf.keras.preprocessing.text.Tokenizer(num_words=6)
    tok.fit_on_texts([["Ab", "cd"], ["cd"]])  # lists are words already (lower-cased only)
    tok.fit_on_sequences([[1, 2, 2], [5]])
    return tok.word_index, sorted(tok.index_docs.items()), tok.sequences_to_matrix([[1, 2, 2, 9], []], mode="tfidf")


@same_as_tf("tf_keras:preprocessing.text.tokenizer_from_json", "tf_keras:preprocessing.text.Tokenizer", dialects=K2)
def test_tokenizer_json_round_trip(tf):
    text = tf.keras.preprocessing.text
    tok = text.Tokenizer(num_words=5, oov_token="<unk>")
    tok.fit_on_texts(TEXTS)
    back = text.tokenizer_from_json(tok.to_json())
    config = tok.get_config()
    return (
        back.texts_to_sequences(["the cat and the dog"]),
        back.word_index,
        back.num_words,
        back.document_count,
        sorted(config),
        {k: v for k, v in config.items() if not isinstance(v, str) or not v.startswith("{")},
    )


@same_as_tf("tf_keras:preprocessing.text.tokenizer_from_json", edge=True, dialects=K2)
def test_tokenizer_from_json_of_another_json_is_an_error(tf):
    return tf.keras.preprocessing.text.tokenizer_from_json('{"config": {}}')


@pytest.mark.parametrize(
    "kwargs",
    [
        {"length": 3, "batch_size": 2},
        {"length": 4, "sampling_rate": 2, "stride": 3, "batch_size": 3, "reverse": True},
        {"length": 2, "start_index": 3, "end_index": 8, "batch_size": 4},
    ],
)
@same_as_tf("tf_keras:preprocessing.sequence.TimeseriesGenerator", dialects=K2)
def test_timeseries_generator(tf, kwargs):
    data = np.arange(24, dtype=np.float32).reshape(12, 2)
    gen = tf.keras.preprocessing.sequence.TimeseriesGenerator(data, np.arange(12) * 10, **kwargs)
    config = gen.get_config()
    return (
        len(gen),
        [gen[i] for i in range(len(gen))],
        {k: config[k] for k in sorted(config) if k not in ("data", "targets")},
    )


@same_as_tf("tf_keras:preprocessing.sequence.TimeseriesGenerator", edge=True, dialects=K2)
def test_timeseries_generator_with_no_step_left_is_an_error(tf):
    return tf.keras.preprocessing.sequence.TimeseriesGenerator(np.arange(4), np.arange(4), length=5)


@same_as_tf("tf_keras:preprocessing.sequence.TimeseriesGenerator", edge=True, dialects=K2)
def test_timeseries_generator_of_unequal_lengths_is_an_error(tf):
    return tf.keras.preprocessing.sequence.TimeseriesGenerator(np.arange(4), np.arange(3), length=1)


@same_as_tf("tf_keras:preprocessing.sequence.make_sampling_table", dialects=K2)
def test_make_sampling_table(tf):
    seq = tf.keras.preprocessing.sequence
    return seq.make_sampling_table(10), seq.make_sampling_table(6, sampling_factor=0.01)


@same_as_tf("tf_keras:preprocessing.sequence.make_sampling_table", edge=True, dialects=K2)
def test_make_sampling_table_of_one_word(tf):
    return tf.keras.preprocessing.sequence.make_sampling_table(1)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"window_size": 1, "negative_samples": 0.0, "shuffle": False},
        {"window_size": 2, "negative_samples": 1.0, "shuffle": True, "seed": 7},
        {"window_size": 2, "negative_samples": 0.5, "shuffle": True, "categorical": True},
    ],
)
@same_as_tf("tf_keras:preprocessing.sequence.skipgrams", dialects=K2)
def test_skipgrams_after_the_same_seed(tf, kwargs):
    import random

    random.seed(1234)
    return tf.keras.preprocessing.sequence.skipgrams([3, 1, 0, 4, 2, 5], vocabulary_size=6, **kwargs)


@same_as_tf("tf_keras:preprocessing.sequence.skipgrams", edge=True, dialects=K2)
def test_skipgrams_with_a_sampling_table(tf):
    import random

    random.seed(5)
    seq = tf.keras.preprocessing.sequence
    table = seq.make_sampling_table(8, sampling_factor=0.05)
    return seq.skipgrams([1, 2, 3, 4, 5, 6, 7], 8, window_size=1, sampling_table=table, seed=3)


@same_as_tf("tf_keras:preprocessing.text.one_hot", dialects=K2)
def test_one_hot_with_its_own_split_and_filters(tf):
    text = tf.keras.preprocessing.text
    words = text.one_hot("Alpha|beta|ALPHA!|", 1000, split="|", filters="!")
    words_cased = text.one_hot("x X", 1000, lower=False)
    return len(words), words[0] == words[2], all(0 < w < 1000 for w in words), len(words_cased)
