"""tf.data semantics on unison.data, against TF's documented behaviour (fixed seeds, fast)."""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap
import threading
import time
import traceback

import numpy as np
import pytest
import torch

import unison as tf
from unison.data.options import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY

D = tf.data.Dataset
pytestmark = pytest.mark.timeout(60)


def ints(ds):
    return [int(x) for x in ds]


def test_tf_data_resolves_and_tensorspec_exported():
    assert tf.data.Dataset is D and tf.TensorSpec is tf.data.TensorSpec
    assert tf.data.AUTOTUNE == tf.data.experimental.AUTOTUNE == -1
    assert tf.data.experimental.AutoShardPolicy.FILE == 1


def test_batch_drop_remainder_shapes():
    ds = D.range(10)
    assert [len(b) for b in ds.batch(4)] == [4, 4, 2]
    assert [len(b) for b in ds.batch(4, drop_remainder=True)] == [4, 4]
    assert ds.batch(4, drop_remainder=True).element_spec.shape == (4,)
    assert ds.batch(4).element_spec.shape == (None,)
    # the element path (after a map) gives the same batches as the index path
    fast = [b.tolist() for b in ds.shuffle(10, seed=3).batch(3)]
    slow = [b.tolist() for b in ds.map(lambda x: x).shuffle(10, seed=3).batch(3)]
    assert fast == slow


def test_padded_batch_shapes_and_values():
    ds = D.range(1, 5).map(lambda x: torch.full((int(x),), int(x)))
    batches = list(ds.padded_batch(2))
    assert [tuple(b.shape) for b in batches] == [(2, 2), (2, 4)]
    assert batches[0].tolist() == [[1, 0], [2, 2]]
    fixed = list(ds.padded_batch(2, padded_shapes=[5], padding_values=torch.tensor(-1)))
    assert fixed[1].tolist() == [[3, 3, 3, -1, -1], [4, 4, 4, 4, -1]]
    with pytest.raises(ValueError, match="does not fit padded_shapes"):
        list(ds.padded_batch(2, padded_shapes=[2]))


def test_shuffle_buffer_semantics_and_reshuffle():
    assert ints(D.range(20).shuffle(1, seed=0)) == list(range(20))  # a buffer of 1 keeps the order
    out = ints(D.range(100).shuffle(5, seed=1))
    # with a buffer of b, the element at output position k was read among the first k + b inputs
    assert all(v <= k + 4 for k, v in enumerate(out)) and sorted(out) == list(range(100))
    ds = D.range(50).shuffle(50, seed=7)
    e1, e2 = ints(ds), ints(ds)
    assert e1 != e2 and sorted(e1) == sorted(e2) == list(range(50))
    assert ints(D.range(50).shuffle(50, seed=7)) == e1  # the same seed gives the same sequence of orders
    fixed = D.range(50).shuffle(50, seed=7, reshuffle_each_iteration=False)
    assert ints(fixed) == ints(fixed)
    # repeat() after shuffle reshuffles each repetition
    twice = ints(D.range(10).shuffle(10, seed=2).repeat(2))
    assert twice[:10] != twice[10:] and sorted(twice[:10]) == list(range(10))


def test_repeat_take_skip_shard_counts():
    assert len(ints(D.range(3).repeat(4))) == 12
    assert ints(D.range(3).repeat().take(7)) == [0, 1, 2, 0, 1, 2, 0]
    assert ints(D.range(10).skip(7)) == [7, 8, 9]
    assert ints(D.range(10).shard(3, 2)) == [2, 5, 8]
    assert ints(D.range(4).take(-1)) == [0, 1, 2, 3]
    assert ints(D.range(0).repeat()) == []


