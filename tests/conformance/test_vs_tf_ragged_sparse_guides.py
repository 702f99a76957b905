"""TF's guides on ragged tensors, sparse tensors and random numbers, run on unison and on TF 2.21.

Each test is a cell (or a few) of ``site/en/guide/ragged_tensor.ipynb``, ``sparse_tensor.ipynb``
or ``random_numbers.ipynb`` that printed or raised differently on unison (see tf_oracle.py).
Printed forms are compared as the strings the guide prints.
"""

from __future__ import annotations

from tf_oracle import same_as_tf


@same_as_tf("RaggedTensor")
def test_guide_ragged_printed_form(tf):
    # TF prints rows with numpy's array2string: ", " between items, wrapped at 75 columns
    sentences = tf.ragged.constant(
        [["Let's", "build", "some", "ragged", "tensors", "!"], ["We", "can", "use", "tf.ragged.constant", "."]]
    )
    r4 = tf.ragged.constant([[[1, 2], [3]], [[4, 5]]])
    same_rows = tf.ragged.constant([[[4]], [[6]], [[7]], [[10]]])
    uniform = tf.ragged.constant([[[1, 3], [0, 0], [1, 3]], [[5, 3]], [[3, 3], [1, 2]]], ragged_rank=1)
    empty = tf.ragged.constant([[], []])
    return repr(sentences), str(r4), repr(same_rows), repr(uniform), repr(empty), str(sentences.values)


@same_as_tf("ragged.constant", edge=True)
def test_guide_ragged_constant_mixed_types(tf):
    tf.ragged.constant([["one", "two"], [3, 4]])


@same_as_tf("ragged.constant", edge=True)
def test_guide_ragged_constant_mixed_depths(tf):
    tf.ragged.constant(["A", ["B", "C"]])


@same_as_tf("tile", "reverse")
def test_guide_ragged_tile_reverse(tf):
    digits = tf.ragged.constant([[3, 1, 4, 1], [], [5, 9, 2], [6], []])
    words = tf.ragged.constant([["a", "b"], ["c"]])
    return (
        tf.tile(digits, [1, 2]),
        tf.tile(digits, [2, 1]),
        tf.tile(words, [1, 3]),
        tf.reverse(digits, [1]),
        tf.reverse(digits, [0]),
        tf.concat([digits, tf.reverse(digits, [1])], axis=1),
    )


@same_as_tf("strings.to_hash_bucket_fast", "strings.join", "strings.substr", "concat")
def test_guide_ragged_strings(tf):
    queries = tf.ragged.constant([["Who", "is", "Dan", "Smith"], ["Pause"], ["Will", "it", "rain"]])
    marker = tf.fill([queries.nrows(), 1], "#")
    padded = tf.concat([marker, queries, marker], axis=1)
    bigrams = tf.strings.join([padded[:, :-1], padded[:, 1:]], separator="+")
    table = tf.reshape(tf.range(40, dtype=tf.float32), [10, 4])
    buckets = tf.strings.to_hash_bucket_fast(queries, 10)
    word_embeddings = tf.nn.embedding_lookup(table, buckets)
    bigram_embeddings = tf.nn.embedding_lookup(table, tf.strings.to_hash_bucket_fast(bigrams, 10))
    all_embeddings = tf.concat([word_embeddings, bigram_embeddings], axis=1)
    return (
        padded,
        bigrams,
        tf.strings.to_hash_bucket_fast(bigrams, 1024),
        tf.strings.substr(queries, 0, 2),
        word_embeddings,
        all_embeddings,
        tf.reduce_mean(all_embeddings, axis=1),
    )


@same_as_tf("map_fn")
def test_guide_ragged_map_fn(tf):
    digits = tf.ragged.constant([[3, 1, 4, 1], [], [5, 9, 2], [6], []])
    return (
        tf.map_fn(tf.math.square, digits),
        tf.map_fn(tf.reduce_sum, digits, fn_output_signature=tf.int32),
        str(tf.map_fn(tf.math.square, digits)),
    )


