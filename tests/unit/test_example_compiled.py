"""The compiled Example reader (``ops/_wirescan.c``) against the Python reader it twins (``example_wire``).

Both walk the same bytes: on valid records they must give the same columns, on damaged or unusual
ones the same signal (``_Unusual`` for the protobuf runtime, ``_WrongKind`` for TF's type error).
A fuzz of byte-level mutations holds them together on inputs no writer makes. TF itself is the
oracle of the parse results in ``tests/conformance/test_vs_tf_parse_example*.py``; this file holds
the fast path to the slow one, and the end-to-end parse to the same values with either.
"""

from __future__ import annotations

import shutil
import warnings

import numpy as np
import pytest
import torch

import unison as tf
from unison.ops import example_compiled
from unison.ops.example_wire import BYTES, FLOAT, INT64, _Unusual, _WrongKind, scan_columns

compiled = pytest.mark.skipif(example_compiled._wirescan is None, reason="unison.ops._wirescan is not built")

KEYS = (b"ids", b"words", b"score", b"label")
KINDS = (INT64, BYTES, FLOAT, INT64)


def _record(rng: np.random.Generator, empty_label: bool = True) -> bytes:
    feature = {}
    if rng.random() < 0.9:
        n = int(rng.integers(0, 12))
        # small, multi-byte and negative (10-byte) varints
        ids = rng.choice([rng.integers(0, 100), rng.integers(0, 2**40), -int(rng.integers(1, 2**62))], n)
        feature["ids"] = tf.train.Feature(int64_list=tf.train.Int64List(value=[int(v) for v in ids]))
    if rng.random() < 0.9:
        words = [rng.bytes(int(rng.integers(0, 200))) for _ in range(int(rng.integers(0, 4)))]
        feature["words"] = tf.train.Feature(bytes_list=tf.train.BytesList(value=words))
    if rng.random() < 0.8:
        feature["score"] = tf.train.Feature(
            float_list=tf.train.FloatList(value=rng.normal(size=int(rng.integers(0, 5))).tolist())
        )
    if empty_label and rng.random() < 0.1:
        feature["label"] = tf.train.Feature()  # no list set: TF reads an empty list of any type
    elif rng.random() < 0.9:
        feature["label"] = tf.train.Feature(int64_list=tf.train.Int64List(value=[int(rng.integers(0, 10))]))
    if rng.random() < 0.5:
        feature["other"] = tf.train.Feature(float_list=tf.train.FloatList(value=[1.5]))
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def _python(records: list[bytes], keys: tuple[bytes, ...] = KEYS, kinds: tuple[int, ...] = KINDS) -> object:
    """The Python reader's columns, or the class of the signal it raises (a truncated read is _Unusual)."""
    try:
        return scan_columns(records, {k: i for i, k in enumerate(keys)}, list(kinds))
    except (_Unusual, IndexError):
        return _Unusual
    except _WrongKind as wrong:
        return (_WrongKind, wrong.slot, wrong.index, wrong.kind)


def _compiled(records: list[bytes], keys: tuple[bytes, ...] = KEYS, kinds: tuple[int, ...] = KINDS) -> object:
    try:
        return example_compiled.columns(records, keys, kinds)
    except _Unusual:
        return _Unusual
    except _WrongKind as wrong:
        return (_WrongKind, wrong.slot, wrong.index, wrong.kind)


def _same(a: object, b: object) -> None:
    if not isinstance(a, list) or not isinstance(b, list):
        assert a == b
        return
    assert len(a) == len(b)
    for (va, ca), (vb, cb) in zip(a, b):
        np.testing.assert_array_equal(np.asarray(ca), np.asarray(cb))
        if isinstance(va, list) or isinstance(vb, list):
            assert list(va) == list(vb)
        else:
            assert np.asarray(va).dtype == np.asarray(vb).dtype
            np.testing.assert_array_equal(np.asarray(va), np.asarray(vb))


@compiled
def test_valid_batches_give_the_python_readers_columns() -> None:
    rng = np.random.default_rng(0)
    for size in (1, 2, 7, 64, 300):
        records = [_record(rng) for _ in range(size)]
        got = _compiled(records)
        assert isinstance(got, list)  # valid records: columns, not a signal
        _same(got, _python(records))


@compiled
def test_numbers_come_back_writable_with_their_dtypes() -> None:
    records = [_record(np.random.default_rng(1)) for _ in range(5)]
    (ids, ids_counts), (words, _), (score, _), _ = example_compiled.columns(records, KEYS, KINDS)
    assert ids.dtype == np.int64 and score.dtype == np.float32 and ids_counts.dtype == np.int64
    assert ids.flags.writeable and score.flags.writeable
    assert all(type(w) is bytes for w in words)


