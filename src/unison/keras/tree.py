"""``keras.tree`` (Keras 3): flatten, map and rebuild nested structures of lists, tuples,
namedtuples, dicts and deques, with Keras's rules.

Keras's rules (its optree back end): ``None`` is a leaf (``none_is_leaf=True``); a dict's leaves
come in sorted key order, an ``OrderedDict``'s in insertion order, and a rebuilt dict keeps the
original's key order; a namedtuple's path entries are positions; strings are leaves; mismatched
structures raise ``ValueError``.

Example:
    >>> from unison.keras import tree
    >>> tree.flatten({"b": [1, (2, None)], "a": 3})
    [3, 1, 2, None]
    >>> tree.map_structure(lambda x: x * 10, {"a": 1, "b": (2, 3)})
    {'a': 10, 'b': (20, 30)}
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Iterator, Mapping
from typing import Any

__all__ = [
    "MAP_TO_NONE",
    "assert_same_paths",
    "assert_same_structure",
    "flatten",
    "flatten_with_path",
    "is_nested",
    "lists_to_tuples",
    "map_shape_structure",
    "map_structure",
    "map_structure_up_to",
    "pack_sequence_as",
    "traverse",
]


class MAP_TO_NONE:  # noqa: N801 - Keras's public name
    """Return this class from a :func:`traverse` function to put ``None`` in the output (returning
    ``None`` itself means "keep traversing")."""


_MISMATCH = "Structures don't have the same nested structure."


def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _node(x: Any, none_is_leaf: bool = True) -> tuple[list[Any], list[Any]] | None:
    """``(keys, children)`` of a container, ``None`` for a leaf."""
    if x is None:
        return None if none_is_leaf else ([], [])
    if isinstance(x, (list, tuple, collections.deque)):
        return list(range(len(x))), list(x)
    if isinstance(x, collections.OrderedDict):
        keys = list(x.keys())
        return keys, [x[k] for k in keys]
    if isinstance(x, Mapping) and isinstance(x, dict):
        try:
            keys = sorted(x.keys())
        except TypeError:  # keys of mixed types: insertion order
            keys = list(x.keys())
        return keys, [x[k] for k in keys]
    return None


def _rebuild(x: Any, keys: list[Any], children: list[Any]) -> Any:
    if x is None:
        return None
    if _is_namedtuple(x):
        return type(x)(*children)
    if isinstance(x, tuple):
        return tuple(children)
    if isinstance(x, list):
        return list(children)
    if isinstance(x, collections.deque):
        return collections.deque(children, maxlen=x.maxlen)
    values = dict(zip(keys, children))
    ordered = [(k, values[k]) for k in x.keys()]  # the original's key order
    if isinstance(x, collections.defaultdict):
        return collections.defaultdict(x.default_factory, ordered)
    if isinstance(x, collections.OrderedDict):
        return collections.OrderedDict(ordered)
    try:
        return type(x)(ordered)
    except TypeError:
        return dict(ordered)


def is_nested(structure: Any) -> bool:
    """Whether ``structure`` is a container (list, tuple, namedtuple, dict, deque), not a leaf.

    Example: ``is_nested([1])`` is True, ``is_nested("ab")`` and ``is_nested(None)`` are False.
    """
    return _node(structure) is not None


def _leaves(structure: Any, none_is_leaf: bool = True, is_leaf: Callable[[Any], bool] | None = None) -> Iterator[Any]:
    if is_leaf is not None and is_leaf(structure):
        yield structure
        return
    node = _node(structure, none_is_leaf)
    if node is None:
        yield structure
        return
    for child in node[1]:
        yield from _leaves(child, none_is_leaf, is_leaf)


def flatten(structure: Any) -> list[Any]:
    """The leaves of ``structure`` in Keras's order (dicts by sorted key); a leaf gives ``[leaf]``."""
    return list(_leaves(structure))


def _with_path(structure: Any, prefix: tuple[Any, ...]) -> Iterator[tuple[tuple[Any, ...], Any]]:
    node = _node(structure)
    if node is None:
        yield prefix, structure
        return
    for key, child in zip(*node):
        yield from _with_path(child, (*prefix, key))


def flatten_with_path(structure: Any) -> list[tuple[tuple[Any, ...], Any]]:
    """``(path, leaf)`` pairs, a path being the tuple of keys and positions from the root.

    Example: ``flatten_with_path({"a": [5]})`` is ``[(("a", 0), 5)]``.
    """
    return list(_with_path(structure, ()))


def _type_name(x: Any) -> str:
    return type(x).__name__


def _check_same_node(first: Any, other: Any, none_is_leaf: bool) -> tuple[list[Any], list[Any]]:
    node = _node(first, none_is_leaf)
    assert node is not None
    other_node = _node(other, none_is_leaf)
    if (
        other_node is None
        or _type_name(first) != _type_name(other)
        and not (isinstance(first, dict) and isinstance(other, dict) and not _is_namedtuple(first))
    ):
        raise ValueError(f"Expected an instance of {_type_name(first)}, got {other!r:.100}.")
    if isinstance(first, dict):
        if set(node[0]) != set(other_node[0]):
            raise ValueError(
                f"dictionary key mismatch; expected key(s): {sorted(map(str, node[0]))}, "
                f"got key(s): {sorted(map(str, other_node[0]))}."
            )
        return node[0], [other[k] for k in node[0]]
    if len(node[1]) != len(other_node[1]):
        raise ValueError(
            f"{_type_name(first)} arity mismatch; expected: {len(node[1])}, got: {len(other_node[1])}; tuple: {other!r:.100}."
        )
    return node[0], other_node[1]


