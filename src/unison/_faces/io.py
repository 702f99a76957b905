"""``tf.io``: the file-system functions of ``tf.io.gfile`` on the local file system.

TF programs use ``tf.io.gfile`` to make, list and remove the directories that hold their
checkpoints and logs (the multi-worker tutorials make a temporary directory per non-chief
worker and remove it after saving). TF's ``gfile`` also reaches GCS and HDFS through URL
schemes; unison reads and writes local paths only and says so for a URL.

Example:
    >>> import os, tempfile, unison as tf
    >>> root = tempfile.mkdtemp()
    >>> tf.io.gfile.makedirs(os.path.join(root, "a", "b"))
    >>> tf.io.gfile.listdir(root)
    ['a']
    >>> tf.io.gfile.rmtree(os.path.join(root, "a"))
    >>> tf.io.gfile.exists(os.path.join(root, "a"))
    False
"""

from __future__ import annotations

from typing import Any

from unison.data.csv import decode_csv
from unison.data.tfrecord import TFRecordOptions, TFRecordWriter
from unison.ops import gfile
from unison.ops._unsupported import unsupported
from unison.ops.file_io import (
    decode_base64,
    decode_compressed,
    encode_base64,
    match_filenames_once,
    matching_files,
    read_file,
    write_file,
)
from unison.ops.image_codecs import (
    decode_and_crop_jpeg,
    decode_bmp,
    decode_gif,
    decode_image,
    decode_jpeg,
    decode_png,
    decode_webp,
    extract_jpeg_shape,
    is_jpeg,
)
from unison.ops.image_encode import encode_jpeg, encode_png
from unison.ops.json_example import decode_json_example
from unison.ops.parsing import (
    FixedLenFeature,
    FixedLenSequenceFeature,
    RaggedFeature,
    SparseFeature,
    VarLenFeature,
    decode_raw,
    parse_example,
    parse_single_example,
    parse_tensor,
    serialize_tensor,
)
from unison.ops.sequence_parsing import parse_sequence_example, parse_single_sequence_example
from unison.ops.sparse_serialize import deserialize_many_sparse, serialize_many_sparse, serialize_sparse

# TFRecord files (unison.data.tfrecord), tf.train.Example parsing (unison.ops.parsing), whole
# files (unison.ops.file_io) and image codecs (unison.ops.image_codecs).
__all__ = [
    "FixedLenFeature",
    "FixedLenSequenceFeature",
    "TFRecordOptions",
    "TFRecordWriter",
    "RaggedFeature",
    "SparseFeature",
    "VarLenFeature",
    "decode_and_crop_jpeg",
    "decode_base64",
    "decode_bmp",
    "decode_compressed",
    "decode_csv",
    "decode_gif",
    "decode_image",
    "decode_jpeg",
    "decode_png",
    "decode_webp",
    "deserialize_many_sparse",
    "decode_json_example",
    "decode_raw",
    "encode_base64",
    "encode_jpeg",
    "encode_png",
    "extract_jpeg_shape",
    "is_jpeg",
    "match_filenames_once",
    "matching_files",
    "read_file",
    "write_file",
    "gfile",
    "parse_example",
    "parse_sequence_example",
    "parse_single_example",
    "parse_single_sequence_example",
    "parse_tensor",
    "serialize_many_sparse",
    "serialize_sparse",
    "serialize_tensor",
]


def __getattr__(name: str) -> Any:
    raise unsupported("tf.io", name)
