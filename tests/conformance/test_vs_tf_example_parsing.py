"""``tf.io.parse_example``/``parse_single_example`` on every feature kind, against TensorFlow 2.21.

unison reads records from their bytes (one-layout batches, per-record scans) and falls back to the
protobuf runtime for unusual encodings; each path is driven here: batches of equal-length records,
of varied lengths, hand-written unpacked/repeated encodings, and records that do not match the spec.
Every test runs twice: with the compiled reader (``ops/_wirescan.c``, the default where it is built)
and with the pure-Python reader it falls back to.
"""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

from unison.ops import example_compiled


@pytest.fixture(autouse=True, params=["compiled", "python"])
def reader(request, monkeypatch):
    """The compiled Example reader, or the Python one (as on a machine that installed without a compiler)."""
    if request.param == "compiled" and not example_compiled.use:
        pytest.skip("unison.ops._wirescan is not built")
    monkeypatch.setattr(example_compiled, "use", request.param == "compiled")
    return request.param


def _feature(tf, values):
    if values is None:  # a Feature with no list set
        return tf.train.Feature()
    if isinstance(values, tuple):  # (kind, values): an explicit list type, e.g. an empty one
        kind, values = values
    elif values and isinstance(values[0], float):
        kind = "float"
    elif values and isinstance(values[0], int):
        kind = "int64"
    else:
        kind = "bytes"
    if kind == "float":
        return tf.train.Feature(float_list=tf.train.FloatList(value=values))
    if kind == "int64":
        return tf.train.Feature(int64_list=tf.train.Int64List(value=values))
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=values))


def _record(tf, **features):
    feature = {k: _feature(tf, v) for k, v in features.items()}
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def _varint(n):
    out = b""
    n &= (1 << 64) - 1
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out += bytes([byte | 0x80])
        else:
            return out + bytes([byte])


def _delimited(field, payload):
    return bytes([(field << 3) | 2]) + _varint(len(payload)) + payload


def _entry(key, feature_payload):
    return _delimited(1, _delimited(1, key) + _delimited(2, feature_payload))


SPEC_KINDS = ("fixed", "var_len", "sequence", "ragged")


def _spec(tf, kind, dtype, shape=()):
    if kind == "fixed":
        return tf.io.FixedLenFeature(shape, dtype)
    if kind == "var_len":
        return tf.io.VarLenFeature(dtype)
    if kind == "sequence":
        return tf.io.FixedLenSequenceFeature(shape, dtype, allow_missing=True)
    return tf.io.RaggedFeature(dtype)


@pytest.mark.parametrize("layout", ["same", "varied", "varied_large"])  # large: unison's whole-batch scan
@same_as_tf(
    "io.parse_example",
    "io.FixedLenFeature",
    "io.VarLenFeature",
    "io.FixedLenSequenceFeature",
    "io.RaggedFeature",
)
def test_parse_example_every_kind(tf, layout):
    rng = np.random.default_rng(3)
    records = []
    for i in range(140 if layout == "varied_large" else 6):
        n = 3 if layout == "same" else i % 4
        floats = [float(v) for v in rng.standard_normal(4).astype(np.float32)]
        ids = [int(v) for v in rng.integers(-(2**40), 2**40, size=n)] or ("int64", [])
        words = [bytes([97 + j]) * (j + 1 if layout == "varied" else 2) for j in range(n)] or ("bytes", [])
        record = _record(
            tf,
            floats=floats,
            floats_r=floats,
            ids=ids,
            ids_seq=ids,
            ids_r=ids,
            label=[i if layout == "same" else i * 1000],
            words=words,
            words_r=words,
            image=[bytes(range(i % 200, i % 200 + 40))],
            empty=None,
        )
        records.append(record)
    features = {
        "floats": tf.io.FixedLenFeature([2, 2], tf.float32),
        "label": tf.io.FixedLenFeature([], tf.int64),
        "image": tf.io.FixedLenFeature([], tf.string),
        "ids": tf.io.VarLenFeature(tf.int64),
        "ids_seq": tf.io.FixedLenSequenceFeature([], tf.int64, allow_missing=True, default_value=-1),
        "empty": tf.io.FixedLenSequenceFeature([], tf.float32, allow_missing=True),
        "words": tf.io.VarLenFeature(tf.string),
        "words_r": tf.io.RaggedFeature(tf.string),
        "floats_r": tf.io.RaggedFeature(tf.float32),
        "ids_r": tf.io.RaggedFeature(tf.int64),
    }
    out = tf.io.parse_example(tf.constant(records), features)
    singles = [tf.io.parse_single_example(r, features) for r in records[:2]]
    return out, singles