def test_cardinality_of_each_transformation():
    ds = D.range(10)
    card = {
        "range": ds,
        "batch": ds.batch(3),
        "batch_drop": ds.batch(3, drop_remainder=True),
        "repeat": ds.repeat(2),
        "repeat_inf": ds.repeat(),
        "take": ds.take(4),
        "take_inf": ds.repeat().take(5),
        "skip": ds.skip(4),
        "shard": ds.shard(3, 0),
        "shuffle": ds.shuffle(4),
        "map": ds.map(lambda x: x),
        "filter": ds.filter(lambda x: x > 2),
        "prefetch": ds.prefetch(2),
        "cache": ds.cache(),
        "enumerate": ds.enumerate(),
        "concat": ds.concatenate(ds),
        "zip": D.zip((ds, ds.take(3))),
        "unbatch": ds.batch(2).unbatch(),
        "gen": D.from_generator(lambda: iter([1]), output_types=torch.int64),
    }
    expected = {
        "range": 10,
        "batch": 4,
        "batch_drop": 3,
        "repeat": 20,
        "repeat_inf": INFINITE_CARDINALITY,
        "take": 4,
        "take_inf": 5,
        "skip": 6,
        "shard": 4,
        "shuffle": 10,
        "map": 10,
        "filter": UNKNOWN_CARDINALITY,
        "prefetch": 10,
        "cache": 10,
        "enumerate": 10,
        "concat": 20,
        "zip": 3,
        "unbatch": UNKNOWN_CARDINALITY,
        "gen": UNKNOWN_CARDINALITY,
    }
    assert {k: int(v.cardinality()) for k, v in card.items()} == expected
    assert len(ds.batch(3)) == 4
    with pytest.raises(TypeError, match="infinite"):
        len(ds.repeat())
    with pytest.raises(TypeError, match="unknown"):
        len(ds.filter(lambda x: x > 2))


def test_interleave_order_with_cycle_length():
    # TF's documented example
    ds = D.range(1, 6).interleave(lambda x: D.from_tensors(x).repeat(6), cycle_length=2, block_length=4)
    assert ints(ds) == [1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 3, 3, 4, 4, 5, 5, 5, 5, 5, 5]
    assert ints(D.range(3).flat_map(lambda x: D.range(x))) == [0, 0, 1]


def test_nesting_preserved_through_transformations():
    x = {"img": np.arange(12, dtype=np.float32).reshape(6, 2), "id": np.arange(6)}
    ds = D.from_tensor_slices((x, np.arange(6) % 2))
    pipelines = [
        ds,
        ds.shuffle(6, seed=1),
        ds.repeat(2),
        ds.take(3),
        ds.skip(1),
        ds.shard(2, 0),
        ds.cache(),
        ds.prefetch(2),
        ds.map(lambda a, b: (a, b)),
        ds.filter(lambda a, b: b == 0),
        ds.map(lambda a, b: (a, b), num_parallel_calls=tf.data.AUTOTUNE),
        ds.concatenate(ds),
    ]
    for p in pipelines:
        el = next(iter(p))
        assert isinstance(el, tuple) and set(el[0]) == {"img", "id"} and el[0]["img"].shape == (2,)
        b = next(iter(p.batch(2)))
        assert isinstance(b, tuple) and b[0]["img"].shape == (2, 2) and b[1].shape == (2,)
    b = next(iter(ds.batch(4).rebatch(3)))
    assert b[0]["img"].shape == (3, 2)
    un = next(iter(ds.batch(4).unbatch()))
    assert un[0]["id"].ndim == 0
    assert ds.element_spec[0]["img"] == tf.TensorSpec((2,), torch.float32)
    e, (a, _) = next(iter(ds.enumerate(5)))
    assert int(e) == 5 and set(a) == {"img", "id"}
    z = next(iter(D.zip({"a": D.range(3), "b": (D.range(3), D.range(3))})))
    assert set(z) == {"a", "b"} and isinstance(z["b"], tuple)