@same_as_tf("RaggedTensor", edge=True)
def test_guide_ragged_uniform_row_length(tf):
    rt = tf.RaggedTensor.from_uniform_row_length(
        values=tf.RaggedTensor.from_row_splits(
            values=[10, 11, 12, 13, 14, 15, 16, 17, 18, 19], row_splits=[0, 3, 5, 9, 10]
        ),
        uniform_row_length=2,
    )
    flat = tf.RaggedTensor.from_uniform_row_length([1, 2, 3, 4, 5, 6], 3)
    return str(rt), rt.shape.as_list(), rt.ragged_rank, rt.uniform_row_length, rt.to_list(), flat.to_list(), str(flat)


@same_as_tf("RaggedTensor", edge=True)
def test_guide_ragged_dense_broadcast(tf):
    x = tf.ragged.constant([[10, 87, 12], [19, 53], [12, 32]])
    x3 = tf.ragged.constant([[[1, 2], [3, 4], [5, 6]], [[7, 8]]], ragged_rank=1)
    x4 = tf.ragged.constant([[[[1], [2]], [], [[3]], [[4]]], [[[5], [6]], [[7]]]], ragged_rank=2)
    return x + [[1000], [2000], [3000]], x3 + tf.constant([[10]]), x4 + tf.constant([10, 20, 30]), 3 * x


@same_as_tf("RaggedTensor", edge=True)
def test_guide_ragged_dense_broadcast_mismatch(tf):
    # TF raises InvalidArgumentError (its message is an internal assertion's text)
    x = tf.ragged.constant([[1, 2], [3, 4, 5, 6], [7]])
    try:
        x + tf.constant([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]])
    except tf.errors.InvalidArgumentError:
        return "InvalidArgumentError"
    return "no error"


@same_as_tf("Tensor")
def test_guide_tensor_in_fstring(tf):
    # TF formats a tensor in an f-string as its numpy value
    return (
        f"{tf.constant([1, 2])}",
        f"{tf.constant(['red', 'blue'])}",
        f"{tf.constant(0.25)}",
        f"{tf.constant(1.5):.2f}",
        f"{tf.constant([[1.0, 2.0]])}",
    )


@same_as_tf("keras:Input", "keras:Model", edge=True, dialects=("keras",))
def test_guide_sparse_input_model(tf):
    # keras.Input(sparse=True) + Dense: calling and predicting on a SparseTensor (sparse_tensor guide)
    x = tf.keras.Input(shape=(4,), sparse=True)
    y = tf.keras.layers.Dense(4, kernel_initializer="ones", bias_initializer="ones")(x)
    model = tf.keras.Model(x, y)
    sparse_data = tf.sparse.SparseTensor(
        indices=[(0, 0), (0, 1), (0, 2), (4, 3), (5, 0), (5, 1)], values=[1, 1, 1, 1, 1, 1], dense_shape=(6, 4)
    )
    return model(sparse_data), model.predict(sparse_data, verbose=0)


@same_as_tf("random.Generator")
def test_guide_generator_state_advance(tf):
    # TF's counter advances 256 per value drawn: the guide prints the state after draws
    g = tf.random.Generator.from_seed(1)
    states = [g.state.numpy().tolist()]
    for draw in (lambda: g.normal([]), lambda: g.uniform([2, 3]), lambda: g.truncated_normal([0])):
        draw()
        states.append(g.state.numpy().tolist())
    seeds = g.make_seeds(3)
    states.append(g.state.numpy().tolist())
    g.split(2)
    states.append(g.state.numpy().tolist())
    return states, list(seeds.shape), seeds[1]


