"""tf.queue against TensorFlow 2.21: the four queues' order, batching, padding, closing and errors
(everything a single thread can observe without blocking)."""

from __future__ import annotations

from tf_oracle import same_as_tf

QUEUES = ("queue.FIFOQueue", "queue.QueueBase")


@same_as_tf(*QUEUES)
def test_fifo_queue(tf):
    q = tf.queue.FIFOQueue(5, [tf.int32, tf.float32], shapes=[[], [2]])
    q.enqueue((tf.constant(1), tf.constant([1.0, 2.0])))
    q.enqueue_many(([2, 3], [[3.0, 4.0], [5.0, 6.0]]))
    first = q.dequeue()
    size = q.size()
    rest = q.dequeue_many(2)
    named = tf.queue.FIFOQueue(2, [tf.int64, tf.string], names=["id", "text"])
    named.enqueue({"id": tf.constant(7, tf.int64), "text": tf.constant("seven")})
    single = tf.queue.FIFOQueue(2, tf.float32)
    single.enqueue(tf.constant(2.5))
    return (
        first,
        size,
        rest,
        named.dequeue(),
        single.dequeue(),
        isinstance(q, tf.queue.QueueBase),
        q.dtypes == [tf.int32, tf.float32],
        q.is_closed(),
    )


@same_as_tf(*QUEUES, edge=True)
def test_fifo_queue_closed(tf):
    q = tf.queue.FIFOQueue(4, tf.int32, shapes=[[]])
    q.enqueue_many([tf.constant([1, 2, 3])])
    q.close()
    out = [q.is_closed(), q.dequeue_up_to(2), q.dequeue_up_to(5)]
    try:
        q.dequeue()
    except tf.errors.OutOfRangeError:
        out.append("empty and closed")
    try:
        q.enqueue(tf.constant(4))
    except tf.errors.CancelledError:
        out.append("closed")
    short = tf.queue.FIFOQueue(4, tf.int32, shapes=[[]])
    short.enqueue(tf.constant(1))
    short.close()
    try:
        short.dequeue_many(2)
    except tf.errors.OutOfRangeError:
        out.append(short.size())
    try:
        tf.queue.FIFOQueue(2, tf.int32).dequeue_many(1)
    except tf.errors.InvalidArgumentError:
        out.append("needs shapes")
    return out


@same_as_tf("queue.PaddingFIFOQueue")
def test_padding_fifo_queue(tf):
    q = tf.queue.PaddingFIFOQueue(4, [tf.int32, tf.string], shapes=[[None], []])
    q.enqueue((tf.constant([1, 2, 3]), tf.constant("a")))
    q.enqueue((tf.constant([4]), tf.constant("b")))
    q.enqueue((tf.constant([], tf.int32), tf.constant("c")))
    return q.dequeue_many(3)


@same_as_tf("queue.PaddingFIFOQueue", edge=True)
def test_padding_fifo_queue_needs_matching_rank(tf):
    q = tf.queue.PaddingFIFOQueue(2, [tf.float32], shapes=[[None, 2]])
    try:
        q.enqueue([tf.zeros([3])])
    except (ValueError, tf.errors.InvalidArgumentError) as error:
        return type(error).__name__ in ("ValueError", "InvalidArgumentError")
    return "accepted"


@same_as_tf("queue.PriorityQueue")
def test_priority_queue(tf):
    q = tf.queue.PriorityQueue(5, [tf.string], shapes=[[]])
    for priority, text in ((3, "c"), (1, "a"), (2, "b")):
        q.enqueue((tf.constant(priority, tf.int64), tf.constant(text)))
    return q.dequeue(), q.dequeue_many(2), q.size()


@same_as_tf("queue.PriorityQueue", edge=True)
def test_priority_queue_closed_empty(tf):
    q = tf.queue.PriorityQueue(2, [tf.int32], shapes=[[]])
    q.close()
    try:
        q.dequeue()
    except tf.errors.OutOfRangeError:
        return "empty"
    return "value"


@same_as_tf("queue.RandomShuffleQueue")
def test_random_shuffle_queue_returns_every_element(tf):
    q = tf.queue.RandomShuffleQueue(10, 2, tf.int32, shapes=[[]], seed=3)
    q.enqueue_many([tf.range(6)])
    taken = [int(q.dequeue()) for _ in range(4)]
    q.close()
    taken += [int(x) for x in q.dequeue_up_to(5)]
    return sorted(taken), q.size()


@same_as_tf("queue.RandomShuffleQueue", edge=True)
def test_random_shuffle_queue_closed_empty(tf):
    q = tf.queue.RandomShuffleQueue(3, 0, [tf.float32], shapes=[[]])
    q.close()
    try:
        q.dequeue_many(1)
    except tf.errors.OutOfRangeError:
        return "empty"
    return "value"
