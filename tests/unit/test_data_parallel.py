"""Parallel pipelines over files: intra-op threads of a pipeline's ops, AUTOTUNE's choice of threads
for file names, parallel interleave in TF's order, and bad image files named in the error."""

from __future__ import annotations

import os
import threading
import time

import numpy as np
import pytest
import torch

import unison as tf
from unison.data import intraop, processes
from unison.data.context import IterContext
from unison.data.transforms import AUTO_PROCESSES_MIN_ELEMENTS
from unison.ops import image_codecs

D = tf.data.Dataset
pytestmark = pytest.mark.timeout(120)


def _jpegs(folder, count=6, size=(40, 52)):
    from PIL import Image

    rng = np.random.default_rng(0)
    paths = []
    for i in range(count):
        path = os.path.join(folder, f"{i:03d}.jpg")
        Image.fromarray(rng.integers(0, 256, (*size, 3), dtype=np.uint8)).save(path, quality=90)
        paths.append(path)
    return paths


@pytest.mark.skipif(not intraop.available(), reason="torch's parallel backend here is not OpenMP")
@pytest.mark.parametrize("calls", [None, tf.data.AUTOTUNE])
def test_a_pipelines_ops_run_on_one_intra_op_thread_and_the_consumer_keeps_its_threads(calls):
    before = torch.get_num_threads()
    seen = []

    def fn(x):
        seen.append(torch.get_num_threads())
        return x * 2

    ds = D.range(40).map(fn, num_parallel_calls=calls).batch(4).prefetch(2)
    during = []
    for _ in ds:
        during.append(torch.get_num_threads())  # the consumer's code between elements
    assert seen and set(seen) == {1}
    assert set(during) == {before} and torch.get_num_threads() == before


@pytest.mark.skipif(not intraop.available(), reason="torch's parallel backend here is not OpenMP")
def test_max_intra_op_parallelism_raises_the_limit():
    old = torch.get_num_threads()
    torch.set_num_threads(4)
    try:
        seen = []
        options = tf.data.Options()
        options.threading.max_intra_op_parallelism = 3
        ds = D.range(5).map(lambda x: (seen.append(torch.get_num_threads()), x)[1]).with_options(options)
        assert [int(v) for v in ds] == [0, 1, 2, 3, 4]
        assert set(seen) == {3} and torch.get_num_threads() == 4
    finally:
        torch.set_num_threads(old)


def test_autotune_maps_file_names_in_threads_and_arrays_in_processes(monkeypatch):
    monkeypatch.setattr(processes, "usable_cores", lambda: 2)
    if not processes.available():
        pytest.skip("worker processes need fork")
    n = AUTO_PROCESSES_MIN_ELEMENTS
    names = D.from_tensor_slices(np.array([f"/data/{i}.jpg" for i in range(n)])).map(
        lambda p: p, num_parallel_calls=tf.data.AUTOTUNE
    )
    numbers = D.from_tensor_slices(np.arange(n, dtype=np.float32)).map(lambda x: x, num_parallel_calls=tf.data.AUTOTUNE)
    ctx = IterContext()
    # strings in (file names): read/decode ops release the GIL, the large decoded results stay in-process
    assert names.process_workers(ctx, fused=True) == 0
    assert numbers.process_workers(ctx, fused=True) == 2


def _slow_range(x):
    return D.range(int(x) * 10, int(x) * 10 + 3).map(lambda v: (time.sleep(0.01), v)[1])


def test_parallel_interleave_reads_ahead_in_threads_and_keeps_tfs_order():
    names = set()

    def opened(x):
        return D.range(int(x) * 10, int(x) * 10 + 3).map(lambda v: (names.add(threading.current_thread().name), v)[1])

    sequential = [int(v) for v in D.range(5).interleave(opened, cycle_length=3, block_length=2)]
    assert not any(n.startswith("unison-data-prefetch") for n in names)
    parallel = [
        int(v)
        for v in D.range(5).interleave(opened, cycle_length=3, block_length=2, num_parallel_calls=tf.data.AUTOTUNE)
    ]
    assert parallel == sequential == [0, 1, 10, 11, 20, 21, 2, 12, 22, 30, 31, 40, 41, 32, 42]
    assert sum(n.startswith("unison-data-prefetch") for n in names) >= 1


def test_parallel_interleave_stops_its_threads_when_the_iterator_is_closed():
    baseline = threading.active_count()
    it = iter(D.range(4).interleave(_slow_range, cycle_length=4, num_parallel_calls=2))
    assert int(next(it)) == 0
    it.close()
    deadline = time.monotonic() + 10
    while threading.active_count() > baseline and time.monotonic() < deadline:
        time.sleep(0.02)
    assert threading.active_count() <= baseline


def test_interleave_refuses_a_bad_num_parallel_calls():
    with pytest.raises(ValueError, match="num_parallel_calls"):
        D.range(3).interleave(lambda x: D.range(2), num_parallel_calls=0)


