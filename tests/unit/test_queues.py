"""tf.queue across threads: a blocked dequeue wakes on enqueue, a blocked enqueue on dequeue or close."""

from __future__ import annotations

import threading

import pytest

import unison as tf

pytestmark = pytest.mark.timeout(60)


def test_dequeue_waits_for_an_enqueue_from_another_thread():
    q = tf.queue.FIFOQueue(2, tf.int32)
    got = []
    consumer = threading.Thread(target=lambda: got.append(int(q.dequeue())))
    consumer.start()
    q.enqueue(tf.constant(5))
    consumer.join(timeout=30)
    assert got == [5]


def test_enqueue_on_a_full_queue_waits_until_close_refuses_it():
    q = tf.queue.FIFOQueue(1, tf.int32)
    q.enqueue(tf.constant(1))
    errors = []

    def producer():
        try:
            q.enqueue(tf.constant(2))
        except tf.errors.CancelledError as error:
            errors.append(error)

    thread = threading.Thread(target=producer)
    thread.start()
    q.close()
    thread.join(timeout=30)
    assert len(errors) == 1 and "closed" in str(errors[0])
    assert int(q.dequeue()) == 1


def test_mismatched_components_are_named_errors():
    q = tf.queue.FIFOQueue(2, [tf.int32, tf.float32])
    with pytest.raises(ValueError, match="Expected 2 components"):
        q.enqueue(tf.constant(1))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Cast it first"):
        q.enqueue((tf.constant(1.5), tf.constant(1.0)))
