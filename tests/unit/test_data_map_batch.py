"""A parallel ``map`` followed by ``batch``: the workers copy large elements into their batch
(unison.data.map_batch). The batches must be exactly those of the sequential map, whatever the
elements: large or small, tensors, tuples or dicts, one misfit element, ragged rows, a short last
batch, an error in the function."""

from __future__ import annotations

import subprocess
import sys
import threading

import numpy as np
import pytest
import torch

import unison as tf
from unison.data import map_batch, threads


def _image(i):  # a large element (64x64x8 float32 = 128 KB), its values from its index
    return tf.fill([64, 64, 8], tf.cast(i, tf.float32)) + tf.reshape(
        tf.range(64 * 64 * 8, dtype=tf.float32), [64, 64, 8]
    )


def _batches(fn, n, size, drop=False, parallel=2):
    ds = tf.data.Dataset.range(n).map(fn, num_parallel_calls=parallel).batch(size, drop_remainder=drop)
    return list(ds)


def _as_numpy(batch):
    if isinstance(batch, dict):
        return {k: _as_numpy(v) for k, v in batch.items()}
    if isinstance(batch, tuple):
        return tuple(_as_numpy(v) for v in batch)
    return batch.numpy()


def _assert_same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = _as_numpy(g), _as_numpy(w)
        if isinstance(w, dict):
            assert g.keys() == w.keys()
            for k in w:
                np.testing.assert_array_equal(g[k], w[k])
        elif isinstance(w, tuple):
            assert isinstance(g, tuple) and len(g) == len(w)
            for a, b in zip(g, w):
                np.testing.assert_array_equal(a, b)
        else:
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("n, size, drop", [(10, 4, False), (10, 4, True), (8, 4, False), (3, 5, False), (3, 5, True)])
@pytest.mark.parametrize(
    "fn",
    [_image, lambda i: (_image(i), i), lambda i: {"x": _image(i), "y": i}, lambda i: tf.fill([3], i)],
    ids=["large", "tuple", "dict", "small"],
)
def test_parallel_map_then_batch_gives_the_sequential_maps_batches(fn, n, size, drop):
    _assert_same(_batches(fn, n, size, drop), _batches(fn, n, size, drop, parallel=None))


def test_the_workers_fill_the_batch_of_a_large_element_and_each_batch_is_its_own_tensor():
    got = _batches(_image, 8, 4)
    assert [b.shape[0] for b in got] == [4, 4]
    assert got[0].data_ptr() != got[1].data_ptr()
    np.testing.assert_array_equal(got[0][:, 0, 0, 0].numpy(), [0, 1, 2, 3])
    np.testing.assert_array_equal(got[1][:, 0, 0, 0].numpy(), [4, 5, 6, 7])


def test_an_element_of_another_shape_gives_the_batch_shape_error_as_before():
    def varied(i):
        return tf.zeros([64, 64 + tf.cast(i == 2, tf.int32).numpy().item(), 8])

    with pytest.raises(ValueError, match="different shapes") as parallel:
        _batches(varied, 6, 4)
    with pytest.raises(ValueError, match="different shapes") as sequential:
        _batches(varied, 6, 4, parallel=None)
    assert type(parallel.value) is type(sequential.value)


def test_an_element_of_another_dtype_is_stacked_with_the_others_as_before():
    def mixed(i):
        image = _image(i)
        return tf.cast(image, tf.float64) if int(i) == 1 else image

    parallel, sequential = _batches(mixed, 4, 4), _batches(mixed, 4, 4, parallel=None)
    assert parallel[0].dtype == sequential[0].dtype == torch.float64  # stacking promotes, both ways
    _assert_same(parallel, sequential)


def test_an_error_in_the_function_names_its_element():
    def fails_on_five(i):
        if int(i) == 5:
            raise RuntimeError("bad element")
        return _image(i)

    with pytest.raises(RuntimeError, match="bad element") as info:
        _batches(fails_on_five, 8, 4)
    assert any("element 5" in note for note in getattr(info.value, "__notes__", []))


