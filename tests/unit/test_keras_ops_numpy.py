"""keras.ops numpy namespace: values against numpy (Keras's documented reference) and Keras's dtype rules."""

import numpy as np
import pytest
import torch

from unison.keras import ops

A = np.array([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]], dtype=np.float32)


def close(t, expected, atol=1e-6):
    np.testing.assert_allclose(ops.convert_to_numpy(t), expected, rtol=1e-5, atol=atol)


@pytest.mark.parametrize(
    "name, ref",
    [
        ("abs", np.abs),
        ("square", np.square),
        ("exp", np.exp),
        ("tanh", np.tanh),
        ("sign", np.sign),
        ("floor", np.floor),
        ("ceil", np.ceil),
        ("negative", np.negative),
        ("expm1", np.expm1),
        ("sin", np.sin),
    ],
)
def test_unary_matches_numpy(name, ref):
    close(getattr(ops, name)(A), ref(A))


def test_sqrt_log_of_ints_give_floatx():
    out = ops.sqrt(torch.tensor([4, 9], dtype=torch.int32))
    assert out.dtype == torch.float32 and out.tolist() == [2.0, 3.0]
    assert ops.log(np.array([1], dtype=np.int64)).dtype == torch.float32


@pytest.mark.parametrize(
    "name, ref",
    [
        ("add", np.add),
        ("subtract", np.subtract),
        ("multiply", np.multiply),
        ("maximum", np.maximum),
        ("minimum", np.minimum),
        ("greater", np.greater),
        ("less_equal", np.less_equal),
        ("not_equal", np.not_equal),
        ("arctan2", np.arctan2),
    ],
)
def test_binary_broadcasts_like_numpy(name, ref):
    b = np.array([2.0, -2.0, 0.5], dtype=np.float32)
    close(getattr(ops, name)(A, b), ref(A, b))


def test_int_division_gives_float_and_python_numbers_are_weak():
    x = torch.tensor([3, 4], dtype=torch.int32)
    out = ops.divide(x, 2)
    assert out.dtype == torch.float32 and out.tolist() == [1.5, 2.0]
    assert ops.true_divide(7, 2).item() == 3.5
    assert ops.add(x, 2).dtype == torch.int32  # int tensor + int stays int32
    assert ops.multiply(x, 2.5).dtype == torch.float32  # int tensor * float becomes floatx
    assert ops.add(torch.ones(2, dtype=torch.float16), 1.0).dtype == torch.float16
    assert ops.floor_divide(x, 2).tolist() == [1, 2]
    assert ops.mod(torch.tensor([-3, 5]), 3).tolist() == [0, 2]  # numpy's sign rule


def test_divide_no_nan():
    assert ops.divide_no_nan([1.0, 2.0], [0.0, 4.0]).tolist() == [0.0, 0.5]


@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_match_numpy(axis, keepdims):
    for name, ref in [
        ("sum", np.sum),
        ("mean", np.mean),
        ("max", np.max),
        ("min", np.min),
        ("var", np.var),
        ("std", np.std),
        ("prod", np.prod),
    ]:
        out = getattr(ops, name)(A, axis=axis, keepdims=keepdims)
        close(out, ref(A, axis=axis, keepdims=keepdims), atol=1e-5)


def test_mean_of_ints_is_float_unlike_tf():
    out = ops.mean([[1, 2], [3, 5]], axis=0)
    assert out.dtype == torch.float32 and out.tolist() == [2.0, 3.5]
    assert ops.sum([True, True, False]).dtype == torch.int32


def test_logsumexp_any_all_count_nonzero():
    close(ops.logsumexp(A, axis=1), np.log(np.exp(A).sum(axis=1)))
    assert ops.any([[0, 1], [0, 0]], axis=1).tolist() == [True, False]
    assert ops.all([[1, 1], [0, 1]], axis=1, keepdims=True).tolist() == [[True], [False]]
    assert ops.count_nonzero([[0, 1], [2, 3]], axis=1).tolist() == [1, 2]