@same_as_tf("io.parse_example", "io.FixedLenFeature", edge=True)
def test_parse_example_defaults_and_missing_features(tf):
    records = [
        _record(tf, a=[1.0, 2.0], s=[b"x"]),
        _record(tf, s=[b"y"]),
        _record(tf, b=[5], c=[5]),
        b"",  # an empty Example: every feature missing
    ]
    features = {
        "a": tf.io.FixedLenFeature([2], tf.float32, default_value=[-1.0, -2.0]),
        "s": tf.io.FixedLenFeature([], tf.string, default_value=b"none"),
        "b": tf.io.FixedLenFeature([1], tf.int64, default_value=0),
        "v": tf.io.VarLenFeature(tf.float32),
        "r": tf.io.RaggedFeature(tf.int64, value_key="c"),
        "q": tf.io.FixedLenSequenceFeature([2], tf.float32, allow_missing=True, default_value=7.0),
    }
    return tf.io.parse_example(tf.constant(records), features), tf.io.parse_single_example(records[3], features)


@pytest.mark.parametrize("kind", SPEC_KINDS)
@pytest.mark.parametrize("dtype", ["float32", "int64", "string"])
@same_as_tf("io.parse_example", "io.parse_single_example", edge=True)
def test_parse_example_wrong_dtype_is_an_error(tf, kind, dtype):
    found = {"float32": [1], "int64": [b"a"], "string": [1.5]}[dtype]  # never the spec's type
    records = [_record(tf, x=_good(dtype)), _record(tf, x=found)]
    spec = {"x": _spec(tf, kind, getattr(tf, dtype))}
    return tf.io.parse_example(tf.constant(records), spec)


def _good(dtype):
    return {"float32": [1.0], "int64": [2], "string": [b"b"]}[dtype]


@pytest.mark.parametrize("case", ["too_many", "too_few", "missing_required", "missing_sequence"])
@same_as_tf("io.parse_example", "io.parse_single_example", edge=True)
def test_parse_example_count_mismatch_is_an_error(tf, case):
    if case == "missing_sequence":
        spec = {"x": tf.io.FixedLenSequenceFeature([], tf.int64)}
        return tf.io.parse_single_example(_record(tf, y=[1]), spec)
    values = {"too_many": [1.0, 2.0, 3.0], "too_few": [1.0], "missing_required": None}[case]
    record = _record(tf, x=values) if values else _record(tf, y=[1.0])
    spec = {"x": tf.io.FixedLenFeature([2], tf.float32)}
    return tf.io.parse_example(tf.constant([_record(tf, x=[0.0, 0.5]), record]), spec)


