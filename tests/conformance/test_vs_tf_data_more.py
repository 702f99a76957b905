"""More of tf.data against TensorFlow 2.21: FixedLengthRecordDataset, SqlDataset, the specs and
NumpyIterator, and tf.data.experimental's transformations, tables and options."""

from __future__ import annotations

import os
import sqlite3
import tempfile

import numpy as np
from tf_oracle import same_as_tf


def _records(tf, body, header=b"HDR", footer=b"FT"):
    path = os.path.join(tempfile.mkdtemp(), "data.bin")
    with open(path, "wb") as fh:
        fh.write(header + body + footer)
    return path


@same_as_tf("data.FixedLengthRecordDataset")
def test_fixed_length_records(tf):
    path = _records(tf, b"abcdefghijkl")
    ds = tf.data.FixedLengthRecordDataset([path, path], record_bytes=4, header_bytes=3, footer_bytes=2)
    return list(ds.as_numpy_iterator()), list(ds.element_spec.shape), ds.element_spec.dtype == tf.string


@same_as_tf("data.FixedLengthRecordDataset", edge=True)
def test_fixed_length_records_partial_body(tf):
    path = _records(tf, b"abcdefghij", header=b"", footer=b"")
    try:
        list(tf.data.FixedLengthRecordDataset(path, record_bytes=4))
    except tf.errors.InvalidArgumentError:
        return "partial record"
    return "read"


def _database():
    path = os.path.join(tempfile.mkdtemp(), "db.sqlite")
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE people (name TEXT, age INTEGER, score REAL)")
    connection.executemany("INSERT INTO people VALUES (?, ?, ?)", [("ann", 31, 1.5), ("bob", 27, -2.0)])
    connection.commit()
    connection.close()
    return path


@same_as_tf("data.experimental.SqlDataset")
def test_sql_dataset_rows(tf):
    ds = tf.data.experimental.SqlDataset(
        "sqlite", _database(), "SELECT name, age, score FROM people ORDER BY age", (tf.string, tf.int32, tf.float64)
    )
    return list(ds.as_numpy_iterator())


@same_as_tf("data.experimental.SqlDataset", edge=True)
def test_sql_dataset_no_rows_and_bad_driver(tf):
    out = [
        list(
            tf.data.experimental.SqlDataset("sqlite", _database(), "SELECT age FROM people WHERE age > 99", (tf.int64,))
        )
    ]
    try:
        list(tf.data.experimental.SqlDataset("mysql", _database(), "SELECT age FROM people", (tf.int64,)))
    except tf.errors.InvalidArgumentError:
        out.append("bad driver")
    return out


SPECS = ("data.DatasetSpec", "data.IteratorSpec", "data.NumpyIterator", "data.experimental.get_structure")


@same_as_tf(*SPECS)
def test_specs_and_numpy_iterator(tf):
    ds = tf.data.Dataset.from_tensor_slices({"a": [1, 2], "b": [[1.0, 2.0], [3.0, 4.0]]})
    spec = tf.data.DatasetSpec(ds.element_spec)
    numpy_it = ds.as_numpy_iterator()
    return (
        spec.element_spec == ds.element_spec,
        tf.data.DatasetSpec.from_value(ds) == spec,
        tf.data.IteratorSpec(ds.element_spec) == tf.data.IteratorSpec(ds.element_spec),
        repr(tf.data.IteratorSpec(ds.element_spec)).startswith("IteratorSpec("),
        isinstance(numpy_it, tf.data.NumpyIterator),
        next(numpy_it),
        list(tf.data.experimental.get_structure(ds)["b"].shape),
        tf.data.experimental.get_structure(iter(ds))["a"].dtype == tf.int32,
    )


@same_as_tf(*SPECS, edge=True)
def test_specs_of_an_empty_dataset(tf):
    ds = tf.data.Dataset.range(5).take(0)
    return (
        list(ds.as_numpy_iterator()),
        tf.data.DatasetSpec(ds.element_spec).element_spec.dtype == tf.int64,
        list(tf.data.experimental.get_structure(ds).shape),
        isinstance(tf.data.Dataset.range(0).as_numpy_iterator(), tf.data.NumpyIterator),
    )


ACCESS = ("data.experimental.at", "data.experimental.get_next_as_optional", "data.experimental.Optional")


