"""``tf.strings``: ``unison.ops.strings`` with the rest of TF's string functions (``ops.strings_more``).

Example:
    >>> import unison as tf
    >>> tf.strings.unsorted_segment_join(["a", "b"], [0, 0], 1, "+").tolist()
    [b'a+b']
"""

from __future__ import annotations

from unison.ops.hashing import to_hash_bucket
from unison.ops.strings import *  # noqa: F403  the functions of ops.strings
from unison.ops.strings import __all__ as _base_names
from unison.ops.strings import __getattr__ as __getattr__  # tf.strings.<missing>: the named error
from unison.ops.strings_more import (
    ngrams,
    to_hash_bucket_strong,
    unicode_decode_with_offsets,
    unicode_split_with_offsets,
    unicode_transcode,
    unsorted_segment_join,
)

__all__ = [
    *_base_names,
    "ngrams",
    "to_hash_bucket",
    "to_hash_bucket_strong",
    "unicode_decode_with_offsets",
    "unicode_split_with_offsets",
    "unicode_transcode",
    "unsorted_segment_join",
]
