"""Write the TFRecord fixtures of tests/unit/test_tfrecord.py with TensorFlow itself (run once).

Made with tensorflow-cpu 2.21.0 from PyPI in a separate virtual environment::

    python -m venv /tmp/tfvenv && /tmp/tfvenv/bin/pip install tensorflow-cpu
    /tmp/tfvenv/bin/python tests/unit/data/tfrecord/make_with_tensorflow.py tests/unit/data/tfrecord

The files are committed; unison's tests only read them (no TensorFlow needed to run the tests).
"""

import sys

import numpy as np
import tensorflow as tf


def example(i: int) -> bytes:
    feature = {
        "id": tf.train.Feature(int64_list=tf.train.Int64List(value=[i])),
        "label": tf.train.Feature(bytes_list=tf.train.BytesList(value=[f"cls{i % 3}".encode()])),
        "vec": tf.train.Feature(float_list=tf.train.FloatList(value=[i * 0.5, -1.0, 2.25])),
        "tokens": tf.train.Feature(int64_list=tf.train.Int64List(value=list(range(i % 4)))),
    }
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def sequence_example() -> bytes:
    ex = tf.train.SequenceExample()
    ex.context.feature["length"].int64_list.value.append(3)
    for t in range(3):
        ex.feature_lists.feature_list["frames"].feature.add().float_list.value.extend([t, t + 0.5])
    return ex.SerializeToString()


def main(out: str) -> None:
    for compression, name in (
        ("", "examples.tfrecord"),
        ("GZIP", "examples.tfrecord.gz"),
        ("ZLIB", "examples.tfrecord.zlib"),
    ):
        with tf.io.TFRecordWriter(f"{out}/{name}", options=tf.io.TFRecordOptions(compression_type=compression)) as w:
            for i in range(5):
                w.write(example(i))
    with tf.io.TFRecordWriter(f"{out}/sequence.tfrecord") as w:
        w.write(sequence_example())
    tensor = tf.io.serialize_tensor(tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3))).numpy()
    strings = tf.io.serialize_tensor(tf.constant([b"a", b"bc"])).numpy()
    with open(f"{out}/tensor_float32_2x3.pb", "wb") as fh:
        fh.write(tensor)
    with open(f"{out}/tensor_strings.pb", "wb") as fh:
        fh.write(strings)


if __name__ == "__main__":
    main(sys.argv[1])