@compiled
def test_a_list_of_another_type_is_signalled_at_the_same_record() -> None:
    rng = np.random.default_rng(2)
    records = [_record(rng) for _ in range(20)]
    wrong = tf.train.Example(
        features=tf.train.Features(feature={"ids": tf.train.Feature(float_list=tf.train.FloatList(value=[1.0]))})
    ).SerializeToString()
    records[13] = wrong
    got = _compiled(records)
    assert got == (_WrongKind, 0, 13, FLOAT)
    assert got == _python(records)


@compiled
@pytest.mark.parametrize(
    "record",
    [
        b"\x0a\x05\x0a\x03\x0a\x01",  # Example length larger than the record
        b"\x0a\x0b\x0a\x09\x0a\x03ids\x12\x02\x1a\x00\x00",  # a byte after the Features
        # an unpacked int64 list (field 1 as varints, valid protobuf no TF writer produces)
        b"\x0a\x0e\x0a\x0c\x0a\x03ids\x12\x05\x1a\x03\x08\x01\x08",
        b"\x0a\x12\x0a\x10\x0a\x05score\x12\x07\x12\x05\x0a\x03\x00\x00\x80",  # a float list of 3 bytes
        b"\x0a\x0c\x0a\x0a\x0a\x03ids\x12\x03\x1a\x01\x0a",  # a packed list cut short
    ],
)
def test_unusual_encodings_are_left_to_protobuf_as_the_python_reader_leaves_them(record: bytes) -> None:
    assert _python([record]) is _Unusual
    assert _compiled([record]) is _Unusual


@compiled
def test_a_repeated_key_is_left_to_protobuf() -> None:
    entry = b"\x0a\x0c\x0a\x03ids\x12\x05\x1a\x03\x0a\x01\x07"
    features = entry + entry
    record = b"\x0a" + bytes([len(features)]) + features
    assert _python([record]) is _Unusual
    assert _compiled([record]) is _Unusual


@compiled
def test_fuzzed_records_get_the_same_answer_from_both_readers() -> None:
    """Byte flips, cuts and insertions in valid records: the same columns or the same signal."""
    rng = np.random.default_rng(3)
    for _ in range(1500):
        records = [bytearray(_record(rng)) for _ in range(int(rng.integers(1, 4)))]
        victim = records[int(rng.integers(0, len(records)))]
        for _ in range(int(rng.integers(1, 3))):
            if not victim:
                break
            at = int(rng.integers(0, len(victim)))
            action = rng.integers(0, 3)
            if action == 0:
                victim[at] = int(rng.integers(0, 256))
            elif action == 1:
                del victim[at:]
            else:
                victim[at:at] = bytes([int(rng.integers(0, 256))])
        batch = [bytes(r) for r in records]
        _same(_compiled(batch), _python(batch))


@compiled
def test_one_record_lists_match_the_batch_columns() -> None:
    rng = np.random.default_rng(4)
    sparse = (True, True, False, False)  # ids and words as VarLenFeatures: with their indices and shape
    for _ in range(200):
        record = _record(rng)
        lists = example_compiled.record_lists(record, KEYS, KINDS, sparse)
        [(ids, ni), (words, nw), (score, ns), (label, nl)] = example_compiled.columns([record], KEYS, KINDS)
        if min(ni[0], nw[0], ns[0], nl[0]) < 0:
            assert lists is None  # a missing key: the batch path fills or raises as TF does
            continue
        if lists is None:
            continue  # a Feature with no list (label): also the batch path's
        (ids_values, ids_indices, ids_shape), (words_values, words_indices, words_shape), score_values, label_values = (
            lists
        )
        np.testing.assert_array_equal(np.frombuffer(ids_values, dtype=np.int64), ids)
        np.testing.assert_array_equal(np.frombuffer(ids_indices, dtype=np.int64), np.arange(len(ids)))
        assert np.frombuffer(ids_shape, dtype=np.int64).tolist() == [len(ids)]
        assert words_values == words
        np.testing.assert_array_equal(np.frombuffer(words_indices, dtype=np.int64), np.arange(len(words)))
        assert np.frombuffer(words_shape, dtype=np.int64).tolist() == [len(words)]
        np.testing.assert_array_equal(np.frombuffer(score_values, dtype=np.float32), score)
        np.testing.assert_array_equal(np.frombuffer(label_values, dtype=np.int64), label)


