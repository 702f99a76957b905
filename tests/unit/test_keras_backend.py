"""keras.backend: settings, Keras 3 helpers and the Keras 2 K.* functions."""

import numpy as np
import pytest
import torch

import unison as tf
from unison import keras
from unison.keras import backend as K


def test_backend_name_and_defaults():
    assert K.backend() == "torch"
    assert K.epsilon() == 1e-7 and K.floatx() == "float32" and K.image_data_format() == "channels_last"
    assert keras.backend is K


def test_set_epsilon_and_image_data_format_round_trip_and_errors():
    K.set_epsilon(1e-5)
    try:
        assert K.epsilon() == 1e-5
        assert float(keras.ops.normalize([[0.0, 0.0]]).abs().sum()) == 0.0
    finally:
        K.set_epsilon(1e-7)
    with pytest.raises(ValueError, match="non-negative float"):
        K.set_epsilon(-1.0)
    with pytest.raises(ValueError, match="must be one of"):
        K.set_image_data_format("nhwc")


def test_set_floatx_is_torch_default_dtype():
    K.set_floatx("float64")
    try:
        assert K.floatx() == "float64"
        assert torch.get_default_dtype() == torch.float64
        assert keras.ops.zeros(2).dtype == torch.float64
        assert keras.ops.convert_to_tensor(1.5).dtype == torch.float64
    finally:
        K.set_floatx("float32")
    assert keras.ops.zeros(2).dtype == torch.float32
    with pytest.raises(ValueError, match="Unknown floatx type"):
        K.set_floatx("int32")


def test_standardize_dtype_and_predicates():
    assert K.standardize_dtype(torch.int64) == "int64"
    assert K.standardize_dtype(np.float16) == "float16"
    assert K.standardize_dtype(tf.float32) == "float32"
    assert K.standardize_dtype(float) == "float32" and K.standardize_dtype(None) == "float32"
    assert K.is_float_dtype("bfloat16") and K.is_int_dtype("uint8") and not K.is_int_dtype("bool")
    assert K.result_type("int32", "float16") == "float16"
    with pytest.raises(ValueError, match="Invalid dtype"):
        K.standardize_dtype("floaty")


def test_clear_session_resets_default_layer_names():
    keras.layers.Dense(2)
    K.clear_session()
    assert keras.layers.Dense(2).name == "dense"
    assert keras.layers.Dense(2).name == "dense_1"
    assert K.get_uid("x") == 1 and K.get_uid("x") == 2
    K.clear_session()
    assert K.get_uid("x") == 1


def test_is_keras_tensor_int_shape_count_params():
    inputs = keras.Input(shape=(4,))
    assert K.is_keras_tensor(inputs) and not K.is_keras_tensor(torch.ones(1))
    assert K.int_shape(inputs) == (None, 4)
    assert K.int_shape(np.zeros((2, 3))) == (2, 3)
    assert K.count_params(torch.ones(3, 4)) == 12


def test_variables_get_and_set_value():
    v = K.variable([1.0, 2.0], name="v")
    assert isinstance(v, tf.Variable) and v.dtype == torch.float32
    K.set_value(v, [3.0, 4.0])
    assert K.get_value(v).tolist() == [3.0, 4.0]
    K.batch_set_value([(v, [5.0, 6.0])])
    assert K.batch_get_value([v])[0].tolist() == [5.0, 6.0]
    assert K.get_value(0.01) == 0.01
    with pytest.raises(ValueError, match="does not match the variable's shape"):
        K.set_value(v, [1.0])
    with pytest.raises(TypeError, match="needs a variable"):
        K.set_value(0.1, 0.2)
    assert K.constant(2).dtype == torch.float32
    assert K.constant(1.0, shape=(2, 2)).tolist() == [[1.0, 1.0], [1.0, 1.0]]


