"""The wire-format reader of tf.train.Example: which path reads which batch, and its varint decoder."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import unison as tf
from unison.ops import example_batch_wire, example_wire, parsing
from unison.ops.example_wire import BYTES, FLOAT, INT64, _Unusual


def _record(**features: object) -> bytes:
    feature = {}
    for key, values in features.items():
        assert isinstance(values, list)
        if isinstance(values[0], float):
            feature[key] = tf.train.Feature(float_list=tf.train.FloatList(value=values))
        elif isinstance(values[0], int):
            feature[key] = tf.train.Feature(int64_list=tf.train.Int64List(value=values))
        else:
            feature[key] = tf.train.Feature(bytes_list=tf.train.BytesList(value=values))
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


@pytest.mark.parametrize(
    "values",
    [[0, 1, 127, 128, 300, 2**31, 2**63 - 1, -1, -(2**63)], [5], list(range(-200, 200, 7)), [-1, 300], [-(2**63), 1]],
)
def test_decode_varints_matches_protobuf(values: list[int]) -> None:
    record = _record(x=values)
    found = example_wire.scan(record, {b"x": 0}, 1)
    got, counts = example_wire.column([record], found, INT64)
    assert got.tolist() == values and counts.tolist() == [len(values)]


def test_one_layout_batch_is_read_as_byte_columns() -> None:
    records = [_record(img=[bytes([i]) * 50], label=[i], vec=[float(i), 0.5]) for i in range(8)]
    cols = example_wire.same_layout_columns(records, {b"img": 0, b"label": 1, b"vec": 2}, [BYTES, INT64, FLOAT])
    assert cols is not None
    assert cols[0][0] == [bytes([i]) * 50 for i in range(8)]
    assert cols[1][0].tolist() == list(range(8))
    assert cols[2][0].reshape(8, 2)[:, 0].tolist() == [float(i) for i in range(8)]


def test_a_batch_of_different_layouts_goes_to_the_per_record_scan() -> None:
    wanted, kinds = {b"label": 0}, [INT64]
    # same length, different layout: a 2-byte label and a 1-byte key name change places
    a, b = _record(label=[200], k=[b"x"]), _record(label=[1], k=[b"xy"])
    assert len(a) == len(b)
    assert example_wire.same_layout_columns([a, b], wanted, kinds) is None
    assert example_wire.same_layout_columns([a, _record(label=[1])], wanted, kinds) is None
    out = tf.io.parse_example([a, b], {"label": tf.io.FixedLenFeature([], tf.int64)})
    assert out["label"].tolist() == [200, 1]


def test_an_unpacked_list_is_left_to_protobuf(monkeypatch: pytest.MonkeyPatch) -> None:
    # FloatList{value: 1.5} written unpacked (tag 0x0d): valid protobuf that TF's writers never produce
    feature = b"\x12\x05\x0d" + np.float32(1.5).tobytes()
    entry = b"\x0a\x01x\x12" + bytes([len(feature)]) + feature
    record = b"\x0a" + bytes([len(entry) + 2]) + b"\x0a" + bytes([len(entry)]) + entry
    found = example_wire.scan(record, {b"x": 0}, 1)
    with pytest.raises(_Unusual):
        example_wire.column([record], found, FLOAT)
    calls = []
    proto = parsing._columns_proto
    monkeypatch.setattr(parsing, "_columns_proto", lambda r, p: calls.append(len(r)) or proto(r, p))
    with pytest.warns(RuntimeWarning, match="parsed through the protobuf runtime"):
        out = tf.io.parse_example([record, record], {"x": tf.io.FixedLenFeature([], tf.float32)})
    assert out["x"].tolist() == [1.5, 1.5] and calls == [2]


def test_the_usual_batch_never_builds_protobuf_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object) -> None:
        raise AssertionError("the protobuf path was taken")

    monkeypatch.setattr(parsing, "_columns_proto", refuse)
    records = [_record(ids=list(range(i)) or [7], w=[b"a"] * (i + 1)) for i in range(5)]
    spec = {"ids": tf.io.VarLenFeature(tf.int64), "w": tf.io.RaggedFeature(tf.string)}
    out = tf.io.parse_example(records, spec)
    assert out["ids"].dense_shape.tolist() == [5, 4]
    assert [len(r) for r in out["w"].to_list()] == [1, 2, 3, 4, 5]
    one = tf.io.parse_single_example(records[3], spec)
    assert one["ids"].values.tolist() == [0, 1, 2] and one["w"].tolist() == [b"a"] * 4
    assert isinstance(one["ids"].values, torch.Tensor)


def test_a_truncated_record_is_named() -> None:
    record = _record(x=[1.0, 2.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Could not parse example input.*record 1"):
        tf.io.parse_example([record, record[:-2]], {"x": tf.io.FixedLenFeature([2], tf.float32)})


def _random_record(rng: np.random.Generator) -> bytes:
    feature = {}
    if rng.random() < 0.8:
        ids = rng.integers(-(2**40), 2**40, int(rng.integers(0, 6))).tolist()
        feature["ids"] = tf.train.Feature(int64_list=tf.train.Int64List(value=ids))
    if rng.random() < 0.8:
        words = [rng.bytes(int(rng.integers(0, 200))) for _ in range(int(rng.integers(0, 4)))]
        feature["w"] = tf.train.Feature(bytes_list=tf.train.BytesList(value=words))
    if rng.random() < 0.8:
        feature["fl"] = tf.train.Feature(float_list=tf.train.FloatList(value=rng.random(int(rng.integers(0, 40)))))
    if rng.random() < 0.5:
        feature["other"] = tf.train.Feature(float_list=tf.train.FloatList(value=[1.0]))
    if rng.random() < 0.2:
        feature["e"] = tf.train.Feature()  # no list set: an empty list of the spec's type
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def test_the_whole_batch_scan_gives_the_per_record_scans_columns() -> None:
    rng = np.random.default_rng(1)
    wanted, kinds = {b"ids": 0, b"w": 1, b"fl": 2, b"e": 3, b"never": 4}, [INT64, BYTES, FLOAT, INT64, FLOAT]
    for _ in range(60):
        records = [_random_record(rng) for _ in range(int(rng.integers(1, 40)))] + [b""]  # b"": an empty Example
        if rng.random() < 0.1:  # a value of 3-byte lengths
            records.append(_record(w=[rng.bytes(20000)], ids=[2**62, 1]))
        got = example_batch_wire.batch_columns(records, wanted, kinds)
        one_pass = example_wire.scan_columns(records, wanted, kinds)  # the one-pass scan gives the same columns
        found = [example_wire.scan(r, wanted, len(kinds)) for r in records]
        for slot, kind in enumerate(kinds):
            rows = [i for i, f in enumerate(found) if f[slot] is not None]
            if not rows:
                assert got[slot] is None
                assert one_pass[slot][1].tolist() == [-1] * len(records) and len(one_pass[slot][0]) == 0
                continue
            values, counts = example_wire.column([records[i] for i in rows], [found[i][slot] for i in rows], kind)
            expected = np.full(len(records), -1)
            expected[rows] = counts
            assert got[slot][1].tolist() == expected.tolist() == one_pass[slot][1].tolist()
            assert list(got[slot][0]) == list(values) == list(one_pass[slot][0])


def test_the_whole_batch_scan_names_a_wrong_list_type_and_leaves_odd_encodings() -> None:
    records = [_record(x=[1.0]), _record(x=[1.0]), _record(x=[5]), _record(x=[b"s"])]
    with pytest.raises(example_wire._WrongKind) as info:
        example_batch_wire.batch_columns(records, {b"x": 0}, [FLOAT])
    assert (info.value.slot, info.value.index, info.value.kind) == (0, 2, INT64)
    with pytest.raises(example_wire._WrongKind) as info:
        example_wire.scan_columns(records, {b"x": 0}, [FLOAT])
    assert (info.value.slot, info.value.index, info.value.kind) == (0, 2, INT64)
    for odd in ([records[0], records[0][:-2]], [records[0] + records[1]]):
        with pytest.raises((_Unusual, IndexError)):
            example_wire.scan_columns(odd, {b"x": 0}, [FLOAT])
    with pytest.raises(_Unusual):  # cut short: its lengths point past its end
        example_batch_wire.batch_columns([records[0], records[0][:-2]], {b"x": 0}, [FLOAT])
    with pytest.raises(_Unusual):  # two Features messages: protobuf merges them
        example_batch_wire.batch_columns([records[0] + records[1]], {b"x": 0}, [FLOAT])


def test_a_large_varied_batch_parses_as_per_record(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(2)
    records = [_random_record(rng) for _ in range(200)]
    spec = {
        "ids": tf.io.VarLenFeature(tf.int64),
        "w": tf.io.RaggedFeature(tf.string),
        "fl": tf.io.FixedLenSequenceFeature([], tf.float32, allow_missing=True),
    }
    batch = tf.io.parse_example(records, spec)  # 200 >= the threshold: the whole-batch scan
    monkeypatch.setattr(parsing, "_BATCH_SCAN_MIN", 10**9)
    single = tf.io.parse_example(records, spec)
    assert batch["ids"].indices.tolist() == single["ids"].indices.tolist()
    assert batch["ids"].values.tolist() == single["ids"].values.tolist()
    assert batch["w"].to_list() == single["w"].to_list()
    assert torch.equal(batch["fl"], single["fl"])