@pytest.mark.filterwarnings("ignore:tf.io.parse_example. records in an encoding:RuntimeWarning")
@same_as_tf("io.parse_example", "io.parse_single_example", edge=True)
def test_parse_example_of_unusual_encodings(tf):
    # valid protobuf no TF writer produces: unpacked numbers, a list in two pieces, a repeated key
    # (the last wins), an unknown field, the map entry's value before its key
    unpacked_floats = b"".join(b"\x15" + np.float32(v).tobytes() for v in (1.5, -2.0))
    unpacked_ints = b"".join(b"\x08" + _varint(v) for v in (3, -4))
    pieces = _delimited(3, _delimited(1, _varint(5)) + _delimited(1, _varint(6)))
    record = _delimited(
        1,
        _entry(b"f", _delimited(2, unpacked_floats))
        + _entry(b"i", _delimited(3, unpacked_ints))
        + _entry(b"p", pieces)
        + _entry(b"r", _delimited(3, _delimited(1, _varint(1))))
        + _entry(b"r", _delimited(3, _delimited(1, _varint(2))))
        + _delimited(1, _delimited(2, _delimited(1, _delimited(1, b"z"))) + _delimited(1, b"k")),
    ) + bytes([0x10, 0x07])  # unknown varint field 2 of Example
    record += _delimited(1, _entry(b"late", _delimited(3, _delimited(1, _varint(9)))))  # a second Features: merged
    features = {
        "f": tf.io.FixedLenFeature([2], tf.float32),
        "i": tf.io.VarLenFeature(tf.int64),
        "p": tf.io.FixedLenFeature([2], tf.int64),
        "r": tf.io.FixedLenFeature([], tf.int64),
        "k": tf.io.FixedLenFeature([], tf.string),
        "late": tf.io.FixedLenFeature([], tf.int64),
    }
    return tf.io.parse_example(tf.constant([record, record]), features), tf.io.parse_single_example(record, features)


@pytest.mark.parametrize("case", ["wrong_dtype", "too_few", "missing", "damaged", "repeated_key"])
@pytest.mark.filterwarnings("ignore:tf.io.parse_example. records in an encoding:RuntimeWarning")
@same_as_tf("io.parse_example", edge=True)
def test_parse_example_errors_in_a_large_varied_batch(tf, case):
    # 200 records of varied layouts: unison's whole-batch scan (not the per-record one) meets the bad record
    records = [_record(tf, x=[float(i)] * 2, ids=list(range(i % 5)), w=[b"a"] * (i % 3)) for i in range(200)]
    bad = {
        "wrong_dtype": _record(tf, x=[1, 2], ids=[1]),
        "too_few": _record(tf, x=[1.0], ids=[1]),
        "missing": _record(tf, ids=[1]),
        "damaged": records[7][:-3],
        "repeated_key": records[7] + _delimited(1, _entry(b"x", _delimited(2, _delimited(1, b"\0\0\0\0" * 2)))),
    }[case]
    records[97] = bad
    spec = {
        "x": tf.io.FixedLenFeature([2], tf.float32),
        "ids": tf.io.VarLenFeature(tf.int64),
        "w": tf.io.RaggedFeature(tf.string),
    }
    return tf.io.parse_example(tf.constant(records), spec)


@same_as_tf("io.parse_example", edge=True)
def test_parse_example_of_a_damaged_record(tf):
    good = _record(tf, x=[1.0])
    return tf.io.parse_example(tf.constant([good, good[:-3]]), {"x": tf.io.FixedLenFeature([], tf.float32)})


@pytest.mark.parametrize(
    "partition", ["row_lengths", "row_splits", "row_starts", "row_limits", "value_rowids", "uniform"]
)
@same_as_tf("io.RaggedFeature", "io.parse_example", "io.parse_single_example")
def test_ragged_feature_partitions(tf, partition):
    R = tf.io.RaggedFeature
    parts = {
        "row_lengths": (R.RowLengths("p"), [[2, 0, 1], [3]]),
        "row_splits": (R.RowSplits("p"), [[0, 2, 2, 3], [0, 3]]),
        "row_starts": (R.RowStarts("p"), [[0, 2, 2], [0]]),
        "row_limits": (R.RowLimits("p"), [[2, 2, 3], [3]]),
        "value_rowids": (R.ValueRowIds("p"), [[0, 0, 2], [0, 0, 0]]),
        "uniform": (R.UniformRowLength(3), None),
    }
    part, keys = parts[partition]
    values = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    records = [_record(tf, v=v, **({"p": ("int64", k)} if keys else {})) for v, k in zip(values, keys or [None, None])]
    spec = {"r": R(tf.float32, value_key="v", partitions=[part])}
    return tf.io.parse_example(tf.constant(records), spec), tf.io.parse_single_example(records[0], spec)


