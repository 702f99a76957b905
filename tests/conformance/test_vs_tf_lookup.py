"""``tf.lookup`` against TensorFlow 2.21 (see tf_oracle.py for the rules)."""

from __future__ import annotations

import os
import tempfile

from tf_oracle import same_as_tf


@same_as_tf("lookup.StaticHashTable", "lookup.KeyValueTensorInitializer")
def test_static_hash_table(tf):
    init = tf.lookup.KeyValueTensorInitializer(["a", "b", "c"], [7, 8, 9])
    table = tf.lookup.StaticHashTable(init, default_value=-1)
    ints = tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(tf.constant([3, 1], tf.int64), ["x", "y"]), default_value="?"
    )
    keys, values = table.export()
    return (
        table.lookup(tf.constant([["b", "z"], ["a", "c"]])),
        table[tf.constant(["c"])],
        table.size(),
        tf.sort(values),
        ints.lookup(tf.constant([1, 2, 3], tf.int64)),
        table.key_dtype == tf.string,
        table.value_dtype == tf.int32,
    )


@same_as_tf("lookup.StaticHashTable", "lookup.KeyValueTensorInitializer", edge=True)
def test_key_value_initializer_lengths_differ(tf):
    return tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a", "b"], [1]), -1).lookup(
        tf.constant(["a"])
    )


@same_as_tf("lookup.StaticVocabularyTable")
def test_static_vocabulary_table_oov_buckets_match_tf(tf):
    vocab = tf.lookup.KeyValueTensorInitializer(["emerson", "lake", "palmer"], tf.constant([0, 1, 2], tf.int64))
    table = tf.lookup.StaticVocabularyTable(vocab, num_oov_buckets=7)
    words = tf.constant(["lake", "king", "crimson", "palmer", "", "yes", "genesis", "emerson"])
    return table.lookup(words), table.size()


@same_as_tf("lookup.StaticVocabularyTable", edge=True)
def test_static_vocabulary_table_int_keys(tf):
    vocab = tf.lookup.KeyValueTensorInitializer(tf.constant([10, 20], tf.int64), tf.constant([0, 1], tf.int64))
    table = tf.lookup.StaticVocabularyTable(vocab, num_oov_buckets=5)
    return table.lookup(tf.constant([20, 7, 123456789, -3, 10], tf.int64))


def _vocab_file(lines):
    fd, path = tempfile.mkstemp(suffix=".txt")
    with os.fdopen(fd, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


@same_as_tf("lookup.TextFileInitializer", "lookup.TextFileIndex")
def test_text_file_initializer(tf):
    path = _vocab_file(["apple\t5", "pear\t7", "fig\t2"])
    by_line = tf.lookup.StaticHashTable(
        tf.lookup.TextFileInitializer(
            path, tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64, tf.lookup.TextFileIndex.LINE_NUMBER
        ),
        -1,
    )
    columns = tf.lookup.StaticHashTable(
        tf.lookup.TextFileInitializer(path, tf.string, 0, tf.int64, 1, delimiter="\t"), -1
    )
    try:
        return by_line.lookup(tf.constant(["pear\t7", "fig"])), columns.lookup(tf.constant(["fig", "apple", "kiwi"]))
    finally:
        os.remove(path)


@same_as_tf("lookup.TextFileInitializer", "lookup.TextFileIndex", edge=True)
def test_text_file_initializer_vocab_size_and_vocabulary_table(tf):
    path = _vocab_file(["a", "b", "c", "d"])
    init = tf.lookup.TextFileInitializer(
        path, tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64, tf.lookup.TextFileIndex.LINE_NUMBER, vocab_size=2
    )
    table = tf.lookup.StaticVocabularyTable(init, num_oov_buckets=3)
    try:
        return table.lookup(tf.constant(["a", "b", "c", "zzz"])), table.size()
    finally:
        os.remove(path)


@same_as_tf("lookup.experimental.MutableHashTable")
def test_mutable_hash_table(tf):
    table = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, default_value=-1)
    table.insert(tf.constant(["a", "b", "c"]), tf.constant([1, 2, 3], tf.int64))
    table.insert(tf.constant(["b"]), tf.constant([20], tf.int64))
    before = table.lookup(tf.constant(["a", "b", "z"]))
    table.remove(tf.constant(["a", "nope"]))
    keys, values = table.export()
    return before, table.lookup(tf.constant(["a", "b"])), table.size(), tf.size(keys), tf.sort(values)


@same_as_tf("lookup.experimental.MutableHashTable", edge=True)
def test_mutable_hash_table_int_keys_dynamic_default(tf):
    table = tf.lookup.experimental.MutableHashTable(tf.int64, tf.float32, default_value=-1.0)
    table.insert(tf.constant([5, 1], tf.int64), tf.constant([0.5, 1.5]))
    empty = tf.lookup.experimental.MutableHashTable(tf.int64, tf.float32, default_value=0.0)
    return (
        table.lookup(tf.constant([[1, 2], [5, 5]], tf.int64)),
        table.lookup(tf.constant([1, 9], tf.int64), dynamic_default_values=tf.constant([7.0, 8.0])),
        empty.lookup(tf.constant([3], tf.int64)),
        empty.size(),
    )


@same_as_tf("lookup.experimental.DenseHashTable")
def test_dense_hash_table(tf):
    table = tf.lookup.experimental.DenseHashTable(tf.int64, tf.int64, default_value=-1, empty_key=0, deleted_key=-1)
    table.insert(tf.constant([3, 7, 9], tf.int64), tf.constant([30, 70, 90], tf.int64))
    table.remove(tf.constant([7], tf.int64))
    return table.lookup(tf.constant([3, 7, 9, 4], tf.int64)), table.size()


@same_as_tf("lookup.experimental.DenseHashTable", edge=True)
def test_dense_hash_table_rejects_the_empty_key(tf):
    table = tf.lookup.experimental.DenseHashTable(tf.int64, tf.int64, default_value=-1, empty_key=0, deleted_key=-1)
    table.insert(tf.constant([0], tf.int64), tf.constant([1], tf.int64))
    return table.lookup(tf.constant([0], tf.int64))