def test_strings_stay_numpy():
    ds = D.from_tensor_slices(np.array([b"ab", b"c", b"de"]))
    assert [x.item() for x in ds] == [b"ab", b"c", b"de"]
    assert next(iter(ds.batch(2))).tolist() == [b"ab", b"c"]


def test_cache_to_file_read_back_in_new_process(tmp_path):
    path = str(tmp_path / "cache")
    ds = D.from_tensor_slices((np.arange(5.0), np.array(["a", "b", "c", "d", "e"]))).cache(path)
    first = [(float(a), str(b)) for a, b in ds]
    code = textwrap.dedent(f"""
        import unison as tf
        def broken():
            raise RuntimeError("the pipeline ran instead of reading the cache")
            yield
        ds = tf.data.Dataset.from_generator(broken, output_signature=(tf.TensorSpec((), "float64"),
                                                                     tf.TensorSpec((), "string")))
        print([(float(a), str(b)) for a, b in ds.cache({path!r})])
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(first)


def test_damaged_cache_file_is_named(tmp_path):
    path = tmp_path / "c"
    (tmp_path / "c.unison-cache").write_bytes(b"not a cache")
    with pytest.raises(ValueError, match=r"c\.unison-cache cannot be read.*Delete it"):
        list(D.range(3).cache(str(path)))


def test_memory_cache_runs_the_pipeline_once():
    calls = []
    ds = D.range(4).map(lambda x: (calls.append(1), x)[1]).cache()
    assert ints(ds) == ints(ds) and len(calls) == 4


def test_from_generator_signatures_and_mismatch():
    def gen():
        yield 1, [1.0, 2.0]
        yield 2, [3.0, 4.0]

    sig = (tf.TensorSpec((), torch.int64), tf.TensorSpec((2,), torch.float32))
    got = list(D.from_generator(gen, output_signature=sig))
    assert got[1][1].dtype == torch.float32 and got[1][1].tolist() == [3.0, 4.0]
    old = list(D.from_generator(gen, output_types=(torch.int64, torch.float32), output_shapes=((), (2,))))
    assert int(old[0][0]) == 1

    def bad():
        yield 1, [1.0, 2.0]
        yield 1

    with pytest.raises(TypeError, match="element 1 does not match output_signature"):
        list(D.from_generator(bad, output_signature=sig))
    with pytest.raises(TypeError, match="does not match"):
        list(D.from_generator(lambda: iter([(1, [1.0, 2.0, 3.0])]), output_signature=sig))


def test_map_error_names_element_and_keeps_traceback():
    def fn(x):
        if int(x) == 3:
            raise ValueError("bad element")
        return x

    for calls in (None, 2):
        with pytest.raises(ValueError, match="bad element") as info:
            list(D.range(6).map(fn, num_parallel_calls=calls))
        assert "on element 3" in " ".join(info.value.__notes__)
        assert "in fn" in "".join(traceback.format_exception(info.value))


def test_bad_arguments_raise_clear_errors():
    with pytest.raises(ValueError, match=r"same first dimension.*\(3,\), \(4,\)"):
        D.from_tensor_slices((np.zeros(3), np.zeros(4)))
    with pytest.raises(ValueError, match="batch_size.*Received: batch_size=0"):
        D.range(3).batch(0)
    with pytest.raises(ValueError, match=r"shard index must be in \[0, num_shards\)"):
        D.range(3).shard(2, 2)
    with pytest.raises(AttributeError, match="Dataset.sparse_batch is not supported.*padded_batch"):
        D.range(3).sparse_batch(2, [3])
    with pytest.raises(tf.errors.InvalidArgumentError, match="window.*`shift` must be greater than zero"):
        D.range(3).window(2, shift=0)


def test_parallel_map_order_and_prefetch_threads_stop():
    ds = D.range(200).map(lambda x: x * 2, num_parallel_calls=tf.data.AUTOTUNE).prefetch(4)
    assert ints(ds) == [2 * i for i in range(200)]

    def prefetchers():
        return [t for t in threading.enumerate() if t.name == "unison-data-prefetch"]

    it = iter(D.range(10**6).prefetch(8))
    next(it)
    assert len(prefetchers()) == 1
    del it
    gc.collect()
    deadline = time.monotonic() + 5
    while prefetchers() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert prefetchers() == []
    unordered = ints(D.range(50).map(lambda x: x, num_parallel_calls=4, deterministic=False))
    assert sorted(unordered) == list(range(50))


def test_reduce_as_numpy_sample_choose_and_options():
    assert int(D.range(5).reduce(0, lambda s, x: s + x)) == 10
    assert list(D.range(2).as_numpy_iterator()) == [0, 1]
    mixed = ints(D.sample_from_datasets([D.range(5), D.range(100, 105)], seed=1))
    assert sorted(mixed) == list(range(5)) + list(range(100, 105))
    chosen = ints(D.choose_from_datasets([D.range(10), D.range(100, 110)], D.range(4).map(lambda x: x % 2)))
    assert chosen == [0, 100, 1, 101]
    opts = tf.data.Options()
    opts.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.OFF
    ds = D.range(3).with_options(opts).map(lambda x: x)
    assert ds.options().experimental_distribute.auto_shard_policy == tf.data.experimental.AutoShardPolicy.OFF


def test_text_line_dataset(tmp_path):
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    (tmp_path / "b.txt").write_text("three\n")
    ds = tf.data.TextLineDataset([str(tmp_path / "a.txt"), str(tmp_path / "b.txt")])
    assert [x.item() for x in ds] == [b"one", b"two", b"three"]
    files = D.list_files(str(tmp_path / "*.txt"), shuffle=False)
    assert [x.item() for x in files.interleave(tf.data.TextLineDataset, cycle_length=2)] == [b"one", b"three", b"two"]


def _model():
    m = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])
    m.compile(optimizer="sgd", loss="mse")
    return m


def test_fit_evaluate_predict_on_a_dataset():
    rng = np.random.default_rng(0)
    x, y = rng.random((40, 3)), rng.random((40, 2))  # float64, as x / 255.0 gives
    torch.manual_seed(0)
    a = _model()
    ha = a.fit(x.astype("float32"), y.astype("float32"), batch_size=8, shuffle=False, epochs=2, verbose=0)
    torch.manual_seed(0)
    b = _model()
    ds = D.from_tensor_slices((x, y)).batch(8)
    hb = b.fit(ds, epochs=2, verbose=0, validation_data=ds)
    assert np.allclose(ha.history["loss"], hb.history["loss"], atol=1e-6)
    assert "val_loss" in hb.history
    assert abs(b.evaluate(ds, verbose=0) - hb.history["val_loss"][-1]) < 1e-6
    assert b.predict(D.from_tensor_slices(x).batch(7), verbose=0).shape == (40, 2)
    h = b.fit(ds.repeat(), steps_per_epoch=3, epochs=2, verbose=0)
    assert len(h.history["loss"]) == 2


def test_fit_bad_inputs():
    m = _model()
    ds = D.from_tensor_slices((np.zeros((4, 3)), np.zeros((4, 2)))).batch(2)
    with pytest.raises(ValueError, match="infinite.*steps_per_epoch"):
        m.fit(ds.repeat(), verbose=0)
    per_replica = tf.distribute.get_strategy().distribute_datasets_from_function(lambda ctx: ds.repeat())
    with pytest.raises(ValueError, match="infinite.*steps_per_epoch"):
        m.fit(per_replica, verbose=0)
    with pytest.raises(ValueError, match="y is None"):
        m.fit(np.zeros((4, 3), "float32"), None, verbose=0)
    with pytest.raises(ValueError, match="0 samples"):
        m.fit(np.zeros((0, 3), "float32"), np.zeros((0, 2), "float32"), verbose=0)
    with pytest.raises(ValueError, match="`y` must not be given"):
        m.fit(ds, np.zeros(4), verbose=0)


def test_map_in_worker_processes_keeps_order_and_names_errors():
    opts = tf.data.Options()
    opts.threading.worker_processes = 2
    ds = D.from_tensor_slices((np.arange(100), np.arange(100) * 2)).shuffle(100, seed=4, reshuffle_each_iteration=False)
    mapped = ds.map(lambda a, b: (a * 10, {"b": b}), num_parallel_calls=tf.data.AUTOTUNE).with_options(opts)
    reference = ds.map(lambda a, b: (a * 10, {"b": b}))
    assert [(int(a), int(d["b"])) for a, d in mapped] == [(int(a), int(d["b"])) for a, d in reference]
    batches = [b[0].tolist() for b in mapped.batch(16)]
    assert batches == [b[0].tolist() for b in reference.batch(16)] and len(batches[-1]) == 4

    def bad(a, b):
        if int(a) == 7:
            raise KeyError("seven")
        return a

    with pytest.raises(KeyError, match="seven") as info:
        list(
            D.from_tensor_slices((np.arange(20), np.arange(20)))
            .map(bad, num_parallel_calls=2)
            .with_options(opts)
            .batch(4)
        )
    notes = " ".join(info.value.__notes__)
    assert "on element 7" in notes and "in bad" in notes


def test_keyboard_interrupt_in_the_pipeline_reaches_the_consumer_and_stops_threads():
    def interrupt(x):
        if int(x) == 5:
            raise KeyboardInterrupt
        return x

    for calls in (None, 2):
        with pytest.raises(KeyboardInterrupt):
            list(D.range(10**6).map(interrupt, num_parallel_calls=calls).prefetch(2))
    gc.collect()
    deadline = time.monotonic() + 5
    while any(t.name.startswith("unison-data") for t in threading.enumerate()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [t.name for t in threading.enumerate() if t.name == "unison-data-prefetch"]


def test_distributed_dataset_element_spec_and_iterator_protocol():
    strategy = tf.distribute.get_strategy()
    dist = strategy.experimental_distribute_dataset(
        D.from_tensor_slices((np.zeros((6, 3), "float32"), np.arange(6))).batch(4)
    )
    assert dist.element_spec[0] == tf.TensorSpec((None, 3), torch.float32)
    it = iter(dist)
    x, y = next(it)
    assert x.shape == (4, 3) and y.tolist() == [0, 1, 2, 3]


def test_tf_input_tutorial_snippets():
    # the distributed input tutorial's pipelines (site/en/tutorials/distribute/input.ipynb)
    strategy = tf.distribute.MirroredStrategy()
    dataset = D.from_tensors(([1.0], [1.0])).repeat(100).batch(16)
    features, labels = next(iter(dataset))
    assert features.dtype == torch.float32 and features.shape == (16, 1)  # a Python float is float32
    dist_iterator = iter(strategy.experimental_distribute_dataset(dataset))
    assert next(dist_iterator)[0].shape == (16, 1) and dist_iterator.get_next()[1].shape == (16, 1)
    it = iter(strategy.experimental_distribute_dataset(D.range(9).batch(4)))
    seen = []
    while (optional := it.get_next_as_optional()).has_value():
        seen.append(optional.get_value().tolist())
    assert seen == [[0, 1, 2, 3], [4, 5, 6, 7], [8]]

    def dataset_fn(input_context):
        batch_size = input_context.get_per_replica_batch_size(16)
        ds = D.from_tensors(([1.0], [1.0])).repeat(64).batch(16)
        ds = ds.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)
        return ds.batch(batch_size).prefetch(2)

    batches = list(strategy.distribute_datasets_from_function(dataset_fn))
    assert [tuple(b[0].shape) for b in batches] == [(4, 16, 1)]
    assert iter(dataset).get_next_as_optional().has_value()
