"""``keras.tree`` on unison against Keras 3.15's (optree-based) ``keras.tree``.

Each case is a module-level function of ``tree`` (``tf.keras.tree``); ``CASES`` pairs every public
name with its ordinary case and its edge case (empty containers, ``None`` leaves, a bare leaf,
mismatched structures that must raise). Namedtuples are built inside the bodies, so that only
numpy, pytest and tf_oracle are imported at module level.
"""

from __future__ import annotations

import pytest
from tf_oracle import same_as_tf


def _point():
    import collections

    return collections.namedtuple("Point", "x y")


def _sample():
    import collections

    return {
        "b": [1, (2, None)],
        "a": _point()(3, {"z": 4, "c": 5}),
        "o": collections.OrderedDict([("q", 6), ("e", 7)]),
    }


def flatten(tree):
    return tree.flatten(_sample())


def flatten_edge(tree):
    return tree.flatten([(), {}, None, [[]]]), tree.flatten(5), tree.flatten("text")


def flatten_with_path(tree):
    return tree.flatten_with_path(_sample())


def flatten_with_path_edge(tree):
    return tree.flatten_with_path(5), tree.flatten_with_path({"k": [None]})


def is_nested(tree):
    return [tree.is_nested(v) for v in ([1], (), {}, _point()(1, 2))]


def is_nested_edge(tree):
    return [tree.is_nested(v) for v in ("ab", None, 3, b"x")]


def map_structure(tree):
    return tree.map_structure(lambda a, b: a * 10 + b, {"a": [1, 2], "b": (3,)}, {"a": [4, 5], "b": (6,)})


def map_structure_edge(tree):
    skipped = tree.map_structure(lambda v: 0, [1, None, (None, 2)], none_is_leaf=False)
    try:
        tree.map_structure(lambda a, b: a, [1, 2], (1, 2))
    except ValueError:
        return skipped, "ValueError"
    return skipped, "no error"


def map_structure_up_to(tree):
    return tree.map_structure_up_to([1, [2, 3]], lambda a, b: (a, b), [[1], [2, 3]], [5, [6, 7]])


def map_structure_up_to_edge(tree):
    return tree.map_structure_up_to([1, [2, 3]], lambda a: a, [1, 2])


def assert_same_structure(tree):
    return tree.assert_same_structure({"a": [1, (2,)]}, {"a": [3, (4,)]})


def assert_same_structure_edge(tree):
    return tree.assert_same_structure([1, [2]], [1, 2])


def assert_same_paths(tree):
    return tree.assert_same_paths([1, (2, 3)], (4, [5, 6]))


def assert_same_paths_edge(tree):
    return tree.assert_same_paths({"a": 1}, {"b": 1})


def pack_sequence_as(tree):
    return tree.pack_sequence_as(_sample(), list(range(8)))


def pack_sequence_as_edge(tree):
    return tree.pack_sequence_as([1, 2], [1])


def lists_to_tuples(tree):
    return tree.lists_to_tuples([1, [2, {"a": [3]}]])


def lists_to_tuples_edge(tree):
    return tree.lists_to_tuples([]), tree.lists_to_tuples(7)


def map_shape_structure(tree):
    return tree.map_shape_structure(lambda s: len(s), {"a": (None, 3), "b": [(1, 2), [4]]})


def map_shape_structure_edge(tree):
    return tree.map_shape_structure(lambda s: s is None, [(), None, [None, None]])


def traverse(tree):
    top_down = tree.traverse(lambda x: x * 2 if isinstance(x, int) else None, [1, [2, (3,)]])
    bottom_up = tree.traverse(lambda x: sum(x) if isinstance(x, list) else None, [1, [2, 3]], top_down=False)
    return top_down, bottom_up


def traverse_edge(tree):
    return tree.traverse(lambda x: tree.MAP_TO_NONE if isinstance(x, int) and x > 2 else None, [1, [2, 3]])


CASES = {
    "flatten": (flatten, flatten_edge),
    "flatten_with_path": (flatten_with_path, flatten_with_path_edge),
    "is_nested": (is_nested, is_nested_edge),
    "map_structure": (map_structure, map_structure_edge),
    "map_structure_up_to": (map_structure_up_to, map_structure_up_to_edge),
    "assert_same_structure": (assert_same_structure, assert_same_structure_edge),
    "assert_same_paths": (assert_same_paths, assert_same_paths_edge),
    "pack_sequence_as": (pack_sequence_as, pack_sequence_as_edge),
    "lists_to_tuples": (lists_to_tuples, lists_to_tuples_edge),
    "map_shape_structure": (map_shape_structure, map_shape_structure_edge),
    "traverse": (traverse, traverse_edge),
}

TREE_NAMES = (
    "keras:tree.MAP_TO_NONE",
    "keras:tree.assert_same_paths",
    "keras:tree.assert_same_structure",
    "keras:tree.flatten",
    "keras:tree.flatten_with_path",
    "keras:tree.is_nested",
    "keras:tree.lists_to_tuples",
    "keras:tree.map_shape_structure",
    "keras:tree.map_structure",
    "keras:tree.map_structure_up_to",
    "keras:tree.pack_sequence_as",
    "keras:tree.traverse",
)


@pytest.mark.parametrize("name", sorted(CASES))
@same_as_tf(*TREE_NAMES)
def test_tree(tf, name):
    return CASES[name][0](tf.keras.tree)


@pytest.mark.parametrize("name", sorted(CASES))
@same_as_tf(*TREE_NAMES, edge=True)
def test_tree_edge(tf, name):
    return CASES[name][1](tf.keras.tree)


def test_every_name_has_cases():
    listed = {n.split(".")[-1] for n in TREE_NAMES} - {"MAP_TO_NONE"}
    assert listed == set(CASES)
