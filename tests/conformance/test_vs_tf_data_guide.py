"""TensorFlow's own tf.data guides (site/en/guide/data.ipynb and data_performance.ipynb) against
TensorFlow 2.21: the behaviours those programs print (dataset reprs, windows, string predicates,
tensors formatted into text) compared cell by cell on small generated inputs."""

from __future__ import annotations

import os
import tempfile

from tf_oracle import same_as_tf


@same_as_tf("data.Dataset")
def test_window_flat_map_batches(tf):
    # the guide's "Using window" cells: sub-datasets, flat_map back into batches, stride and shift
    range_ds = tf.data.Dataset.range(100000)
    windows = range_ds.window(5, shift=1)
    subs = [repr(sub) for sub in windows.take(2)]
    flat = [int(x) for x in windows.flat_map(lambda x: x).take(12)]
    batches = windows.flat_map(lambda sub: sub.batch(5, drop_remainder=True)).take(3)
    strided = range_ds.window(10, shift=5, stride=3).flat_map(lambda s: s.batch(10, drop_remainder=True))
    return (
        subs,
        repr(windows.element_spec),
        flat,
        [b.numpy() for b in batches],
        [b.numpy() for b in strided.take(3)],
    )


@same_as_tf("data.Dataset", edge=True)
def test_window_remainders_nests_and_bad_size(tf):
    out = []
    for size, shift, stride, drop in [(3, None, 1, False), (3, 2, 2, False), (3, 2, 2, True), (2, 5, 1, False)]:
        w = tf.data.Dataset.range(7).window(size, shift, stride, drop)
        out.append((int(w.cardinality()), [[int(v) for v in sub] for sub in w]))
    pairs = tf.data.Dataset.zip((tf.data.Dataset.range(5), tf.data.Dataset.range(5).map(lambda x: {"a": x * 2})))
    nested = pairs.window(2)
    out.append(repr(nested.element_spec))
    out.append([[(int(a), int(b["a"])) for a, b in tf.data.Dataset.zip((x, y))] for x, y in nested])
    # flat_map's spec is the spec of the dataset its function returns: batch(2) leaves the size unknown
    out.append(repr(nested.flat_map(lambda a, b: tf.data.Dataset.zip((a, b)).batch(2)).element_spec))
    out.append(repr(tf.data.Dataset.range(9).window(3).flat_map(lambda w: w.batch(3, drop_remainder=True))))
    try:
        tf.data.Dataset.range(3).window(0)
        out.append("accepted")
    except tf.errors.InvalidArgumentError:
        out.append("InvalidArgumentError")
    return out


@same_as_tf("data.Dataset")
def test_dataset_reprs(tf):
    # the guide prints datasets as bare expressions: `<_BatchDataset element_spec=(...)>`
    r = tf.data.Dataset.range(10)
    path = os.path.join(tempfile.mkdtemp(), "lines.txt")
    with open(path, "w") as fh:
        fh.write("a\nb\n")
    datasets = [
        tf.data.Dataset.from_tensor_slices([8, 3, 0]),
        tf.data.Dataset.from_tensor_slices((tf.zeros([4]), tf.zeros([4, 100], tf.int32))),
        tf.data.Dataset.zip((r, r)).batch(4),
        tf.data.Dataset.zip((r, r)).batch(7, drop_remainder=True),
        r.shuffle(3).repeat().take(2).skip(1).prefetch(1),
        r.filter(lambda x: x > 2).cache(),
        r.map(lambda x: x + 1, num_parallel_calls=2),
        r.flat_map(lambda x: tf.data.Dataset.from_tensors(x)),
        r.concatenate(r).enumerate(),
        tf.data.TextLineDataset(path),
        tf.data.Dataset.from_generator(lambda: iter([1]), output_types=tf.int32, output_shapes=()),
    ]
    return [repr(ds) for ds in datasets]


def _titanic_lines(tmpdir):
    path = os.path.join(tmpdir, "train.csv")
    with open(path, "w") as fh:
        fh.write("survived,sex,age\n0,male,22.0\n1,female,38.0\n1,female,26.0\n0,male,35.0\n")
    return path


@same_as_tf("math.not_equal")
def test_string_predicate_filters_lines(tf):
    # the guide's `survived`: tf.not_equal(tf.strings.substr(line, 0, 1), "0") inside filter()
    def survived(line):
        return tf.not_equal(tf.strings.substr(line, 0, 1), "0")

    lines = tf.data.TextLineDataset(_titanic_lines(tempfile.mkdtemp()))
    kept = [line.numpy() for line in lines.skip(1).filter(survived)]
    direct = tf.not_equal(tf.constant(["a", "b", "a"]), tf.constant("a")).numpy()
    return kept, direct, bool(tf.not_equal(tf.constant(b"x"), "y").numpy())