@same_as_tf(*ACCESS)
def test_at_and_next_as_optional(tf):
    ds = tf.data.Dataset.range(10, 20)
    it = iter(tf.data.Dataset.range(1))
    first = tf.data.experimental.get_next_as_optional(it)
    second = tf.data.experimental.get_next_as_optional(it)
    return (
        tf.data.experimental.at(ds, 3),
        first.has_value(),
        first.get_value(),
        second.has_value(),
        isinstance(first, tf.data.experimental.Optional),
    )


@same_as_tf(*ACCESS, edge=True)
def test_at_past_the_end(tf):
    try:
        tf.data.experimental.at(tf.data.Dataset.range(3), 5)
    except tf.errors.OutOfRangeError:
        return "out of range"
    return "found"


@same_as_tf("data.experimental.group_by_reducer", "data.experimental.Reducer")
def test_group_by_reducer(tf):
    reducer = tf.data.experimental.Reducer(
        init_func=lambda key: (tf.constant(0, tf.int64), tf.constant(0, tf.int64)),
        reduce_func=lambda state, x: (state[0] + x, state[1] + 1),
        finalize_func=lambda total, count: total * 100 + count,
    )
    ds = tf.data.Dataset.range(10).apply(tf.data.experimental.group_by_reducer(lambda x: x % 3, reducer))
    return sorted(int(x) for x in ds)


@same_as_tf("data.experimental.group_by_reducer", "data.experimental.Reducer", edge=True)
def test_group_by_reducer_of_an_empty_dataset(tf):
    reducer = tf.data.experimental.Reducer(lambda k: tf.constant(0, tf.int64), lambda s, x: s + x, lambda s: s)
    ds = tf.data.Dataset.range(0).apply(tf.data.experimental.group_by_reducer(lambda x: x % 2, reducer))
    return list(ds.as_numpy_iterator())


def _ragged_rows(tf):
    return tf.data.Dataset.from_generator(
        lambda: iter([np.array(r, np.int32) for r in ([1, 2], [3], [4, 5, 6], [])]),
        output_signature=tf.TensorSpec([None], tf.int32),
    )


@same_as_tf("data.experimental.dense_to_sparse_batch")
def test_dense_to_sparse_batch(tf):
    return list(_ragged_rows(tf).apply(tf.data.experimental.dense_to_sparse_batch(3, [4])))


@same_as_tf("data.experimental.dense_to_sparse_batch", edge=True)
def test_dense_to_sparse_batch_row_too_long(tf):
    try:
        list(_ragged_rows(tf).apply(tf.data.experimental.dense_to_sparse_batch(2, [2])))
    except tf.errors.DataLossError:
        return "too long"
    return "fits"


@same_as_tf("data.experimental.pad_to_cardinality")
def test_pad_to_cardinality(tf):
    ds = tf.data.Dataset.from_tensor_slices({"a": [1, 2, 3], "b": [[1.0, 2.0]] * 3})
    return list(ds.apply(tf.data.experimental.pad_to_cardinality(5)).as_numpy_iterator())


@same_as_tf("data.experimental.pad_to_cardinality", edge=True)
def test_pad_to_cardinality_already_full_and_custom_key(tf):
    ds = tf.data.Dataset.from_tensor_slices({"a": [1, 2]})
    return list(ds.apply(tf.data.experimental.pad_to_cardinality(2, mask_key="m")).as_numpy_iterator())


@same_as_tf("data.experimental.parallel_interleave")
def test_parallel_interleave(tf):
    ds = tf.data.Dataset.range(1, 4).apply(
        tf.data.experimental.parallel_interleave(
            lambda x: tf.data.Dataset.from_tensors(x).repeat(x), cycle_length=2, block_length=2
        )
    )
    return list(ds.as_numpy_iterator())


@same_as_tf("data.experimental.parallel_interleave", edge=True)
def test_parallel_interleave_of_empty_datasets(tf):
    ds = tf.data.Dataset.range(3).apply(
        tf.data.experimental.parallel_interleave(lambda x: tf.data.Dataset.range(0), cycle_length=2)
    )
    return list(ds.as_numpy_iterator())


def _examples(tf):
    feature = tf.train.Feature
    return [
        tf.train.Example(
            features=tf.train.Features(
                feature={
                    "x": feature(float_list=tf.train.FloatList(value=[v, v + 1])),
                    "id": feature(int64_list=tf.train.Int64List(value=[int(v)])),
                }
            )
        ).SerializeToString()
        for v in (1.0, 2.0, 3.0)
    ]