def test_max_initial_and_empty_error():
    assert ops.max([1.0, 2.0], initial=5.0).item() == 5.0
    with pytest.raises(ValueError, match="empty tensor"):
        ops.max(np.zeros((0,), np.float32))


def test_argmax_argmin_int32_and_flatten_without_axis():
    out = ops.argmax(A, axis=1)
    assert out.dtype == torch.int32 and out.tolist() == [2, 1]
    assert ops.argmax(A).item() == int(np.argmax(A))
    assert ops.argmin(A, axis=0).tolist() == [0, 0, 1]
    assert ops.argmax(A, keepdims=True).shape == (1, 1)


def test_cumsum_flattens_without_axis_and_clip_round():
    assert ops.cumsum([[1, 2], [3, 4]]).tolist() == [1, 3, 6, 10]
    assert ops.cumsum([[1, 2], [3, 4]], axis=0).tolist() == [[1, 2], [4, 6]]
    assert ops.cumprod([1, 2, 3]).tolist() == [1, 2, 6]
    assert ops.clip([-1.0, 0.5, 3.0], 0.0, 1.0).tolist() == [0.0, 0.5, 1.0]
    close(ops.round([0.05, 1.25, 2.25], 1), np.round(np.float32([0.05, 1.25, 2.25]), 1))
    assert ops.round([0.5, 1.5]).tolist() == [0.0, 2.0]


def test_isnan_isfinite_isclose_nan_to_num():
    x = [1.0, float("nan"), float("inf")]
    assert ops.isnan(x).tolist() == [False, True, False]
    assert ops.isfinite(x).tolist() == [True, False, False]
    assert ops.isclose([1.0, 2.0], [1.0 + 1e-7, 2.1]).tolist() == [True, False]
    assert ops.nan_to_num(x, posinf=9.0).tolist() == [1.0, 0.0, 9.0]


def test_axis_errors_name_the_value():
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        ops.sum(A, axis=2)
    with pytest.raises(TypeError, match="axis must be an int"):
        ops.mean(A, axis=1.5)


def test_creation_dtypes():
    assert ops.zeros((2, 3)).dtype == torch.float32
    assert ops.ones(2, dtype="int32").tolist() == [1, 1]
    assert ops.full((2,), 7).dtype == torch.int32
    assert ops.full((2, 2), 0.5, dtype="float64").dtype == torch.float64
    assert ops.arange(3).dtype == torch.int32 and ops.arange(3).tolist() == [0, 1, 2]
    assert ops.arange(0, 1, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75]
    assert ops.arange(start=0, stop=4, step=2).tolist() == [0, 2]
    close(ops.linspace(0, 1, 5), np.linspace(0, 1, 5))
    close(ops.linspace(0, 1, 4, endpoint=False), np.linspace(0, 1, 4, endpoint=False))
    values, step = ops.linspace(0.0, 2.0, 3, retstep=True)
    assert values.tolist() == [0.0, 1.0, 2.0] and float(step) == 1.0
    close(ops.eye(3, 4, k=1), np.eye(3, 4, k=1))
    close(ops.tri(3, k=-1), np.tri(3, k=-1))
    assert ops.zeros_like(torch.ones(2, dtype=torch.int64)).dtype == torch.int64
    assert ops.full_like([1.0, 2.0], 3).tolist() == [3.0, 3.0]
    with pytest.raises(ValueError, match="step must not be zero"):
        ops.arange(0, 3, 0)


def test_shape_functions_follow_numpy():
    x = np.arange(24).reshape(2, 3, 4)
    assert tuple(ops.transpose(x).shape) == (4, 3, 2)  # numpy reverses all axes
    assert tuple(ops.transpose(x, (1, 0, 2)).shape) == (3, 2, 4)
    assert tuple(ops.expand_dims(x, (0, -1)).shape) == np.expand_dims(x, (0, -1)).shape
    assert tuple(ops.squeeze(np.zeros((1, 3, 1)), axis=0).shape) == (3, 1)
    assert tuple(ops.reshape(x, (4, -1)).shape) == (4, 6)
    close(ops.moveaxis(x, 0, -1), np.moveaxis(x, 0, -1))
    close(ops.swapaxes(x, 0, 2), np.swapaxes(x, 0, 2))
    assert ops.ravel(x).tolist() == list(range(24))
    assert ops.size(x) == 24 and ops.ndim(x) == 3


