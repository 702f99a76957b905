"""The tf.* tensor functions: TF's names, arguments, dtypes and broadcasting over torch."""

from __future__ import annotations

import io
import pickle
import subprocess
import sys

import numpy as np
import pytest
import torch

import unison as tf

pytestmark = pytest.mark.timeout(60)


def test_constant_follows_tf_dtype_inference():
    assert tf.constant(1).dtype == tf.int32
    assert tf.constant([1.0, 2]).dtype == tf.float32
    assert tf.constant(True).dtype == tf.bool
    assert tf.constant(np.zeros(2)).dtype == tf.float64
    assert tf.constant(2.0, shape=[2, 2]).tolist() == [[2.0, 2.0], [2.0, 2.0]]
    assert tf.constant([1, 2, 3, 4], shape=[2, 2]).shape == (2, 2)
    arr = np.ones(2, dtype=np.float32)
    c = tf.constant(arr)
    arr[0] = 5.0
    assert c.tolist() == [1.0, 1.0]  # a copy, as in TF
    s = tf.constant(["a", "b"])
    assert s.dtype == tf.string.as_numpy_dtype and list(s) == ["a", "b"]
    assert tf.convert_to_tensor(c) is c
    assert tf.cast(tf.constant([1.7, -1.7]), tf.int32).tolist() == [1, -1]
    assert tf.as_dtype("float32") is tf.float32 and tf.as_dtype(np.int64) is tf.int64


def test_reductions():
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    assert tf.reduce_sum(x).item() == 10.0
    assert tf.reduce_sum(x, axis=0).tolist() == [4.0, 6.0]
    assert tf.reduce_mean(x, axis=[0, 1], keepdims=True).shape == (1, 1)
    assert tf.reduce_max(x, axis=1).tolist() == [2.0, 4.0]
    assert tf.reduce_min(x).item() == 1.0
    assert tf.reduce_prod(x, axis=[0, 1]).item() == 24.0
    assert tf.reduce_any(x > 3).item() is True and tf.reduce_all(x > 0).item() is True
    assert tf.reduce_mean(tf.constant([1, 2])).item() == 1  # integer mean truncates, as TF's
    assert tf.reduce_sum(tf.constant([1, 2], dtype=tf.int32)).dtype == tf.int32
    assert tf.add_n([x, x, x]).tolist() == [[3.0, 6.0], [9.0, 12.0]]
    assert tf.argmax(x).tolist() == [1, 1] and tf.argmax(x, axis=1).dtype == tf.int64
    assert tf.argmin(x, axis=1, output_type=tf.int32).tolist() == [0, 0]
    with pytest.raises(ValueError, match="one shape"):
        tf.add_n([x, tf.ones([3])])


def test_comparisons_where_and_broadcasting():
    x = tf.constant([1, 2, 3])
    assert tf.equal(x, 2).tolist() == [False, True, False]
    assert tf.not_equal(x, 2).tolist() == [True, False, True]
    assert tf.greater(x, 1).tolist() == [False, True, True]
    assert tf.greater_equal(x, 2).tolist() == [False, True, True]
    assert tf.less(x, 2).tolist() == [True, False, False]
    assert tf.less_equal(x, 2).tolist() == [True, True, False]
    assert tf.where(x > 1, x, 0).tolist() == [0, 2, 3]
    assert tf.where(x > 1).tolist() == [[1], [2]]
    assert tf.maximum(tf.constant([[1.0], [5.0]]), tf.constant([2.0, 3.0])).tolist() == [[2.0, 3.0], [5.0, 5.0]]
    with pytest.raises(ValueError, match="both x and y"):
        tf.where(x > 1, x)


