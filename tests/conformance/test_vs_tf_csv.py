"""tf.data's CSV names against TensorFlow: ``tf.io.decode_csv``, ``CsvDataset``, ``make_csv_dataset``.

Each body writes its CSV files into its own ``tempfile.mkdtemp()`` folder (each framework's run
writes its own), then returns what the reader gave as numpy values.
"""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

_TABLE = 'id,score,name,city\n1,2.5,ann,"Paris, FR"\n2,,"bo ""b""",Oslo\n3,-1e3,cy,\n4,7,"d,e",Rome\n5,0.25,eve,Lima\n'


def _write(text, name="data.csv"):
    import os
    import tempfile

    path = os.path.join(tempfile.mkdtemp(), name)
    with open(path, "w", newline="") as fh:
        fh.write(text)
    return path


def _plain(element):
    if isinstance(element, dict):
        return {k: np.asarray(v.numpy()) for k, v in element.items()}
    if isinstance(element, (tuple, list)):
        return tuple(_plain(e) for e in element)
    return np.asarray(element.numpy())


@same_as_tf("io.decode_csv")
def test_decode_csv_columns(tf):
    records = tf.constant(["1,2.5,a", '3,,"b,c"', '-4, 6 ,"q""z"'])
    return tuple(tf.io.decode_csv(records, [tf.constant(0), tf.constant(1.0), tf.constant("x")]))


@same_as_tf("io.decode_csv", edge=True)
def test_decode_csv_required_field_missing(tf):
    return tf.io.decode_csv(tf.constant(["1,2", ",3"]), [tf.constant([], tf.int32), tf.constant([0.0])])


@same_as_tf("io.decode_csv", edge=True)
def test_decode_csv_too_few_fields(tf):
    return tf.io.decode_csv(tf.constant(["1,2,3", "1,2"]), [[0], [0], [0]])


@same_as_tf("io.decode_csv", edge=True)
def test_decode_csv_select_cols_na_value_and_a_2d_batch(tf):
    records = tf.constant([["1;NA;x", "2;5;y"]])
    return tuple(
        tf.io.decode_csv(
            records, [tf.constant([9], tf.int64), tf.constant([""])], field_delim=";", na_value="NA", select_cols=[1, 2]
        )
    )


@same_as_tf("data.experimental.CsvDataset")
def test_csv_dataset_elements(tf):
    path = _write(_TABLE)
    defaults = [tf.int32, tf.constant([0.0], tf.float64), tf.string, tf.constant(["?"])]
    ds = tf.data.experimental.CsvDataset(path, defaults, header=True)
    return [_plain(e) for e in ds]


@same_as_tf("data.experimental.CsvDataset", edge=True)
def test_csv_dataset_row_with_too_few_fields(tf):
    path = _write("1,2,3\n4,5\n")
    return [_plain(e) for e in tf.data.experimental.CsvDataset(path, [tf.int32] * 3)]


@pytest.mark.parametrize("kind", ["select", "exclude", "header_only", "quote_inside"])
@same_as_tf("data.experimental.CsvDataset", edge=True)
def test_csv_dataset_edges(tf, kind):
    if kind == "header_only":
        ds = tf.data.experimental.CsvDataset(_write("a,b\n"), [tf.int32, tf.string], header=True)
    elif kind == "quote_inside":
        ds = tf.data.experimental.CsvDataset(_write('1,a"b\n'), [tf.int32, tf.string])
    elif kind == "select":
        ds = tf.data.experimental.CsvDataset(_write(_TABLE), [tf.int32, tf.string], header=True, select_cols=[0, 2])
    else:
        ds = tf.data.experimental.CsvDataset(_write(_TABLE), [tf.int32, tf.string], header=True, exclude_cols=[1, 3])
    return [_plain(e) for e in ds]


@same_as_tf("data.experimental.make_csv_dataset")
def test_make_csv_dataset_batches(tf):
    path = _write(_TABLE)
    ds = tf.data.experimental.make_csv_dataset(path, 2, label_name="score", shuffle=False, num_epochs=1)
    return [_plain(e) for e in ds]


@same_as_tf("data.experimental.make_csv_dataset")
def test_make_csv_dataset_shuffled_two_files_as_a_multiset(tf):
    first = _write(_TABLE)
    second = first.replace("data.csv", "more.csv")
    with open(second, "w") as fh:
        fh.write("id,score,name,city\n6,1.5,fay,Kyiv\n7,2,gus,Rome\n")
    ds = tf.data.experimental.make_csv_dataset(
        first.replace("data.csv", "*.csv"), 3, num_epochs=2, shuffle_seed=7, num_parallel_reads=2
    )
    ids = np.concatenate([b["id"].numpy() for b in ds])
    names = np.concatenate([b["name"].numpy() for b in ds])
    scores = np.concatenate([b["score"].numpy() for b in ds])
    return np.sort(ids), np.sort(names), np.sort(scores)


