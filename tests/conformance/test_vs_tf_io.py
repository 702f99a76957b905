"""``tf.io.gfile``, ``tf.train.Example`` and ``tf.io``'s parsing against TensorFlow 2.21, on real files
in a temporary folder (each framework gets its own folder, named by the test)."""

from __future__ import annotations

import os
import tempfile

import numpy as np
from tf_oracle import same_as_tf

GFILE = (
    "io.gfile.GFile",
    "io.gfile.exists",
    "io.gfile.makedirs",
    "io.gfile.mkdir",
    "io.gfile.listdir",
    "io.gfile.glob",
    "io.gfile.isdir",
    "io.gfile.copy",
    "io.gfile.rename",
    "io.gfile.remove",
    "io.gfile.rmtree",
    "io.gfile.stat",
    "io.gfile.walk",
)


@same_as_tf(*GFILE)
def test_gfile_round_trip(tf):
    root = tempfile.mkdtemp()
    g = tf.io.gfile
    g.makedirs(os.path.join(root, "a", "b"))
    g.mkdir(os.path.join(root, "c"))
    with g.GFile(os.path.join(root, "a", "x.txt"), "w") as f:
        f.write("hello\nworld\n")
    with g.GFile(os.path.join(root, "a", "x.txt")) as f:
        lines = f.readlines()
    g.copy(os.path.join(root, "a", "x.txt"), os.path.join(root, "c", "y.txt"))
    g.rename(os.path.join(root, "c", "y.txt"), os.path.join(root, "c", "z.txt"))
    found = sorted(os.path.relpath(p, root) for p in g.glob(os.path.join(root, "*", "*.txt")))
    walked = sorted((os.path.relpath(d, root), sorted(sub), sorted(files)) for d, sub, files in g.walk(root))
    size = g.stat(os.path.join(root, "a", "x.txt")).length
    listing = sorted(g.listdir(root))
    g.remove(os.path.join(root, "c", "z.txt"))
    gone = g.exists(os.path.join(root, "c", "z.txt"))
    g.rmtree(os.path.join(root, "a"))
    return lines, found, walked, size, listing, gone, g.isdir(os.path.join(root, "a")), g.isdir(root)


@same_as_tf(*GFILE, edge=True)
def test_gfile_missing_file_is_not_found(tf):
    return tf.io.gfile.GFile(os.path.join(tempfile.mkdtemp(), "missing.txt")).read()


@same_as_tf("io.gfile.exists", "io.gfile.listdir", "io.gfile.glob", edge=True)
def test_gfile_empty_folder(tf):
    root = tempfile.mkdtemp()
    return (
        tf.io.gfile.exists(os.path.join(root, "nothing")),
        tf.io.gfile.listdir(root),
        tf.io.gfile.glob(os.path.join(root, "*")),
    )


EXAMPLE = (
    "train.Example",
    "train.Features",
    "train.Feature",
    "train.BytesList",
    "train.FloatList",
    "train.Int64List",
    "io.FixedLenFeature",
    "io.VarLenFeature",
    "io.parse_single_example",
    "io.parse_example",
)


def _example(tf, i):
    return tf.train.Example(
        features=tf.train.Features(
            feature={
                "id": tf.train.Feature(int64_list=tf.train.Int64List(value=[i])),
                "score": tf.train.Feature(float_list=tf.train.FloatList(value=[0.5 * i, 1.5])),
                "tags": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"t"] * i)),
            }
        )
    ).SerializeToString(deterministic=True)  # map entries in key order, in both protobuf runtimes


@same_as_tf(*EXAMPLE)
def test_examples_parse(tf):
    spec = {
        "id": tf.io.FixedLenFeature([], tf.int64),
        "score": tf.io.FixedLenFeature([2], tf.float32),
        "tags": tf.io.VarLenFeature(tf.string),
    }
    one = tf.io.parse_single_example(_example(tf, 2), spec)
    many = tf.io.parse_example(tf.constant([_example(tf, 1), _example(tf, 3)]), spec)
    return one, many, _example(tf, 2)


