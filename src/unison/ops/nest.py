"""``tf.nest``: walk nested lists, tuples, namedtuples and dicts as TF does.

Lists, tuples (namedtuples too), mappings and ``attrs`` classes are structure; everything else
(tensors, arrays, numbers, strings, ``None``) is a leaf. Mappings are walked in sorted key order,
as in TF, and rebuilt with the key order of the structure they were taken from;
``expand_composites=True`` walks a ``SparseTensor``'s or ``RaggedTensor``'s component tensors.
The functions are unison's one tree module's (:mod:`unison.ops.tree`), which also holds the
variants other parts of unison need (``tf.data``'s lists-are-leaves rule among them).

Example:
    >>> import unison as tf
    >>> tf.nest.flatten({"b": [1, 2], "a": (3, None)})
    [3, None, 1, 2]
    >>> tf.nest.map_structure(lambda x: x * 10, {"b": [1, 2], "a": (3,)})
    {'b': [10, 20], 'a': (30,)}
    >>> tf.nest.pack_sequence_as(((0, 0), 0), [1, 2, 3])
    ((1, 2), 3)
"""

from __future__ import annotations

from unison.ops.tree import assert_same_structure, flatten, is_nested, map_structure, pack_sequence_as

__all__ = ["assert_same_structure", "flatten", "is_nested", "map_structure", "pack_sequence_as"]


def __getattr__(name: str) -> object:
    from unison.ops._unsupported import unsupported

    raise unsupported("tf.nest", name)