@same_as_tf("io.parse_example", "io.VarLenFeature")
def test_parse_example_large_batch_of_varints(tf):
    # multi-byte and negative int64 values, across many records of different lengths
    rng = np.random.default_rng(5)
    records = [
        _record(tf, ids=[int(v) for v in rng.integers(-(2**62), 2**62, size=int(rng.integers(1, 6)))] + [i, 127, 128])
        for i in range(100)
    ]
    return tf.io.parse_example(tf.constant(records), {"ids": tf.io.VarLenFeature(tf.int64)})


@same_as_tf("io.parse_example", "io.RaggedFeature", edge=True)
def test_a_feature_read_as_dense_and_ragged_is_refused(tf):
    spec = {"x": tf.io.FixedLenFeature([], tf.int64), "y": tf.io.RaggedFeature(tf.int64, value_key="x")}
    return tf.io.parse_example(tf.constant([_record(tf, x=[1])]), spec)


def _sequence_records(tf):
    def feature_list(steps, kind):
        return tf.train.FeatureList(feature=[_feature(tf, (kind, s)) for s in steps])

    first = tf.train.SequenceExample(
        context=tf.train.Features(feature={"c": _feature(tf, [7]), "name": _feature(tf, [b"a"])}),
        feature_lists=tf.train.FeatureLists(
            feature_list={
                "s": feature_list([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], "float"),
                "v": feature_list([[1], [], [2, 3]], "int64"),
                "w": feature_list([[b"x"], [b"yy", b"z"]], "bytes"),
            }
        ),
    )
    second = tf.train.SequenceExample(
        context=tf.train.Features(feature={"name": _feature(tf, [b"b"])}),
        feature_lists=tf.train.FeatureLists(
            feature_list={
                "s": feature_list([[9.0, 9.5]], "float"),
                "v": feature_list([[4]], "int64"),
                "w": feature_list([], "bytes"),
            }
        ),
    )
    return [first.SerializeToString(), second.SerializeToString()]


def _sequence_specs(tf):
    context = {"c": tf.io.FixedLenFeature([], tf.int64, default_value=0), "name": tf.io.FixedLenFeature([], tf.string)}
    sequence = {
        "s": tf.io.FixedLenSequenceFeature([2], tf.float32),
        "v": tf.io.VarLenFeature(tf.int64),
        "w": tf.io.RaggedFeature(tf.string),
        "absent": tf.io.FixedLenSequenceFeature([], tf.int64, allow_missing=True),
    }
    return context, sequence


@same_as_tf("io.parse_sequence_example", "io.parse_single_sequence_example")
def test_parse_sequence_example(tf):
    records = _sequence_records(tf)
    context, sequence = _sequence_specs(tf)
    return (
        tf.io.parse_sequence_example(tf.constant(records), context, sequence),
        tf.io.parse_single_sequence_example(records[0], context, sequence),
        tf.io.parse_single_sequence_example(records[1], context, sequence),
    )


@pytest.mark.parametrize("case", ["missing_list", "wrong_type", "wrong_count"])
@same_as_tf("io.parse_sequence_example", edge=True)
def test_parse_sequence_example_errors(tf, case):
    records = _sequence_records(tf)
    spec = {
        "missing_list": {"nope": tf.io.FixedLenSequenceFeature([], tf.int64)},
        "wrong_type": {"v": tf.io.VarLenFeature(tf.float32)},
        "wrong_count": {"s": tf.io.FixedLenSequenceFeature([3], tf.float32)},
    }[case]
    return tf.io.parse_sequence_example(tf.constant(records), None, spec)


