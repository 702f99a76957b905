"""TextVectorization against Keras 3's documented vocabulary and outputs on known text."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from unison.keras import layers
from unison.keras.layers.text_vectorization import DEFAULT_STRIP_REGEX

pytestmark = pytest.mark.timeout(60)


def test_keras_docstring_example_adapt():
    layer = layers.TextVectorization(max_tokens=5000, output_mode="int", output_sequence_length=4)
    layer.adapt(["foo bar", "bar baz", "baz bada boom"])
    # by count, ties by the token in descending order; 0 = padding, 1 = OOV
    assert layer.get_vocabulary() == ["", "[UNK]", "baz", "bar", "foo", "boom", "bada"]
    out = layer([["foo qux bar"], ["qux baz"]])
    assert out.dtype == torch.int64
    assert out.tolist() == [[4, 1, 3, 0], [1, 2, 0, 0]]


def test_keras_docstring_example_vocabulary():
    layer = layers.TextVectorization(
        max_tokens=5000, output_sequence_length=4, vocabulary=["earth", "wind", "and", "fire"]
    )
    assert layer.get_vocabulary() == ["", "[UNK]", "earth", "wind", "and", "fire"]
    assert layer.get_vocabulary(include_special_tokens=False) == ["earth", "wind", "and", "fire"]
    assert layer.vocabulary_size() == 6
    # punctuation goes ("&" leaves no token), "sky" is out of the vocabulary
    assert layer(["Earth, wind & FIRE! sky"]).tolist() == [[2, 3, 5, 1]]


def test_standardize_and_split_options():
    text = ["Hello, World! Hello."]
    lower = layers.TextVectorization(standardize="lower", vocabulary=["hello,", "world!"])
    assert lower.tokenize(text) == [["hello,", "world!", "hello."]]
    strip = layers.TextVectorization(standardize="strip_punctuation", vocabulary=["x"])
    assert strip.tokenize(text) == [["Hello", "World", "Hello"]]
    none = layers.TextVectorization(standardize=None, split=None, vocabulary=["x"])
    assert none.tokenize(text) == [["Hello, World! Hello."]]
    chars = layers.TextVectorization(split="character", vocabulary=["x"])
    assert chars.tokenize(["ab c"]) == [["a", "b", " ", "c"]]
    custom = layers.TextVectorization(
        standardize=lambda a: np.char.upper(a), split=lambda xs: [x.split("-") for x in xs], vocabulary=["x"]
    )
    assert custom.tokenize(["a-b"]) == [["A", "B"]]
    bigrams = layers.TextVectorization(ngrams=2, vocabulary=["x"])
    assert bigrams.tokenize(["a b c"]) == [["a", "b", "c", "a b", "b c"]]


def test_max_tokens_keeps_the_most_frequent_and_pads_to_the_longest():
    layer = layers.TextVectorization(max_tokens=4)
    layer.adapt(np.array(["the cat", "the dog", "the cat sat"]))
    assert layer.get_vocabulary() == ["", "[UNK]", "the", "cat"]
    assert layer(["the cat sat", "dog"]).tolist() == [[2, 3, 1], [1, 0, 0]]
    assert layer("the dog").tolist() == [2, 1]  # one string -> one sequence


def test_multi_hot_and_count_modes():
    counts = layers.TextVectorization(output_mode="count", vocabulary=["a", "b"])
    assert counts.get_vocabulary() == ["[UNK]", "a", "b"]
    assert counts(["a a z b"]).tolist() == [[1.0, 2.0, 1.0]]
    hot = layers.TextVectorization(output_mode="multi_hot", vocabulary=["a", "b"], max_tokens=5, pad_to_max_tokens=True)
    assert hot(["a a"]).tolist() == [[0.0, 1.0, 0.0, 0.0, 0.0]]


def test_adapt_on_an_iterable_of_batches_like_a_dataset(tmp_path):
    batches = [np.array(["b a", "b"]), ("c b", "a"), [("d d d", 0)]]
    layer = layers.TextVectorization()
    layer.adapt(iter(batches[:2]))
    assert layer.get_vocabulary() == ["", "[UNK]", "b", "a", "c"]
    layer.adapt(iter(batches), steps=1)
    assert layer.get_vocabulary() == ["", "[UNK]", "b", "a"]
    vocab_file = tmp_path / "vocab.txt"
    vocab_file.write_text("x\ny\n")
    assert layers.TextVectorization(vocabulary=str(vocab_file)).get_vocabulary() == ["", "[UNK]", "x", "y"]


def test_text_vectorization_errors():
    with pytest.raises(ValueError, match="standardize"):
        layers.TextVectorization(standardize="upper")
    with pytest.raises(ValueError, match="output_mode"):
        layers.TextVectorization(output_mode="bag_of_words")
    with pytest.raises(ValueError, match="max_tokens"):
        layers.TextVectorization(max_tokens=1)
    with pytest.raises(ValueError, match="output_sequence_length"):
        layers.TextVectorization(output_mode="count", output_sequence_length=3)
    with pytest.raises(ValueError, match="repeated"):
        layers.TextVectorization(vocabulary=["a", "a"])
    with pytest.raises(ValueError, match="no vocabulary"):
        layers.TextVectorization()(["a"])
    with pytest.raises(TypeError, match="not one string"):
        layers.TextVectorization().adapt("a b")
    with pytest.raises(ValueError, match="does not exist"):
        layers.TextVectorization(vocabulary="/nonexistent/vocab.txt")


def _reference_ids(layer, texts, length):
    """Ids string by string with the regex Keras documents (what the batch-at-once path must equal)."""
    vocab = {t: i for i, t in enumerate(layer.get_vocabulary())}
    rows = [[vocab.get(tok, 1) for tok in re.sub(DEFAULT_STRIP_REGEX, "", t.lower()).split()] for t in texts]
    width = length or max((len(r) for r in rows), default=0)
    return [(r + [0] * width)[:width] for r in rows]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("length", [None, 3])
def test_batch_at_once_vectorizing_equals_string_by_string(length):
    texts = [
        "The cat, the DOG!",
        "",
        "naïve café — Ünïcode's fine",
        "tab\tand\nnewline  spaces",
        "a NUL \x00 inside",  # the batch path's own marker: the layer must still be right
        "cat cat cat cat cat",
        "?!.,",
    ]
    layer = layers.TextVectorization(output_sequence_length=length)
    layer.adapt(texts)
    got = layer(np.array(texts, dtype=object)).tolist()
    assert got == _reference_ids(layer, texts, length)
    assert layer(np.array(texts[:1] + texts[2:4], dtype=object)).tolist() == _reference_ids(
        layer, texts[:1] + texts[2:4], length
    )
    multi = layers.TextVectorization(output_mode="count")
    multi.adapt(texts)
    counts = multi(np.array(texts, dtype=object)).numpy()
    vocab = {t: i for i, t in enumerate(multi.get_vocabulary())}
    for row, text in zip(counts, texts):
        expected = np.zeros(len(vocab), np.float32)
        for tok in re.sub(DEFAULT_STRIP_REGEX, "", text.lower()).split():
            expected[vocab.get(tok, 0)] += 1
        assert row.tolist() == expected.tolist()