@same_as_tf(*EXAMPLE, edge=True)
def test_examples_with_defaults_and_missing_features(tf):
    spec = {
        "id": tf.io.FixedLenFeature([], tf.int64),
        "missing": tf.io.FixedLenFeature([2], tf.float32, default_value=[7.0, 8.0]),
        "tags": tf.io.VarLenFeature(tf.string),
    }
    return tf.io.parse_example(tf.constant([_example(tf, 0)]), spec)


@same_as_tf("io.parse_single_example", "io.FixedLenFeature", edge=True)
def test_a_required_feature_missing_is_an_invalid_argument(tf):
    return tf.io.parse_single_example(_example(tf, 1), {"absent": tf.io.FixedLenFeature([], tf.int64)})


SEQUENCE = ("train.SequenceExample", "train.FeatureLists", "train.FeatureList", "io.FixedLenSequenceFeature")


@same_as_tf(*SEQUENCE)
def test_sequence_examples_serialize_alike(tf):
    seq = tf.train.SequenceExample(
        context=tf.train.Features(feature={"len": tf.train.Feature(int64_list=tf.train.Int64List(value=[2]))}),
        feature_lists=tf.train.FeatureLists(
            feature_list={
                "tokens": tf.train.FeatureList(
                    feature=[tf.train.Feature(int64_list=tf.train.Int64List(value=[v])) for v in (4, 5)]
                )
            }
        ),
    )
    spec = {"x": tf.io.FixedLenSequenceFeature([], tf.float32, allow_missing=True)}
    parsed = tf.io.parse_single_example(
        _example(tf, 1), {"score": tf.io.FixedLenSequenceFeature([], tf.float32, allow_missing=True)}
    )
    return seq.SerializeToString(deterministic=True), parsed, list(spec)


@same_as_tf(*SEQUENCE, edge=True)
def test_empty_sequence_example(tf):
    return tf.train.SequenceExample().SerializeToString(), tf.train.FeatureList().SerializeToString()


TENSORS = ("io.serialize_tensor", "io.parse_tensor", "io.decode_raw")


@same_as_tf(*TENSORS)
def test_tensor_serialization(tf):
    x = tf.constant([[1.5, -2.0], [3.0, 4.0]])
    data = tf.io.serialize_tensor(x)
    return (
        data,
        tf.io.parse_tensor(data, tf.float32),
        tf.io.decode_raw(tf.constant([np.arange(8, dtype=np.uint8).tobytes()]), tf.int16),
    )


@same_as_tf(*TENSORS, edge=True)
def test_tensor_serialization_of_strings_and_empty(tf):
    s = tf.io.serialize_tensor(tf.constant(["a", "bc"]))
    return s, tf.io.parse_tensor(s, tf.string), tf.io.parse_tensor(tf.io.serialize_tensor(tf.zeros([0, 3])), tf.float32)


RECORDS = ("io.TFRecordWriter", "io.TFRecordOptions", "data.TFRecordDataset", "data.TextLineDataset")


@same_as_tf(*RECORDS)
def test_records_written_and_read(tf):
    root = tempfile.mkdtemp()
    path = os.path.join(root, "r.tfrecord.gz")
    with tf.io.TFRecordWriter(path, tf.io.TFRecordOptions(compression_type="GZIP")) as writer:
        for i in range(3):
            writer.write(_example(tf, i))
    with open(os.path.join(root, "lines.txt"), "w") as f:
        f.write("one\ntwo\n\nthree")
    records = [r for r in tf.data.TFRecordDataset(path, compression_type="GZIP")]
    lines = [s for s in tf.data.TextLineDataset(os.path.join(root, "lines.txt"))]
    return records, lines


@same_as_tf(*RECORDS, edge=True)
def test_empty_record_file(tf):
    path = os.path.join(tempfile.mkdtemp(), "empty.tfrecord")
    with tf.io.TFRecordWriter(path):
        pass
    return [r for r in tf.data.TFRecordDataset(path)], os.path.getsize(path)
