"""More tf.* functions: einsum/norm/pad/sort/N-d indexing, control flow, tf.nn convolutions and
pooling, tf.image and tf.nest. Expected values are TF's documented results (its docs' examples
where they exist) or small cases checked by hand, and numpy/torch computations of TF's formulas."""

from __future__ import annotations

import collections
import logging
import math
import pickle

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import unison as tf

pytestmark = pytest.mark.timeout(60)


# --- contractions and norms ---------------------------------------------------------------------


def test_einsum_and_tensordot_match_numpy_and_pass_gradients():
    a, b = torch.randn(2, 3, 4), torch.randn(2, 4, 5)
    np.testing.assert_allclose(
        tf.einsum("bij,bjk->bik", a, b).numpy(), np.einsum("bij,bjk->bik", a.numpy(), b.numpy()), rtol=1e-5
    )
    x = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.einsum("ij,jk->ik", x, tf.constant([[1.0], [10.0]])))
    assert tape.gradient(y, x).tolist() == [[1.0, 10.0], [1.0, 10.0]]
    m, n = torch.randn(3, 4), torch.randn(4, 2)
    torch.testing.assert_close(tf.tensordot(m, n, axes=1), m @ n)
    torch.testing.assert_close(tf.tensordot(m, n, axes=[[1], [0]]), m @ n)
    torch.testing.assert_close(tf.tensordot(m, n, axes=[1, 0]), m @ n)
    assert tf.tensordot(m, n, axes=0).shape == (3, 4, 4, 2)


def test_norm_follows_tf_for_vectors_and_matrices():
    x = tf.constant([[3.0, -4.0], [0.0, 1.0]])
    assert tf.norm(tf.constant([3.0, 4.0])).item() == 5.0
    assert tf.norm(x).item() == pytest.approx(math.sqrt(26.0))  # axis=None: all values as one vector
    assert tf.norm(x, ord=1).item() == 8.0
    assert tf.norm(x, ord=np.inf).item() == 4.0
    assert tf.norm(x, axis=1).tolist() == [5.0, 1.0]
    assert tf.norm(x, ord=1, axis=0).tolist() == [3.0, 5.0]
    assert tf.norm(tf.constant([1.0, 2.0]), ord=3).item() == pytest.approx(9.0 ** (1 / 3))
    assert tf.norm(x, ord="fro", axis=[0, 1]).item() == pytest.approx(math.sqrt(26.0))
    assert tf.norm(x, ord=1, axis=[0, 1]).item() == 5.0  # largest column sum
    assert tf.norm(x, ord=np.inf, axis=[0, 1]).item() == 7.0  # largest row sum
    assert tf.norm(x, ord=2, axis=[-2, -1]).item() == pytest.approx(np.linalg.norm(x.numpy(), 2), rel=1e-5)
    assert tf.norm(x, keepdims=True).shape == (1, 1)
    assert tf.norm(x, axis=1, keepdims=True).shape == (2, 1)


def test_clip_by_norm_and_global_norm():
    t = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    clipped = tf.clip_by_norm(t, 2.0)
    torch.testing.assert_close(clipped, t * 2.0 / math.sqrt(91.0))
    assert tf.clip_by_norm(t, 100.0).tolist() == t.tolist()
    rows = tf.clip_by_norm(tf.constant([[3.0, 4.0], [0.3, 0.4]]), 1.0, axes=[1])
    torch.testing.assert_close(rows, torch.tensor([[0.6, 0.8], [0.3, 0.4]]))
    grads, norm = tf.clip_by_global_norm([tf.constant([3.0]), None, tf.constant([4.0])], 2.5)
    assert norm.item() == 5.0 and grads[1] is None
    torch.testing.assert_close(grads[0], torch.tensor([1.5]))
    torch.testing.assert_close(grads[2], torch.tensor([2.0]))
    unchanged, _ = tf.clip_by_global_norm([tf.constant([0.3, 0.4])], 1.0)
    torch.testing.assert_close(unchanged[0], torch.tensor([0.3, 0.4]))
    nan, _ = tf.clip_by_global_norm([tf.constant([float("inf"), 1.0])], 1.0)
    assert bool(torch.isnan(nan[0]).all())


# --- padding, sorting, masks, N-d indexing --------------------------------------------------------


def test_pad_modes_match_numpy():
    t = np.arange(1, 7).reshape(2, 3)
    paddings = [[1, 1], [2, 2]]
    assert tf.pad(t, paddings).numpy().tolist() == np.pad(t, paddings).tolist()
    assert tf.pad(t, paddings, constant_values=9).numpy().tolist() == np.pad(t, paddings, constant_values=9).tolist()
    assert tf.pad(t, paddings, "REFLECT").numpy().tolist() == np.pad(t, paddings, mode="reflect").tolist()
    assert tf.pad(t, paddings, "symmetric").numpy().tolist() == np.pad(t, paddings, mode="symmetric").tolist()
    assert (
        tf.pad(t, [[0, 0], [3, 0]], "Symmetric").numpy().tolist() == np.pad(t, [[0, 0], [3, 0]], "symmetric").tolist()
    )
    assert tf.pad(tf.constant([1.5]), [[1, 0]]).dtype == tf.float32


def test_pad_gradients():
    x = tf.Variable([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.pad(x, [[1, 1]], "REFLECT") * tf.constant([1.0, 1.0, 1.0, 1.0, 10.0]))
    # padded = [x1, x0, x1, x2, x1]: x1 appears at positions 0, 2 and 4 (weight 10)
    assert tape.gradient(y, x).tolist() == [1.0, 12.0, 1.0]
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.pad(x, [[2, 1]], constant_values=5.0))
    assert tape.gradient(y, x).tolist() == [1.0, 1.0, 1.0]


def test_sort_and_argsort():
    x = tf.constant([[3, 1, 2], [1, 3, 3]])
    assert tf.sort(x).tolist() == [[1, 2, 3], [1, 3, 3]]
    assert tf.sort(x, direction="DESCENDING").tolist() == [[3, 2, 1], [3, 3, 1]]
    assert tf.sort(x, axis=0).tolist() == [[1, 1, 2], [3, 3, 3]]
    assert tf.argsort(x).tolist() == [[1, 2, 0], [0, 1, 2]] and tf.argsort(x).dtype == tf.int32
    assert tf.argsort(tf.constant([2, 1, 2, 1]), direction="DESCENDING", stable=True).tolist() == [0, 2, 1, 3]


def test_unique_in_order_of_first_occurrence():
    y, idx = tf.unique(tf.constant([1, 1, 2, 4, 4, 4, 7, 8, 8]))  # TF's documented example
    assert y.tolist() == [1, 2, 4, 7, 8] and idx.tolist() == [0, 0, 1, 2, 2, 2, 3, 4, 4]
    out = tf.unique(tf.constant([5.0, 3.0, 5.0, 1.0]))
    assert out.y.tolist() == [5.0, 3.0, 1.0] and out.idx.tolist() == [0, 1, 0, 2]
    assert out.idx.dtype == tf.int32 and tf.unique([3, 2], out_idx=tf.int64).idx.dtype == tf.int64
    empty = tf.unique(tf.zeros([0]))
    assert empty.y.shape == (0,) and empty.idx.shape == (0,)


