"""``batch`` after a sequential ``map`` copies large tensor elements into the batch as they arrive
(``batching._Filling``):
the same batches as stacking them, for tensors and (image, label) tuples, short and size-1
batches; an element of another shape, dtype or structure falls back to stacking, with the
same results and errors as before."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import unison as tf
from unison.data import batching

pytestmark = pytest.mark.timeout(60)
D = tf.data.Dataset


def _gen(items):
    # a sequential map: the elements are made in the thread that batches them
    return D.from_generator(lambda: iter(items), output_signature=_signature(items[0])).map(lambda x: x)


def _signature(item):
    if isinstance(item, tuple):
        return tuple(tf.TensorSpec(shape=None, dtype=tf.as_dtype(p.dtype)) for p in item)
    return tf.TensorSpec(shape=None, dtype=tf.as_dtype(item.dtype))


def _images(n, shape=(40, 30, 16), dtype=np.float32):
    rng = np.random.default_rng(n)
    return [rng.random(shape).astype(dtype) for _ in range(n)]


@pytest.mark.parametrize("size, drop", [(1, False), (4, False), (4, True), (32, False)])
def test_large_elements_filled_in_equal_the_stacked_batches(size, drop):
    images = _images(10)
    assert images[0].nbytes >= batching.FILL_MIN_BYTES
    labels = [np.int32(i) for i in range(10)]
    pairs = list(zip(images, labels))
    got = list(_gen(images).map(lambda x: x * 2).batch(size, drop_remainder=drop))
    got_pairs = list(D.range(10).map(lambda i: (tf.constant(images[int(i)]), tf.cast(i, tf.int32))).batch(size, drop))
    cut = range(0, 10 - (10 % size if drop else 0), size)
    assert len(got) == len(got_pairs) == len(cut)
    for b, (x, y), start in zip(got, got_pairs, cut):
        want = np.stack(images[start : start + size])
        np.testing.assert_array_equal(b.numpy(), want * 2)
        np.testing.assert_array_equal(x.numpy(), want)
        np.testing.assert_array_equal(y.numpy(), np.stack([p[1] for p in pairs[start : start + size]]))
        assert b.is_contiguous() and y.dtype == torch.int32


def test_an_element_of_another_shape_dtype_or_structure_falls_back_to_stacking():
    big = _images(3)
    with pytest.raises(tf.errors.InvalidArgumentError, match="different shapes"):
        list(_gen([*big[:2], _images(1, (40, 30, 8))[0]]).batch(3))
    mixed = [torch.from_numpy(big[0]), torch.from_numpy(big[1]).double(), torch.from_numpy(big[2])]
    (batch,) = list(D.range(3).map(lambda i: mixed[int(i)]).batch(3))  # another dtype: stacked, as before
    want = torch.stack(mixed)
    assert batch.dtype == want.dtype and torch.equal(batch, want)
    later = _images(5)
    later[3] = later[3][:20]  # a misfit in the second batch: the first is filled, the rest stacked
    with pytest.raises(tf.errors.InvalidArgumentError, match="different shapes"):
        list(_gen(later).batch(2))
    batches = list(D.from_tensor_slices(np.stack(big)).map(lambda x: x[:1] if x[0, 0, 0] > 2 else x).batch(3))
    np.testing.assert_array_equal(batches[0].numpy(), np.stack(big))


def test_small_elements_and_a_parallel_maps_elements_are_stacked_once_per_batch(monkeypatch):
    started = []
    real = batching._Filling.__init__

    def spy(self, *args):
        started.append(1)
        real(self, *args)

    monkeypatch.setattr(batching._Filling, "__init__", spy)
    assert [b.tolist() for b in _gen([np.float32(i) for i in range(5)]).batch(2)] == [[0, 1], [2, 3], [4]]
    assert started == []
    list(_gen(_images(3)).batch(2))
    assert started == [1, 1]
    parallel = D.from_tensor_slices(np.stack(_images(3))).map(lambda x: x + 1, num_parallel_calls=2).batch(2)
    assert [tuple(b.shape) for b in parallel] == [(2, 40, 30, 16), (1, 40, 30, 16)]
    assert started == [1, 1], "elements of a parallel map are stacked"