def test_shape_errors():
    with pytest.raises(ValueError, match="cannot reshape a tensor of shape"):
        ops.reshape(np.zeros(6), (4, 2))
    with pytest.raises(ValueError, match="axis 1 has size 3, not 1"):
        ops.squeeze(np.zeros((1, 3)), axis=1)


def test_join_split_tile_repeat_flip_roll():
    a, b = np.ones((2, 2), np.float32), np.zeros((2, 2), np.int32)
    out = ops.concatenate([a, b], axis=1)
    assert out.dtype == torch.float32 and tuple(out.shape) == (2, 4)
    assert tuple(ops.stack([a, a], axis=1).shape) == (2, 2, 2)
    parts = ops.split(np.arange(6), 3)
    assert [p.tolist() for p in parts] == [[0, 1], [2, 3], [4, 5]]
    assert [p.tolist() for p in ops.split(np.arange(6), [1, 4])] == [[0], [1, 2, 3], [4, 5]]
    with pytest.raises(ValueError, match="does not divide into 4 equal parts"):
        ops.split(np.arange(6), 4)
    close(ops.tile([[1, 2]], (2, 2)), np.tile([[1, 2]], (2, 2)))
    close(ops.repeat([[1, 2], [3, 4]], 2), np.repeat([[1, 2], [3, 4]], 2))
    close(ops.repeat([[1, 2], [3, 4]], [1, 2], axis=0), np.repeat([[1, 2], [3, 4]], [1, 2], axis=0))
    close(ops.flip(A), np.flip(A))
    close(ops.flip(A, axis=1), np.flip(A, axis=1))
    close(ops.roll(A, 1), np.roll(A, 1))
    close(ops.roll(A, -1, axis=1), np.roll(A, -1, axis=1))
    close(ops.append([1, 2], [[3]]), np.append([1, 2], [[3]]))
    close(ops.hstack([[1], [2]]), np.hstack([[1], [2]]))


def test_take_and_take_along_axis():
    x = np.arange(12).reshape(3, 4)
    close(ops.take(x, [0, -1]), np.take(x, [0, -1]))
    close(ops.take(x, [[2, 0]], axis=1), np.take(x, [[2, 0]], axis=1))
    idx = np.argsort(x, axis=1)[:, ::-1]
    close(ops.take_along_axis(x, idx.copy(), axis=1), np.take_along_axis(x, idx, axis=1))
    with pytest.raises(IndexError, match="out of range for axis 0 of size 3"):
        ops.take(x, [3], axis=0)
    with pytest.raises(TypeError, match="indices must be integers"):
        ops.take(x, [0.5])


def test_where_select_nonzero():
    assert ops.where([True, False], 1.0, [5.0, 6.0]).tolist() == [1.0, 6.0]
    rows, cols = ops.where([[0, 1], [1, 0]])
    assert rows.tolist() == [0, 1] and cols.tolist() == [1, 0] and rows.dtype == torch.int32
    with pytest.raises(ValueError, match="needs both x1 and x2"):
        ops.where([True], 1.0)
    x = np.arange(6)
    close(ops.select([x < 3, x > 3], [x, x**2], 42), np.select([x < 3, x > 3], [x, x**2], 42))
    with pytest.raises(ValueError, match="same length"):
        ops.select([x < 3], [x, x])


