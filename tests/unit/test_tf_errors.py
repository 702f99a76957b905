"""tf.errors: TF's status-code errors, raised where TF raises them and caught as TF programs catch them."""

from __future__ import annotations

import pickle

import pytest

import unison as tf

pytestmark = pytest.mark.timeout(60)

_CODES = {
    "CancelledError": 1,
    "UnknownError": 2,
    "InvalidArgumentError": 3,
    "DeadlineExceededError": 4,
    "NotFoundError": 5,
    "AlreadyExistsError": 6,
    "PermissionDeniedError": 7,
    "ResourceExhaustedError": 8,
    "FailedPreconditionError": 9,
    "AbortedError": 10,
    "OutOfRangeError": 11,
    "UnimplementedError": 12,
    "InternalError": 13,
    "UnavailableError": 14,
    "DataLossError": 15,
}


@pytest.mark.parametrize("name", sorted(_CODES))
def test_each_status_error_has_tfs_code_and_both_constructors(name):
    cls = getattr(tf.errors, name)
    assert issubclass(cls, tf.errors.OpError) and cls.error_code == _CODES[name]
    as_tf = cls(None, None, "what happened")  # TF's (node_def, op, message)
    assert (as_tf.message, str(as_tf), as_tf.node_def, as_tf.op) == ("what happened", "what happened", None, None)
    assert cls("short").message == "short"
    assert pickle.loads(pickle.dumps(cls("crosses processes"))).message == "crosses processes"


def test_get_next_past_the_end_is_out_of_range_as_in_tf():
    iterator = iter(tf.data.Dataset.range(3))
    seen = []
    while True:  # the loop TF's guides write
        try:
            seen.append(int(iterator.get_next()))
        except tf.errors.OutOfRangeError as e:
            assert e.message == "End of sequence" and e.error_code == 11
            break
    assert seen == [0, 1, 2]
    with pytest.raises(StopIteration):  # code written against next() still stops
        iter(tf.data.Dataset.range(0)).get_next()


def test_a_distributed_iterator_ends_with_out_of_range():
    strategy = tf.distribute.MirroredStrategy()
    iterator = iter(strategy.experimental_distribute_dataset(tf.data.Dataset.range(4).batch(2)))
    assert [iterator.get_next().tolist(), iterator.get_next().tolist()] == [[0, 1], [2, 3]]
    with pytest.raises(tf.errors.OutOfRangeError, match="End of sequence"):
        iterator.get_next()


def test_matmul_of_mismatched_shapes_is_an_invalid_argument_naming_both():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"In\[0\]: \[1, 3\], In\[1\]: \[2, 2\]"):
        tf.matmul([[2.0, 2.0, 2.0]], tf.ones((2, 2)))


def test_the_coordinators_exhausted_dataset_is_out_of_range():
    assert issubclass(tf.errors.DatasetExhaustedError, tf.errors.OutOfRangeError)
    assert not issubclass(tf.errors.DatasetExhaustedError, StopIteration)  # it crosses generator frames
