"""unison.ops.tree: tf.nest's rules (attrs, composites, None, strings) and the variants as options.

Expected values are TF's documented ``tf.nest`` behaviour; the options are those the data
pipeline, the data adapters and the symbolic graph name instead of keeping walkers of their own.
"""

from __future__ import annotations

import collections

import numpy as np
import pytest
import torch

import unison as tf
from unison.ops import tree

Point = collections.namedtuple("Point", ["x", "y"])


def test_attrs_classes_are_structure_in_field_order():
    attr = pytest.importorskip("attr")  # TF's nest walks attrs classes; attrs comes with TF's own packages

    @attr.s
    class Pair:
        first = attr.ib()
        second = attr.ib()

    value = Pair([1, 2], {"b": 3, "a": 4})
    assert tree.flatten(value) == [1, 2, 4, 3]
    doubled = tree.map_structure(lambda v: v * 2, value)
    assert isinstance(doubled, Pair) and doubled == Pair([2, 4], {"b": 6, "a": 8})
    assert tree.pack_sequence_as(value, list("wxyz")) == Pair(["w", "x"], {"a": "y", "b": "z"})


def test_expand_composites_walks_sparse_and_ragged_components():
    sparse = tf.SparseTensor([[0, 1], [2, 0]], [5.0, 6.0], [3, 2])
    ragged = tf.RaggedTensor.from_row_splits([1, 2, 3], [0, 1, 3])
    assert len(tree.flatten({"s": sparse, "r": ragged})) == 2  # leaves without expand_composites
    leaves = tree.flatten({"s": sparse, "r": ragged}, expand_composites=True)
    assert [t.tolist() for t in leaves] == [[1, 2, 3], [0, 1, 3], [[0, 1], [2, 0]], [5.0, 6.0], [3, 2]]
    scaled = tree.map_structure(lambda t: t * 10 if t.is_floating_point() else t, {"s": sparse}, expand_composites=True)
    assert isinstance(scaled["s"], tf.SparseTensor) and scaled["s"].values.tolist() == [50.0, 60.0]
    assert tree.map_structure(lambda t: t, ragged, expand_composites=True).to_list() == [[1], [2, 3]]
    tree.assert_same_structure(sparse, sparse, expand_composites=True)


def test_none_and_strings_are_leaves_and_tuple_subclasses_come_back_as_themselves():
    assert tree.flatten([None, "ab", b"cd"]) == [None, "ab", b"cd"]
    assert tree.map_structure(lambda v: v is None, (None, [None])) == (True, [True])
    maxed = torch.zeros(3, 2).max(0)  # a torch.return_types structseq
    assert type(tree.map_structure(lambda t: t + 1, maxed)) is type(maxed)
    assert tree.map_structure(lambda v: v, Point(1, [2])) == Point(1, [2])


def test_dicts_walk_in_sorted_order_and_keep_their_own_order_and_type():
    order: list[str] = []
    out = tree.map_structure(lambda v: order.append(v) or v.upper(), {"b": "x", "a": "y"})
    assert order == ["y", "x"] and list(out) == ["b", "a"]
    ordered = collections.OrderedDict([("z", 1), ("a", 2)])
    assert tree.flatten(ordered) == [2, 1]
    assert isinstance(tree.map_structure(lambda v: v, ordered), collections.OrderedDict)
    with pytest.raises(TypeError, match="sortable keys"):
        tree.map_structure(lambda v: v, {1: 1, "a": 2})


def test_lists_false_makes_a_list_one_leaf_as_in_tf_data():
    element = ([1, 2], {"k": [3]})
    assert tree.flatten(element, lists=False) == [[1, 2], [3]]
    assert tree.map_structure(len, element, lists=False) == (2, {"k": 1})
    assert tree.pack_sequence_as(element, ["a", "b"], lists=False) == ("a", {"k": "b"})


def test_only_maps_some_leaf_types_and_keeps_the_others():
    batch = {"x": torch.ones(2), "n": 3, "s": None, "a": np.zeros(2)}
    out = tree.map_structure(lambda t: t.shape[0], batch, only=(torch.Tensor, np.ndarray))
    assert out == {"x": 2, "n": 3, "s": None, "a": 2}
    assert tree.flatten([1, (2.0, "s")], only=float) == [2.0]


def test_strict_false_walks_the_first_structure_and_indexes_the_others():
    types = (torch.int32, {"b": torch.float32})
    shapes = ((None, 2), {"b": []})  # a leaf of the first stands for a tuple of the second
    out = tree.map_structure(lambda t, s: (t, s), types, shapes, strict=False)
    assert out == ((torch.int32, (None, 2)), {"b": (torch.float32, [])})
    with pytest.raises(ValueError, match="same nested structure"):
        tree.map_structure(lambda t, s: t, types, shapes)


def test_sort_keys_false_walks_mappings_in_insertion_order():
    value = {"b": 1, "a": [2, 3]}
    assert tree.flatten(value, sort_keys=False) == [1, 2, 3]
    seen: list[int] = []
    tree.map_structure(seen.append, value, sort_keys=False)
    assert seen == [1, 2, 3]
    assert tree.pack_sequence_as(value, [7, 8, 9], sort_keys=False) == {"b": 7, "a": [8, 9]}


def test_tf_nest_is_the_tree_module():
    assert tf.nest.map_structure is tree.map_structure and tf.nest.flatten is tree.flatten
