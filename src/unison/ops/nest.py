"""``tf.nest``: walk nested lists, tuples, namedtuples and dicts as TF does.

Lists, tuples (namedtuples too) and mappings are structure; everything else (tensors, arrays,
numbers, strings, ``None``) is a leaf. Mappings are walked in sorted key order, as in TF, and
rebuilt with the key order of the structure they were taken from. (``unison.data`` keeps its own
nest, in which a list is one tensor, as ``tf.data`` treats it.) TF's ``attrs`` classes and
composite tensors (``expand_composites``) are not walked: they are leaves here.

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

import collections
from collections.abc import Callable, Mapping
from typing import Any


def is_nested(seq: Any) -> bool:
    """``tf.nest.is_nested``: whether ``seq`` is a list, tuple, namedtuple or mapping."""
    return isinstance(seq, (list, tuple, Mapping))


def _sorted_keys(mapping: Mapping[Any, Any]) -> list[Any]:
    try:
        return sorted(mapping)
    except TypeError:
        raise TypeError(
            f"tf.nest only supports mappings with sortable keys (TF walks keys in sorted order). "
            f"Received keys {list(mapping)!r:.200}. Use keys of one type, e.g. all str."
        ) from None


def _children(seq: Any) -> list[Any]:
    if isinstance(seq, Mapping):
        return [seq[k] for k in _sorted_keys(seq)]
    return list(seq)


def _rebuild(seq: Any, children: list[Any]) -> Any:
    if isinstance(seq, Mapping):
        by_key = dict(zip(_sorted_keys(seq), children))
        if isinstance(seq, collections.defaultdict):
            out: collections.defaultdict[Any, Any] = collections.defaultdict(seq.default_factory)
            out.update((k, by_key[k]) for k in seq)
            return out
        rebuild: Callable[[Any], Any] = type(seq)  # dict, OrderedDict, or another mapping class
        return rebuild((k, by_key[k]) for k in seq)
    if isinstance(seq, tuple) and hasattr(seq, "_fields"):
        return type(seq)(*children)
    if type(seq) in (list, tuple):
        return type(seq)(children)
    return type(seq)(children)  # a list or tuple subclass built from an iterable


def flatten(structure: Any, expand_composites: bool = False) -> list[Any]:
    """``tf.nest.flatten``: the leaves of ``structure`` in TF's order (mapping keys sorted).

    A leaf (also ``None``) flattens to a one-element list.
    """
    if not is_nested(structure):
        return [structure]
    return [leaf for child in _children(structure) for leaf in flatten(child)]


def _describe(value: Any) -> str:
    return f"type={type(value).__name__} str={value!r:.120}"


def _same_type(a: Any, b: Any) -> bool:
    if type(a) is type(b):
        return True
    fields_a, fields_b = getattr(a, "_fields", None), getattr(b, "_fields", None)
    # TF treats two namedtuple classes of one name and fields as one type.
    return (
        fields_a is not None
        and fields_a == fields_b
        and type(a).__name__ == type(b).__name__
        and isinstance(a, tuple)
        and isinstance(b, tuple)
    )


def _assert_same(a: Any, b: Any, check_types: bool, first: Any, second: Any) -> None:
    if is_nested(a) != is_nested(b):
        nested, leaf = (a, b) if is_nested(a) else (b, a)
        raise ValueError(
            "The two structures don't have the same nested structure: substructure "
            f'"{_describe(nested)}" is a sequence, while substructure "{_describe(leaf)}" is not.\n\n'
            f"First structure: {first!r:.300}\n\nSecond structure: {second!r:.300}\n\n"
            "Make both values nest lists, tuples and dicts the same way."
        )
    if not is_nested(a):
        return
    if check_types and not _same_type(a, b):
        raise TypeError(
            "The two structures don't have the same sequence type: "
            f"{type(a).__name__} and {type(b).__name__}.\n\nFirst structure: {first!r:.300}\n\n"
            f"Second structure: {second!r:.300}\n\nUse one container type, or pass check_types=False."
        )
    if isinstance(a, Mapping) and isinstance(b, Mapping) and set(a) != set(b):
        raise ValueError(
            f"The two dictionaries don't have the same set of keys: {sorted(map(str, a))} and {sorted(map(str, b))}."
        )
    if isinstance(a, Mapping) != isinstance(b, Mapping) or len(a) != len(b):
        raise ValueError(
            f"The two structures don't have the same number of elements: {len(a)} and {len(b)}.\n\n"
            f"First structure: {first!r:.300}\n\nSecond structure: {second!r:.300}"
        )
    for x, y in zip(_children(a), _children(b)):
        _assert_same(x, y, check_types, first, second)


def assert_same_structure(nest1: Any, nest2: Any, check_types: bool = True, expand_composites: bool = False) -> None:
    """``tf.nest.assert_same_structure``: an error unless both values nest lists, tuples and dicts alike.

    ``ValueError`` when the nesting or the dict keys differ; ``TypeError`` when (with
    ``check_types``) the container types differ.
    """
    _assert_same(nest1, nest2, check_types, nest1, nest2)


def pack_sequence_as(structure: Any, flat_sequence: Any, expand_composites: bool = False) -> Any:
    """``tf.nest.pack_sequence_as``: ``flat_sequence`` shaped as ``structure`` (inverse of ``flatten``)."""
    if not isinstance(flat_sequence, (list, tuple)):
        raise TypeError(
            f"tf.nest.pack_sequence_as: flat_sequence must be a list or tuple of leaves. Received "
            f"a value of type {type(flat_sequence).__name__}: {flat_sequence!r:.200}. "
            "Pass tf.nest.flatten(...) of a value of the same structure."
        )
    leaves = flatten(structure)
    if len(leaves) != len(flat_sequence):
        raise ValueError(
            f"Could not pack sequence: the structure has {len(leaves)} leaves, but flat_sequence has "
            f"{len(flat_sequence)} items. Structure: {structure!r:.200}; flat_sequence: {flat_sequence!r:.200}."
        )
    items = iter(flat_sequence)

    def build(s: Any) -> Any:
        if not is_nested(s):
            return next(items)
        return _rebuild(s, [build(child) for child in _children(s)])

    return build(structure)


def map_structure(func: Callable[..., Any], *structure: Any, **kwargs: Any) -> Any:
    """``tf.nest.map_structure``: ``func`` applied to the matching leaves of every structure.

    The structures must match (``check_types=True`` also compares container types); the result
    has the structure of the first.
    """
    check_types = kwargs.pop("check_types", True)
    kwargs.pop("expand_composites", None)
    if kwargs:
        raise ValueError(
            "tf.nest.map_structure takes only the keyword arguments check_types and expand_composites. "
            f"Received: {sorted(kwargs)}"
        )
    if not callable(func):
        raise TypeError(f"tf.nest.map_structure: func must be callable. Received: {func!r:.100}")
    if not structure:
        raise ValueError("tf.nest.map_structure needs at least one structure. Received none.")
    for other in structure[1:]:
        assert_same_structure(structure[0], other, check_types=check_types)
    columns = zip(*(flatten(s) for s in structure))
    return pack_sequence_as(structure[0], [func(*leaves) for leaves in columns])


__all__ = ["assert_same_structure", "flatten", "is_nested", "map_structure", "pack_sequence_as"]


def __getattr__(name: str) -> object:
    from unison.ops._unsupported import unsupported

    raise unsupported("tf.nest", name)