def test_boolean_mask():
    assert tf.boolean_mask([0, 1, 2, 3], np.array([True, False, True, False])).tolist() == [0, 2]
    t = tf.reshape(tf.range(12), [2, 3, 2])
    assert tf.boolean_mask(t, [[True, False, True], [False, True, False]]).tolist() == [[0, 1], [4, 5], [8, 9]]
    assert tf.boolean_mask(t, [False, True, True], axis=1).tolist() == [[[2, 3], [4, 5]], [[8, 9], [10, 11]]]
    assert tf.boolean_mask(t, [True, False], axis=-1).tolist() == [[[0], [2], [4]], [[6], [8], [10]]]
    x = tf.Variable([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.boolean_mask(x, [True, False, True]) * 2.0)
    assert tape.gradient(y, x).tolist() == [2.0, 0.0, 2.0]


# TF's gather_nd examples with letters as numbers: a0..d0 -> 0..3, a1..d1 -> 4..7.
_P3 = [[[0, 1], [2, 3]], [[4, 5], [6, 7]]]


@pytest.mark.parametrize(
    "params, indices, batch_dims, expected",
    [
        ([[0, 1], [2, 3]], [[0, 0], [1, 1]], 0, [0, 3]),
        ([[0, 1], [2, 3]], [[1], [0]], 0, [[2, 3], [0, 1]]),
        (_P3, [[1]], 0, [[[4, 5], [6, 7]]]),
        (_P3, [[0, 1], [1, 0]], 0, [[2, 3], [4, 5]]),
        (_P3, [[0, 0, 1], [1, 0, 1]], 0, [1, 5]),
        ([[0, 1], [2, 3]], [[[0, 0]], [[0, 1]]], 0, [[0], [1]]),
        (_P3, [[1], [0]], 1, [[2, 3], [4, 5]]),
        (_P3, [[[1]], [[0]]], 1, [[[2, 3]], [[4, 5]]]),
    ],
)
def test_gather_nd_docs_examples(params, indices, batch_dims, expected):
    assert tf.gather_nd(tf.constant(params), indices, batch_dims=batch_dims).tolist() == expected


def test_gather_nd_gradient_counts_duplicates():
    p = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.gather_nd(p, [[0, 1], [0, 1], [1, 0]]))
    assert tape.gradient(y, p).tolist() == [[0.0, 2.0], [1.0, 0.0]]


def test_scatter_nd_and_tensor_scatter_docs_examples():
    assert tf.scatter_nd([[4], [3], [1], [7]], [9, 10, 11, 12], [8]).tolist() == [0, 11, 0, 10, 9, 0, 0, 12]
    updates = tf.reshape(tf.range(1, 33), [2, 4, 4])
    out = tf.scatter_nd([[0], [2]], updates, [4, 4, 4])
    assert out[0].tolist() == updates[0].tolist() and out[2].tolist() == updates[1].tolist()
    assert out[1].abs().sum().item() == 0 and out[3].abs().sum().item() == 0
    assert tf.scatter_nd([[1], [1]], [2.0, 3.0], [3]).tolist() == [0.0, 5.0, 0.0]  # duplicates sum
    zeros = tf.zeros([8], dtype=tf.int32)
    assert tf.tensor_scatter_nd_update(zeros, [[1], [3], [4], [7]], [9, 10, 11, 12]).tolist() == [
        0,
        9,
        0,
        10,
        11,
        0,
        0,
        12,
    ]
    t = tf.constant([1, 2, 3, 4, 5, 6, 7, 8])
    assert tf.tensor_scatter_nd_add(t, [[4], [3], [1], [7]], [9, 10, 11, 12]).tolist() == [1, 13, 3, 14, 14, 6, 7, 20]
    assert t.tolist() == [1, 2, 3, 4, 5, 6, 7, 8]  # a copy, as in TF
    m = tf.tensor_scatter_nd_update(tf.zeros([2, 2]), [[0, 1]], [7.0])
    assert m.tolist() == [[0.0, 7.0], [0.0, 0.0]]


# --- constructors and rearrangements --------------------------------------------------------------


def test_eye_linspace_meshgrid():
    assert tf.eye(2).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert tf.eye(2, 3, dtype=tf.int32).tolist() == [[1, 0, 0], [0, 1, 0]]
    assert tf.eye(2, batch_shape=[3]).shape == (3, 2, 2)
    assert tf.linspace(10.0, 12.0, 3).tolist() == [10.0, 11.0, 12.0]
    grid = tf.linspace([0.0, 5.0], [10.0, 40.0], 5, axis=0)
    assert grid.tolist() == [[0.0, 5.0], [2.5, 13.75], [5.0, 22.5], [7.5, 31.25], [10.0, 40.0]]
    assert tf.linspace([0.0, 5.0], [10.0, 40.0], 5, axis=-1).shape == (2, 5)
    assert tf.linspace(0.0, 1.0, 1).tolist() == [0.0]
    assert tf.linspace(0.0, 0.3, 4)[-1].item() == tf.constant(0.3).item()  # exactly stop
    x, y = tf.meshgrid([1, 2, 3], [4, 5])
    assert x.tolist() == [[1, 2, 3], [1, 2, 3]] and y.tolist() == [[4, 4, 4], [5, 5, 5]]
    x, y = tf.meshgrid([1, 2, 3], [4, 5], indexing="ij")
    assert x.shape == (3, 2) and y.tolist() == [[4, 5], [4, 5], [4, 5]]


def test_roll_reverse_broadcast_to_searchsorted():
    assert tf.roll([0, 1, 2, 3, 4], shift=2, axis=0).tolist() == [3, 4, 0, 1, 2]
    t = tf.constant([[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]])
    assert tf.roll(t, shift=[1, -2], axis=[0, 1]).tolist() == [[7, 8, 9, 5, 6], [2, 3, 4, 0, 1]]
    assert tf.roll(t, shift=[2, -3], axis=[1, 1]).tolist() == [[1, 2, 3, 4, 0], [6, 7, 8, 9, 5]]  # TF's example
    assert tf.reverse(t, [1]).tolist() == [[4, 3, 2, 1, 0], [9, 8, 7, 6, 5]]
    assert tf.reverse(t, [0, -1]).tolist() == [[9, 8, 7, 6, 5], [4, 3, 2, 1, 0]]
    b = tf.broadcast_to([1, 2, 3], [2, 3])
    assert b.tolist() == [[1, 2, 3], [1, 2, 3]]
    b[0, 0] = 9  # a tensor of its own, as in TF
    assert b.tolist() == [[9, 2, 3], [1, 2, 3]]
    seq = tf.constant([[0, 3, 9, 9, 10], [1, 2, 3, 4, 5]])
    values = tf.constant([[2, 4, 9], [0, 2, 6]])
    assert tf.searchsorted(seq, values).tolist() == [[1, 2, 2], [0, 1, 5]]
    right = tf.searchsorted(seq, values, side="right")
    assert right.tolist() == [[1, 2, 4], [0, 2, 5]] and right.dtype == tf.int32
    assert tf.searchsorted([1.0, 2.0], [1.5]).tolist() == [1]


# --- control flow, devices, shapes ----------------------------------------------------------------


def test_cond_runs_only_the_chosen_branch():
    calls = []
    assert tf.cond(tf.constant(False), lambda: calls.append("t") or 1, lambda: calls.append("f") or 2) == 2
    assert calls == ["f"]
    assert tf.cond(True, lambda: tf.constant(1), lambda: tf.constant(2)).item() == 1


