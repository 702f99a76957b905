"""Bad TFRecord input through a parsing pipeline: each mistake is a named error, never a hang."""

from __future__ import annotations

import os
from collections import deque

import pytest

import unison as tf
from unison.data import tfrecord
from unison.errors import ExampleParseError

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


def _pipeline(path: str, how: str, spec: dict, compression: str | None = None):
    ds = tf.data.TFRecordDataset(path, compression_type=compression)
    if how == "map_then_batch":
        return ds.map(lambda r: tf.io.parse_single_example(r, spec)).batch(4)
    if how == "parallel_map_then_batch":
        return ds.map(lambda r: tf.io.parse_single_example(r, spec), num_parallel_calls=2).batch(4)
    size = 200 if how == "large_batch_then_map" else 4  # 200: the whole-batch numpy scan
    return ds.batch(size).map(lambda b: tf.io.parse_example(b, spec))


BAD = {  # (the bad record, the feature the error names, what its message says)
    "count": (_record([1.0, 2.0, 3.0], [1]), "x", r"Key: x, Index: \d+\.  Number of float values != expected"),
    "dtype": (
        tf.train.Example(
            features=tf.train.Features(feature={"x": tf.train.Feature(int64_list=tf.train.Int64List(value=[1, 2]))})
        ).SerializeToString(),
        "x",
        r"Key: x, Index: \d+\.  Data types don't match\. Data type: int64 but expected type: float",
    ),
    "missing": (
        tf.train.Example(
            features=tf.train.Features(feature={"ids": tf.train.Feature(int64_list=tf.train.Int64List(value=[3]))})
        ).SerializeToString(),
        "x",
        r"Feature: x \(data type: float\) is required but could not be found",
    ),
    "undecodable": (b"\x0a\x05junk", None, r"Could not parse example input"),
}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("case", sorted(BAD))
@pytest.mark.parametrize("how", ["map_then_batch", "parallel_map_then_batch", "batch_then_map", "large_batch_then_map"])
def test_a_bad_record_names_the_file_its_byte_offset_and_the_feature(tmp_path, how: str, case: str) -> None:
    bad, feature, message = BAD[case]
    path = str(tmp_path / "bad.tfrecord")
    records = [_record([float(i), 0.5], list(range(i % 4))) for i in range(150)]
    records[137] = bad
    _write(path, records)
    offset = sum(16 + len(r) for r in records[:137])  # each record: 12 bytes of header, its data, 4 of CRC
    with pytest.raises(tf.errors.InvalidArgumentError, match=message) as info:
        list(_pipeline(path, how, {"x": tf.io.FixedLenFeature([2], tf.float32)}))
    err = info.value
    assert isinstance(err, ExampleParseError)
    assert (err.path, err.offset, err.feature) == (path, offset, feature)
    assert f"the record at byte offset {offset} of {path!r}" in str(err)
    if feature is not None:
        assert f"feature {feature!r}" in str(err)


@pytest.mark.timeout(60)
def test_a_bad_record_in_a_gzip_file_names_its_offset_in_the_record_stream(tmp_path) -> None:
    path = str(tmp_path / "bad.tfrecord.gz")
    records = [_record([1.0, 2.0]) for _ in range(5)] + [_record([1.0])]
    with tf.io.TFRecordWriter(path, "GZIP") as writer:
        for r in records:
            writer.write(r)
    with pytest.raises(ExampleParseError) as info:
        list(_pipeline(path, "batch_then_map", {"x": tf.io.FixedLenFeature([2], tf.float32)}, "GZIP"))
    assert (info.value.path, info.value.offset, info.value.index) == (path, 5 * (16 + len(records[0])), 1)


def test_records_not_read_from_a_file_are_named_by_their_index() -> None:
    with pytest.raises(ExampleParseError, match=r"Key: x, Index: 1\.") as info:
        tf.io.parse_example([_record([1.0, 2.0]), _record([1.0])], {"x": tf.io.FixedLenFeature([2], tf.float32)})
    assert (info.value.path, info.value.offset, info.value.feature, info.value.index) == (None, None, "x", 1)
    assert "byte offset" not in str(info.value)