def test_shape_functions():
    x = tf.zeros([2, 3])
    assert tf.reshape(x, [3, -1]).shape == (3, 2)
    assert tf.expand_dims(x, 0).shape == (1, 2, 3)
    assert tf.squeeze(tf.zeros([1, 2, 1])).shape == (2,)
    assert tf.squeeze(tf.zeros([1, 2, 1]), axis=[0]).shape == (2, 1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Can not squeeze dim"):
        tf.squeeze(x, axis=0)
    assert tf.concat([x, x], axis=1).shape == (2, 6)
    assert tf.stack([x, x]).shape == (2, 2, 3)
    assert [t.shape for t in tf.split(tf.zeros([6, 1]), 3)] == [(2, 1)] * 3
    assert [t.shape[0] for t in tf.split(tf.zeros([6]), [1, -1, 2])] == [1, 3, 2]
    with pytest.raises(ValueError, match="equal parts"):
        tf.split(tf.zeros([5]), 2)
    assert tf.one_hot([0, 2, -1], 3).tolist() == [[1, 0, 0], [0, 0, 1], [0, 0, 0]]
    assert tf.one_hot([1], 2, on_value=5, off_value=-1).tolist() == [[-1, 5]]
    assert tf.one_hot([0, 1], 2, axis=0).tolist() == [[1, 0], [0, 1]]
    assert tf.ones([2], dtype=tf.int64).dtype == tf.int64
    assert tf.zeros_like(tf.ones([2], dtype=tf.int32)).dtype == tf.int32
    assert tf.ones_like(x, dtype=tf.float64).dtype == tf.float64
    assert tf.fill([2], 7).tolist() == [7, 7] and tf.fill([2], 7).dtype == tf.int32
    assert tf.range(5).dtype == tf.int32 and tf.range(1, 2, 0.5).tolist() == [1.0, 1.5]
    assert tf.shape(x).tolist() == [2, 3] and tf.shape(x).dtype == tf.int32
    assert tf.size(x).item() == 6 and tf.rank(x).item() == 2
    assert tf.transpose(tf.zeros([2, 3, 4])).shape == (4, 3, 2)
    assert tf.transpose(tf.zeros([2, 3, 4]), perm=[0, 2, 1]).shape == (2, 4, 3)
    assert tf.tile(tf.constant([1, 2]), [2]).tolist() == [1, 2, 1, 2]
    assert tf.gather(tf.constant([[1, 2], [3, 4]]), [1, 0]).tolist() == [[3, 4], [1, 2]]
    assert tf.gather(tf.constant([[1, 2], [3, 4]]), [1], axis=1).tolist() == [[2], [4]]
    assert tf.stop_gradient(tf.Variable(1.0) * 2).requires_grad is False
    assert tf.is_tensor(x) and isinstance(x, tf.Tensor) and tf.newaxis is None


def test_math_functions():
    a = tf.constant([[1.0, 2.0]])
    b = tf.constant([[3.0], [4.0]])
    assert tf.matmul(a, b).tolist() == [[11.0]]
    assert tf.matmul(a, a, transpose_b=True).tolist() == [[5.0]]
    assert tf.matmul(b, b, transpose_a=True).tolist() == [[25.0]]
    assert tf.square(a).tolist() == [[1.0, 4.0]] and tf.sqrt(tf.constant(4.0)).item() == 2.0
    assert tf.exp(tf.constant(0.0)).item() == 1.0 and tf.log(tf.constant(1.0)).item() == 0.0
    assert tf.abs(tf.constant(-2)).item() == 2 and tf.pow(tf.constant(2.0), 3).item() == 8.0
    assert tf.minimum(a, 1.5).tolist() == [[1.0, 1.5]]
    assert tf.clip_by_value(tf.constant([-1.0, 0.5, 2.0]), 0.0, 1.0).tolist() == [0.0, 0.5, 1.0]
    assert tf.math.reduce_sum is tf.reduce_sum and tf.math.square is tf.square
    assert tf.math.divide_no_nan(tf.constant([1.0, 1.0]), tf.constant([0.0, 2.0])).tolist() == [0.0, 0.5]
    top = tf.math.top_k(tf.constant([1.0, 3.0, 2.0]), k=2)
    assert top.values.tolist() == [3.0, 2.0] and top.indices.tolist() == [1, 2]
    assert tf.math.cumsum(tf.constant([1, 2, 3]), exclusive=True).tolist() == [0, 1, 3]


def test_nn_functions_match_torch():
    logits = torch.randn(4, 3)
    labels = torch.tensor([0, 2, 1, 1])
    want = torch.nn.functional.cross_entropy(logits, labels, reduction="none")
    got = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    torch.testing.assert_close(got, want)
    onehot = tf.one_hot(labels, 3)
    torch.testing.assert_close(tf.nn.softmax_cross_entropy_with_logits(labels=onehot, logits=logits), want)
    torch.testing.assert_close(tf.nn.softmax(logits), torch.softmax(logits, -1))
    torch.testing.assert_close(tf.nn.log_softmax(logits, axis=0), torch.log_softmax(logits, 0))
    assert tf.nn.relu(tf.constant([-1.0, 1.0])).tolist() == [0.0, 1.0]
    assert tf.nn.sigmoid(tf.constant(0.0)).item() == 0.5
    assert tf.nn.l2_loss(tf.constant([3.0, 4.0])).item() == 12.5
    with pytest.raises(ValueError, match="shape of logits without its last axis"):
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=torch.tensor([[0]]), logits=logits)


def test_compute_average_loss_takes_replicas_from_the_replica_context():
    per_example = tf.constant([1.0, 3.0])
    assert tf.nn.compute_average_loss(per_example).item() == 2.0
    assert tf.nn.compute_average_loss(per_example, global_batch_size=4).item() == 1.0
    assert tf.nn.compute_average_loss(per_example, sample_weight=tf.constant([1.0, 0.0])).item() == 0.5
    assert tf.nn.compute_average_loss(per_example, global_batch_size=0).item() == 0.0
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    assert strategy.run(lambda: tf.nn.compute_average_loss(per_example)).item() == 2.0
    with strategy.scope(), pytest.raises(RuntimeError, match="cross-replica context"):
        tf.nn.compute_average_loss(per_example)


