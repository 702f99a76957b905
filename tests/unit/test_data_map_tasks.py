"""A parallel ``map`` in threads sends cheap elements to its pool in chunks and costly ones (an image
decode) one at a time, with the same results, order and errors. And ``resize``'s reused float
buffer for integer images: the same values as a fresh conversion, from any thread. And batches of
text lines cut straight from the reader: the arrays that stacking the lines gives."""

from __future__ import annotations

import concurrent.futures as cf
import threading
import time

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import unison as tf
from unison.data import threads
from unison.ops import image_resize, image_resize_cv2

D = tf.data.Dataset
pytestmark = pytest.mark.timeout(60)


def _task_sizes(fn, items, chunk=8):
    sizes = []
    real_submit = cf.ThreadPoolExecutor.submit

    def submit(self, run, first, batch):
        sizes.append(len(batch))
        return real_submit(self, run, first, batch)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cf.ThreadPoolExecutor, "submit", submit)
        out = list(threads.parallel_map(iter(items), fn, 2, True, chunk=chunk))
    return out, sizes


def test_cheap_elements_go_to_the_pool_in_chunks_and_costly_ones_one_at_a_time():
    out, sizes = _task_sizes(lambda x: x + 1, range(200))
    assert out == list(range(1, 201))
    assert sizes[0] == 1 and max(sizes) == 8 and sum(sizes) == 200

    def costly(x):
        end = time.thread_time() + 2 * threads.SLOW_ELEMENT_S
        while time.thread_time() < end:  # CPU work, as a decode is, not a wait
            pass
        return -x

    out, sizes = _task_sizes(costly, range(12))
    assert out == [-x for x in range(12)]
    assert sizes == [1] * 12


def test_a_parallel_map_of_costly_elements_keeps_order_errors_and_batches():
    def fn(x):
        end = time.thread_time() + threads.SLOW_ELEMENT_S
        while time.thread_time() < end:
            pass
        if int(x) == 9:
            raise ValueError("bad element")
        return x * 2

    ds = D.range(9).map(fn, num_parallel_calls=tf.data.AUTOTUNE).batch(4)
    assert [b.tolist() for b in ds] == [[0, 2, 4, 6], [8, 10, 12, 14], [16]]
    with pytest.raises(ValueError, match="bad element") as info:
        list(D.range(12).map(fn, num_parallel_calls=2))
    assert "element 9" in " ".join(getattr(info.value, "__notes__", []))


@pytest.mark.parametrize("opencv", [True, False], ids=["opencv", "torch"])
def test_resizing_integer_images_in_the_scratch_buffer_gives_a_fresh_conversions_values(opencv, monkeypatch):
    # both kernels' scratch buffers: OpenCV's (numpy) where it is installed, torch's without it
    if opencv and image_resize_cv2._cv2() is None:
        pytest.skip("OpenCV is not installed here: only torch's kernel runs")
    if not opencv:
        monkeypatch.setattr(image_resize_cv2, "usable", lambda x: False)
    rng = np.random.default_rng(3)
    sizes = [(37, 53), (120, 90), (9, 11), (64, 64)]
    images = [torch.from_numpy(rng.integers(0, 256, (*s, 3), dtype=np.uint8)) for s in sizes]

    def reference(image):  # the same kernel on a fresh float32 copy
        return tf.image.resize(image.to(torch.float32).contiguous(), [24, 31])

    def planar_reference(image):  # torch's kernel, which vmap (a functorch transform) always runs
        planar = image.to(torch.float32)[None].permute(0, 3, 1, 2)
        return F.interpolate(planar, size=(24, 31), mode="bilinear", align_corners=False).permute(0, 2, 3, 1)[0]

    want = [reference(image) for image in images]
    first = tf.image.resize(images[0], [24, 31])
    kept = first.clone()
    results: dict[int, list[torch.Tensor]] = {}

    def run(k):
        results[k] = [tf.image.resize(image, [24, 31]) for image in images[k:] + images[:k]]

    workers = [threading.Thread(target=run, args=(k,)) for k in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=30)
    for k, got in results.items():
        for g, w in zip(got, want[k:] + want[:k]):
            assert torch.equal(g, w)
    assert torch.equal(first, kept), "a later resize wrote into an earlier result"
    strided = images[1].permute(1, 0, 2)  # not contiguous: the plain conversion, its own layout
    assert torch.equal(tf.image.resize(strided, [24, 31]), reference(strided))
    assert image_resize._as_float_input(torch.ones(2, 2, 1)).dtype == torch.float32
    batch = torch.stack([images[3], images[3].flip(0)])  # under vmap: the plain conversion, per image
    mapped = torch.func.vmap(lambda image: tf.image.resize(image, [24, 31]))(batch)
    assert torch.equal(mapped[0], planar_reference(images[3]))
    assert torch.equal(mapped[1], planar_reference(images[3].flip(0)))


@pytest.mark.parametrize("size, drop", [(1, False), (3, False), (3, True), (20, False), (20, True)])
def test_batches_of_text_lines_cut_from_the_reader_equal_the_lines_stacked_one_by_one(tmp_path, size, drop):
    path = tmp_path / "lines.txt"
    path.write_bytes(b"a\nbb\n\nccc\r\n\xc3\xa9t\xc3\xa9\nnul\x00\x00\n\x00x\nlast")
    lines = [np.asarray(line.numpy()) for line in tf.data.TextLineDataset(str(path))]
    want = [np.stack(lines[i : i + size]) for i in range(0, len(lines), size)]
    if drop:
        want = [w for w in want if len(w) == size]
    got = [np.asarray(b.numpy()) for b in tf.data.TextLineDataset(str(path)).batch(size, drop_remainder=drop)]
    assert [g.tolist() for g in got] == [w.tolist() for w in want]
    assert [g.shape for g in got] == [w.shape for w in want]
