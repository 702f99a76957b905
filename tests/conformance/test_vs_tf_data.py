"""``tf.data`` against TensorFlow 2.21: what a pipeline yields, element by element, and its cardinality."""

from __future__ import annotations

from tf_oracle import same_as_tf


def elements(ds, limit=50):
    return [e for _, e in zip(range(limit), ds)]


DATASET = ("data.Dataset", "data.AUTOTUNE", "data.Options", "data.INFINITE_CARDINALITY", "data.UNKNOWN_CARDINALITY")


@same_as_tf(*DATASET)
def test_core_pipeline(tf):
    ds = tf.data.Dataset.from_tensor_slices((tf.range(10), tf.range(10) * 2))
    ds = ds.map(lambda x, y: (x + y, y), num_parallel_calls=tf.data.AUTOTUNE).filter(lambda x, y: x % 2 == 0)
    ds = ds.batch(3).prefetch(tf.data.AUTOTUNE)
    options = tf.data.Options()
    options.deterministic = True
    return (
        elements(ds.with_options(options)),
        int(tf.data.Dataset.range(5).cardinality()),
        int(tf.data.Dataset.range(5).repeat().cardinality()) == tf.data.INFINITE_CARDINALITY,
        int(tf.data.Dataset.range(5).filter(lambda x: x > 1).cardinality()) == tf.data.UNKNOWN_CARDINALITY,
    )


@same_as_tf(*DATASET, edge=True)
def test_empty_and_padded(tf):
    empty = tf.data.Dataset.range(0)
    ragged = tf.data.Dataset.from_tensor_slices([[1, 2, 3], [4, 5, 6]]).map(lambda x: x[: x[0]])
    return (
        elements(empty.batch(4)),
        int(empty.cardinality()),
        elements(ragged.padded_batch(2)),
        elements(tf.data.Dataset.range(7).batch(3, drop_remainder=True)),
        elements(tf.data.Dataset.range(3).batch(2).unbatch()),
    )


STATEFUL = (
    "data.experimental.scan",
    "data.experimental.take_while",
    "data.experimental.unique",
    "data.experimental.group_by_window",
    "data.experimental.bucket_by_sequence_length",
    "data.experimental.Counter",
    "data.experimental.enumerate_dataset",
    "data.experimental.unbatch",
)


@same_as_tf(*STATEFUL)
def test_stateful_transformations(tf):
    r = tf.data.Dataset.range(10)
    sentences = tf.data.Dataset.from_generator(
        lambda: ([1] * n for n in [3, 1, 5, 2, 6, 2, 1, 4]), output_signature=tf.TensorSpec([None], tf.int32)
    )
    return (
        elements(r.scan(tf.constant(0, tf.int64), lambda s, x: (s + x, s * 10 + x))),
        elements(r.apply(tf.data.experimental.scan(tf.constant(1, tf.int64), lambda s, x: (s * 2, s)))),
        elements(r.take_while(lambda x: x < 4)),
        elements(r.apply(tf.data.experimental.take_while(lambda x: x < 2))),
        elements(tf.data.Dataset.from_tensor_slices([3, 1, 3, 2, 1]).unique()),
        elements(tf.data.Dataset.from_tensor_slices(["b", "a", "b"]).apply(tf.data.experimental.unique())),
        elements(r.group_by_window(lambda x: x % 3, lambda k, w: w.batch(2), window_size=2)),
        elements(
            r.apply(
                tf.data.experimental.group_by_window(
                    lambda x: x % 2, lambda k, w: w.batch(5), window_size_func=lambda k: k + 2
                )
            )
        ),
        elements(sentences.bucket_by_sequence_length(lambda x: tf.shape(x)[0], [3, 5], [2, 2, 2])),
        elements(
            sentences.apply(
                tf.data.experimental.bucket_by_sequence_length(
                    lambda x: tf.shape(x)[0], [4], [3, 1], pad_to_bucket_boundary=False
                )
            )
        ),
        elements(tf.data.experimental.Counter(5, 3).take(4)),
        elements(tf.data.Dataset.counter(2, -1).take(3)),
        elements(r.take(3).apply(tf.data.experimental.enumerate_dataset(10))),
        elements(r.batch(4).apply(tf.data.experimental.unbatch())),
    )