@same_as_tf("data.experimental.parse_example_dataset")
def test_parse_example_dataset(tf):
    features = {"x": tf.io.FixedLenFeature([2], tf.float32), "id": tf.io.FixedLenFeature([], tf.int64)}
    ds = tf.data.Dataset.from_tensor_slices(_examples(tf)).batch(2)
    return list(ds.apply(tf.data.experimental.parse_example_dataset(features)).as_numpy_iterator())


@same_as_tf("data.experimental.parse_example_dataset", edge=True)
def test_parse_example_dataset_missing_feature_default(tf):
    features = {"y": tf.io.FixedLenFeature([], tf.int64, default_value=-7)}
    ds = tf.data.Dataset.from_tensor_slices(_examples(tf)).batch(3)
    return list(ds.apply(tf.data.experimental.parse_example_dataset(features)).as_numpy_iterator())


# enable_debug_mode is left untested on purpose: TF cannot undo it, and the oracle process runs every
# later test of the session after it (tf.data functions then run eagerly and several TF results change)
DEVICE = ("data.experimental.copy_to_device", "data.experimental.prefetch_to_device")


@same_as_tf(*DEVICE)
def test_device_transformations_on_the_cpu(tf):
    ds = tf.data.Dataset.range(4).map(lambda x: x * 2)
    copied = ds.apply(tf.data.experimental.copy_to_device("/cpu:0"))
    fetched = ds.apply(tf.data.experimental.prefetch_to_device("/cpu:0", buffer_size=2))
    return list(copied.as_numpy_iterator()), list(fetched.as_numpy_iterator())


@same_as_tf(*DEVICE, edge=True)
def test_device_transformations_of_structures_and_empty(tf):
    ds = tf.data.Dataset.from_tensor_slices(({"a": [1.0, 2.0]}, [b"x", b"y"]))
    return (
        list(ds.apply(tf.data.experimental.prefetch_to_device("/cpu:0")).as_numpy_iterator()),
        list(tf.data.Dataset.range(0).apply(tf.data.experimental.copy_to_device("/cpu:0")).as_numpy_iterator()),
    )


TABLES = (
    "data.experimental.table_from_dataset",
    "data.experimental.index_table_from_dataset",
    "data.experimental.DatasetInitializer",
)


@same_as_tf(*TABLES)
def test_tables_from_datasets(tf):
    keys = tf.data.Dataset.from_tensor_slices(["cat", "dog", "emu"])
    pairs = tf.data.Dataset.zip((keys, tf.data.Dataset.range(10, 13)))
    table = tf.data.experimental.table_from_dataset(pairs, default_value=tf.constant(-1, tf.int64))
    index = tf.data.experimental.index_table_from_dataset(keys)
    init = tf.lookup.StaticHashTable(tf.data.experimental.DatasetInitializer(pairs), tf.constant(0, tf.int64))
    query = tf.constant(["dog", "yak", "cat"])
    return table.lookup(query), index.lookup(query), init.lookup(query), table.size()


@same_as_tf(*TABLES, edge=True)
def test_tables_from_datasets_with_oov_buckets_and_vocab_size(tf):
    keys = tf.data.Dataset.from_tensor_slices(["a", "b", "c"])
    table = tf.data.experimental.index_table_from_dataset(keys, num_oov_buckets=1, vocab_size=2)
    return table.lookup(tf.constant(["a", "b", "c", "zzz"])), table.size()


@same_as_tf("data.experimental.TFRecordWriter")
def test_tfrecord_writer_writes_a_dataset(tf):
    path = os.path.join(tempfile.mkdtemp(), "out.tfrecord")
    tf.data.experimental.TFRecordWriter(path).write(tf.data.Dataset.from_tensor_slices([b"one", b"two", b""]))
    gz = path + ".gz"
    tf.data.experimental.TFRecordWriter(gz, "GZIP").write(tf.data.Dataset.from_tensor_slices([b"z"]))
    return list(tf.data.TFRecordDataset(path).as_numpy_iterator()), list(
        tf.data.TFRecordDataset(gz, "GZIP").as_numpy_iterator()
    )


@same_as_tf("data.experimental.TFRecordWriter", edge=True)
def test_tfrecord_writer_needs_strings(tf):
    path = os.path.join(tempfile.mkdtemp(), "bad.tfrecord")
    try:
        tf.data.experimental.TFRecordWriter(path).write(tf.data.Dataset.range(3))
    except TypeError:
        return "not strings"
    return "wrote"


