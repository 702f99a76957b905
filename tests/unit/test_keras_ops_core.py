"""keras.ops core, math, linalg and image, and keras.ops on symbolic keras.Input tensors."""

import numpy as np
import pytest
import torch

from unison import keras
from unison.keras import layers, ops


def close(t, expected, atol=1e-5):
    np.testing.assert_allclose(ops.convert_to_numpy(t), expected, rtol=1e-5, atol=atol)


def test_convert_to_tensor_keras_dtypes():
    assert ops.convert_to_tensor(1).dtype == torch.int32
    assert ops.convert_to_tensor([1.5, 2]).dtype == torch.float32
    assert ops.convert_to_tensor(np.zeros(2)).dtype == torch.float64  # numpy keeps its dtype
    assert ops.convert_to_tensor([1, 2], dtype="float16").dtype == torch.float16
    t = torch.ones(2)
    assert ops.convert_to_tensor(t) is t
    with pytest.raises(TypeError, match="numeric tensors"):
        ops.convert_to_tensor(np.array(["a"]))
    with pytest.raises(ValueError, match="no sparse or ragged"):
        ops.convert_to_tensor([1], sparse=True)


def test_convert_to_numpy_cast_dtype_shape():
    t = torch.ones(2, 3, requires_grad=True) * 2
    assert isinstance(ops.convert_to_numpy(t), np.ndarray)
    assert ops.cast([1.7, -1.7], "int32").tolist() == [1, -1]
    assert ops.dtype(torch.ones(1, dtype=torch.bfloat16)) == "bfloat16"
    assert ops.dtype([1, 2]) == "int32"
    assert ops.shape(np.zeros((2, 3))) == (2, 3)
    assert ops.is_tensor(t) and not ops.is_tensor(np.zeros(1))
    assert ops.saturate_cast([300.0, -5.0], "uint8").tolist() == [255, 0]
    assert not ops.stop_gradient(t).requires_grad


def test_control_flow():
    assert ops.cond(ops.convert_to_tensor(True), lambda: 1, lambda: 2) == 1
    assert ops.while_loop(lambda i: i < 5, lambda i: i + 2, 0) == 6
    i, total = ops.while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s + i), (0, 0))
    assert (int(i), int(total)) == (4, 6)
    assert ops.while_loop(lambda i: i < 100, lambda i: i + 1, 0, maximum_iterations=3) == 3
    assert ops.fori_loop(0, 4, lambda i, v: v * 2, 1) == 16
    carry, ys = ops.scan(lambda c, x: (c + x, c * 10), 0.0, ops.convert_to_tensor([1.0, 2.0, 3.0]))
    assert float(carry) == 6.0 and ys.tolist() == [0.0, 10.0, 30.0]
    assert ops.map(lambda x: x * 2, np.arange(3)).tolist() == [0, 2, 4]
    assert ops.switch(5, [lambda x: x + 1, lambda x: x - 1], 10) == 9  # index clamped to the last branch
    with pytest.raises(ValueError, match="needs xs or length"):
        ops.scan(lambda c, x: (c, x), 0)


def test_scatter_slice_unstack():
    out = ops.scatter([[0], [2], [0]], [1.0, 2.0, 3.0], (4,))
    assert out.tolist() == [4.0, 0.0, 2.0, 0.0]  # repeated indices add up
    grid = ops.scatter([[0, 1], [1, 0]], [5, 6], (2, 2))
    assert grid.tolist() == [[0, 5], [6, 0]]
    base = np.zeros((3, 3), np.float32)
    assert ops.scatter_update(base, [[1, 1]], [7.0]).tolist()[1] == [0.0, 7.0, 0.0]
    x = np.arange(12).reshape(3, 4)
    close(ops.slice(x, (1, 1), (2, 2)), x[1:3, 1:3])
    close(ops.slice(x, (1, 0), (-1, 2)), x[1:, 0:2])
    updated = ops.slice_update(x, (0, 2), np.full((2, 2), -1))
    assert updated[:2, 2:].tolist() == [[-1, -1], [-1, -1]] and int(updated[2, 3]) == 11
    assert [t.tolist() for t in ops.unstack(np.eye(2))] == [[1.0, 0.0], [0.0, 1.0]]
    with pytest.raises(ValueError, match="one entry per axis"):
        ops.slice(x, (1,), (1, 1))
    with pytest.raises(ValueError, match="indices must be integers"):
        ops.scatter([[0.5]], [1.0], (2,))


def test_math_functions():
    values, indices = ops.top_k([[1.0, 5.0, 3.0]], k=2)
    assert values.tolist() == [[5.0, 3.0]] and indices.tolist() == [[1, 2]] and indices.dtype == torch.int32
    with pytest.raises(ValueError, match="k must be in"):
        ops.top_k([1.0, 2.0], k=3)
    preds = [[0.1, 0.7, 0.2], [0.5, 0.2, 0.3]]
    assert ops.in_top_k([2, 2], preds, 2).tolist() == [True, True]
    assert ops.in_top_k([0, 1], preds, 1).tolist() == [False, False]
    assert ops.segment_sum([1.0, 2.0, 3.0, 4.0], [0, 0, 2, 2]).tolist() == [3.0, 0.0, 7.0]
    assert ops.segment_sum([[1, 1], [2, 2]], [1, 1], num_segments=2).tolist() == [[0, 0], [3, 3]]
    assert ops.segment_max([1.0, 5.0, 3.0], [0, 0, 1]).tolist() == [5.0, 3.0]
    with pytest.raises(ValueError, match="one id per row"):
        ops.segment_sum([1.0, 2.0], [0])
    close(ops.erf([0.0, 1.0]), [0.0, 0.8427008])
    close(ops.rsqrt([4.0]), [0.5])
    assert tuple(ops.extract_sequences(np.arange(10.0), 4, 2).shape) == (4, 4)