def test_while_loop_structures():
    i, total = tf.while_loop(lambda i, s: i < 10, lambda i, s: (i + 1, s + i * i), [tf.constant(0), tf.constant(0)])
    assert (i.item(), total.item()) == (10, 285)  # TF's sumSquare example
    single = tf.while_loop(lambda i: i < 3, lambda i: (i + 1,), [tf.constant(0)])
    assert isinstance(single, list) and single[0].item() == 3
    assert tf.while_loop(lambda i: i < 3, lambda i: i + 1, (tf.constant(0),))[0].item() == 3
    assert tf.while_loop(lambda x: x < 100, lambda x: x * 2, tf.constant(1)).item() == 128
    nested = tf.while_loop(
        lambda s: s["n"] < 3, lambda s: {"n": s["n"] + 1, "acc": s["acc"] * 2}, [{"n": 0, "acc": tf.constant(1.0)}]
    )
    assert nested[0]["n"] == 3 and nested[0]["acc"].item() == 8.0
    assert tf.while_loop(lambda i: True, lambda i: (i + 1,), [0], maximum_iterations=5) == [5]
    x = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        (y,) = tf.while_loop(lambda v: v < 100.0, lambda v: (v * v,), [x * 1.0])  # 2 -> 4 -> 16 -> 256
    assert y.item() == 256.0 and tape.gradient(y, x).item() == pytest.approx(8 * 2.0**7)


def test_map_fn():
    assert tf.map_fn(lambda x: x * x, tf.constant([1, 2, 3])).tolist() == [1, 4, 9]
    out = tf.map_fn(lambda x: (x, -x), tf.constant([[1, 2], [3, 4]]))
    assert isinstance(out, tuple) and out[1].tolist() == [[-1, -2], [-3, -4]]
    sums = tf.map_fn(lambda d: d["a"] + d["b"], {"a": tf.constant([1, 2]), "b": tf.constant([10, 20])})
    assert sums.tolist() == [11, 22]
    lengths = tf.map_fn(lambda x: tf.reduce_sum(x), tf.ones([3, 4]), fn_output_signature=tf.int64)
    assert lengths.tolist() == [4, 4, 4] and lengths.dtype == tf.int64
    assert tf.map_fn(lambda x: x, tf.zeros([0, 2])).shape == (0, 2)


@pytest.mark.parametrize(
    "name",
    [
        "/CPU:0",
        "/cpu:0",
        "/GPU:1",
        "gpu:0",
        "cpu",
        "/device:GPU:0",
        "/job:worker/task:0/device:CPU:0",
        "/job:localhost/replica:0/task:0/device:GPU:*",
        "",
        None,
    ],
)
def test_device_accepts_tf_device_strings_and_changes_nothing(name):
    with tf.device(name):
        x = tf.ones([2])
    assert x.device.type == "cpu"


@pytest.mark.parametrize(
    "name, reason",
    [
        ("/foo:0", "unknown part 'foo:0'"),
        ("/GPU:x", "not a device type"),
        ("/CPU:0/GPU:0", "more than one device"),
        ("/task:one", "task must be a non-negative integer"),
    ],
)
def test_device_rejects_malformed_strings(name, reason):
    with pytest.raises(ValueError, match=f"cannot parse the device string.*{reason}.*Expected TF's form"):
        tf.device(name)


def test_device_rejects_functions_and_non_strings():
    with pytest.raises(RuntimeError, match="device function"):
        tf.device(lambda op: "/cpu:0")
    with pytest.raises(TypeError, match="device string or None"):
        tf.device(0)


def test_control_dependencies_eagerly_and_logger():
    calls = []
    with tf.control_dependencies([tf.constant(1), lambda: calls.append(1)]):
        pass
    assert calls == [1]
    with tf.control_dependencies(None):
        pass
    assert tf.executing_eagerly() is True
    assert tf.get_logger() is logging.getLogger("tensorflow")


def test_tensor_shape():
    s = tf.TensorShape([None, 28, 3])
    assert s.rank == 3 and s.ndims == 3 and s.as_list() == [None, 28, 3] and s.dims == [None, 28, 3]
    assert s[1] == 28 and s[0] is None and s[1:] == tf.TensorShape([28, 3]) and s[-1] == 3
    assert s == [None, 28, 3] and s == (None, 28, 3) and s != [1, 28, 3] and s != "x"
    assert tf.TensorShape(torch.zeros(2, 3).shape) == torch.Size([2, 3]) and torch.Size([2, 3]) == tf.TensorShape(
        [2, 3]
    )
    assert list(tf.TensorShape([2, 3])) == [2, 3] and len(tf.TensorShape([2, 3])) == 2
    assert tf.TensorShape([2, 3]).num_elements() == 6 and s.num_elements() is None
    assert s.is_compatible_with([5, 28, 3]) and not s.is_compatible_with([5, 27, 3])
    assert (tf.TensorShape([1]) + [2]).as_list() == [1, 2] and tf.TensorShape(4).as_list() == [4]
    unknown = tf.TensorShape(None)
    assert unknown.rank is None and not unknown and unknown[0] is None
    assert repr(s) == "TensorShape([None, 28, 3])" and str(s) == "(None, 28, 3)"
    assert hash(tf.TensorShape([2, 3])) == hash((2, 3))
    with pytest.raises(ValueError, match="unknown rank"):
        unknown.as_list()
    with pytest.raises(ValueError, match=">= 0"):
        tf.TensorShape([-1])
    with pytest.raises(TypeError, match="int or None"):
        tf.TensorShape([1.5])


# --- tf.math ------------------------------------------------------------------------------------


def test_bincount():
    values = tf.constant([1, 1, 2, 3, 2, 4, 4, 5])
    assert tf.math.bincount(values).tolist() == [0, 2, 2, 1, 2, 1] and tf.math.bincount(values).dtype == tf.int32
    weighted = tf.math.bincount(values, weights=tf.constant([1.0, 5, 0, 1, 0, 5, 4, 5]))
    assert weighted.tolist() == [0.0, 6.0, 0.0, 1.0, 9.0, 5.0] and weighted.dtype == tf.float32
    assert tf.math.bincount(values, minlength=8).tolist() == [0, 2, 2, 1, 2, 1, 0, 0]
    assert tf.math.bincount(values, maxlength=3).tolist() == [0, 2, 2]
    assert tf.math.bincount(tf.constant([], dtype=tf.int32)).tolist() == []
    rows = tf.math.bincount(tf.constant([[1, 1, 0], [2, 2, 2]]), axis=-1)
    assert rows.tolist() == [[1, 2, 0], [0, 0, 3]]
    assert tf.math.bincount(values, binary_output=True).tolist() == [0, 1, 1, 1, 1, 1]


