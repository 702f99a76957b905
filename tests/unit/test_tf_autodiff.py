"""tf.GradientTape, tf.Variable and tf.function: TF's semantics on torch autograd."""

from __future__ import annotations

import copy
import pickle

import pytest
import torch

import unison as tf

pytestmark = pytest.mark.timeout(60)


def _reference(loss_fn, params):
    loss = loss_fn()
    return torch.autograd.grad(loss, params, allow_unused=True)


def _assert_same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if w is None:
            assert g is None
        else:
            torch.testing.assert_close(g, w, rtol=0, atol=0)


@pytest.mark.parametrize("kind", ["dense", "conv", "embedding"])
def test_tape_gradients_equal_torch_autograd(kind):
    torch.manual_seed(0)
    if kind == "dense":
        model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
        x = torch.randn(5, 4)
    elif kind == "conv":
        model = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.Flatten(), torch.nn.Linear(2 * 4 * 4, 3))
        x = torch.randn(5, 1, 6, 6)
    else:
        model = torch.nn.Sequential(torch.nn.Embedding(10, 4), torch.nn.Flatten(), torch.nn.Linear(12, 3))
        x = torch.randint(0, 10, (5, 3))
    y = torch.randint(0, 3, (5,))
    params = list(model.parameters())

    def loss_fn():
        return torch.nn.functional.cross_entropy(model(x), y)

    with tf.GradientTape() as tape:
        loss = loss_fn()
    _assert_same(tape.gradient(loss, params), _reference(loss_fn, params))


def test_shared_weights_and_unconnected_variables():
    shared = tf.Variable(torch.randn(3, 3))
    unused = tf.Variable(torch.randn(3))
    x = torch.randn(2, 3)

    def loss_fn():
        return ((x @ shared) @ shared).sum()

    with tf.GradientTape() as tape:
        loss = loss_fn()
    grads = tape.gradient(loss, [shared, unused])
    _assert_same(grads, _reference(loss_fn, [shared, unused]))
    assert grads[1] is None
    with tf.GradientTape() as tape:
        loss = loss_fn()
    zero = tape.gradient(loss, [shared, unused], unconnected_gradients=tf.UnconnectedGradients.ZERO)
    assert torch.equal(zero[1], torch.zeros(3))


def test_nested_structures_come_back_in_the_same_structure():
    a, b, c = tf.Variable(1.0), tf.Variable(2.0), tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = a * b * c
    grads = tape.gradient(y, {"z": [a, (b,)], "a": c})
    assert list(grads) == ["z", "a"]
    assert grads["z"][0].item() == 6.0 and isinstance(grads["z"][1], tuple)
    assert grads["z"][1][0].item() == 3.0 and grads["a"].item() == 2.0


def test_non_persistent_tape_twice_raises_tf_error():
    x = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y = x * x
    tape.gradient(y, x)
    with pytest.raises(RuntimeError, match="non-persistent GradientTape can only be used to compute one set"):
        tape.gradient(y, x)


def test_tape_never_entered_raises():
    x = tf.Variable(2.0)
    tape = tf.GradientTape()
    with pytest.raises(RuntimeError, match="never entered"):
        tape.gradient(x * x, x)
    with pytest.raises(ValueError, match="not recording"):
        tape.watch(x)