def test_linalg_against_numpy():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(3, 3)) + 3 * np.eye(3)
    b = rng.normal(size=(3, 2))
    close(ops.inv(a), np.linalg.inv(a), atol=1e-6)
    close(ops.solve(a, b), np.linalg.solve(a, b), atol=1e-6)
    close(ops.det(a), np.linalg.det(a), atol=1e-6)
    spd = a @ a.T
    close(ops.cholesky(spd), np.linalg.cholesky(spd), atol=1e-6)
    q, r = ops.qr(a)
    close(ops.matmul(q, r), a, atol=1e-6)
    close(ops.svd(a, compute_uv=False), np.linalg.svd(a, compute_uv=False), atol=1e-6)
    close(ops.norm([3.0, 4.0]), 5.0)
    close(ops.norm(a, ord="fro"), np.linalg.norm(a, "fro"), atol=1e-6)
    close(ops.norm(a, axis=1), np.linalg.norm(a, axis=1), atol=1e-6)
    close(ops.norm(a, ord=1, axis=0, keepdims=True), np.linalg.norm(a, ord=1, axis=0, keepdims=True), atol=1e-6)
    low = np.tril(a)
    close(ops.solve_triangular(low, b, lower=True), np.linalg.solve(low, b), atol=1e-6)
    with pytest.raises(ValueError, match="square matrices"):
        ops.inv(np.ones((2, 3)))
    with pytest.raises(ValueError, match="mode must be"):
        ops.qr(a, mode="r")


def test_image_resize_and_grayscale():
    image = np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1)
    out = ops.image.resize(image, (2, 2))
    expected = np.array([[2.5, 4.5], [10.5, 12.5]], np.float32)  # bilinear, half-pixel centres
    close(out[0, :, :, 0], expected)
    first = ops.image.resize(np.transpose(image, (0, 3, 1, 2)), (2, 2), data_format="channels_first")
    close(first[0, 0], expected)
    nearest = ops.image.resize(image, (2, 2), interpolation="nearest")
    assert tuple(nearest.shape) == (1, 2, 2, 1)
    wide = np.ones((1, 4, 8, 1), np.float32)
    assert tuple(ops.image.resize(wide, (4, 4), crop_to_aspect_ratio=True).shape) == (1, 4, 4, 1)
    padded = ops.image.resize(wide, (8, 8), pad_to_aspect_ratio=True)
    assert float(padded[0, 0, 0, 0]) == 0.0 and float(padded[0, 4, 4, 0]) == 1.0
    gray = ops.image.rgb_to_grayscale(np.ones((2, 2, 3), np.float32))
    close(gray, np.ones((2, 2, 1)), atol=1e-3)
    with pytest.raises(ValueError, match="interpolation must be one of"):
        ops.image.resize(image, (2, 2), interpolation="lanczos7")


def test_ops_on_symbolic_inputs_build_a_functional_model():
    inputs = keras.Input(shape=(3,))
    x = ops.square(inputs)
    x = ops.sum(x, axis=-1, keepdims=True)
    outputs = layers.Dense(1, kernel_initializer="ones", bias_initializer="zeros")(ops.concatenate([x, x], axis=-1))
    assert ops.shape(inputs) == (None, 3)
    model = keras.Model(inputs, outputs)
    out = model(torch.tensor([[1.0, 2.0, 3.0]]))
    assert out.tolist() == [[28.0]]


def test_submodule_namespaces():
    assert ops.nn.relu is ops.relu and ops.numpy.mean is ops.mean and ops.linalg.inv is ops.inv
    assert ops.core.shape is ops.shape and ops.math.top_k is ops.top_k
    assert "resize" not in ops.__all__ and "resize" in ops.image.__all__


def test_extract_patches_order_and_shapes():
    images = np.arange(2 * 4 * 6 * 3, dtype=np.float32).reshape(2, 4, 6, 3)
    out = ops.image.extract_patches(images, 2)
    assert tuple(out.shape) == (2, 2, 3, 12)
    np.testing.assert_array_equal(ops.convert_to_numpy(out[1, 1, 2]), images[1, 2:4, 4:6, :].reshape(-1))
    overlapping = ops.image.extract_patches(images, (3, 3), strides=1, padding="same")
    assert tuple(overlapping.shape) == (2, 4, 6, 27)
    centre = images[0, 0:3, 1:4, :].reshape(-1)
    np.testing.assert_array_equal(ops.convert_to_numpy(overlapping[0, 1, 2]), centre)
    with pytest.raises(ValueError, match="padding must be"):
        ops.image.extract_patches(images, 2, padding="full")


def test_reshape_with_a_symbolic_batch_size():
    inputs = keras.Input(shape=(2, 3))
    batch = ops.shape(inputs)[0]
    assert batch is None
    model = keras.Model(inputs, ops.reshape(inputs, (batch, 6)))
    assert tuple(model(torch.zeros(4, 2, 3)).shape) == (4, 6)
    with pytest.raises(ValueError, match="cannot reshape"):
        ops.reshape(np.zeros((2, 3)), (None, 4))