# --- tf.io.SparseFeature -------------------------------------------------------------------------------
def _indexed_example(tf, ix, values, iy=None):
    feature = {
        "ix": tf.train.Feature(int64_list=tf.train.Int64List(value=ix)),
        "v": tf.train.Feature(float_list=tf.train.FloatList(value=values)),
    }
    if iy is not None:
        feature["iy"] = tf.train.Feature(int64_list=tf.train.Int64List(value=iy))
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


@same_as_tf("io.SparseFeature", "io.parse_example", "io.parse_single_example")
def test_sparse_feature(tf):
    batch = [_indexed_example(tf, [3, 1], [1.0, 2.0]), _indexed_example(tf, [], []), _indexed_example(tf, [4], [7.0])]
    one = {"s": tf.io.SparseFeature(index_key="ix", value_key="v", dtype=tf.float32, size=5)}
    two_d = {"s": tf.io.SparseFeature(["ix", "iy"], "v", tf.float32, [5, 3])}
    with_raw = {
        "s": tf.io.SparseFeature("ix", "v", tf.float32, 5, already_sorted=True),
        "ix": tf.io.VarLenFeature(tf.int64),
    }
    return (
        tf.io.parse_example(batch, one),
        tf.io.parse_single_example(batch[0], one),
        tf.io.parse_example([_indexed_example(tf, [3, 1], [1.0, 2.0], iy=[0, 2])], two_d),
        tf.io.parse_example(batch[:1], with_raw),
    )


@pytest.mark.parametrize("case", ["lengths", "conflict", "no_size", "sizes", "value_type", "out_of_range"])
@same_as_tf("io.SparseFeature", edge=True)
def test_sparse_feature_edges(tf, case):
    spec = tf.io.SparseFeature("ix", "v", tf.float32, 5)
    record, features = _indexed_example(tf, [3], [1.0]), {"s": spec}
    if case == "lengths":
        record = _indexed_example(tf, [3, 1], [1.0])
    elif case == "conflict":
        features["ix"] = tf.io.VarLenFeature(tf.float32)
    elif case == "no_size":
        features["s"] = tf.io.SparseFeature("ix", "v", tf.float32, None)
    elif case == "sizes":
        features["s"] = tf.io.SparseFeature(["ix"], "v", tf.float32, [5, 3])
    elif case == "value_type":
        features["s"] = tf.io.SparseFeature("ix", "v", tf.int64, 5)
    else:  # TF does not check indices against size
        record = _indexed_example(tf, [7, -1], [1.0, 2.0])
    return tf.io.parse_example([record], features)


@pytest.mark.parametrize("case", ["missing_list", "wrong_type", "a_batch"])
@same_as_tf("io.parse_single_sequence_example", edge=True)
def test_parse_single_sequence_example_errors(tf, case):
    records = _sequence_records(tf)
    spec = {
        "missing_list": {"nope": tf.io.FixedLenSequenceFeature([], tf.int64)},
        "wrong_type": {"v": tf.io.VarLenFeature(tf.float32)},
        "a_batch": {"v": tf.io.VarLenFeature(tf.int64)},
    }[case]
    serialized = tf.constant(records) if case == "a_batch" else records[0]
    return tf.io.parse_single_sequence_example(serialized, None, spec)


@same_as_tf("io.parse_example", "io.parse_single_example")
def test_string_features_are_string_tensors(tf):
    # guide/data's tf_parse: example["image/text"][0].numpy() on parse_example's string column
    record = _record(tf, text=[b"ab"], words=[b"x", b"yz"])
    spec = {
        "text": tf.io.FixedLenFeature([], tf.string),
        "words": tf.io.FixedLenSequenceFeature([], tf.string, allow_missing=True),
    }
    batch = tf.io.parse_example([record, record], spec)
    one = tf.io.parse_single_example(record, spec)
    return (
        batch["text"][0].numpy(),
        batch["words"][1].numpy().tolist(),
        one["text"].numpy(),
        one["words"].numpy().tolist(),
    )