@compiled
def test_keys_and_kinds_are_checked() -> None:
    with pytest.raises(TypeError, match="same length"):
        example_compiled.columns([b""], (b"a",), (1, 2))
    with pytest.raises(ValueError, match="kinds must be"):
        example_compiled.columns([b""], (b"a",), (7,))
    with pytest.raises(TypeError, match="record 1"):
        example_compiled.columns([b"", "text"], (b"a",), (1,))  # type: ignore[list-item]


SPEC = {
    "ids": tf.io.VarLenFeature(tf.int64),
    "words": tf.io.VarLenFeature(tf.string),
    "score": tf.io.FixedLenSequenceFeature([], tf.float32, allow_missing=True),
    "label": tf.io.FixedLenFeature([], tf.int64, default_value=-1),
}


def _flat(parsed: dict) -> list:
    out = []
    for key in sorted(parsed):
        v = parsed[key]
        parts = [v.indices, v.values, v.dense_shape] if isinstance(v, tf.SparseTensor) else [v]
        for p in parts:
            out.append(np.asarray(p.numpy() if hasattr(p, "numpy") else p).tolist())
    return out


@compiled
def test_parse_example_gives_the_same_values_with_either_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(5)
    records = np.array([_record(rng, empty_label=False) for _ in range(250)], dtype=object)
    fast = [_flat(tf.io.parse_example(records[:n], SPEC)) for n in (1, 9, 250)]
    single = [_flat(tf.io.parse_single_example(records[i], SPEC)) for i in range(40)]
    monkeypatch.setattr(example_compiled, "use", False)
    assert fast == [_flat(tf.io.parse_example(records[:n], SPEC)) for n in (1, 9, 250)]
    assert single == [_flat(tf.io.parse_single_example(records[i], SPEC)) for i in range(40)]


def test_a_wrong_type_in_a_batch_is_named_as_before() -> None:
    good = tf.train.Example(
        features=tf.train.Features(feature={"label": tf.train.Feature(int64_list=tf.train.Int64List(value=[1]))})
    ).SerializeToString()
    bad = tf.train.Example(
        features=tf.train.Features(feature={"label": tf.train.Feature(float_list=tf.train.FloatList(value=[1.0]))})
    ).SerializeToString()
    with pytest.raises(tf.errors.InvalidArgumentError, match="label"):
        tf.io.parse_example(np.array([good, good, bad], dtype=object), {"label": tf.io.FixedLenFeature([], tf.int64)})


def test_the_compiled_reader_is_built_where_a_compiler_is() -> None:
    """setup.py's extension is optional (pip installs without a compiler); with one it must build."""
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler on this machine")
    assert example_compiled._wirescan is not None


def test_the_missing_module_is_named_in_a_warning_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(example_compiled, "_wirescan", None)
    monkeypatch.setattr(example_compiled, "use", False)
    monkeypatch.setattr(example_compiled, "_warned", False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert not example_compiled.available()
        assert not example_compiled.available()
    named = [w for w in caught if issubclass(w.category, example_compiled.CompiledParserMissing)]
    assert len(named) == 1 and "C compiler" in str(named[0].message)
    record = tf.train.Example(
        features=tf.train.Features(feature={"x": tf.train.Feature(int64_list=tf.train.Int64List(value=[4]))})
    ).SerializeToString()
    out = tf.io.parse_example(np.array([record, record], dtype=object), {"x": tf.io.FixedLenFeature([], tf.int64)})
    assert torch.equal(torch.as_tensor(out["x"]), torch.tensor([4, 4]))


@compiled
def test_a_spec_larger_than_the_c_readers_limits_is_parsed_in_python() -> None:
    keys = example_compiled.BATCH_KEYS + 1
    with pytest.raises(ValueError, match="too many keys"):
        example_compiled.columns([b""], tuple(b"k%d" % i for i in range(keys)), (INT64,) * keys)
    spec = {f"k{i}": tf.io.FixedLenFeature([], tf.int64, default_value=i) for i in range(keys)}
    record = tf.train.Example(
        features=tf.train.Features(feature={"k7": tf.train.Feature(int64_list=tf.train.Int64List(value=[70]))})
    ).SerializeToString()
    batch = tf.io.parse_example(np.array([record, record], dtype=object), spec)
    one = tf.io.parse_single_example(np.array(record, dtype=object), spec)
    assert batch["k7"].tolist() == [70, 70] and batch["k8"].tolist() == [8, 8]
    assert int(one["k7"]) == 70 and int(one["k4096"]) == 4096