def test_confusion_matrix():
    m = tf.math.confusion_matrix([1, 2, 4], [2, 2, 4])  # TF's documented example
    assert m.tolist() == [[0, 0, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 1]]
    assert m.dtype == tf.int32
    w = tf.math.confusion_matrix([0, 0, 1], [0, 1, 1], num_classes=3, weights=[0.5, 2.0, 1.0], dtype=tf.float32)
    assert w.tolist() == [[0.5, 2.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]


def test_segment_sums():
    c = tf.constant([[1, 2, 3, 4], [5, 6, 7, 8], [4, 3, 2, 1]])
    assert tf.math.unsorted_segment_sum(c, [0, 1, 0], num_segments=2).tolist() == [[5, 5, 5, 5], [5, 6, 7, 8]]
    assert tf.math.unsorted_segment_sum(tf.constant([1.0, 2.0, 3.0]), [2, -1, 2], 3).tolist() == [0.0, 0.0, 4.0]
    grid = tf.math.unsorted_segment_sum(tf.constant([[1, 2], [3, 4]]), tf.constant([[0, 1], [1, 1]]), 2)
    assert grid.tolist() == [1, 9]
    c2 = tf.constant([[1, 2, 3, 4], [4, 3, 2, 1], [5, 6, 7, 8]])
    assert tf.math.segment_sum(c2, tf.constant([0, 0, 1])).tolist() == [[5, 5, 5, 5], [5, 6, 7, 8]]
    assert tf.math.segment_sum(tf.constant([1, 2, 3]), [0, 2, 2]).tolist() == [1, 0, 5]
    data = tf.Variable([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.math.unsorted_segment_sum(data, [1, 0, 1], 2) * tf.constant([10.0, 1.0]))
    assert tape.gradient(y, data).tolist() == [1.0, 10.0, 1.0]


def test_l2_normalize_and_euclidean_norm():
    x = tf.constant([[3.0, 4.0], [0.0, 0.0]])
    torch.testing.assert_close(tf.math.l2_normalize(x, axis=1), torch.tensor([[0.6, 0.8], [0.0, 0.0]]))
    assert tf.nn.l2_normalize(tf.constant([3.0, 4.0])).tolist() == pytest.approx([0.6, 0.8])
    torch.testing.assert_close(tf.nn.l2_normalize(x), x / 5.0)
    assert tf.math.reduce_euclidean_norm(tf.constant([[1, 2, 3], [1, 1, 1]])).item() == 4  # TF's example
    assert tf.math.reduce_euclidean_norm(tf.constant([[1, 2, 3], [1, 1, 1]])).dtype == tf.int32
    by_column = tf.math.reduce_euclidean_norm(tf.constant([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]]), axis=0)
    assert by_column.tolist() == pytest.approx([math.sqrt(2), math.sqrt(5), math.sqrt(10)])
    assert tf.math.reduce_euclidean_norm(tf.constant([[1.0, 2.0]]), axis=1, keepdims=True).shape == (1, 1)


# --- tf.nn ----------------------------------------------------------------------------------------


def test_embedding_lookup():
    table = tf.constant([[0.0, 0.0], [3.0, 4.0], [2.0, 2.0]])
    assert tf.nn.embedding_lookup(table, tf.constant([[1, 0], [2, 2]])).shape == (2, 2, 2)
    assert tf.nn.embedding_lookup([table[:2], table[2:]], [2, 0]).tolist() == [[2.0, 2.0], [0.0, 0.0]]
    clipped = tf.nn.embedding_lookup(table, [1], max_norm=1.0)
    torch.testing.assert_close(clipped, torch.tensor([[0.6, 0.8]]))
    params = tf.Variable(table)
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.nn.embedding_lookup(params, [1, 1, 2]))
    assert tape.gradient(y, params).tolist() == [[0.0, 0.0], [2.0, 2.0], [1.0, 1.0]]


def _conv_reference(x: np.ndarray, w: np.ndarray, stride: int, pads: tuple[int, int, int, int]) -> np.ndarray:
    """TF's conv2d by its definition: NHWC input, [h, w, in, out] filters, explicit zero padding."""
    top, bottom, left, right = pads
    x = np.pad(x, [(0, 0), (top, bottom), (left, right), (0, 0)])
    kh, kw = w.shape[:2]
    oh, ow = (x.shape[1] - kh) // stride + 1, (x.shape[2] - kw) // stride + 1
    out = np.zeros((x.shape[0], oh, ow, w.shape[3]))
    for i in range(oh):
        for j in range(ow):
            window = x[:, i * stride : i * stride + kh, j * stride : j * stride + kw, :]
            out[:, i, j, :] = np.tensordot(window, w, axes=([1, 2, 3], [0, 1, 2]))
    return out


def test_conv2d_same_padding_hand_checked():
    x = tf.reshape(tf.range(25, dtype=tf.float32), [1, 5, 5, 1])
    # 5x5 input, 2x2 window, stride 2, SAME: 3x3 output, one row/column of zeros after (none before).
    y = tf.nn.conv2d(x, tf.ones([2, 2, 1, 1]), strides=2, padding="SAME")
    assert y[0, :, :, 0].tolist() == [[12.0, 20.0, 13.0], [52.0, 60.0, 33.0], [41.0, 45.0, 24.0]]
    x4 = tf.reshape(tf.range(16, dtype=tf.float32), [1, 4, 4, 1])
    y4 = tf.nn.conv2d(x4, tf.ones([3, 3, 1, 1]), strides=[1, 2, 2, 1], padding="SAME")
    assert y4[0, :, :, 0].tolist() == [[45.0, 39.0], [66.0, 50.0]]


@pytest.mark.parametrize(
    "size, kernel, stride, padding, pads",
    [
        (7, 3, 2, "SAME", (1, 1, 1, 1)),
        (6, 3, 2, "SAME", (0, 1, 0, 1)),
        (6, 3, 1, "SAME", (1, 1, 1, 1)),
        (6, 3, 2, "VALID", (0, 0, 0, 0)),
        (6, 3, 1, [[0, 0], [2, 0], [1, 1], [0, 0]], (2, 0, 1, 1)),
    ],
)
def test_conv2d_matches_its_definition(size, kernel, stride, padding, pads):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, size, size, 3)).astype(np.float32)
    w = rng.standard_normal((kernel, kernel, 3, 4)).astype(np.float32)
    got = tf.nn.conv2d(x, w, strides=stride, padding=padding).numpy()
    np.testing.assert_allclose(got, _conv_reference(x, w, stride, pads), rtol=1e-4, atol=1e-4)


def test_conv2d_nchw_dilations_groups_and_gradient():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 6, 6, 2)).astype(np.float32)
    w = rng.standard_normal((3, 3, 2, 2)).astype(np.float32)
    nhwc = tf.nn.conv2d(x, w, 1, "SAME", dilations=2)
    nchw = tf.nn.conv2d(np.transpose(x, (0, 3, 1, 2)), w, 1, "SAME", data_format="NCHW", dilations=2)
    torch.testing.assert_close(nchw.permute(0, 2, 3, 1), nhwc)
    expected = F.conv2d(
        torch.from_numpy(x).permute(0, 3, 1, 2), torch.from_numpy(w).permute(3, 2, 0, 1), padding=2, dilation=2
    )
    torch.testing.assert_close(nhwc, expected.permute(0, 2, 3, 1))
    depthwise = tf.nn.conv2d(tf.ones([1, 3, 3, 2]), tf.ones([1, 1, 1, 2]), 1, "VALID")  # 2 groups
    assert depthwise.shape == (1, 3, 3, 2)
    kernel = tf.Variable(tf.ones([2, 2, 1, 1]))
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.nn.conv2d(tf.ones([1, 3, 3, 1]), kernel, 1, "VALID"))
    assert tape.gradient(y, kernel).reshape(-1).tolist() == [4.0, 4.0, 4.0, 4.0]