@same_as_tf(*STATEFUL, edge=True)
def test_stateful_transformations_on_empty_and_infinite(tf):
    empty = tf.data.Dataset.range(0)
    return (
        elements(empty.scan(tf.constant(0, tf.int64), lambda s, x: (s, x))),
        elements(empty.take_while(lambda x: x < 4)),
        elements(empty.unique()),
        elements(empty.group_by_window(lambda x: x, lambda k, w: w.batch(2), window_size=2)),
        int(tf.data.Dataset.counter().cardinality()) == tf.data.INFINITE_CARDINALITY,
        elements(tf.data.experimental.Counter(dtype=tf.int32).take(2)),
        elements(tf.data.Dataset.range(3).take_while(lambda x: x > 5)),
        elements(empty.apply(tf.data.experimental.enumerate_dataset())),
        elements(empty.batch(2).apply(tf.data.experimental.unbatch())),
    )


EXPERIMENTAL = (
    "data.experimental.sample_from_datasets",
    "data.experimental.choose_from_datasets",
    "data.experimental.from_list",
    "data.experimental.get_single_element",
    "data.experimental.map_and_batch",
    "data.experimental.shuffle_and_repeat",
    "data.experimental.cardinality",
    "data.experimental.assert_cardinality",
)


@same_as_tf(*EXPERIMENTAL)
def test_experimental_functions(tf):
    a, b = tf.data.Dataset.range(3), tf.data.Dataset.range(10, 13)
    choice = tf.data.Dataset.from_tensor_slices(tf.constant([0, 1, 1, 0, 0, 1], dtype=tf.int64))
    return (
        elements(tf.data.experimental.choose_from_datasets([a, b], choice)),
        sorted(int(x) for x in tf.data.experimental.sample_from_datasets([a, b], seed=1)),
        elements(tf.data.experimental.from_list([(1, "x"), (2, "y")])),
        tf.data.experimental.get_single_element(tf.data.Dataset.from_tensors(tf.constant([1, 2]))),
        elements(tf.data.Dataset.range(5).apply(tf.data.experimental.map_and_batch(lambda x: x * 2, 2))),
        sorted(
            int(x) for x in tf.data.Dataset.range(4).apply(tf.data.experimental.shuffle_and_repeat(4, count=2, seed=3))
        ),
        int(tf.data.experimental.cardinality(a)),
        elements(a.apply(tf.data.experimental.assert_cardinality(3))),
    )


@same_as_tf(*EXPERIMENTAL, edge=True)
def test_experimental_functions_edges(tf):
    return (
        elements(tf.data.experimental.choose_from_datasets([tf.data.Dataset.range(2)], tf.data.Dataset.range(0))),
        elements(tf.data.experimental.sample_from_datasets([tf.data.Dataset.range(2)], weights=[1.0])),
        elements(tf.data.experimental.from_list([[1.5, 2.5]])),
        tf.data.experimental.get_single_element(tf.data.Dataset.range(1)),
        elements(
            tf.data.Dataset.range(5).apply(tf.data.experimental.map_and_batch(lambda x: x, 2, drop_remainder=True))
        ),
        elements(tf.data.Dataset.range(0).apply(tf.data.experimental.shuffle_and_repeat(2, count=3))),
        int(tf.data.experimental.cardinality(tf.data.Dataset.range(3).repeat())),
    )


@same_as_tf("data.experimental.get_single_element", edge=True)
def test_single_element_of_two_is_an_invalid_argument(tf):
    return tf.data.experimental.get_single_element(tf.data.Dataset.range(2))