def test_set_value_and_get_value_on_an_optimizer_learning_rate():
    opt = keras.optimizers.Adam(learning_rate=0.01)
    assert K.get_value(opt.learning_rate) == pytest.approx(0.01)
    K.set_value(opt.learning_rate, np.float32(0.5))
    assert float(opt.learning_rate) == 0.5
    assert K.get_value(opt.learning_rate) == pytest.approx(0.5)


def test_keras2_math_functions_and_their_defaults():
    x = K.constant([[1.0, 4.0], [9.0, 16.0]])
    assert K.mean(x, axis=1).tolist() == [2.5, 12.5]
    assert K.sum(K.square(x)).item() == 1 + 16 + 81 + 256
    assert K.sqrt(K.constant([-1.0, 4.0])).tolist() == [0.0, 2.0]  # negatives clipped, as Keras 2
    assert K.argmax(x).tolist() == [1, 1]  # axis=-1 by default
    assert K.int_shape(K.concatenate([x, x])) == (2, 4)  # axis=-1 by default
    assert K.int_shape(K.expand_dims(x)) == (2, 2, 1)
    assert K.shape(x).tolist() == [2, 2] and K.shape(x).dtype == torch.int32
    assert K.ndim(x) == 2 and K.dtype(x) == "float32"
    assert K.clip(x, 2.0, 10.0).tolist() == [[2.0, 4.0], [9.0, 10.0]]
    assert K.relu(K.constant([-1.0, 2.0, 8.0]), alpha=0.5, max_value=6.0).tolist() == [-0.5, 2.0, 6.0]
    assert K.batch_flatten(K.ones((2, 3, 4))).shape == (2, 12)
    assert K.permute_dimensions(K.ones((2, 3, 4)), (2, 0, 1)).shape == (4, 2, 3)
    assert K.repeat_elements(K.constant([[1.0, 2.0]]), 2, axis=1).tolist() == [[1.0, 1.0, 2.0, 2.0]]
    assert K.gather(x, [1]).tolist() == [[9.0, 16.0]]
    assert K.l2_normalize(K.constant([3.0, 4.0])).tolist() == pytest.approx([0.6, 0.8])
    assert K.switch(K.constant([1.0, 0.0]) > 0, K.constant([1.0, 1.0]), K.constant([2.0, 2.0])).tolist() == [1.0, 2.0]
    assert K.in_train_phase(1, 2) == 2 and K.in_train_phase(1, 2, training=True) == 1
    assert K.learning_phase() == 0
    assert K.eye(2).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert K.one_hot(K.constant([1], dtype="int32"), 3).tolist() == [[0.0, 1.0, 0.0]]


def test_batch_dot_matches_einsum():
    a = torch.randn(3, 4, 2)
    b = torch.randn(3, 2, 5)
    np.testing.assert_allclose(K.batch_dot(a, b).numpy(), torch.einsum("bij,bjk->bik", a, b).numpy(), atol=1e-5)
    v = torch.randn(3, 2)
    np.testing.assert_allclose(K.batch_dot(v, v, axes=1).numpy(), (v * v).sum(1, keepdim=True).numpy(), atol=1e-5)
    with pytest.raises(ValueError, match="differ"):
        K.batch_dot(a, b, axes=(1, 1))


def test_random_normal_follows_the_global_seed():
    keras.utils.set_random_seed(3)
    a = K.random_normal((2, 3))
    keras.utils.set_random_seed(3)
    b = K.random_normal(shape=(K.shape(a)[0], 3))
    assert torch.equal(a, b)
    mask = K.random_bernoulli((1000,), p=0.3)
    assert 0.2 < float(mask.mean()) < 0.4


def test_k_functions_on_symbolic_inputs():
    inputs = keras.Input(shape=(2,))
    out = K.sum(K.square(inputs), axis=1)
    model = keras.Model(inputs, out)
    assert model(torch.tensor([[1.0, 2.0]])).tolist() == [5.0]


def test_unknown_backend_name_error():
    with pytest.raises(AttributeError, match="does not implement keras.backend.get_session"):
        K.get_session  # noqa: B018