@same_as_tf("random.Generator", "train.Checkpoint", edge=True)
def test_guide_generator_checkpoint(tf):
    # tf.train.Checkpoint(generator=g): restoring replays the stream from the saving point
    import os
    import tempfile

    g = tf.random.Generator.from_seed(1)
    cp = tf.train.Checkpoint(generator=g)
    g.normal([])
    with tempfile.TemporaryDirectory() as d:
        path = cp.write(os.path.join(d, "checkpoint"))
        after_save = [g.normal([]).numpy() for _ in range(2)]
        state_after = g.state.numpy().tolist()
        cp.restore(path)
        restored_state = g.state.numpy().tolist()
        after_restore = [g.normal([]).numpy() for _ in range(2)]
    return restored_state, state_after, after_save == after_restore


@same_as_tf("shape", "experimental.DynamicRaggedShape")
def test_guide_dynamic_ragged_shape(tf):
    rt = tf.ragged.constant([[1], [2, 3, 4], [], [5, 6]])
    rt_shape = tf.shape(rt)
    x = tf.constant([["a", "b"], ["c", "d"], ["e", "f"]])
    r3 = tf.ragged.constant([[[1, 2], [3, 4]], [[5, 6]]], ragged_rank=1)
    built = tf.experimental.DynamicRaggedShape(
        row_partitions=[tf.experimental.RowPartition.from_row_lengths([5, 3, 2])], inner_shape=[10, 8]
    )
    return (
        repr(rt_shape),
        tf.reshape(x, rt_shape),
        tf.zeros(rt_shape),
        tf.ones(rt_shape),
        tf.fill(rt_shape, "x"),
        rt_shape[0],
        repr(rt_shape[:1]),
        repr(tf.shape(r3)),
        tf.shape(r3)[2],
        tf.zeros(tf.shape(r3), tf.int32),
        repr(built),
        repr(tf.experimental.DynamicRaggedShape.from_lengths([4, (2, 1, 0, 8), 12])),
        tf.experimental.DynamicRaggedShape.from_lengths([4, (2, 1, 0, 8), 12])[2],
        rt_shape.rank,
        rt_shape.num_row_partitions,
    )


@same_as_tf("experimental.DynamicRaggedShape", edge=True)
def test_guide_dynamic_ragged_shape_not_uniform(tf):
    rt_shape = tf.shape(tf.ragged.constant([[1], [2, 3, 4], [], [5, 6]]))
    rt_shape[1]


@same_as_tf("random.Generator", "saved_model.save", "saved_model.load", edge=True)
def test_guide_generator_saved_model(tf):
    # a tf.Module holding a Generator: the loaded one goes on from the saved state (random guide)
    import tempfile

    class GenModule(tf.Module):
        def __init__(self):
            super().__init__()
            self.g = tf.random.Generator.from_seed(0)

        @tf.function
        def __call__(self):
            return self.g.normal([])

        @tf.function
        def state(self):
            return self.g.state

    GenModule.__qualname__ = "GenModule"
    globals()["GenModule"] = GenModule  # unison rebuilds a class its module defines
    m = GenModule()
    m()
    m.state()
    with tempfile.TemporaryDirectory() as d:
        tf.saved_model.save(m, d)
        after_save = [float(m()) for _ in range(2)]
        imported = tf.saved_model.load(d)
        states = [imported.state()]
        replay = [float(imported()) for _ in range(2)]
        states.append(imported.state())
    return states, after_save == replay


@same_as_tf("reduce_sum", "reduce_mean", "reduce_max", edge=True)
def test_guide_ragged_reduce_rows_with_inner_dims(tf):
    # rows of vectors (embeddings per word), one row empty: TF's segment values for it
    rt = tf.RaggedTensor.from_row_lengths(tf.reshape(tf.range(12.0), [6, 2]), [2, 0, 4])
    ints = tf.RaggedTensor.from_row_lengths(tf.reshape(tf.range(12), [6, 2]), [2, 0, 4])
    return (
        tf.reduce_sum(rt, axis=1),
        tf.reduce_mean(rt, axis=1),
        tf.reduce_max(rt, axis=1),
        tf.reduce_min(ints, axis=1),
        tf.reduce_prod(rt, axis=1),
        tf.reduce_mean(ints, axis=1),
    )
