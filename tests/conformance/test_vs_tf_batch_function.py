"""``tf.nondifferentiable_batch_function`` against TensorFlow 2.21."""

from __future__ import annotations

from tf_oracle import same_as_tf


def _decorated(tf):
    @tf.nondifferentiable_batch_function(1, 2, 10)
    def affine(x, y):
        return x * 2.0 + y

    @tf.nondifferentiable_batch_function(1, 2, 10)  # TF shares one batcher's limits in a process
    def pair(x):
        return x, x + 1

    return affine, pair


@same_as_tf("nondifferentiable_batch_function")
def test_batch_function_values(tf):
    affine, pair = _decorated(tf)
    return (
        affine(tf.constant([[1.0], [2.0]]), tf.constant([[1.0], [1.0]])),
        affine(tf.ones([1, 3]), tf.ones([1, 3])),
        pair(tf.constant([1, 2])),
        affine.__name__,
    )


# (an empty batch: TF 2.21 returns shape (0,) whatever the function; a gradient through it: TF raises
# LookupError, unison gives None. Neither is compared.)


@same_as_tf("nondifferentiable_batch_function", edge=True, match="at least one dimension")
def test_batch_function_scalar_input(tf):
    affine, _ = _decorated(tf)
    return affine(tf.constant(1.0), tf.constant(2.0))


@same_as_tf("nondifferentiable_batch_function", edge=True, match="supposed to be Tensors")
def test_batch_function_variable_input(tf):
    affine, _ = _decorated(tf)
    return affine(tf.Variable([[1.0]]), tf.constant([[0.0]]))


@same_as_tf("nondifferentiable_batch_function", edge=True, match="larger than maximum input batch size 2")
def test_batch_function_too_many_rows(tf):
    affine, _ = _decorated(tf)
    return affine(tf.ones([5, 3]), tf.ones([5, 3]))
