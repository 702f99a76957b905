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
    # as TF: RaggedTensor.to_list() gives strings as bytes
    assert tf.strings.split(np.array(["a b", "c"], dtype=object)).to_list() == [[b"a", b"b"], [b"c"]]


def _example(**features):
    return tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString()


def test_parse_example_batch_equals_per_record_parse_and_names_a_bad_record():
    # the batched parse (one conversion per feature) gives what parsing each record and stacking gives
    records = tf.data.TFRecordDataset(os.path.join(DATA, "examples.tfrecord"))
    dense = {k: v for k, v in SPEC.items() if k != "tokens"}
    batch = next(iter(records.batch(4).map(lambda b: tf.io.parse_example(b, dense))))
    singles = [tf.io.parse_single_example(r, dense) for r in records.take(4)]
    assert batch["id"].dtype == torch.int64 and batch["vec"].dtype == torch.float32
    assert batch["id"].tolist() == [int(s["id"]) for s in singles]
    assert torch.equal(batch["vec"], torch.stack([s["vec"] for s in singles]))
    assert batch["label"].tolist() == [
        s["label"].item() if hasattr(s["label"], "item") else s["label"] for s in singles
    ]
    good = _example(x=tf.train.Feature(float_list=tf.train.FloatList(value=[1.0, 2.0])))
    short = _example(x=tf.train.Feature(float_list=tf.train.FloatList(value=[3.0])))
    ints = _example(x=tf.train.Feature(int64_list=tf.train.Int64List(value=[1, 2])))
    missing = _example(y=tf.train.Feature(float_list=tf.train.FloatList(value=[0.5])))
    spec = {"x": tf.io.FixedLenFeature([2], tf.float32)}
    assert tf.io.parse_example([good, good], spec)["x"].tolist() == [[1.0, 2.0], [1.0, 2.0]]
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Key: x, Index: 1\..*Values size: 1 "):
        tf.io.parse_example([good, short], spec)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Key: x, Index: 2\..*int64 but expected type: float"):
        tf.io.parse_example([good, good, ints], spec)
    with_default = {"x": tf.io.FixedLenFeature([2], tf.float32, default_value=[9.0, 9.0])}
    assert tf.io.parse_example([missing, good], with_default)["x"].tolist() == [[9.0, 9.0], [1.0, 2.0]]
    # a zero-size feature of the wrong type is still a type error, not an empty value
    with pytest.raises(tf.errors.InvalidArgumentError, match="Data types don't match"):
        tf.io.parse_example([ints], {"x": tf.io.FixedLenFeature([0], tf.float32)})


@pytest.mark.parametrize("parallel", [None, 2])
@pytest.mark.parametrize("drop", [False, True])
def test_batches_of_records_equal_the_records_batched_one_by_one(tmp_path, parallel, drop):
    paths = []
    for f in range(3):
        paths.append(str(tmp_path / f"r{f}.tfrecord"))
        with tf.io.TFRecordWriter(paths[-1]) as w:
            for i in range(7 + f):
                w.write(bytes([f, i]) * i + b"\x00")  # trailing NUL bytes kept
    one_by_one = [r.numpy() for r in tf.data.TFRecordDataset(paths, num_parallel_reads=parallel)]
    ds = tf.data.TFRecordDataset(paths, num_parallel_reads=parallel).batch(4, drop_remainder=drop)
    batches = [b.numpy().tolist() for b in ds]
    expected = [one_by_one[i : i + 4] for i in range(0, len(one_by_one), 4)]
    if drop:
        expected = [b for b in expected if len(b) == 4]
    assert batches == expected
    assert ds.element_spec == tf.TensorSpec([4 if drop else None], tf.string)