def _map(func: Callable[..., Any], structures: tuple[Any, ...], none_is_leaf: bool, check_leaves: bool) -> Any:
    first = structures[0]
    node = _node(first, none_is_leaf)
    if node is None:
        if check_leaves and any(_node(s, none_is_leaf) is not None for s in structures[1:]):
            raise ValueError(_MISMATCH)
        return func(*structures)
    keys, children = node
    others = [_check_same_node(first, s, none_is_leaf)[1] for s in structures[1:]]
    mapped = [_map(func, (c, *[o[i] for o in others]), none_is_leaf, check_leaves) for i, c in enumerate(children)]
    return _rebuild(first, keys, mapped)


def map_structure(func: Callable[..., Any], *structures: Any, none_is_leaf: bool = True) -> Any:
    """``func`` applied to the leaves of ``structures`` (which must have the same structure), in the
    structure of the first; with ``none_is_leaf=False`` a ``None`` stays ``None`` without a call."""
    if not structures:
        raise ValueError("Must provide at least one structure")
    return _map(func, structures, none_is_leaf, check_leaves=len(structures) > 1)


def map_structure_up_to(shallow_structure: Any, func: Callable[..., Any], *structures: Any) -> Any:
    """``func`` applied to the sub-structures of ``structures`` found at the leaves of
    ``shallow_structure`` (the structures may be deeper than it).

    Example: ``map_structure_up_to([1, 2], lambda a: len(a), [[1, 2], [3]])`` is ``[2, 1]``.
    """
    if not structures:
        raise ValueError("Must provide at least one structure")

    def up_to(shallow: Any, *values: Any) -> Any:
        node = _node(shallow)
        if node is None:
            return func(*values)
        keys, children = node
        others = [_check_same_node(shallow, v, True)[1] for v in values]
        mapped = [up_to(c, *[o[i] for o in others]) for i, c in enumerate(children)]
        return _rebuild(shallow, keys, mapped)

    return up_to(shallow_structure, *structures)


def assert_same_structure(a: Any, b: Any, check_types: Any = None) -> None:
    """Raises ``ValueError`` unless ``a`` and ``b`` have the same nesting, container types and keys."""
    _map(lambda x, y: None, (a, b), True, check_leaves=True)


def assert_same_paths(a: Any, b: Any) -> None:
    """Raises ``ValueError`` unless ``a`` and ``b`` have the same set of leaf paths (container types
    may differ: ``[1, 2]`` and ``(3, 4)`` have the same paths)."""
    a_paths = {p for p, _ in flatten_with_path(a)}
    b_paths = {p for p, _ in flatten_with_path(b)}
    if a_paths != b_paths:
        message = "`a` and `b` don't have the same paths."
        if a_paths - b_paths:
            message += f"\nPaths in `a` missing in `b`:\n{a_paths - b_paths}"
        if b_paths - a_paths:
            message += f"\nPaths in `b` missing in `a`:\n{b_paths - a_paths}"
        raise ValueError(message)


def pack_sequence_as(structure: Any, flat_sequence: Any) -> Any:
    """The leaves ``flat_sequence`` put back into the shape of ``structure`` (the inverse of :func:`flatten`)."""
    flat = list(flat_sequence)
    count = sum(1 for _ in _leaves(structure))
    if len(flat) != count:
        few = "few" if len(flat) < count else "many"
        raise ValueError(f"Too {few} leaves for the structure; expected: {count}, got: {len(flat)}.")
    items = iter(flat)
    return _map(lambda _: next(items), (structure,), True, check_leaves=False)


def traverse(func: Callable[[Any], Any], structure: Any, top_down: bool = True) -> Any:
    """``func`` applied to every sub-structure; a result other than ``None`` replaces that
    sub-structure (top-down: without visiting its children), ``MAP_TO_NONE`` puts ``None`` there.

    Example: ``traverse(lambda x: x * 2 if isinstance(x, int) else None, [1, [2]])`` is ``[2, [4]]``.
    """

    def children_of(s: Any) -> Any:
        node = _node(s)
        if node is None:
            return s
        keys, children = node
        return _rebuild(s, keys, [traverse(func, c, top_down) for c in children])

    if top_down:
        result = func(structure)
        if result is None:
            return children_of(structure)
    else:
        done = children_of(structure)
        result = func(done)
        if result is None:
            return done
    if isinstance(result, type) and result.__name__ == "MAP_TO_NONE":
        return None
    return result


def lists_to_tuples(structure: Any) -> Any:
    """``structure`` with every list (at any depth) made a tuple."""
    return traverse(lambda x: tuple(x) if isinstance(x, list) else None, structure, top_down=False)


def map_shape_structure(func: Callable[[Any], Any], structure: Any) -> Any:
    """:func:`map_structure` for structures of shapes: a list or tuple of ints and ``None`` is one leaf.

    Example: ``map_shape_structure(len, {"a": (None, 3), "b": [(1, 2), [4]]})`` is ``{"a": 2, "b": [2, 1]}``.
    """

    def is_shape(x: Any) -> bool:
        return isinstance(x, (list, tuple)) and all(isinstance(e, (int, type(None))) for e in x)

    def walk(s: Any) -> Any:
        if is_shape(s):
            return func(s)
        node = _node(s)
        if node is None:
            return func(s)
        keys, children = node
        return _rebuild(s, keys, [walk(c) for c in children])

    return walk(structure)