def test_persistent_tape_and_watch_of_a_constant():
    x = tf.constant(3.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    assert tape.gradient(z, x).item() == pytest.approx(108.0)
    assert tape.gradient(y, x).item() == pytest.approx(6.0)


def test_unwatched_constant_has_no_gradient():
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        y = x * x
    assert tape.gradient(y, x) is None


def test_nested_tapes_give_second_order_gradients():
    x = tf.Variable(1.0)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            y = x * x * x
        dy_dx = t1.gradient(y, x)
    d2y_dx2 = t2.gradient(dy_dx, x)
    assert dy_dx.item() == 3.0 and d2y_dx2.item() == 6.0


def test_stop_recording_and_watch_accessed_variables_false():
    x, w = tf.Variable(2.0), tf.Variable(5.0)
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = x * w
        with tape.stop_recording():
            z = x * x
    assert z.requires_grad is False
    grads = tape.gradient(y, [x, w])
    assert grads[0].item() == 5.0 and grads[1] is None
    with pytest.raises(RuntimeError, match="not recording"), tape.stop_recording():
        pass


def test_output_gradients_and_non_scalar_targets():
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape(persistent=True) as tape:
        y = x * x
    assert tape.gradient(y, x).tolist() == [2.0, 4.0]
    assert tape.gradient(y, x, output_gradients=tf.constant([1.0, 0.5])).tolist() == [2.0, 2.0]


def test_bad_unconnected_gradients_and_sources():
    x = tf.Variable(1.0)
    with tf.GradientTape(persistent=True) as tape:
        y = x * 2
    with pytest.raises(ValueError, match="Unknown unconnected_gradients"):
        tape.gradient(y, x, unconnected_gradients="ones")
    with pytest.raises(ValueError, match="sources must be tensors"):
        tape.gradient(y, ["x"])


def test_variable_methods_and_use_as_model_weight():
    v = tf.Variable([1.0, 2.0], name="w")
    assert v.name == "w:0" and v.trainable and v.dtype == tf.float32 and tuple(v.shape) == (2,)
    v.assign([3.0, 4.0]).assign_add([1.0, 1.0]).assign_sub([0.5, 0.5])
    assert v.numpy().tolist() == [3.5, 4.5]
    assert (v + 1).tolist() == [4.5, 5.5] and type(v * 2) is torch.Tensor
    assert v.read_value().tolist() == [3.5, 4.5]
    with pytest.raises(ValueError, match="Cannot assign a value of shape"):
        v.assign([1.0, 2.0, 3.0])
    frozen = tf.Variable(1.0, trainable=False)
    assert frozen.trainable is False and frozen.requires_grad is False
    module = torch.nn.Module()
    module.w = v
    assert [n for n, _ in module.named_parameters()] == ["w"]
    opt = torch.optim.SGD(module.parameters(), lr=1.0)
    with tf.GradientTape() as tape:
        loss = (module.w * module.w).sum()
    grads = tape.gradient(loss, [module.w])
    for p, g in zip([module.w], grads):
        p.grad = g
    opt.step()
    assert v.numpy().tolist() == pytest.approx([3.5 - 7.0, 4.5 - 9.0])
    clone = copy.deepcopy(v)
    assert isinstance(clone, tf.Variable) and clone.name == "w:0"
    again = pickle.loads(pickle.dumps(v))
    assert isinstance(again, tf.Variable) and again.numpy().tolist() == v.numpy().tolist()
    with pytest.raises(ValueError, match="needs an initial_value"):
        tf.Variable()


def test_int_variable_is_not_trainable_by_gradient():
    v = tf.Variable(3)
    assert v.dtype == torch.int32 and not v.requires_grad
    v.assign_add(2)
    assert v.numpy() == 5


def test_tf_function_with_and_without_arguments():
    calls = []

    @tf.function
    def f(x):
        calls.append(1)
        return x * 2

    @tf.function(jit_compile=True, reduce_retracing=True, experimental_relax_shapes=True)
    def g(x):
        return x + 1

    assert f(tf.constant(2.0)).item() == 4.0 and g(tf.constant(2.0)).item() == 3.0
    f(tf.constant(1.0))
    assert len(calls) == 2  # runs eagerly every call

    class Model:
        scale = 3.0

        @tf.function
        def step(self, x):
            return x * self.scale

    assert Model().step(tf.constant(2.0)).item() == 6.0


class _Spec:
    def __init__(self, shape, dtype):
        self.shape, self.dtype = shape, dtype


def test_tf_function_checks_input_signature():
    @tf.function(input_signature=[_Spec([None, 2], tf.float32)])
    def f(x):
        return tf.reduce_sum(x)

    assert f(tf.ones([3, 2])).item() == 6.0
    with pytest.raises(TypeError, match="incompatible with input_signature"):
        f(tf.ones([3, 3]))
    with pytest.raises(TypeError, match="dtype"):
        f(tf.ones([3, 2], dtype=tf.float64))
    with pytest.raises(TypeError, match="arguments were given"):
        f(tf.ones([3, 2]), tf.ones([3, 2]))


def test_gradients_through_tf_function_match():
    w = tf.Variable(torch.randn(3, 2))
    x = torch.randn(4, 3)

    @tf.function
    def loss_fn():
        return tf.reduce_mean(tf.square(tf.matmul(x, w)))

    with tf.GradientTape() as tape:
        loss = loss_fn()
    _assert_same([tape.gradient(loss, w)], _reference(loss_fn.python_function, [w]))


def test_an_unwatched_intermediate_tensor_has_no_gradient_as_in_tf():
    x = tf.Variable(2.0)
    h = x + 1  # a tensor, not a variable: TF only differentiates it when watched
    with tf.GradientTape(persistent=True) as tape:
        y = h * 3
    assert tape.gradient(y, h) is None
    with tf.GradientTape() as tape:
        tape.watch(h)
        y = h * 3
    assert tape.gradient(y, h).item() == 3.0


def test_augmented_assignment_rebinds_as_in_tf():
    v = tf.Variable(2.0)
    w = v
    w += 1.0
    assert type(w) is torch.Tensor and w.item() == 3.0 and v.numpy() == 2.0


def test_jacobian_and_batch_jacobian_match_torch():
    w = tf.Variable(torch.randn(3, 2))
    x = torch.randn(4, 3)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = torch.tanh(x @ w)
    jac = tape.jacobian(y, w)
    want = torch.autograd.functional.jacobian(lambda w_: torch.tanh(x @ w_), w.detach())
    torch.testing.assert_close(jac, want)
    bjac = tape.batch_jacobian(y, x)
    full = torch.autograd.functional.jacobian(lambda x_: torch.tanh(x_ @ w.detach()), x.detach())
    torch.testing.assert_close(bjac, torch.stack([full[b, :, b, :] for b in range(4)]))
    assert bjac.shape == (4, 2, 3)
    unused = tf.Variable(1.0)
    assert tape.jacobian(y, unused) is None
    assert tape.jacobian(y, unused, unconnected_gradients="zero").shape == (4, 2)
