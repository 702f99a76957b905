"""TFRecord files and tf.train.Example: round trip, files TensorFlow 2.21 wrote, corruption, spec errors."""

import os

import numpy as np
import pytest
import torch

import unison as tf

DATA = os.path.join(os.path.dirname(__file__), "data", "tfrecord")
SPEC = {
    "id": tf.io.FixedLenFeature([], tf.int64),
    "vec": tf.io.FixedLenFeature([3], tf.float32),
    "label": tf.io.FixedLenFeature([], tf.string),
    "tokens": tf.io.VarLenFeature(tf.int64),
}


@pytest.mark.parametrize(
    "name,kind", [("examples.tfrecord", ""), ("examples.tfrecord.gz", "GZIP"), ("examples.tfrecord.zlib", "ZLIB")]
)
def test_reads_files_tensorflow_wrote(name, kind):
    records = [r.item() for r in tf.data.TFRecordDataset(os.path.join(DATA, name), compression_type=kind)]
    assert len(records) == 5
    out = tf.io.parse_single_example(records[3], SPEC)
    assert int(out["id"]) == 3 and out["label"].item() == b"cls0"
    assert out["vec"].tolist() == [1.5, -1.0, 2.25]
    assert out["tokens"].values.tolist() == [0, 1, 2]


@pytest.mark.parametrize("kind", ["", "GZIP", "ZLIB"])
def test_round_trip(tmp_path, kind):
    path = str(tmp_path / "x.tfrecord")
    with tf.io.TFRecordWriter(path, tf.io.TFRecordOptions(compression_type=kind)) as w:
        for i in range(4):
            w.write(b"r%d\x00" % i)
    got = [r.item() for r in tf.data.TFRecordDataset([path, path], compression_type=kind, num_parallel_reads=2)]
    assert got == [b"r0\x00", b"r0\x00", b"r1\x00", b"r1\x00", b"r2\x00", b"r2\x00", b"r3\x00", b"r3\x00"]


def test_corrupted_record_names_file_and_offset(tmp_path):
    data = bytearray(open(os.path.join(DATA, "examples.tfrecord"), "rb").read())
    data[89 + 16 + 5] ^= 1  # a byte of record 1's data
    path = str(tmp_path / "bad.tfrecord")
    open(path, "wb").write(bytes(data))
    with pytest.raises(tf.errors.DataLossError, match=r"corrupted record at 89 in .*bad.tfrecord.*data's checksum"):
        list(tf.data.TFRecordDataset(path))


def test_spec_mismatch_names_the_feature():
    record = next(iter(tf.data.TFRecordDataset(os.path.join(DATA, "examples.tfrecord"))))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Feature: nope .*required"):
        tf.io.parse_single_example(record, {"nope": tf.io.FixedLenFeature([], tf.int64)})
    with pytest.raises(tf.errors.InvalidArgumentError, match="Key: id.*int64 but expected type: float"):
        tf.io.parse_single_example(record, {"id": tf.io.FixedLenFeature([], tf.float32)})


def test_serialize_tensor_matches_tensorflow_bytes():
    expected = open(os.path.join(DATA, "tensor_float32_2x3.pb"), "rb").read()
    assert tf.io.serialize_tensor(torch.arange(6.0).reshape(2, 3)).item() == expected
    assert tf.io.parse_tensor(expected, tf.float32).tolist() == [[0, 1, 2], [3, 4, 5]]


def test_strings_on_numeric_tensor_is_a_named_error():
    with pytest.raises(tf.strings.StringInputError, match="tf.strings.lower expects strings"):
        tf.strings.lower(tf.constant([1, 2]))
    assert tf.strings.split(np.array(["a b", "c"], dtype=object)).to_list() == [["a", "b"], ["c"]]