def test_the_origin_rings_keep_only_recent_records(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    from unison.ops import record_origin

    monkeypatch.setattr(record_origin, "RING_RECORDS", 4)
    monkeypatch.setattr(record_origin, "_rings", deque(maxlen=2))
    paths = []
    for f in range(3):
        paths.append(str(tmp_path / f"r{f}.tfrecord"))
        _write(paths[-1], [bytes([f, i]) * 5 for i in range(6)])
    records = list(tfrecord.read_records(paths[0]))
    # a ring of 4: the first two records were overwritten, the last four are named
    assert [record_origin.origin(r) for r in records] == [None, None] + [(paths[0], i * 26) for i in range(2, 6)]
    copy = records[5][:5] + records[5][5:]
    assert copy == records[5] and record_origin.origin(copy) is None  # an equal copy is not the record read
    second = list(tfrecord.read_records(paths[1]))
    assert record_origin.origin(second[5]) == (paths[1], 130)
    assert record_origin.origin(records[5]) == (paths[0], 130)  # two rings kept
    list(tfrecord.read_records(paths[2]))
    assert record_origin.origin(records[5]) is None and record_origin.origin(second[5]) == (paths[1], 130)


def _frames(records: list[bytes]) -> list[int]:
    """Each record's offset in an uncompressed file of ``records``."""
    out, at = [], 0
    for r in records:
        out.append(at)
        at += 16 + len(r)
    return out


@pytest.mark.timeout(60)
@pytest.mark.parametrize("chunk", [40, 1 << 22])
@pytest.mark.parametrize("where", ["length", "length_crc", "huge_length", "data", "data_crc"])
def test_a_damaged_record_is_named_after_the_records_before_it(
    tmp_path, monkeypatch: pytest.MonkeyPatch, chunk: int, where: str
) -> None:
    # the reader checks a whole read's records at once: the ones before the damage still come first
    monkeypatch.setattr(tfrecord, "_CHUNK", chunk)
    path = str(tmp_path / "damaged.tfrecord")
    records = [bytes([i]) * (i % 7) for i in range(40)]
    _write(path, records)
    at = _frames(records)[23]
    data = bytearray(open(path, "rb").read())
    if where == "length":
        data[at] ^= 0x02  # the length field: the walk goes astray, the length's checksum catches it
    elif where == "length_crc":
        data[at + 9] ^= 0x10
    elif where == "huge_length":
        data[at + 6] = 0x7F  # ~2**55 bytes announced: raised, never read or waited for
    elif where == "data":
        data[at + 12] ^= 0x01
    else:
        data[at + 12 + len(records[23]) + 2] ^= 0x01
    open(path, "wb").write(bytes(data))
    got: list[bytes] = []
    check = "data's" if where.startswith("data") else "length's"
    with pytest.raises(tf.errors.DataLossError, match=rf"corrupted record at {at} in .*damaged\.tfrecord.*{check}"):
        for r in tfrecord.read_records(path):
            got.append(r)
    assert got == records[:23]
    batched: list[bytes] = []
    with pytest.raises(tf.errors.DataLossError, match=rf"corrupted record at {at} "):
        for b in tf.data.TFRecordDataset(path).batch(5):
            batched.extend(b.numpy().tolist())
    assert batched == records[:20]  # the batch that holds the damaged record is not given, as in TF


@pytest.mark.timeout(60)
def test_interleaved_files_give_the_records_before_a_damaged_one(tmp_path) -> None:
    paths = [str(tmp_path / f"p{f}.tfrecord") for f in range(2)]
    records = [[bytes([f, i]) * 3 for i in range(6)] for f in range(2)]
    for p, rs in zip(paths, records):
        _write(p, rs)
    data = bytearray(open(paths[1], "rb").read())
    data[_frames(records[1])[2] + 12] ^= 0x01
    open(paths[1], "wb").write(bytes(data))
    got: list[bytes] = []
    with pytest.raises(tf.errors.DataLossError, match=r"corrupted record at 44 in .*p1\.tfrecord"):
        for r in tf.data.TFRecordDataset(paths, num_parallel_reads=2):
            got.append(r.numpy())
    # TF's order: a0 b0 a1 b1 a2, then b2 is damaged
    assert got == [records[0][0], records[1][0], records[0][1], records[1][1], records[0][2]]


def test_blocks_of_records_wrap_around_the_origin_ring(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    from unison.ops import record_origin

    monkeypatch.setattr(record_origin, "RING_RECORDS", 8)
    monkeypatch.setattr(tfrecord, "_CHUNK", 100)  # blocks of 3 records: the ring's stores wrap around
    path = str(tmp_path / "ring.tfrecord")
    records = [bytes([7, i]) * 6 for i in range(20)]
    _write(path, records)
    got = list(tfrecord.read_records(path))
    assert got == records
    offsets = _frames(records)
    assert [record_origin.origin(r) for r in got] == [None] * 12 + [(path, o) for o in offsets[12:]]