def test_pools_same_padding_ignore_the_padding():
    x = tf.reshape(tf.range(9, dtype=tf.float32), [1, 3, 3, 1])
    assert tf.nn.max_pool2d(x, 2, 2, "SAME")[0, :, :, 0].tolist() == [[4.0, 5.0], [7.0, 8.0]]
    assert tf.nn.max_pool2d(-x, 2, 2, "SAME")[0, :, :, 0].tolist() == [[0.0, -2.0], [-6.0, -8.0]]
    assert tf.nn.avg_pool2d(x, 2, 2, "SAME")[0, :, :, 0].tolist() == [[2.0, 3.5], [6.5, 8.0]]
    assert tf.nn.avg_pool2d(x, [2, 2], [1, 1], "VALID")[0, :, :, 0].tolist() == [[2.0, 3.0], [5.0, 6.0]]
    assert tf.nn.max_pool2d(x, [1, 3, 3, 1], [1, 1, 1, 1], "VALID").tolist() == [[[[8.0]]]]
    assert tf.nn.max_pool2d(tf.cast(x, tf.int32), 2, 2, "SAME").dtype == tf.int32


# --- tf.image -------------------------------------------------------------------------------------


def test_flips_and_random_flips_per_image():
    image = tf.reshape(tf.range(12), [2, 2, 3])
    assert tf.image.flip_left_right(image).tolist() == [[[3, 4, 5], [0, 1, 2]], [[9, 10, 11], [6, 7, 8]]]
    assert tf.image.flip_up_down(image).tolist() == [[[6, 7, 8], [9, 10, 11]], [[0, 1, 2], [3, 4, 5]]]
    assert tf.image.flip_left_right(tf.stack([image, image])).shape == (2, 2, 2, 3)
    batch = tf.stack([image] * 64)
    tf.random.set_seed(3)
    out = tf.image.random_flip_left_right(batch)
    flipped = [bool(torch.equal(o, tf.image.flip_left_right(image))) for o in out]
    assert all(flipped[i] or torch.equal(out[i], image) for i in range(64))
    assert 0 < sum(flipped) < 64  # decided per image
    tf.random.set_seed(3)
    assert torch.equal(tf.image.random_flip_left_right(batch), out)  # seeded by tf.random.set_seed
    ups = [tf.image.random_flip_up_down(image) for _ in range(40)]
    assert {bool(torch.equal(u, image)) for u in ups} == {True, False}


def test_resize_bilinear_matches_torch_interpolate():
    x = torch.rand(2, 5, 7, 3)
    for size in ([10, 14], [3, 4], [5, 7], [8, 3]):
        expected = F.interpolate(x.permute(0, 3, 1, 2), size=size, mode="bilinear", align_corners=False)
        torch.testing.assert_close(tf.image.resize(x, size), expected.permute(0, 2, 3, 1))
    assert tf.image.resize(x[0], [4, 4]).shape == (4, 4, 3)
    doc = tf.image.resize(tf.reshape(tf.eye(5, dtype=tf.int32), [1, 5, 5, 1]), [3, 5])[0, ..., 0]  # TF's example
    expected_doc = [[2 / 3, 1 / 3, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 1 / 3, 2 / 3]]
    np.testing.assert_allclose(doc.numpy(), expected_doc, atol=1e-6)
    assert doc.dtype == tf.float32


def test_resize_other_methods_hand_checked():
    ramp = tf.reshape(tf.constant([0.0, 1.0, 2.0, 3.0]), [1, 4, 1])
    near = tf.image.resize(tf.reshape(tf.constant([0, 1, 2], dtype=tf.uint8), [1, 3, 1]), [1, 2], "nearest")
    assert near[0, :, 0].tolist() == [0, 2] and near.dtype == tf.uint8  # floor((i + 0.5) * 1.5)
    assert tf.image.resize(ramp, [1, 8], tf.image.ResizeMethod.NEAREST_NEIGHBOR)[0, :, 0].tolist() == [
        0.0,
        0.0,
        1.0,
        1.0,
        2.0,
        2.0,
        3.0,
        3.0,
    ]
    assert tf.image.resize(ramp, [1, 2], method="area")[0, :, 0].tolist() == [0.5, 2.5]
    area3 = tf.image.resize(ramp, [1, 3], method="area")[0, :, 0]
    # 4 -> 3: output i averages input [4i/3, 4(i+1)/3); e.g. the first is (0 * 1 + 1 * 1/3) / (4/3)
    np.testing.assert_allclose(area3.numpy(), [0.25, 1.5, 2.75], atol=1e-6)
    # Keys' cubic (a = -0.5), out-of-image taps dropped and the rest renormalised: [0, 1] -> 4 values.
    cubic = tf.image.resize(tf.reshape(tf.constant([0.0, 1.0]), [1, 2, 1]), [1, 4], "bicubic")[0, :, 0]
    w_near, w_mid, w_far = 0.8671875, 0.2265625, -0.0703125
    expected = [
        w_far / (w_near + w_far),
        w_mid / (w_near + w_mid),
        w_near / (w_near + w_mid),
        1 - w_far / (w_near + w_far),
    ]
    np.testing.assert_allclose(cubic.numpy(), expected, atol=1e-6)
    # antialias: a tent widened to radius 2 when halving: weights 3/7, 3/7, 1/7.
    assert tf.image.resize(ramp, [1, 2], antialias=True)[0, :, 0].tolist() == pytest.approx([5 / 7, 16 / 7])
    up = torch.rand(1, 3, 3, 2)
    torch.testing.assert_close(tf.image.resize(up, [7, 5], antialias=True), tf.image.resize(up, [7, 5]))
    assert tf.image.resize(tf.zeros([4, 8, 1]), [4, 4], preserve_aspect_ratio=True).shape == (2, 4, 1)


def test_crops_and_pads():
    image = tf.reshape(tf.range(25), [5, 5, 1])
    cropped = tf.image.resize_with_crop_or_pad(image, 3, 3)
    assert cropped[..., 0].tolist() == [[6, 7, 8], [11, 12, 13], [16, 17, 18]]
    padded = tf.image.resize_with_crop_or_pad(tf.ones([2, 2, 1]), 5, 4)
    assert padded[..., 0].tolist() == [[0, 0, 0, 0], [0, 1, 1, 0], [0, 1, 1, 0], [0, 0, 0, 0], [0, 0, 0, 0]]
    assert tf.image.central_crop(tf.reshape(tf.range(16), [4, 4, 1]), 0.5)[..., 0].tolist() == [[5, 6], [9, 10]]
    assert tf.image.central_crop(tf.zeros([2, 10, 10, 3]), 0.33).shape == (2, 4, 4, 3)
    box = tf.image.crop_to_bounding_box(image, 1, 2, 2, 3)
    assert box[..., 0].tolist() == [[7, 8, 9], [12, 13, 14]]
    canvas = tf.image.pad_to_bounding_box(tf.ones([1, 2, 1]), 1, 2, 3, 5)
    assert canvas[..., 0].tolist() == [[0, 0, 0, 0, 0], [0, 0, 1, 1, 0], [0, 0, 0, 0, 0]]
    tf.random.set_seed(0)
    crops = [tf.image.random_crop(image, [2, 2, 1]) for _ in range(30)]
    corners = set()
    for c in crops:
        top, left = divmod(int(c[0, 0, 0]), 5)
        assert c[..., 0].tolist() == image[top : top + 2, left : left + 2, 0].tolist()
        corners.add((top, left))
    assert len(corners) > 3 and all(t <= 3 and le <= 3 for t, le in corners)