OPTIONS = (
    "data.experimental.ThreadingOptions",
    "data.experimental.OptimizationOptions",
    "data.experimental.AutotuneOptions",
    "data.experimental.AutotuneAlgorithm",
    "data.experimental.ExternalStatePolicy",
    "data.experimental.SHARD_HINT",
)


@same_as_tf(*OPTIONS)
def test_options_classes_round_trip(tf):
    de = tf.data.experimental
    options = tf.data.Options()
    options.autotune.cpu_budget = 3
    options.autotune.autotune_algorithm = de.AutotuneAlgorithm.HILL_CLIMB
    options.threading.private_threadpool_size = 2
    options.experimental_optimization.map_parallelization = False
    options.experimental_external_state_policy = de.ExternalStatePolicy.IGNORE
    got = tf.data.Dataset.range(3).with_options(options).options()
    return (
        got.autotune.cpu_budget,
        got.autotune.autotune_algorithm == de.AutotuneAlgorithm.HILL_CLIMB,
        got.threading.private_threadpool_size,
        got.experimental_external_state_policy == de.ExternalStatePolicy.IGNORE,
        isinstance(got.threading, de.ThreadingOptions),
        isinstance(got.experimental_optimization, de.OptimizationOptions),
        isinstance(got.autotune, de.AutotuneOptions),
        sorted(m.name for m in de.AutotuneAlgorithm),
        [(m.name, int(m.value)) for m in de.ExternalStatePolicy],
        de.SHARD_HINT,
    )


@same_as_tf(*OPTIONS, edge=True)
def test_options_unset_fields_and_later_options_win(tf):
    de = tf.data.experimental
    first, second = tf.data.Options(), tf.data.Options()
    first.autotune.ram_budget = 100
    second.autotune.ram_budget = 200
    got = tf.data.Dataset.range(1).with_options(first).with_options(second).options()
    return (
        got.autotune.ram_budget,
        got.autotune.cpu_budget,
        tf.data.Options().experimental_external_state_policy,
        de.SHARD_HINT == -1,
    )


@same_as_tf("data.experimental.dense_to_ragged_batch")
def test_dense_to_ragged_batch(tf):
    rows = _ragged_rows(tf).apply(tf.data.experimental.dense_to_ragged_batch(3))
    pairs = tf.data.Dataset.from_tensor_slices(([[1, 2], [3, 4], [5, 6]], [1, 2, 3]))
    dense = list(pairs.apply(tf.data.experimental.dense_to_ragged_batch(2)).as_numpy_iterator())
    return [r.to_list() for r in rows], dense


@same_as_tf("data.experimental.dense_to_ragged_batch", edge=True)
def test_dense_to_ragged_batch_drop_remainder_and_empty_rows(tf):
    rows = _ragged_rows(tf).apply(tf.data.experimental.dense_to_ragged_batch(3, drop_remainder=True))
    return [r.to_list() for r in rows], list(
        tf.data.Dataset.range(0).apply(tf.data.experimental.dense_to_ragged_batch(2))
    )


@same_as_tf("data.experimental.save", "data.experimental.load")
def test_save_and_load_round_trip(tf):
    path = os.path.join(tempfile.mkdtemp(), "saved")
    ds = tf.data.Dataset.from_tensor_slices(
        {"x": [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], "name": [b"a", b"b", b"c"], "id": [1, 2, 3]}
    )
    tf.data.experimental.save(ds, path)
    loaded = tf.data.experimental.load(path)
    gz = os.path.join(tempfile.mkdtemp(), "gz")
    tf.data.experimental.save(tf.data.Dataset.range(4), gz, compression="GZIP")
    return (
        list(loaded.as_numpy_iterator()),
        loaded.element_spec["id"].dtype == tf.int32,
        list(tf.data.experimental.load(gz, compression="GZIP").as_numpy_iterator()),
    )


@same_as_tf("data.experimental.save", "data.experimental.load", edge=True)
def test_save_and_load_empty_and_missing(tf):
    path = os.path.join(tempfile.mkdtemp(), "empty")
    tf.data.experimental.save(tf.data.Dataset.range(0), path)
    out = [list(tf.data.experimental.load(path).as_numpy_iterator())]
    try:
        list(tf.data.experimental.load(os.path.join(tempfile.mkdtemp(), "nothing")))
    except tf.errors.NotFoundError:
        out.append("missing")
    return out