@same_as_tf("math.equal", edge=True)
def test_string_equal_broadcast_and_mixed_order(tf):
    words = tf.constant([["a", "b"], ["c", "a"]])
    return (
        tf.equal(words, "a").numpy(),
        tf.equal("a", words).numpy(),
        tf.equal(words, tf.constant(["a", "a"])).numpy(),
        tf.math.equal(tf.constant(""), "").numpy(),
        tf.equal(tf.constant([1, 2]), 2).numpy(),
    )


@same_as_tf("strings.split")
def test_split_scalar_path_indexes_to_string_tensor(tf):
    # the guide's process_path: tf.strings.split(file_path, os.sep)[-2] is the label tensor
    parts = tf.strings.split(tf.constant("/data/flower_photos/roses/img1.jpg"), "/")
    label = parts[-2]
    return parts.numpy(), label.numpy(), label.dtype == tf.string, tuple(parts.shape)


@same_as_tf("data.Dataset")
def test_tensors_formatted_into_text(tf):
    # the guide prints "'survived': {}".format(label_batch) and "{!r:20s}: {}".format(key, value)
    import pandas as pd

    frame = pd.DataFrame({"sex": ["male", "female"], "age": [22.0, 38.5], "n": [1, 0]})
    lines = []
    for element in tf.data.Dataset.from_tensor_slices(dict(frame)).take(1):
        lines += [f"  {key!r:8s}: {value}" for key, value in element.items()]
    for batch in tf.data.Dataset.from_tensor_slices(dict(frame)).batch(2):
        lines += [f"{key}: {value}" for key, value in batch.items()]
    scalar = tf.constant(0.1)
    lines += [f"{tf.constant([1, 0, 1])}", f"{scalar:.3f}", f"{scalar}", f"{tf.constant([0.5, 2.0])}"]
    return lines


@same_as_tf("data.Dataset")
def test_generator_tuple_against_one_spec_and_string_accumulators(tf):
    # data_performance's ArtificialDataset yields `(sample_idx,)` against TensorSpec(shape=(1,));
    # its timelined_benchmark grows tf.zeros([0, 1], tf.string) accumulators with tf.concat
    def generator(num_samples):
        yield from ((i,) for i in range(num_samples))

    ds = tf.data.Dataset.from_generator(
        generator, output_signature=tf.TensorSpec(shape=(1,), dtype=tf.int64), args=(3,)
    )
    steps = tf.zeros([0, 1], dtype=tf.string)
    values = tf.zeros([0, 3], dtype=tf.int32)
    for (sample,) in ds:
        steps = tf.concat((steps, [["Train"]]), axis=0)
        values = tf.concat((values, [[int(sample), 0, -1]]), axis=0)
    return [x.numpy() for x in ds], steps.numpy(), values.numpy(), tf.zeros([2], tf.string).numpy()


@same_as_tf("tile", edge=True)
def test_tile_strings_and_nested_tensor_lists(tf):
    # data_performance's time_consuming_map: tf.tile([[["1st map"]]], [n, 1, 1]) and
    # tf.tile([[values[:][-1][0]]], [n, 1, 1]) (a list holding a tensor two levels down)
    values = tf.constant([[[1, 2, 3]], [[4, 5, 6]]])
    labels = tf.tile([[["1st map"]]], [2, 1, 1])
    numbers = tf.tile([[values[:][-1][0]]], [values.shape[0], 1, 1])
    return labels.numpy(), numbers.numpy(), tf.tile(tf.constant(["a", "b"]), [2]).numpy()


@same_as_tf("py_function", edge=True)
def test_py_function_without_outputs(tf):
    # data_performance's mapped_function: tf.py_function(lambda: time.sleep(0.03), [], ())
    calls = []

    def mapped(s):
        tf.py_function(lambda: calls.append(1), [], ())
        return s

    eager = tf.py_function(lambda: calls.append(1), [], ())
    return [int(x) for x in tf.data.Dataset.range(3).map(mapped)], len(calls) >= 4, list(eager)


@same_as_tf("fill")
def test_string_fill_and_zeros_like(tf):
    # string accumulators and placeholders, as the guides' timelines build them
    return (
        tf.fill([2, 1], "Epoch").numpy(),
        tf.zeros_like(tf.constant(["a", "bc"])).numpy(),
        tf.zeros([1, 2], tf.string).numpy(),
    )


@same_as_tf("ones", edge=True)
def test_string_ones_and_bad_tile_multiples(tf):
    out = []
    for fn in (lambda: tf.ones([2], tf.string), lambda: tf.tile(tf.constant(["a"]), [2, 2])):
        try:
            fn()
            out.append("accepted")
        except TypeError:
            out.append("TypeError")
        except tf.errors.InvalidArgumentError:
            out.append("InvalidArgumentError")
    return out