def test_sort_argsort_searchsorted_digitize():
    x = np.array([[3, 1, 2], [0, 5, 4]])
    close(ops.sort(x), np.sort(x))
    close(ops.sort(x, axis=None), np.sort(x, axis=None))
    out = ops.argsort([2, 1, 1, 0])
    assert out.dtype == torch.int32 and out.tolist() == [3, 1, 2, 0]  # stable
    close(ops.searchsorted([1, 3, 5], [0, 3, 6], side="right"), np.searchsorted([1, 3, 5], [0, 3, 6], side="right"))
    close(ops.digitize([0.5, 1.0, 2.5], [1.0, 2.0]), np.digitize([0.5, 1.0, 2.5], [1.0, 2.0]))
    with pytest.raises(ValueError, match="side must be"):
        ops.searchsorted([1], [1], side="middle")


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric", "wrap"])
def test_pad_modes_match_numpy(mode):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    widths = ((1, 2), (2, 1))
    close(ops.pad(x, widths, mode=mode), np.pad(x, widths, mode=mode))
    close(ops.pad(x, (1, 1), mode=mode), np.pad(x, (1, 1), mode=mode))


def test_pad_constant_value_and_errors():
    assert ops.pad([1, 2], 1, constant_values=9).tolist() == [9, 1, 2, 9]
    with pytest.raises(ValueError, match="mode must be one of"):
        ops.pad([1, 2], 1, mode="mean")
    with pytest.raises(ValueError, match="pad_width must be one int"):
        ops.pad(np.zeros((2, 2)), ((1, 1), (1, 1), (1, 1)))


def test_triangles_diag_trace():
    x = np.arange(9).reshape(3, 3)
    close(ops.tril(x, -1), np.tril(x, -1))
    close(ops.triu(x, 1), np.triu(x, 1))
    close(ops.diag([1, 2]), np.diag([1, 2]))
    close(ops.diagonal(x, 1), np.diagonal(x, 1))
    assert ops.trace(x).item() == np.trace(x)


def test_products_match_numpy():
    a = np.random.default_rng(0).normal(size=(2, 3, 4)).astype(np.float32)
    b = np.random.default_rng(1).normal(size=(4, 5)).astype(np.float32)
    close(ops.matmul(a, b), a @ b, atol=1e-5)
    close(ops.dot(a, b), np.dot(a, b), atol=1e-5)
    close(ops.dot(a, b[:, 0]), np.dot(a, b[:, 0]), atol=1e-5)
    close(ops.dot(2.0, b), 2.0 * b)
    close(ops.einsum("bij,jk->bik", a, b), np.einsum("bij,jk->bik", a, b), atol=1e-5)
    close(ops.tensordot(a, b, axes=1), np.tensordot(a, b, axes=1), atol=1e-5)
    close(ops.outer([1, 2], [3, 4, 5]), np.outer([1, 2], [3, 4, 5]))
    close(ops.cross([1.0, 0.0, 0.0], [0.0, 1.0, 0.0]), [0.0, 0.0, 1.0])
    assert ops.matmul(np.ones((2, 2), np.int32), np.ones((2, 2), np.float32)).dtype == torch.float32
    with pytest.raises(ValueError, match="do not match"):
        ops.matmul(np.ones((2, 3)), np.ones((2, 3)))


def test_median_quantile_average_bincount():
    x = np.array([[1.0, 5.0, 2.0, 8.0]], np.float32)
    close(ops.median(x), np.median(x))
    close(ops.quantile(x, 0.25, axis=1), np.quantile(x, 0.25, axis=1))
    close(ops.average(x, axis=1, weights=[1.0, 0.0, 0.0, 1.0]), [4.5])
    assert ops.bincount([0, 2, 2], minlength=4).tolist() == [1, 0, 2, 0]
    with pytest.raises(ValueError, match="non-negative integers"):
        ops.bincount([-1, 2])


def test_accepts_variables_and_keeps_gradients():
    import unison as tf

    v = tf.Variable([1.0, 2.0])
    loss = ops.sum(ops.square(v))
    loss.backward()
    assert v.grad.tolist() == [2.0, 4.0]


def test_unknown_name_is_a_clear_attribute_error():
    with pytest.raises(AttributeError, match="does not implement keras.ops.frobnicate"):
        ops.frobnicate  # noqa: B018
    with pytest.raises(ValueError, match="Invalid dtype"):
        ops.cast([1], "float31")
