"""``SparseTensor`` and ``RaggedTensor`` as tf.data elements, against TensorFlow 2.21 (see tf_oracle.py).

TF carries composite tensors through ``batch`` (sparse tensors of different dense shapes batch to
the largest; ragged tensors gain a ragged dimension), ``unbatch``, ``map``, ``prefetch``, ``cache``
and ``element_spec``, and refuses them in ``padded_batch``.
"""

from __future__ import annotations

import pytest
from tf_oracle import same_as_tf


def _sparse_dataset(tf):
    # elements of different dense shapes: [1], [2], [3], [4]
    return tf.data.Dataset.range(4).map(
        lambda i: tf.sparse.SparseTensor(
            indices=tf.reshape(i, [1, 1]), values=tf.reshape(i * 10, [1]), dense_shape=tf.reshape(i + 1, [1])
        )
    )


@same_as_tf("data.Dataset", "SparseTensorSpec")
def test_sparse_elements_batch_to_the_largest_dense_shape(tf):
    ds = _sparse_dataset(tf)
    batched = list(ds.batch(3))
    rows = list(ds.batch(3).unbatch())
    return (
        batched,
        rows,
        repr(
            tf.data.Dataset.from_tensor_slices(tf.sparse.SparseTensor([[0, 1], [2, 3]], [1.0, 2.0], [3, 4]))
            .batch(2, drop_remainder=True)
            .element_spec
        ),
    )


@same_as_tf("data.Dataset", "SparseTensorSpec")
def test_sparse_tensor_slices(tf):
    st = tf.sparse.SparseTensor([[0, 1], [2, 0], [2, 3]], [1.0, 2.0, 3.0], [3, 4])
    ds = tf.data.Dataset.from_tensor_slices(st)
    return list(ds), list(ds.batch(2)), repr(ds.element_spec)


@same_as_tf("data.Dataset", "RaggedTensorSpec")
def test_ragged_elements_batch_into_a_ragged_dimension(tf):
    rt = tf.ragged.constant([[1, 2], [3], [4, 5, 6], []])
    ds = tf.data.Dataset.from_tensor_slices(rt)
    again = ds.batch(3).unbatch().batch(2)
    return list(ds), list(ds.batch(3)), list(again), repr(ds.element_spec), repr(ds.batch(3).element_spec)


@same_as_tf("data.Dataset")
def test_nested_structures_with_composites_through_map_prefetch_cache(tf):
    rt = tf.ragged.constant([[1.0], [2.0, 3.0], [], [4.0, 5.0, 6.0]])
    st = tf.sparse.SparseTensor([[0, 0], [1, 1], [3, 2]], [7, 8, 9], [4, 3])
    ds = tf.data.Dataset.from_tensor_slices({"r": rt, "pair": (st, tf.constant([1, 2, 3, 4]))}).batch(2)
    # in a batch the ragged rows stay a RaggedTensor through map (a single row would be a plain tensor)
    ds = ds.map(lambda e: {"r": e["r"] * 2.0, "pair": (e["pair"][0], e["pair"][1] + 1)})
    ds = ds.prefetch(2).cache()
    first = list(ds)
    return first, list(ds), list(ds.unbatch().batch(4))


@pytest.mark.parametrize("kind", ["sparse", "ragged"])
@same_as_tf("data.Dataset", edge=True)
def test_padded_batch_refuses_composites(tf, kind):
    if kind == "sparse":
        ds = tf.data.Dataset.from_tensor_slices(tf.sparse.SparseTensor([[0, 1]], [1.0], [2, 2]))
    else:
        ds = tf.data.Dataset.from_tensor_slices(tf.ragged.constant([[1], [2, 3]]))
    return list(ds.padded_batch(2))


def _write_examples(tf, path):
    with tf.io.TFRecordWriter(path) as writer:
        for i in range(10):
            feature = {
                "ids": tf.train.Feature(int64_list=tf.train.Int64List(value=list(range(i % 4)))),
                "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[i])),
                "words": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"w%d" % j for j in range(i % 3)])),
            }
            writer.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())


@same_as_tf("io.parse_example", "io.VarLenFeature", "io.RaggedFeature", "data.TFRecordDataset")
def test_var_len_and_ragged_features_through_a_pipeline(tf, tmp_path):
    path = str(tmp_path / "ex.tfrecord")
    _write_examples(tf, path)
    spec = {
        "ids": tf.io.VarLenFeature(tf.int64),
        "label": tf.io.FixedLenFeature([], tf.int64),
        "words": tf.io.RaggedFeature(tf.string),
    }
    records = tf.data.TFRecordDataset(path)
    single = {k: spec[k] for k in ("ids", "label")}  # a single record's RaggedFeature is a plain tensor
    per_record = list(records.map(lambda r: tf.io.parse_single_example(r, single)).batch(4))
    vectorised = list(records.batch(4).map(lambda b: tf.io.parse_example(b, spec)))
    return per_record, vectorised, list(records.batch(4).map(lambda b: tf.io.parse_example(b, spec)).unbatch())


@same_as_tf("data.Dataset", edge=True)
def test_one_record_ragged_features_do_not_batch(tf, tmp_path):
    # parse_single_example gives a RaggedFeature as a plain tensor: rows of different lengths do not batch
    path = str(tmp_path / "ex.tfrecord")
    _write_examples(tf, path)
    spec = {"words": tf.io.RaggedFeature(tf.string)}
    return list(tf.data.TFRecordDataset(path).map(lambda r: tf.io.parse_single_example(r, spec)).batch(4))


@same_as_tf("keras:Model", "keras:layers.Dense", "SparseTensor")
def test_fit_on_a_dataset_of_sparse_inputs(tf):
    keras = tf.keras
    st = tf.sparse.SparseTensor([[0, 1], [1, 3], [2, 0], [3, 2]], [1.0, 2.0, 3.0, 4.0], [4, 5])
    y = tf.constant([[0.0], [1.0], [0.0], [1.0]])
    ds = tf.data.Dataset.from_tensor_slices((st, y)).batch(2)
    model = keras.Sequential([keras.layers.Dense(1, kernel_initializer="ones", bias_initializer="zeros")])
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    history = model.fit(ds, epochs=2, verbose=0, shuffle=False)
    return history.history["loss"], model.predict(ds.map(lambda x, _: x), verbose=0)