def test_ragged_elements_still_batch_into_a_ragged_tensor():
    def rows(i):
        k = int(i) + 1
        return tf.RaggedTensor.from_row_lengths(tf.ones([k + 1]), [k, 1])

    got = _batches(rows, 4, 2)
    want = _batches(rows, 4, 2, parallel=None)
    assert [g.to_list() for g in got] == [w.to_list() for w in want]


def test_map_into_batches_places_large_elements_and_stacks_small_ones():
    large = list(map_batch.map_into_batches(iter(range(5)), lambda i: torch.full((300, 100), float(i)), 2, 2, False))
    assert [tuple(b.shape) for b in large] == [(2, 300, 100), (2, 300, 100), (1, 300, 100)]
    assert [float(b[-1, 0, 0]) for b in large] == [1.0, 3.0, 4.0]
    small = list(map_batch.map_into_batches(iter(range(5)), lambda i: torch.tensor([i]), 2, 2, True))
    assert [b.tolist() for b in small] == [[[0], [1]], [[2], [3]]]
    assert map_batch.dense_parts({"x": torch.zeros(1)}) is None
    assert map_batch.dense_parts((torch.zeros(1), torch.ones(2))) is not None


def test_a_worker_that_dies_outside_the_function_is_named_not_a_hang(monkeypatch):
    def broken_report(self, index, value):
        raise MemoryError("no room for the result")

    monkeypatch.setattr(map_batch._Pull, "report", broken_report)
    with pytest.raises(RuntimeError, match="map worker thread 'unison-data-map-batch-.*stopped while making batch 0"):
        list(map_batch.map_into_batches(iter(range(4)), lambda i: torch.zeros(3), 2, 2, False))


def test_workers_are_not_daemon_threads_even_when_a_daemon_thread_starts_them():
    # a daemon thread stopped by Python's exit inside a torch call aborts the process (exit 134):
    # the workers are joined at exit instead, also when a prefetch (daemon) thread started them
    seen = {}

    def record(i):
        seen[threading.current_thread().name] = threading.current_thread().daemon
        return torch.zeros(200, 100)

    def consume():
        list(map_batch.map_into_batches(iter(range(8)), record, 2, 4, False))

    starter = threading.Thread(target=consume, daemon=True)
    starter.start()
    starter.join(timeout=30)
    assert seen and not any(seen.values())


def test_exit_stops_live_prefetch_threads():
    ds = tf.data.Dataset.range(1000).map(lambda i: tf.fill([64, 64, 8], tf.cast(i, tf.float32))).batch(4).prefetch(2)
    it = iter(ds)
    next(it)
    with threads._LIVE_LOCK:
        live = [t for t in threads._LIVE if t.is_alive()]
    assert live, "the pipeline's prefetch thread is registered while it runs"
    threads._stop_at_exit()  # what atexit runs before the interpreter finalises
    assert not any(t.is_alive() for t in live)
    del it


def test_a_program_that_exits_with_an_image_pipelines_iterator_open_exits_cleanly(tmp_path):
    from PIL import Image

    for i in range(24):
        Image.fromarray(np.full((300, 400, 3), i, np.uint8)).save(tmp_path / f"{i}.jpg")
    program = tmp_path / "open_iterator.py"
    program.write_text(
        "import sys\n"
        "import unison as tf\n"
        "load = lambda p: tf.image.resize(tf.io.decode_jpeg(tf.io.read_file(p), channels=3), [224, 224])\n"
        "files = tf.data.Dataset.list_files(sys.argv[1] + '/*.jpg', shuffle=False)\n"
        "ds = files.map(load, num_parallel_calls=tf.data.AUTOTUNE).batch(4).prefetch(2)\n"
        "it = iter(ds)\n"
        "next(it)\n"
        "print('done', flush=True)\n"
    )
    for _ in range(2):  # the abort it guards against came at one exit in 2-10
        out = subprocess.run(
            [sys.executable, str(program), str(tmp_path)], capture_output=True, text=True, timeout=120, check=False
        )
        assert (out.returncode, out.stdout.strip()) == (0, "done"), out.stderr[-2000:]
