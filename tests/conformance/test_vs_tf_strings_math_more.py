"""The rest of tf.strings (ngrams, segment joins, offsets, transcoding, SipHash buckets) and the
SciPy-backed tf.math functions (betainc, tf.math.special's dawsn & co) and approx_max_k, against
TensorFlow 2.21."""

from __future__ import annotations

import pytest
from tf_oracle import same_as_tf


@same_as_tf("strings.ngrams")
def test_ngrams(tf):
    words = tf.constant(["the", "cat", "sat", "down"])
    rows = tf.constant([["a", "b", "c"], ["d", "e", "f"]])
    return (
        tf.strings.ngrams(words, 2),
        tf.strings.ngrams(words, (1, 3), separator="_"),
        tf.strings.ngrams(words, 3, pad_values=("<s>", "</s>")),
        tf.strings.ngrams(words, 3, pad_values="#", padding_width=1),
        tf.strings.ngrams(rows, 2),
        tf.strings.ngrams(tf.ragged.constant([["a", "b", "c"], ["d"]]), 2),
    )


@same_as_tf("strings.ngrams", edge=True)
def test_ngrams_short_sequences(tf):
    words = tf.constant(["a", "b"])
    return (
        tf.strings.ngrams(words, 3),
        tf.strings.ngrams(words, 3, preserve_short_sequences=True),
        tf.strings.ngrams(tf.constant([], tf.string), 2),
    )


@same_as_tf("strings.unsorted_segment_join")
def test_unsorted_segment_join(tf):
    return (
        tf.strings.unsorted_segment_join(
            tf.constant(["a", "b", "c", "d"]), tf.constant([1, 0, 1, 1]), 3, separator=","
        ),
        tf.strings.unsorted_segment_join(tf.constant([["a", "b"], ["c", "d"]]), tf.constant([0, 0]), 1),
    )


@same_as_tf("strings.unsorted_segment_join", edge=True)
def test_unsorted_segment_join_bad_id(tf):
    try:
        tf.strings.unsorted_segment_join(tf.constant(["a"]), tf.constant([5]), 2)
    except tf.errors.InvalidArgumentError:
        return "bad segment id"
    return "joined"


OFFSETS = ("strings.unicode_decode_with_offsets", "strings.unicode_split_with_offsets")


@same_as_tf(*OFFSETS)
def test_unicode_offsets(tf):
    text = tf.constant("añ€b")
    batch = tf.constant(["héllo", "", "€"])
    return (
        tf.strings.unicode_decode_with_offsets(text, "UTF-8"),
        tf.strings.unicode_split_with_offsets(text, "UTF-8"),
        tf.strings.unicode_decode_with_offsets(batch, "UTF-8"),
        tf.strings.unicode_split_with_offsets(batch, "UTF-8"),
    )


@same_as_tf(*OFFSETS, edge=True)
def test_unicode_offsets_empty_and_utf16(tf):
    utf16 = tf.strings.unicode_transcode(tf.constant("hé"), "UTF-8", "UTF-16-BE")
    return (
        tf.strings.unicode_decode_with_offsets(tf.constant(""), "UTF-8"),
        tf.strings.unicode_decode_with_offsets(utf16, "UTF-16-BE"),
        tf.strings.unicode_split_with_offsets(tf.constant([""]), "UTF-8"),
    )


@same_as_tf("strings.unicode_transcode")
def test_unicode_transcode(tf):
    x = tf.constant(["héllo", "€", ""])
    return (
        tf.strings.unicode_transcode(x, "UTF-8", "UTF-16-BE"),
        tf.strings.unicode_transcode(x, "UTF-8", "UTF-32-BE"),
        tf.strings.unicode_transcode(tf.strings.unicode_transcode(x, "UTF-8", "UTF-16-BE"), "UTF-16-BE", "UTF-8"),
    )


@same_as_tf("strings.unicode_transcode", edge=True)
def test_unicode_transcode_invalid_bytes_replaced(tf):
    return tf.strings.unicode_transcode(
        tf.constant([b"a\xffb"]), "UTF-8", "UTF-8", errors="replace", replacement_char=63
    )


