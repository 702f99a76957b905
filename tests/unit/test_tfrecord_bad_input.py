"""Bad TFRecord input through a parsing pipeline: each mistake is a named error, never a hang."""

from __future__ import annotations

import os

import pytest

import unison as tf

SPEC = {"x": tf.io.FixedLenFeature([2], tf.float32), "ids": tf.io.VarLenFeature(tf.int64)}


def _record(x: list[float], ids: list[int] | None = None) -> bytes:
    feature = {"x": tf.train.Feature(float_list=tf.train.FloatList(value=x))}
    if ids is not None:
        feature["ids"] = tf.train.Feature(int64_list=tf.train.Int64List(value=ids))
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def _write(path: str, records: list[bytes]) -> None:
    with tf.io.TFRecordWriter(path) as writer:
        for r in records:
            writer.write(r)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("vectorised", [False, True])
def test_a_corrupt_record_names_the_file_and_offset(tmp_path, vectorised: bool) -> None:
    path = str(tmp_path / "bad.tfrecord")
    records = [_record([1.0, 2.0], [i]) for i in range(4)]
    _write(path, records)
    data = bytearray(open(path, "rb").read())
    second = 16 + len(records[0])  # header (12) + data + data CRC (4) of the first record
    data[second + 12 + 3] ^= 0xFF  # a byte inside the second record's data
    open(path, "wb").write(bytes(data))
    ds = tf.data.TFRecordDataset(path)
    ds = (
        ds.batch(2).map(lambda b: tf.io.parse_example(b, SPEC))
        if vectorised
        else ds.map(lambda r: tf.io.parse_single_example(r, SPEC)).batch(2)
    )
    with pytest.raises(tf.errors.DataLossError, match=rf"corrupted record at {second} in .*bad\.tfrecord.*checksum"):
        list(ds)


@pytest.mark.timeout(60)
def test_a_record_that_does_not_match_the_spec_names_the_feature_and_record(tmp_path) -> None:
    path = str(tmp_path / "mixed.tfrecord")
    _write(path, [_record([1.0, 2.0], [1]), _record([1.0, 2.0, 3.0], [2]), _record([1.0, 2.0], [3])])
    ds = tf.data.TFRecordDataset(path).batch(3).map(lambda b: tf.io.parse_example(b, SPEC))
    with pytest.raises(
        tf.errors.InvalidArgumentError, match=r"Key: x, Index: 1\..*Values size: 3 but output shape: \[2\]"
    ):
        list(ds)
    one = tf.data.TFRecordDataset(path).map(lambda r: tf.io.parse_single_example(r, SPEC))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Key: x, Index: 0\..*Values size: 3"):
        list(one)


@pytest.mark.timeout(60)
def test_a_wrong_feature_dtype_names_both_types(tmp_path) -> None:
    path = str(tmp_path / "dtype.tfrecord")
    _write(path, [_record([1.0, 2.0], [1]), _record([1.0, 2.0], [2])])
    spec = {"ids": tf.io.VarLenFeature(tf.float32)}
    ds = tf.data.TFRecordDataset(path).batch(2).map(lambda b: tf.io.parse_example(b, spec))
    with pytest.raises(
        tf.errors.InvalidArgumentError,
        match=r"Key: ids, Index: 0\.  Data types don't match\. Data type: int64 but expected type: float",
    ):
        list(ds)


@pytest.mark.timeout(60)
def test_a_record_that_is_not_an_example_is_named(tmp_path) -> None:
    path = str(tmp_path / "junk.tfrecord")
    _write(path, [_record([1.0, 2.0]), b"\x0a\x05junk"])
    ds = tf.data.TFRecordDataset(path).batch(2).map(lambda b: tf.io.parse_example(b, SPEC))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Could not parse example input.*record 1"):
        list(ds)
    assert os.path.exists(path)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("chunk", [5, 13, 64, 1 << 22])
def test_records_cut_across_read_chunks(tmp_path, monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    from unison.data import tfrecord

    monkeypatch.setattr(tfrecord, "_CHUNK", chunk)
    path = str(tmp_path / "chunks.tfrecord")
    records = [bytes(range(n % 256)) * (1 + n // 256) for n in (0, 1, 7, 30, 200, 700)]
    _write(path, records)
    assert list(tfrecord.read_records(path)) == records
    data = open(path, "rb").read()
    open(path, "wb").write(data[:-3])  # the last record's checksum cut short
    with pytest.raises(tf.errors.DataLossError, match=r"truncated record: \d+ bytes of data announced"):
        list(tfrecord.read_records(path))
    open(path, "wb").write(data + b"\x01\x02")  # a header cut short after the last record
    with pytest.raises(tf.errors.DataLossError, match=rf"corrupted record at {len(data)} .*2 bytes into a header"):
        list(tfrecord.read_records(path))
