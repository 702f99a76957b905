"""``tf.io``'s records and ``tf.train.Example`` parsing against TensorFlow 2.21 (see tf_oracle.py)."""

from __future__ import annotations

import pytest
from tf_oracle import same_as_tf


def _example(tf, ints, floats, words):
    feature = {
        "ints": tf.train.Feature(int64_list=tf.train.Int64List(value=ints)),
        "floats": tf.train.Feature(float_list=tf.train.FloatList(value=floats)),
        "words": tf.train.Feature(bytes_list=tf.train.BytesList(value=words)),
    }
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


@same_as_tf("io.parse_single_example", "io.FixedLenFeature", "io.VarLenFeature")
def test_parse_single_example(tf):
    record = _example(tf, [1, 2], [0.5, 1.5, 2.5], [b"a", b"bc"])
    features = {
        "ints": tf.io.FixedLenFeature([2], tf.int64),
        "floats": tf.io.VarLenFeature(tf.float32),
        "words": tf.io.FixedLenFeature([2], tf.string),
        "missing": tf.io.FixedLenFeature([], tf.int64, default_value=7),
    }
    return tf.io.parse_single_example(record, features)


@same_as_tf("io.parse_single_example", "io.FixedLenFeature", "io.VarLenFeature", edge=True)
def test_parse_single_example_missing_required_feature(tf):
    record = _example(tf, [1], [0.5], [b"a"])
    return tf.io.parse_single_example(record, {"absent": tf.io.FixedLenFeature([], tf.int64)})


@same_as_tf("io.parse_example", "io.FixedLenSequenceFeature")
def test_parse_example_batch(tf):
    records = [_example(tf, [1, 2], [0.5], [b"a"]), _example(tf, [3, 4], [1.5, 2.5], [])]
    features = {
        "ints": tf.io.FixedLenFeature([2], tf.int64),
        "floats": tf.io.VarLenFeature(tf.float32),
        "words": tf.io.FixedLenSequenceFeature([], tf.string, allow_missing=True, default_value=b"-"),
    }
    return tf.io.parse_example(tf.constant(records), features)


@same_as_tf("io.parse_example", "io.FixedLenSequenceFeature", edge=True)
def test_parse_example_of_no_records(tf):
    features = {"ints": tf.io.FixedLenFeature([2], tf.int64), "floats": tf.io.VarLenFeature(tf.float32)}
    return tf.io.parse_example(tf.constant([], dtype=tf.string), features)


@pytest.mark.parametrize("dtype", ["float32", "int64", "uint8", "bool"])
@same_as_tf("io.serialize_tensor", "io.parse_tensor")
def test_serialize_and_parse_tensor(tf, dtype):
    value = tf.cast(tf.constant([[0, 1, 2], [3, 4, 5]]), dtype)
    data = tf.io.serialize_tensor(value)
    return tf.io.parse_tensor(data, dtype), tf.io.parse_tensor(
        tf.io.serialize_tensor(tf.constant(["x", "yz"])), tf.string
    )


@same_as_tf("io.serialize_tensor", "io.parse_tensor", edge=True)
def test_parse_tensor_with_the_wrong_type(tf):
    return tf.io.parse_tensor(tf.io.serialize_tensor(tf.constant([1.0])), tf.int32)


@same_as_tf("io.decode_raw")
def test_decode_raw(tf):
    data = tf.constant([b"\x01\x02\x03\x04", b"\xff\xfe\x00\x80"])
    return (
        tf.io.decode_raw(data, tf.uint8),
        tf.io.decode_raw(data, tf.int16),
        tf.io.decode_raw(data, tf.int16, little_endian=False),
        tf.io.decode_raw(data[0], tf.float32),
    )


@same_as_tf("io.decode_raw", edge=True)
def test_decode_raw_of_a_bad_length(tf):
    return tf.io.decode_raw(tf.constant([b"\x01\x02\x03", b"\x01\x02"]), tf.int16)


@pytest.mark.parametrize("compression", ["", "GZIP", "ZLIB"])
@same_as_tf("io.TFRecordWriter", "io.TFRecordOptions")
def test_tfrecord_writer(tf, tmp_path, compression):
    path = str(tmp_path / f"{tf.__name__}.tfrecord")
    with tf.io.TFRecordWriter(path, tf.io.TFRecordOptions(compression_type=compression)) as writer:
        for record in (b"first", b"", b"third record"):
            writer.write(record)
    read = [r.numpy() for r in tf.data.TFRecordDataset(path, compression_type=compression)]
    raw = tf.io.read_file(path) if not compression else None
    return read, raw


@same_as_tf("io.TFRecordWriter", "io.TFRecordOptions", edge=True)
def test_tfrecord_options_bad_compression(tf, tmp_path):
    return tf.io.TFRecordWriter(str(tmp_path / "x.tfrecord"), tf.io.TFRecordOptions(compression_type="LZ4"))


@same_as_tf("io.serialize_sparse", "io.serialize_many_sparse", "io.deserialize_many_sparse")
def test_serialize_sparse_round_trip(tf):
    one = tf.sparse.SparseTensor(indices=[[0, 1], [2, 0]], values=tf.constant([1.0, 2.0]), dense_shape=[3, 2])
    batch = tf.sparse.SparseTensor(
        indices=[[0, 0, 1], [1, 2, 0], [1, 2, 1]], values=tf.constant([1, 2, 3]), dense_shape=[2, 3, 2]
    )
    parts = tf.io.serialize_sparse(one)
    many = tf.io.serialize_many_sparse(batch)
    return (
        [tf.io.parse_tensor(p, t) for p, t in zip(parts, [tf.int64, tf.float32, tf.int64])],
        tf.io.parse_tensor(many[1][0], tf.int64),
        tf.io.deserialize_many_sparse(many, tf.int32),
    )


@same_as_tf("io.serialize_sparse", "io.serialize_many_sparse", "io.deserialize_many_sparse", edge=True)
def test_serialize_many_sparse_of_a_vector(tf):
    return tf.io.serialize_many_sparse(tf.sparse.SparseTensor(indices=[[0]], values=[1.0], dense_shape=[3]))
