"""``tf.strings`` against TensorFlow 2.21 (string tensors compare as bytes, as TF's ``.numpy()`` gives)."""

from __future__ import annotations

from tf_oracle import same_as_tf

WORDS = ["Hello World", "  tf.data  ", "Déjà vu", ""]

CASE = ("strings.lower", "strings.upper", "strings.strip", "strings.length")


@same_as_tf(*CASE)
def test_case_strip_and_length(tf):
    x = tf.constant(WORDS)
    return (
        tf.strings.lower(x),
        tf.strings.upper(x),
        tf.strings.strip(x),
        tf.strings.length(x),
        tf.strings.length(x, unit="UTF8_CHAR"),
    )


@same_as_tf(*CASE, edge=True)
def test_case_and_length_of_empty_and_2d(tf):
    x = tf.constant([["a", "BC"], ["", " d "]])
    return (
        tf.strings.lower(tf.constant([], dtype=tf.string)),
        tf.strings.upper(x),
        tf.strings.strip(x),
        tf.strings.length(x),
    )


REGEX = ("strings.regex_replace", "strings.regex_full_match")


@same_as_tf(*REGEX)
def test_regex(tf):
    x = tf.constant(["abc123", "no digits", "9lives"])
    return (
        tf.strings.regex_replace(x, r"\d+", "#"),
        tf.strings.regex_replace(x, r"(\w)(\d)", r"\2\1", replace_global=False),
        tf.strings.regex_full_match(x, r"[a-z]+\d+"),
    )


@same_as_tf(*REGEX, edge=True)
def test_regex_on_empty_strings(tf):
    x = tf.constant(["", "a"])
    return tf.strings.regex_replace(x, "^$", "EMPTY"), tf.strings.regex_full_match(x, ".*")


SLICES = ("strings.substr", "strings.split", "strings.bytes_split", "strings.join", "strings.reduce_join")


@same_as_tf(*SLICES)
def test_substr_split_and_join(tf):
    x = tf.constant(["hello world", "a b  c"])
    return (
        tf.strings.substr(x, 1, 3),
        tf.strings.substr(x, [0, 2], [5, 1]),
        tf.strings.split(x).to_list(),
        tf.strings.split(x, sep=" ").to_list(),
        tf.strings.split(tf.constant("a,b,,c"), sep=","),
        tf.strings.bytes_split(tf.constant("abc")),
        tf.strings.join([x, tf.constant(["!", "?"])], separator="-"),
        tf.strings.reduce_join(x, separator="|"),
        tf.strings.reduce_join(tf.constant([["a", "b"], ["c", "d"]]), axis=1),
    )


@same_as_tf(*SLICES, edge=True)
def test_substr_split_and_join_edges(tf):
    return (
        tf.strings.substr(tf.constant(["abc"]), 1, 10),
        tf.strings.split(tf.constant([""])).to_list(),
        tf.strings.bytes_split(tf.constant("")),
        tf.strings.join([tf.constant("x"), tf.constant(["a", "b"])]),
        tf.strings.reduce_join(tf.constant([], dtype=tf.string)),
    )


NUMBERS = ("strings.to_number", "strings.as_string", "strings.to_hash_bucket_fast", "strings.format")


@same_as_tf(*NUMBERS)
def test_numbers_and_hashes(tf):
    return (
        tf.strings.to_number(tf.constant(["1.5", "-2", "3e2"])),
        tf.strings.to_number(tf.constant(["7", "-8"]), out_type=tf.int64),
        tf.strings.as_string(tf.constant([1.5, 2.0])),
        tf.strings.as_string(tf.constant([3, 42]), width=4, fill="0"),
        tf.strings.as_string(tf.constant([1.23456]), precision=2),
        tf.strings.to_hash_bucket_fast(tf.constant(["apple", "banana", ""]), 100),
        tf.strings.format("x = {}, y = {}", (tf.constant(3), tf.constant([1.5, 2.0]))),
    )


@same_as_tf(*NUMBERS, edge=True)
def test_bad_number_is_an_invalid_argument(tf):
    return tf.strings.to_number(tf.constant(["12abc"]))


UNICODE = ("strings.unicode_split", "strings.unicode_decode", "strings.unicode_encode")


@same_as_tf(*UNICODE)
def test_unicode(tf):
    x = tf.constant(["Déjà", "vu"])
    return (
        tf.strings.unicode_split(x, "UTF-8").to_list(),
        tf.strings.unicode_decode(x, "UTF-8").to_list(),
        tf.strings.unicode_encode(tf.constant([100, 233]), "UTF-8"),
    )


@same_as_tf(*UNICODE, edge=True)
def test_unicode_of_empty(tf):
    return (
        tf.strings.unicode_split(tf.constant([""]), "UTF-8").to_list(),
        tf.strings.unicode_decode(tf.constant(""), "UTF-8"),
        tf.strings.unicode_encode(tf.constant([], dtype=tf.int32), "UTF-8"),
    )