def test_random_is_seeded_and_shaped():
    tf.random.set_seed(1)
    a = tf.random.uniform([3], minval=2, maxval=4)
    n = tf.random.normal([2, 2], mean=1.0, stddev=0.0)
    tf.random.set_seed(1)
    b = tf.random.uniform([3], minval=2, maxval=4)
    assert torch.equal(a, b) and bool(((a >= 2) & (a < 4)).all())
    assert n.tolist() == [[1.0, 1.0], [1.0, 1.0]]
    ints = tf.random.uniform([100], maxval=3, dtype=tf.int32)
    assert ints.dtype == tf.int32 and set(ints.tolist()) <= {0, 1, 2}
    with pytest.raises(ValueError, match="needs maxval"):
        tf.random.uniform([2], dtype=tf.int64)
    shuffled = tf.random.shuffle(tf.range(10))
    assert sorted(shuffled.tolist()) == list(range(10))
    assert tf.random.truncated_normal([1000]).abs().max().item() <= 2.0


def test_print_writes_tf_format():
    out = io.StringIO()
    tf.print("loss:", tf.constant([1, 2]), 3, output_stream=out)
    assert out.getvalue() == "loss: [1 2] 3\n"
    out = io.StringIO()
    tf.print(tf.range(10), output_stream=out)
    assert out.getvalue() == "[0 1 2 ... 7 8 9]\n"


def test_config_devices():
    cpus = tf.config.list_physical_devices("CPU")
    assert cpus[0].device_type == "CPU" and cpus[0].name == "/physical_device:CPU:0"
    assert len(tf.config.list_physical_devices("GPU")) == (
        torch.cuda.device_count() if torch.cuda.is_available() else 0
    )
    tf.config.set_logical_device_configuration(cpus[0], [tf.config.LogicalDeviceConfiguration()] * 2)
    try:
        assert [d.name for d in tf.config.list_logical_devices("CPU")] == ["/device:CPU:0", "/device:CPU:1"]
    finally:
        tf.config.set_logical_device_configuration(cpus[0], None)
    assert len(tf.config.list_logical_devices("CPU")) == 1
    with pytest.raises(ValueError, match="non-GPU"):  # TF's rule: growth is a GPU setting
        tf.config.experimental.set_memory_growth(cpus[0], True)
    assert tf.config.list_physical_devices("TPU") == []  # TF lists nothing for a type it lacks


def test_unsupported_attribute_names_the_torch_equivalent():
    with pytest.raises(AttributeError, match=r"unison does not implement tf\.lite\. Use torch\.export"):
        tf.lite  # noqa: B018
    with pytest.raises(AttributeError, match=r"tf\.signal\.fftnd\. Use torch\.fft\.fftn"):
        tf.signal.fftnd  # noqa: B018
    with pytest.raises(AttributeError, match=r"unison does not implement tf\.math\.special\.no_such"):
        tf.math.special.no_such  # noqa: B018
    # exists (isinstance checks); making one raises a ValueError, as TF's does without a TPU
    with pytest.raises(tf.errors.TPUNotSupportedError, match=r"TPUStrategy: TPUs are not supported.*MirroredStrategy"):
        tf.distribute.TPUStrategy()
    with pytest.raises(AttributeError, match=r"only as tf\.distribute\.experimental\.CentralStorageStrategy"):
        tf.distribute.CentralStorageStrategy  # noqa: B018
    with pytest.raises(AttributeError, match=r"tf\.estimator\. Use Keras Model\.fit"):
        tf.estimator  # noqa: B018
    with pytest.raises(AttributeError, match="does not implement tf.no_such_name"):
        tf.no_such_name  # noqa: B018
    assert not hasattr(tf, "__wrapped__") and not hasattr(tf, "_private_thing")
    assert pickle.loads(pickle.dumps(tf.reduce_sum)) is tf.reduce_sum


def test_submodule_imports_still_work():
    code = (
        "import unison as tf; import unison.testing; from unison.train import files; "
        "from unison.keras import layers; print(tf.testing.__name__, tf.rank(), tf.size())"
    )
    out = subprocess.run(
        [sys.executable, "-c", "import unison; unison.init(); " + code],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["unison.testing", "0", "1"]


class _Symbol:
    """A stand-in for a Keras symbolic tensor: records the tf.* calls made on it."""

    calls: list = []

    @staticmethod
    def __unison_tf_op__(fn, args, kwargs):
        _Symbol.calls.append((fn.__name__, args, kwargs))
        return _Symbol()


def test_symbolic_values_take_over_tf_functions():
    sym = _Symbol()
    _Symbol.calls.clear()
    assert isinstance(tf.reduce_mean(sym, axis=1), _Symbol)
    assert isinstance(tf.concat([tf.zeros([1]), sym], axis=0), _Symbol)
    assert isinstance(tf.nn.relu(features=sym), _Symbol)
    assert isinstance(tf.math.add(1.0, sym), _Symbol)
    assert [c[0] for c in _Symbol.calls] == ["reduce_mean", "concat", "relu", "add"]
    fn = _Symbol.calls[0][0]
    assert fn == "reduce_mean" and tf.reduce_mean(tf.ones([2, 2]), axis=1).tolist() == [1.0, 1.0]