@same_as_tf("strings.to_hash_bucket_strong")
def test_to_hash_bucket_strong(tf):
    x = tf.constant(["hello", "", "a much longer string of text!", "€"])
    return tf.strings.to_hash_bucket_strong(x, 1000, [1, 2]), tf.strings.to_hash_bucket_strong(x, 7, [2**62 + 5, 12345])


@same_as_tf("strings.to_hash_bucket_strong", edge=True)
def test_to_hash_bucket_strong_shapes(tf):
    return (
        tf.strings.to_hash_bucket_strong(tf.constant([["a", "b"], ["c", "d"]]), 5, [0, 0]),
        tf.strings.to_hash_bucket_strong(tf.constant([], tf.string), 5, [0, 0]),
    )


SPECIAL = ("dawsn", "expint", "fresnel_cos", "fresnel_sin", "spence")
SPECIAL_NAMES = (
    "math.special.dawsn",
    "math.special.expint",
    "math.special.fresnel_cos",
    "math.special.fresnel_sin",
    "math.special.spence",
)


@pytest.mark.parametrize("fn", SPECIAL)
@same_as_tf(*SPECIAL_NAMES)
def test_special_functions(tf, fn):
    x = tf.constant([0.1, 0.5, 1.0, 2.5, 7.0])
    return getattr(tf.math.special, fn)(x), getattr(tf.math.special, fn)(tf.cast(x, tf.float64))


@pytest.mark.parametrize("fn", SPECIAL)
@same_as_tf(*SPECIAL_NAMES, edge=True)
def test_special_functions_negative_zero_nan_empty(tf, fn):
    f = getattr(tf.math.special, fn)
    return f(tf.constant([-1.5, 0.0, float("nan")])), f(tf.zeros([0, 2]))


@same_as_tf("math.betainc")
def test_betainc(tf):
    a = tf.constant([0.5, 1.0, 2.0, 5.0])
    b = tf.constant([2.0, 0.5, 3.0, 1.0])
    x = tf.constant([0.1, 0.5, 0.9, 0.99])
    return (
        tf.math.betainc(a, b, x),
        tf.math.betainc(2.0, b, x),
        tf.math.betainc(tf.constant(2.0, tf.float64), tf.constant(3.0, tf.float64), tf.constant(0.3, tf.float64)),
    )


@same_as_tf("math.betainc", edge=True)
def test_betainc_outside_the_domain(tf):
    try:
        tf.math.betainc(tf.constant([1.0, 2.0]), tf.constant([[1.0], [2.0]]), tf.constant(0.5))
    except tf.errors.InvalidArgumentError:
        pass
    else:
        return "broadcast"
    return tf.math.betainc(
        tf.constant([-1.0, 1.0, 1.0, 1.0]),
        tf.constant([1.0, 0.0, 1.0, 1.0]),
        tf.constant([0.5, 0.5, 1.5, float("nan")]),
    )


APPROX = ("math.approx_max_k", "nn.approx_max_k")


@same_as_tf(*APPROX)
def test_approx_max_k(tf):
    x = tf.constant([[1.0, 5.0, 3.0, 9.0, -2.0], [0.0, -1.0, 4.0, 4.5, 2.0]])
    return tf.math.approx_max_k(x, 2), tf.nn.approx_max_k(x, 5)


@same_as_tf(*APPROX, edge=True)
def test_approx_max_k_with_nan_and_empty(tf):
    return tf.math.approx_max_k(tf.constant([[1.0, float("nan"), 3.0]]), 1), tf.nn.approx_max_k(tf.zeros([0, 3]), 2)


@same_as_tf(*APPROX, edge=True)
def test_approx_max_k_rejects_ints(tf):
    try:
        tf.nn.approx_max_k(tf.constant([[3, 1, 2]]), 2)
    except tf.errors.InvalidArgumentError:
        return "ints rejected"
    return "computed"