def test_convert_image_dtype():
    u8 = tf.constant([0, 128, 255], dtype=tf.uint8)
    floats = tf.image.convert_image_dtype(u8, tf.float32)
    torch.testing.assert_close(floats, torch.tensor([0.0, 128 / 255, 1.0]))
    back = tf.image.convert_image_dtype(tf.constant([0.0, 0.5, 1.0, 0.999]), tf.uint8)
    assert back.tolist() == [0, 127, 255, 255] and back.dtype == tf.uint8  # x * 255.5, truncated
    assert tf.image.convert_image_dtype(floats, tf.uint8).tolist() == [0, 128, 255]  # round trip
    assert tf.image.convert_image_dtype(tf.constant([1.5, -0.5]), tf.uint8, saturate=True).tolist() == [255, 0]
    assert tf.image.convert_image_dtype(u8, tf.int32).tolist() == [0, 128 * 2**23, 255 * 2**23]
    assert tf.image.convert_image_dtype(tf.constant([2**31 - 1, 2**24], dtype=tf.int32), tf.uint8).tolist() == [255, 2]
    assert tf.image.convert_image_dtype(tf.constant([0.25], dtype=tf.float64), tf.float32).dtype == tf.float32
    assert tf.image.convert_image_dtype(u8, tf.uint8) is u8


def test_standardization_brightness_contrast_grayscale():
    image = torch.rand(4, 5, 3) * 10
    arr = image.numpy().astype(np.float64)
    expected = (arr - arr.mean()) / max(arr.std(), 1 / math.sqrt(arr.size))
    np.testing.assert_allclose(tf.image.per_image_standardization(image).numpy(), expected, rtol=1e-4, atol=1e-5)
    flat = tf.image.per_image_standardization(tf.fill([2, 2, 1], 7))
    assert flat.dtype == tf.float32 and flat.abs().max().item() == 0.0
    batch = tf.image.per_image_standardization(torch.stack([image, image * 3 + 1]))
    torch.testing.assert_close(batch[0], batch[1], rtol=1e-4, atol=1e-4)  # per image
    torch.testing.assert_close(
        tf.image.adjust_brightness(tf.constant([[[0.2, 0.4]]]), 0.1), torch.tensor([[[0.3, 0.5]]])
    )
    assert tf.image.adjust_brightness(tf.constant([[[250, 10]]], dtype=tf.uint8), 0.1).tolist() == [[[255, 35]]]
    contrast = tf.image.adjust_contrast(tf.constant([[[0.0, 1.0]], [[1.0, 1.0]]]), 2.0)
    assert contrast.tolist() == [[[-0.5, 1.0]], [[1.5, 1.0]]]  # mean per channel: 0.5 and 1.0
    tf.random.set_seed(5)
    bright = tf.image.random_brightness(tf.zeros([3, 3, 1]), 0.2)
    assert bright.unique().numel() == 1 and -0.2 <= bright[0, 0, 0].item() < 0.2
    varied = tf.image.random_contrast(tf.constant([[[0.0]], [[1.0]]]), 0.5, 1.5)
    assert 0.0 < varied[1, 0, 0].item() - varied[0, 0, 0].item() < 1.5
    gray = tf.image.rgb_to_grayscale(tf.constant([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]]))
    assert gray.shape == (1, 3, 1) and gray[0, :, 0].tolist() == pytest.approx([0.2989, 0.587, 0.114])
    green = tf.constant([[[0, 255, 0]]], dtype=tf.uint8)
    assert tf.image.rgb_to_grayscale(green).tolist() == [[[149]]]  # 0.587 * 255.5 = 149.98, truncated as TF
    assert tf.image.grayscale_to_rgb(tf.constant([[[5]]])).tolist() == [[[5, 5, 5]]]


def test_image_ops_inside_tf_data_map():
    images = np.arange(32 * 4 * 4 * 3, dtype=np.uint8).reshape(32, 4, 4, 3)

    def augment(image):
        image = tf.image.convert_image_dtype(image, tf.float32)
        return tf.image.resize(tf.image.random_flip_left_right(image), [8, 8])

    tf.random.set_seed(7)
    out = list(tf.data.Dataset.from_tensor_slices(images).map(augment))
    assert len(out) == 32 and out[0].shape == (8, 8, 3) and out[0].dtype == tf.float32
    plain = [tf.image.resize(tf.image.convert_image_dtype(torch.from_numpy(i), tf.float32), [8, 8]) for i in images]
    mirrored = [bool(torch.allclose(o, tf.image.flip_left_right(p))) for o, p in zip(out, plain)]
    assert all(m or torch.allclose(o, p) for m, o, p in zip(mirrored, out, plain))
    assert 0 < sum(mirrored) < 32
    batches = list(
        tf.data.Dataset.from_tensor_slices(images).batch(8).map(lambda b: tf.image.random_crop(b, [8, 2, 2, 3]))
    )
    assert [b.shape for b in batches] == [(8, 2, 2, 3)] * 4


# --- tf.nest --------------------------------------------------------------------------------------

Point = collections.namedtuple("Point", ["x", "y"])


def test_nest_follows_tf_order_and_rebuilds_containers():
    structure = {"b": [1, (2, 3)], "a": Point(4, None), "c": 5}
    assert tf.nest.flatten(structure) == [4, None, 1, 2, 3, 5]
    assert tf.nest.flatten(7) == [7] and tf.nest.flatten(tf.constant([1, 2]))[0].tolist() == [1, 2]
    packed = tf.nest.pack_sequence_as(structure, list(range(6)))
    assert packed == {"b": [2, (3, 4)], "a": Point(0, 1), "c": 5} and list(packed) == ["b", "a", "c"]
    assert isinstance(packed["a"], Point)
    ordered = collections.OrderedDict([("z", 1), ("a", 2)])
    doubled = tf.nest.map_structure(lambda v: v * 2, ordered)
    assert isinstance(doubled, collections.OrderedDict) and list(doubled.items()) == [("z", 2), ("a", 4)]
    assert tf.nest.map_structure(lambda a, b: a + b, [1, {"k": 2}], [10, {"k": 20}]) == [11, {"k": 22}]
    assert tf.nest.map_structure(lambda a, b: a + b, [1, 2], (3, 4), check_types=False) == [4, 6]
    assert tf.nest.is_nested([1]) and tf.nest.is_nested({}) and tf.nest.is_nested(Point(1, 2))
    assert not tf.nest.is_nested("ab") and not tf.nest.is_nested(tf.constant([1, 2]))
    tf.nest.assert_same_structure({"a": [1, 2]}, {"a": [3, 4]})
    assert tf.nest.pack_sequence_as(1, [tf.constant(2)]).item() == 2


# --- errors a user can cause ------------------------------------------------------------------------