@pytest.mark.parametrize("kind", ["select", "bad_label", "bad_select", "header_only", "short_row"])
@same_as_tf("data.experimental.make_csv_dataset", edge=True)
def test_make_csv_dataset_edges(tf, kind):
    make = tf.data.experimental.make_csv_dataset
    if kind == "select":
        ds = make(_write(_TABLE), 4, select_columns=["name", "id"], label_name="id", shuffle=False, num_epochs=1)
    elif kind == "bad_label":
        ds = make(_write(_TABLE), 4, label_name="nope", shuffle=False, num_epochs=1)
    elif kind == "bad_select":
        ds = make(_write(_TABLE), 4, select_columns=["nope"], shuffle=False, num_epochs=1)
    elif kind == "header_only":
        ds = make(_write("a,b\n"), 4, shuffle=False, num_epochs=1)
    else:
        ds = make(_write("a,b\n1,2\n3\n"), 4, column_defaults=[tf.int32, tf.int32], shuffle=False, num_epochs=1)
    return [_plain(e) for e in ds]


@pytest.mark.parametrize("kind", ["types", "na_value", "ignore_errors", "forever", "column_names"])
@same_as_tf("data.experimental.make_csv_dataset")
def test_make_csv_dataset_inference_and_options(tf, kind):
    make = tf.data.experimental.make_csv_dataset
    if kind == "types":  # int32, int64, float32, float64, string and an all-empty (string) column
        ds = make(_write("a,b,c,d,e,f\n1,3000000000,1.5,x,,2e300\n2,4,-2,7,,1\n"), 2, shuffle=False, num_epochs=1)
    elif kind == "na_value":
        ds = make(_write("a,b\nNA,1\n2,NA\n"), 2, na_value="NA", shuffle=False, num_epochs=1)
    elif kind == "ignore_errors":
        text = "a,b\n1,2\n3\nx,4\n5,6\n"
        ds = make(
            _write(text), 4, column_defaults=[tf.int32, tf.int32], ignore_errors=True, shuffle=False, num_epochs=1
        )
    elif kind == "forever":  # num_epochs=None repeats and drops the last partial batch
        ds = make(_write("a\n1\n2\n3\n"), 2, shuffle=False).take(3)
    else:
        ds = make(
            _write("1;x\n2;y\n"), 2, header=False, column_names=["p", "q"], field_delim=";", shuffle=False, num_epochs=1
        )
    return [_plain(e) for e in ds]


@pytest.mark.parametrize("text", ["1,a\r\n2,b\r\n", '1,"a\nb"\n2,c\n', " 1 ,x\n", "1_0,x\n", "3000000000,x\n"])
@same_as_tf("data.experimental.CsvDataset", edge=True)
def test_csv_dataset_line_ends_spaces_and_bad_ints(tf, text):
    return [_plain(e) for e in tf.data.experimental.CsvDataset(_write(text), [tf.int32, tf.string])]


@pytest.mark.parametrize("reads", [None, 2])
@same_as_tf("data.experimental.make_csv_dataset")
def test_make_csv_dataset_interleaves_files_and_reads_gzip(tf, reads):
    import gzip
    import os

    folder = os.path.dirname(_write("x\n1\n2\n3\n", "a.csv"))
    for name, text in [("b.csv", "x\n10\n20\n"), ("c.csv", "x\n100\n200\n300\n400\n")]:
        with open(os.path.join(folder, name), "w") as fh:
            fh.write(text)
    with gzip.open(os.path.join(folder, "z.gz"), "wt") as fh:
        fh.write('x,y\n1,"a,b"\n2,c\n')
    make = tf.data.experimental.make_csv_dataset
    files = make(os.path.join(folder, "*.csv"), 3, shuffle=False, num_epochs=1, num_parallel_reads=reads)
    zipped = make(os.path.join(folder, "z.gz"), 3, shuffle=False, num_epochs=1, compression_type="GZIP")
    return [_plain(e) for e in files], [_plain(e) for e in zipped]


@pytest.mark.parametrize("records", [[], ["a"], ["nan", " 2.5 ", "-inf"]])
@same_as_tf("io.decode_csv", edge=True)
def test_decode_csv_empty_batch_bad_float_and_specials(tf, records):
    return tuple(tf.io.decode_csv(tf.constant(records, tf.string), [tf.constant([0.5], tf.float64)]))
