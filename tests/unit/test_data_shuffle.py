"""The block shuffle: the vectorised index path and the element path give the same order."""

from __future__ import annotations

import numpy as np
import pytest

import unison as tf
from unison.data.shuffle_buffer import _blocks, _replace_array, _replace_list, shuffle_blocks

D = tf.data.Dataset
pytestmark = pytest.mark.timeout(60)


def test_vectorised_replacement_equals_the_item_by_item_loop():
    rng = np.random.default_rng(0)
    for _ in range(500):
        size, m = int(rng.integers(1, 20)), int(rng.integers(1, 50))
        buf, incoming, slots = rng.integers(0, 1000, size), rng.integers(1000, 2000, m), rng.integers(0, size, m)
        vec_buf, loop_buf = buf.copy(), buf.tolist()
        assert _replace_array(vec_buf, slots, incoming).tolist() == _replace_list(
            loop_buf, slots.tolist(), incoming.tolist()
        )
        assert vec_buf.tolist() == loop_buf


@pytest.mark.parametrize("n,buffer", [(0, 4), (1, 4), (50, 7), (300, 64), (300, 300), (5000, 100)])
def test_index_blocks_and_element_blocks_shuffle_alike_with_tf_buffer_bounds(n, buffer):
    chunks = [np.arange(n)[i : i + 7] for i in range(0, n, 7)]
    by_index = [v for block in shuffle_blocks(iter(chunks), buffer, 11) for v in block.tolist()]
    by_element = [v for block in shuffle_blocks(_blocks(iter(range(n))), buffer, 11) for v in block]
    assert by_index == by_element and sorted(by_index) == list(range(n))
    assert all(v <= k + buffer - 1 for k, v in enumerate(by_index))  # read among the first k + buffer


def test_pipeline_fast_path_and_element_path_agree_with_a_small_buffer():
    fast = [b.tolist() for b in D.range(1000).shuffle(37, seed=2).batch(16)]
    slow = [b.tolist() for b in D.range(1000).map(lambda x: x).shuffle(37, seed=2).batch(16)]
    assert fast == slow