_ERRORS = [
    (lambda: tf.norm(tf.constant([1.0]), ord="fro"), ValueError, r"vector norm supports ord.*Received: ord='fro'"),
    (lambda: tf.norm(tf.constant([1.0]), ord=0), ValueError, r"vector norm.*ord=0"),
    (lambda: tf.norm(tf.ones([2, 2]), ord=3, axis=[0, 1]), ValueError, r"matrix norm.*Received: ord=3"),
    (lambda: tf.norm(tf.ones([2, 2]), axis=[0, 0]), ValueError, "two different axes"),
    (lambda: tf.norm(tf.ones([2, 2]), axis=[0, 1, 2]), ValueError, "axis must be None, an int or a pair"),
    (lambda: tf.norm(tf.constant([3, 4])), TypeError, r"float or complex tensor.*cast it first"),
    (lambda: tf.tensordot(tf.ones([2]), tf.ones([2]), axes=-1), ValueError, "must be >= 0"),
    (lambda: tf.tensordot(tf.ones([2]), tf.ones([2]), axes=[[0], [0, 1]]), ValueError, "same number of contraction"),
    (lambda: tf.tensordot(tf.ones([2]), tf.ones([2]), axes=[1, 2, 3]), ValueError, "integer or a pair"),
    (lambda: tf.einsum(tf.ones([2]), "i->i"), TypeError, "equation string"),
    (lambda: tf.einsum("i->i", tf.ones([2]), bad=1), TypeError, r"only name= and optimize="),
    (lambda: tf.clip_by_global_norm(tf.ones([2]), 1.0), TypeError, r"list or tuple of tensors.*Wrap a single tensor"),
    (lambda: tf.pad(tf.ones([2, 2]), [[1, 1]]), ValueError, r"paddings must have shape \[rank, 2\] = \[2, 2\]"),
    (lambda: tf.pad(tf.ones([2]), [[-1, 0]]), ValueError, "non-negative"),
    (lambda: tf.pad(tf.ones([2]), [[1.5, 0]]), TypeError, "paddings must be integers"),
    (lambda: tf.pad(tf.ones([2]), [[1, 0]], mode="WRAP"), ValueError, r"'CONSTANT', 'REFLECT' or 'SYMMETRIC'.*WRAP"),
    (lambda: tf.pad(tf.ones([3]), [[3, 0]], mode="REFLECT"), ValueError, r"at most 2 \(its size 3 - 1\)"),
    (lambda: tf.pad(tf.ones([3]), [[0, 4]], mode="SYMMETRIC"), ValueError, r"at most 3 \(its size 3\)"),
    (lambda: tf.sort(tf.ones([2]), direction="UP"), ValueError, "'ASCENDING' or 'DESCENDING'"),
    (lambda: tf.argsort(tf.ones([2]), direction="descending"), ValueError, "Received: direction='descending'"),
    (lambda: tf.unique(tf.ones([2, 2])), ValueError, r"1-D tensor.*\[2, 2\].*tf.reshape"),
    (lambda: tf.boolean_mask(tf.ones([2]), True), ValueError, "cannot be a scalar"),
    (lambda: tf.boolean_mask(tf.ones([2, 3]), [True, False, True]), ValueError, r"mask's shape \[3\].*\[2, 3\]"),
    (
        lambda: tf.gather_nd([[1, 2], [3, 4]], [[0, 2]]),
        ValueError,
        r"indices\[0\] = \[0, 2\] does not index into shape \[2, 2\]",
    ),
    (lambda: tf.gather_nd([[1, 2], [3, 4]], [[-1, 0]]), ValueError, "negative indices are errors"),
    (lambda: tf.gather_nd([[1, 2], [3, 4]], [[0, 0, 0]]), ValueError, "index length 3.*exceeds the rank 2"),
    (
        lambda: tf.gather_nd(tf.ones([2, 2]), tf.zeros([3, 1], dtype=tf.int32), batch_dims=1),
        ValueError,
        "batch_dims=1 axes",
    ),
    (lambda: tf.gather_nd([1, 2], [[0.0]]), TypeError, "indices must be integers"),
    (
        lambda: tf.scatter_nd([[0], [1]], [1, 2, 3], [4]),
        ValueError,
        r"updates must have shape.*\[2\].*Received updates of shape \[3\]",
    ),
    (lambda: tf.scatter_nd([[5]], [1], [4]), ValueError, r"does not index into shape \[4\]"),
    (lambda: tf.tensor_scatter_nd_update(tf.ones([2]), [[0, 0, 0]], [1.0]), ValueError, "last axis of at most rank"),
    (lambda: tf.linspace(0.0, 1.0, 0), ValueError, "num must be positive"),
    (lambda: tf.meshgrid([1], [2], indexing="yx"), ValueError, "'xy' or 'ij'"),
    (lambda: tf.meshgrid([1], sparse=True), TypeError, "only indexing= and name="),
    (lambda: tf.roll([1, 2], shift=[1, 1], axis=0), ValueError, "same length"),
    (lambda: tf.reverse(tf.ones([2, 2]), [0, -2]), ValueError, "more than once"),
    (lambda: tf.broadcast_to(tf.ones([3]), [2, 2]), ValueError, r"cannot broadcast shape \[3\] to \[2, 2\]"),
    (lambda: tf.searchsorted([1, 2], [1], side="middle"), ValueError, "'left' or 'right'"),
    (lambda: tf.searchsorted(tf.ones([2, 3]), tf.ones([3, 1])), ValueError, "same leading"),
    (lambda: tf.cond(True, 1, lambda: 2), TypeError, "must be callables"),
    (lambda: tf.cond(tf.constant([True, False]), lambda: 1, lambda: 2), ValueError, r"scalar boolean.*tf.reduce_all"),
    (lambda: tf.while_loop(lambda i: i < 3, lambda i: (i + 1, i), [0]), ValueError, "nested as loop_vars"),
    (lambda: tf.while_loop(lambda i: i < 3, 5, [0]), TypeError, "must be callables"),
    (lambda: tf.while_loop(lambda: True, lambda: (), []), ValueError, "must not be empty"),
    (lambda: tf.map_fn(lambda x: x, (tf.ones([2]), tf.ones([3]))), ValueError, "same first dimension"),
    (lambda: tf.map_fn(lambda x: x, tf.constant(1.0)), ValueError, "at least one axis"),
    (lambda: tf.map_fn(5, tf.ones([2])), TypeError, "fn must be callable"),
    (lambda: tf.math.bincount(tf.constant([1, -1])), ValueError, "arr must be non-negative"),
    (lambda: tf.math.bincount(tf.constant([1.0])), TypeError, "arr must be integers"),
    (lambda: tf.math.bincount(tf.constant([1]), axis=1), ValueError, "axis None, 0 or -1"),
    (
        lambda: tf.math.bincount(tf.constant([1]), weights=[1.0], binary_output=True),
        ValueError,
        "cannot be used together",
    ),
    (lambda: tf.math.bincount(tf.constant([1, 2]), weights=[1.0]), ValueError, "weights must have the shape of arr"),
    (lambda: tf.math.confusion_matrix([0, 3], [0, 1], num_classes=3), ValueError, r"labels holds 3.*num_classes=3"),
    (lambda: tf.math.confusion_matrix([0, 1], [0]), ValueError, "1-D of one length"),
    (lambda: tf.math.confusion_matrix([0, -1], [0, 0]), ValueError, "labels must be non-negative"),
    (lambda: tf.math.unsorted_segment_sum(tf.ones([3]), [0, 1], 2), ValueError, "must be a prefix"),
    (
        lambda: tf.math.unsorted_segment_sum(tf.ones([2]), [0, 2], 2),
        ValueError,
        r"segment id 2 is out of range \[0, 2\)",
    ),
    (
        lambda: tf.math.segment_sum(tf.ones([3]), [1, 0, 0]),
        ValueError,
        "sorted in increasing order.*unsorted_segment_sum",
    ),
    (lambda: tf.math.segment_sum(tf.ones([3]), [0, 0]), ValueError, "one id per row"),
    (lambda: tf.nn.embedding_lookup(tf.ones([3, 2]), [3]), ValueError, r"id 3 is out of range.*\[0, 3\)"),
    (lambda: tf.nn.embedding_lookup(tf.ones([3, 2]), [0.0]), TypeError, "ids must be integers"),
    (
        lambda: tf.nn.conv2d(tf.ones([3, 3, 1]), tf.ones([1, 1, 1, 1]), 1, "SAME"),
        ValueError,
        r"4-D input.*tf.expand_dims",
    ),
    (lambda: tf.nn.conv2d(tf.ones([1, 3, 3, 3]), tf.ones([1, 1, 2, 1]), 1, "SAME"), ValueError, "3 channels"),
    (lambda: tf.nn.conv2d(tf.ones([1, 3, 3, 1]), tf.ones([1, 1, 1]), 1, "SAME"), ValueError, r"filters must be 4-D"),
    (
        lambda: tf.nn.conv2d(tf.ones([1, 3, 3, 1]), tf.ones([1, 1, 1, 1]), 1, "FULL"),
        ValueError,
        r"'SAME', 'VALID' or explicit",
    ),
    (
        lambda: tf.nn.conv2d(tf.ones([1, 3, 3, 1]), tf.ones([1, 1, 1, 1]), [2, 1, 1, 1], "SAME"),
        ValueError,
        "batch and channel axes must be 1",
    ),
    (
        lambda: tf.nn.conv2d(tf.ones([1, 3, 3, 1]), tf.ones([1, 1, 1, 1]), [1, 1, 1], "SAME"),
        ValueError,
        "list of 1, 2 or 4",
    ),
    (
        lambda: tf.nn.conv2d(tf.ones([1, 3, 3, 1]), tf.ones([1, 1, 1, 1]), 1, "SAME", data_format="NCWH"),
        ValueError,
        "'NHWC' or 'NCHW'",
    ),
    (lambda: tf.nn.avg_pool2d(tf.ones([1, 2, 2, 1], dtype=tf.int32), 2, 2, "SAME"), TypeError, "float tensor"),
    (lambda: tf.nn.avg_pool2d(tf.ones([1, 2, 2, 1]), 2, 2, [[0, 0]] * 4), ValueError, "'SAME' or 'VALID'"),
    (
        lambda: tf.image.flip_left_right(tf.ones([2, 2])),
        ValueError,
        r"3 \(\[height, width, channels\]\) or 4.*tf.expand_dims",
    ),
    (lambda: tf.image.resize(tf.ones([2, 2, 1]), [2, 2], method="cubic"), ValueError, "method must be.*method='cubic'"),
    (lambda: tf.image.resize(tf.ones([2, 2, 1]), [2]), ValueError, r"\[new_height, new_width\]"),
    (lambda: tf.image.resize(tf.ones([2, 2, 1]), [0, 2]), tf.errors.InvalidArgumentError, "two positive ints"),
    (lambda: tf.image.crop_to_bounding_box(tf.ones([4, 4, 1]), 2, 0, 3, 2), ValueError, "inside the image"),
    (lambda: tf.image.pad_to_bounding_box(tf.ones([4, 4, 1]), 1, 0, 4, 4), ValueError, "must fit"),
    (lambda: tf.image.resize_with_crop_or_pad(tf.ones([4, 4, 1]), 0, 2), ValueError, "must be positive"),
    (lambda: tf.image.central_crop(tf.ones([4, 4, 1]), 0.0), ValueError, r"in \(0, 1\]"),
    (lambda: tf.image.random_crop(tf.ones([4, 4, 1]), [5, 4, 1]), ValueError, "at most the value's size"),
    (lambda: tf.image.random_crop(tf.ones([4, 4, 1]), [2, 2]), ValueError, "one entry per axis"),
    (lambda: tf.image.convert_image_dtype(tf.ones([1]), tf.bool), AttributeError, "floating point or integer"),
    (lambda: tf.image.convert_image_dtype(tf.constant([True]), tf.float32), TypeError, "integer or float image"),
    (lambda: tf.image.random_brightness(tf.ones([1, 1, 1]), -0.1), ValueError, "max_delta must be non-negative"),
    (lambda: tf.image.random_contrast(tf.ones([1, 1, 1]), 0.5, 0.5), ValueError, "upper must be > lower"),
    (lambda: tf.image.random_contrast(tf.ones([1, 1, 1]), -0.5, 0.5), ValueError, "lower must be non-negative"),
    (lambda: tf.image.adjust_contrast(tf.ones([2, 2]), 2.0), ValueError, r"\[..., height, width, channels\]"),
    (lambda: tf.image.rgb_to_grayscale(tf.ones([2, 2, 4])), ValueError, "3 channels"),
    (lambda: tf.image.grayscale_to_rgb(tf.ones([2, 2, 3])), ValueError, "must have size 1"),
    (lambda: tf.nest.assert_same_structure([1, [2]], [1, 2]), ValueError, "don't have the same nested structure"),
    (lambda: tf.nest.assert_same_structure([1, 2], (1, 2)), TypeError, r"(?s)same sequence type.*check_types=False"),
    (lambda: tf.nest.assert_same_structure([1, 2], [1]), ValueError, "same number of elements"),
    (lambda: tf.nest.assert_same_structure({"a": 1}, {"b": 1}), ValueError, "same set of keys"),
    (lambda: tf.nest.pack_sequence_as([0, 0], [1]), ValueError, r"structure has 2 leaves.*has 1 items"),
    (lambda: tf.nest.pack_sequence_as([0], 1), TypeError, "must be a list or tuple"),
    (lambda: tf.nest.flatten({1: 1, "a": 2}), TypeError, "sortable keys"),
    (lambda: tf.nest.map_structure(lambda x: x, [1], bad=True), ValueError, "only the keyword arguments"),
    (lambda: tf.nest.map_structure(lambda x: x), ValueError, "at least one structure"),
]


@pytest.mark.parametrize("call, error, message", _ERRORS)
def test_bad_inputs_raise_tf_errors_that_say_what_to_do(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_names_still_unimplemented_point_to_torch_and_new_ones_pickle():
    with pytest.raises(AttributeError, match=r"tf\.signal\.fftnd\. Use torch\.fft\.fftn"):
        tf.signal.fftnd  # noqa: B018
    with pytest.raises(AttributeError, match=r"unison does not implement tf\.nest\.no_such"):
        tf.nest.no_such  # noqa: B018
    with pytest.raises(AttributeError, match=r"unison does not implement tf\.nn\.RNNCellDropoutWrapper"):
        tf.nn.RNNCellDropoutWrapper  # noqa: B018
    for fn in (tf.nn.l2_normalize, tf.nn.conv2d, tf.einsum, tf.image.resize, tf.pad, tf.nest.flatten):
        assert pickle.loads(pickle.dumps(fn)) is fn
    assert tf.nn.l2_normalize is tf.math.l2_normalize