@pytest.mark.parametrize("calls", [None, tf.data.AUTOTUNE])
def test_a_corrupt_or_missing_image_names_the_file_and_the_element(tmp_path, calls):
    paths = _jpegs(str(tmp_path))
    with open(paths[2], "rb") as handle:
        data = handle.read()
    with open(paths[2], "wb") as handle:
        handle.write(data[: len(data) // 3])  # truncated
    with open(paths[4], "wb") as handle:
        handle.write(b"not an image at all")

    def load(path):
        return tf.image.resize(tf.io.decode_jpeg(tf.io.read_file(path), channels=3), [16, 16])

    ds = D.list_files(str(tmp_path / "*.jpg"), shuffle=False).map(load, num_parallel_calls=calls).batch(2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="002.jpg") as info:
        list(ds)
    assert "element 2" in " ".join(getattr(info.value, "__notes__", []))
    unknown = D.from_tensor_slices([paths[4]]).map(load, num_parallel_calls=calls)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"004\.jpg.*Unknown image file format"):
        list(unknown)
    missing = D.from_tensor_slices([str(tmp_path / "gone.jpg")]).map(load, num_parallel_calls=calls)
    with pytest.raises(tf.errors.NotFoundError, match="gone.jpg"):
        list(missing)


def test_every_decoder_names_the_file_it_was_read_from(tmp_path):
    path = tmp_path / "x.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 20)  # a PNG signature, then nothing valid
    contents = tf.io.read_file(str(path))
    for decode in (tf.io.decode_png, tf.io.decode_image, tf.io.decode_jpeg):
        with pytest.raises(tf.errors.InvalidArgumentError, match="x.png"):
            decode(contents)


@pytest.mark.skipif(image_codecs._simplejpeg() is None, reason="simplejpeg is not installed")
def test_the_libjpeg_turbo_path_and_pillows_agree_on_the_accurate_dct(tmp_path, monkeypatch):
    path = _jpegs(str(tmp_path), count=1, size=(37, 61))[0]
    contents = tf.io.read_file(path)
    turbo = {c: tf.io.decode_jpeg(contents, channels=c, dct_method="INTEGER_ACCURATE").numpy() for c in (0, 1, 3, 4)}
    monkeypatch.setattr(image_codecs, "_simplejpeg", lambda: None)
    pillow = {c: tf.io.decode_jpeg(contents, channels=c, dct_method="INTEGER_ACCURATE").numpy() for c in (0, 1, 3, 4)}
    for c in (0, 1, 3, 4):
        assert turbo[c].shape == pillow[c].shape and turbo[c].dtype == np.uint8
        assert np.array_equal(turbo[c], pillow[c]), c
    assert turbo[4].shape[-1] == 4 and (turbo[4][..., 3] == 255).all()


@pytest.mark.skipif(not processes.available(), reason="worker processes need fork")
def test_a_killed_worker_process_is_named_by_rank_and_pid_and_nothing_hangs():
    import multiprocessing as mp
    import signal

    options = tf.data.Options()
    options.threading.worker_processes = 2
    it = iter(D.range(10**6).map(lambda x: x, num_parallel_calls=2).batch(10).with_options(options))
    next(it)
    victim = next(p for p in mp.active_children() if p.name == "unison-data-worker-1")
    os.kill(victim.pid, signal.SIGKILL)
    with pytest.raises(RuntimeError, match=rf"worker 1, pid {victim.pid}\) exited unexpectedly"):
        for _ in range(10**5):
            next(it)
    it.close()


def test_an_error_inside_a_parallel_interleave_reaches_the_consumer_as_itself():
    def opened(x):
        def check(v):
            if int(v) == 21:
                raise ValueError("bad record 21")
            return v

        return D.range(int(x) * 10, int(x) * 10 + 3).map(check)

    with pytest.raises(ValueError, match="bad record 21"):
        list(D.range(4).interleave(opened, cycle_length=2, num_parallel_calls=2))


def test_image_dataset_from_directory_decodes_jpegs_as_tf_io_does_and_names_a_bad_file(tmp_path):
    paths = _jpegs(str(tmp_path), count=3, size=(30, 50))
    ds = tf.keras.utils.image_dataset_from_directory(
        str(tmp_path), labels=None, image_size=(16, 20), batch_size=2, shuffle=False, verbose=False
    )
    got = np.concatenate([b.numpy() for b in ds])
    expected = np.stack(
        [tf.image.resize(tf.io.decode_jpeg(tf.io.read_file(p), channels=3), [16, 20]).numpy() for p in paths]
    )
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-4)
    with open(paths[1], "r+b") as handle:
        handle.truncate(200)
    ds = tf.keras.utils.image_dataset_from_directory(
        str(tmp_path), labels=None, image_size=(16, 20), batch_size=2, shuffle=False, verbose=False
    )
    with pytest.raises(ValueError, match="001.jpg"):
        list(ds)
