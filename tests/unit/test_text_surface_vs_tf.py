"""The text surface the tutorial programs use, against outputs TensorFlow 2.21 (Keras 3.15) gave on the same input.

Every expected value here was printed by real TensorFlow (tensorflow-cpu 2.21.0 with Keras 3.15.1,
/work/tfvenv on the issue-25 machine) running the same call: FarmHash fingerprints, hash buckets of
``Hashing`` and of several OOV slots, TF-IDF weights, ``tf.random.categorical``'s contract,
``pad_sequences``, and the int64 inference of ``tf.constant`` for values beyond int32.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import unison as tf
from unison.keras import layers
from unison.keras.preprocessing.sequence import pad_sequences
from unison.ops.farmhash import fingerprint64

pytestmark = pytest.mark.timeout(60)

# tf.fingerprint(tf.constant(strings)) read as little-endian uint64 (TF 2.21)
_TF_FINGERPRINTS = {
    b"": 0x9AE16A3B2F90404F,
    b"a": 0xB3454265B6DF75E3,
    b"ab": 0xAA8D6E5242ADA51E,
    b"abc": 0x24A5B3A074E7F369,
    b"hello": 0xB48BE5A931380CE8,
    b"fingerprint": 0xD993C59B8F34ACFA,
    b"0123456789abcdef": 0x54B961E5DC834067,
    b"the quick brown fox jumps": 0xD346959BB8CC1E12,
    b"x" * 33: 0xAA49185443E61637,
    b"the quick brown fox jumps over the lazy dog, twice: fox!": 0xCB1E7DDFBDF5BE12,
    bytes(range(100)): 0x3CFF0F886D8D6195,
    bytes(range(256)): 0x496FBE15ED0E171F,
    "é漢字".encode(): 0xBDF03E2387E366D2,
}


def test_farmhash_fingerprint64_equals_tensorflows():
    # one string of each code path: 0, 1-3, 4-7, 8-16, 17-32, 33-64 and > 64 bytes (one and several blocks)
    for data, expected in _TF_FINGERPRINTS.items():
        assert fingerprint64(data) == expected, data
    assert tf.strings.to_hash_bucket_fast(["zz", "yy", "hello"], 10).tolist() == [2, 7, 6]
    assert tf.strings.to_hash_bucket_fast(["zz", "yy", "hello"], 10).dtype == torch.int64
    with pytest.raises(ValueError, match="num_buckets must be a positive integer"):
        tf.strings.to_hash_bucket_fast(["a"], 0)
    with pytest.raises(tf.errors.StringInputError, match="as_string"):
        tf.strings.to_hash_bucket_fast(tf.constant([1, 2]), 3)


_WORDS = ["zz", "yy", "hello", "", "é", " x "]
_INTS = [1000, 1001, 1002, 7, -5, 123456789, 2**40 + 3, 99]


def test_hashing_bins_equal_tensorflows():
    assert layers.Hashing(num_bins=7)(np.array(_WORDS, dtype=object)).tolist() == [1, 4, 5, 6, 6, 0]
    assert layers.Hashing(num_bins=7)(tf.constant(_INTS)).tolist() == [0, 3, 2, 2, 0, 3, 1, 4]
    assert layers.Hashing(num_bins=7, mask_value="")(np.array(_WORDS, dtype=object)).tolist() == [5, 2, 5, 0, 2, 1]


def test_lookup_oov_slots_equal_tensorflows():
    words = np.array(_WORDS, dtype=object)
    assert layers.StringLookup(vocabulary=["a", "b", "c"], num_oov_indices=2)(
        np.array(["a", "zz", "yy", "c"], dtype=object)
    ).tolist() == [2, 0, 1, 4]
    assert layers.StringLookup(vocabulary=["a"], num_oov_indices=5)(words).tolist() == [2, 2, 1, 3, 0, 1]
    assert layers.StringLookup(vocabulary=["a"], num_oov_indices=3, mask_token="")(words).tolist() == [2, 2, 2, 0, 2, 1]
    # integers: TF's vocabulary table puts an unknown value in slot value % num_oov_indices
    ints = tf.constant(_INTS)
    assert layers.IntegerLookup(vocabulary=[12, 36], num_oov_indices=3)(ints).tolist() == [1, 2, 0, 1, 1, 0, 1, 0]
    masked = layers.IntegerLookup(vocabulary=[12, 36], num_oov_indices=3, mask_token=0)(tf.constant([*_INTS, 0]))
    assert masked.tolist() == [2, 3, 1, 2, 2, 1, 2, 1, 0]


def test_lookup_invert_mask_and_oov_tokens_as_tensorflow():
    voc = ["a", "b", "c"]
    # TF's string outputs are bytes
    assert layers.StringLookup(vocabulary=voc, invert=True)(tf.constant([0, 1, 3, 7])).numpy().tolist() == [
        b"[UNK]",
        b"a",
        b"c",
        b"[UNK]",
    ]
    inv = layers.StringLookup(vocabulary=voc, invert=True, mask_token="")
    assert inv(tf.constant([0, 1, 2, 4, 9])).numpy().tolist() == [b"", b"[UNK]", b"a", b"c", b"[UNK]"]
    assert layers.StringLookup(vocabulary=voc, invert=True, mask_token="[M]").get_vocabulary() == [
        "[M]",
        "[UNK]",
        "a",
        "b",
        "c",
    ]
    assert layers.StringLookup(vocabulary=voc, invert=True, oov_token="?")(
        tf.constant([0, 2, 99])
    ).numpy().tolist() == [
        b"?",
        b"b",
        b"?",
    ]
    iv = [12, 36, 1138, 42]
    assert layers.IntegerLookup(vocabulary=iv, invert=True, mask_token=0)(tf.constant([0, 1, 2, 5])).tolist() == [
        0,
        -1,
        12,
        42,
    ]
    assert layers.IntegerLookup(vocabulary=iv, invert=True, oov_token=-7)(tf.constant([0, 1, 9])).tolist() == [
        -7,
        12,
        -7,
    ]
    assert layers.IntegerLookup(vocabulary=iv, mask_token=0).get_vocabulary() == [0, -1, 12, 36, 1138, 42]


_TEXTS = ["The cat sat.", "the DOG sat on the mat", "a cat, a dog!"]


def test_text_vectorization_tf_idf_equals_tensorflows():
    layer = layers.TextVectorization(output_mode="tf_idf")
    layer.adapt(tf.data.Dataset.from_tensor_slices(_TEXTS).batch(2))
    assert layer.get_vocabulary() == ["[UNK]", "the", "sat", "dog", "cat", "a", "on", "mat"]
    out = layer(np.array(_TEXTS, dtype=object))
    assert out.dtype == torch.float32
    expected = [
        [0.0, 0.6931, 0.6931, 0.0, 0.6931, 0.0, 0.0, 0.0],
        [0.0, 1.3863, 0.6931, 0.6931, 0.0, 0.0, 0.9163, 0.9163],
        [0.0, 0.0, 0.0, 0.6931, 0.6931, 1.8326, 0.0, 0.0],
    ]
    np.testing.assert_allclose(out.numpy(), expected, atol=1e-4)
    # the OOV column weighs by the mean of the vocabulary's weights (Keras's choice)
    np.testing.assert_allclose(
        layer(np.array(["zz cat zz qq"], dtype=object)).numpy()[0, [0, 4]], [2.36634, 0.69315], atol=1e-4
    )
    small = layers.TextVectorization(output_mode="tf_idf", max_tokens=4)
    small.adapt(_TEXTS)
    np.testing.assert_allclose(
        small(np.array(["zz cat zz qq the"], dtype=object)).numpy(), [[2.77259, 0.69315, 0, 0]], atol=1e-4
    )
    bigrams = layers.TextVectorization(output_mode="tf_idf", max_tokens=6, pad_to_max_tokens=True, ngrams=2)
    bigrams.adapt(tf.data.Dataset.from_tensor_slices(_TEXTS))  # unbatched: one string per element, as TF
    assert bigrams.get_vocabulary() == ["[UNK]", "the", "sat", "dog", "cat", "a"]
    np.testing.assert_allclose(
        bigrams(np.array(["the cat"], dtype=object)).numpy(), [[0.73778, 0.69315, 0, 0, 0.69315, 0]], atol=1e-4
    )
    given = layers.TextVectorization(output_mode="tf_idf", vocabulary=["a", "b"], idf_weights=[1.0, 2.0])
    np.testing.assert_allclose(given(np.array(["a b b q"], dtype=object)).numpy(), [[1.5, 1.0, 4.0]])
    restored = layers.TextVectorization.from_config(layer.get_config())
    np.testing.assert_allclose(restored(np.array(_TEXTS, dtype=object)).numpy(), out.numpy())


def test_text_vectorization_tf_idf_errors():
    with pytest.raises(ValueError, match="idf_weights` argument must also be provided"):
        layers.TextVectorization(output_mode="tf_idf", vocabulary=["a", "b"])
    with pytest.raises(ValueError, match="`idf_weights` should only be set if `output_mode` is 'tf_idf'"):
        layers.TextVectorization(vocabulary=["a"], idf_weights=[1.0])
    with pytest.raises(ValueError, match=r"one weight per vocabulary token \(2\)"):
        layers.TextVectorization(output_mode="tf_idf", vocabulary=["a", "b"], idf_weights=[1.0, 2.0, 3.0, 4.0])


def test_random_categorical_contract_as_tensorflow():
    logits = tf.math.log([[0.5, 0.5], [0.1, 0.9]])
    draws = tf.random.categorical(logits, 5)
    assert tuple(draws.shape) == (2, 5) and draws.dtype == torch.int64
    assert tf.random.categorical(logits, 3, dtype=tf.int32).dtype == torch.int32
    assert tf.random.categorical([[-np.inf, 0.0, -np.inf]], 4).tolist() == [[1, 1, 1, 1]]
    assert tuple(tf.random.categorical([[0.0, 1.0]], 0).shape) == (1, 0)
    assert tuple(tf.random.categorical(tf.constant([[0.0, 1.0]], tf.float64), 2, seed=3).shape) == (1, 2)
    tf.random.set_seed(0)
    share = float((tf.random.categorical(tf.math.log([[0.2, 0.8]]), 20000) == 1).float().mean())
    assert abs(share - 0.8) < 0.02  # TF: 0.8015
    with pytest.raises(ValueError, match="2-D logits"):
        tf.random.categorical([0.0, 1.0], 2)
    with pytest.raises(ValueError, match="dtype must be tf.int32 or tf.int64"):
        tf.random.categorical([[0.0, 1.0]], 2, dtype=tf.float32)
    with pytest.raises(ValueError, match="num_samples must be >= 0"):
        tf.random.categorical([[0.0, 1.0]], -1)


def test_pad_sequences_as_tensorflow():
    seqs = [[1], [2, 3], [4, 5, 6, 7]]
    assert pad_sequences(seqs).tolist() == [[0, 0, 0, 1], [0, 0, 2, 3], [4, 5, 6, 7]]
    assert pad_sequences(seqs).dtype == np.int32
    assert pad_sequences(seqs, padding="post").tolist() == [[1, 0, 0, 0], [2, 3, 0, 0], [4, 5, 6, 7]]
    assert pad_sequences(seqs, maxlen=3).tolist() == [[0, 0, 1], [0, 2, 3], [5, 6, 7]]
    assert pad_sequences(seqs, maxlen=3, truncating="post").tolist() == [[0, 0, 1], [0, 2, 3], [4, 5, 6]]
    assert pad_sequences(seqs, value=-1, padding="post", maxlen=2).tolist() == [[1, -1], [2, 3], [6, 7]]
    assert pad_sequences([[1.5], [2.5, 3.5]]).tolist() == [[0, 1], [2, 3]]  # int32 by default truncates floats
    assert pad_sequences([[1.5], [2.5, 3.5]], dtype="float32").tolist() == [[0.0, 1.5], [2.5, 3.5]]
    assert pad_sequences([["a"], ["b", "c"]], dtype=object, value="<pad>").tolist() == [["<pad>", "a"], ["b", "c"]]
    assert pad_sequences([[], [1, 2]]).tolist() == [[0, 0], [1, 2]]
    assert pad_sequences([[[1, 2]], [[3, 4], [5, 6]]]).tolist() == [[[0, 0], [1, 2]], [[3, 4], [5, 6]]]
    with pytest.raises(ValueError, match="cannot hold the padding value 'x'"):
        pad_sequences([["a"], ["b", "c"]], value="x")


def test_constant_infers_int64_beyond_int32_as_tensorflow():
    assert tf.constant(2**40).dtype == torch.int64
    assert tf.constant([1, 2]).dtype == torch.int32
    assert tf.constant([[1], [2**40]]).dtype == torch.int64
    assert tf.constant(-(2**31)).dtype == torch.int32 and tf.constant(2**31).dtype == torch.int64
