"""The one tree module: nested structures walked with ``tf.nest``'s rules, the variants as options.

Lists, tuples (namedtuples and other tuple subclasses too), mappings and ``attrs`` classes are
structure; everything else (tensors, arrays, numbers, strings, ``None``) is a leaf. Mappings are
walked in sorted key order, as in TF (unsortable keys are an error), and rebuilt with the key
order of the structure they were taken from; a namedtuple, ``OrderedDict`` or ``defaultdict``
comes back as itself. With ``expand_composites=True`` unison's ``SparseTensor`` and
``RaggedTensor`` are structure too: their component tensors are the leaves.

Every nested value of unison goes through here (``tf.nest`` is this module's face). The places
that need another rule name it with an option instead of keeping a walker of their own:

* ``lists=False``: a list is a leaf, as in a ``tf.data`` element (a list given to a source is one
  tensor);
* ``only=(types)``: ``func`` is applied to the leaves of those types and every other leaf is kept
  as it is (the data adapters map their tensors and arrays, the symbolic graph its KerasTensors);
* ``sort_keys=False``: mappings are walked in insertion order (the symbolic graph's rule: a
  functional model's inputs and outputs keep the order they were declared in);
* ``strict=False``: the first structure is walked and the others are taken at the same keys and
  positions; a leaf of the first may stand for a whole subtree of the others (``tf.data`` maps an
  element with its signature this way).

Measured against optree (which Keras 3 and torch's pytree world use) on the structures a fit step
walks, this module is as fast or faster where it matters (``benchmarks/tree_step.py``), so unison
keeps it and needs no extra dependency; optree's OrderedDict order, silent unsortable keys and
deque/None rules would also each need a workaround to keep TF's semantics.

Example:
    >>> flatten({"b": [1, 2], "a": (3, None)})
    [3, None, 1, 2]
    >>> map_structure(lambda x: x * 10, {"b": [1, 2], "a": (3,)})
    {'b': [10, 20], 'a': (30,)}
    >>> pack_sequence_as(((0, 0), 0), [1, 2, 3])
    ((1, 2), 3)
    >>> flatten(([1, 2], {"k": 3}), lists=False)
    [[1, 2], 3]
    >>> map_structure(str, (1, [2.0, "s"]), only=(float,))
    (1, ['2.0', 's'])
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import torch

# Types that are leaves whatever the options: the walk's fast path (a set lookup per leaf).
_LEAVES: frozenset[type] = frozenset(
    {torch.Tensor, torch.nn.Parameter, np.ndarray, int, float, bool, str, bytes, type(None), complex}
)


def _is_composite(value: Any) -> bool:
    """unison's ``SparseTensor`` or ``RaggedTensor`` (known by name: this module sits below them)."""
    kind = type(value)
    return kind.__name__ in ("SparseTensor", "RaggedTensor") and kind.__module__.startswith("unison.")


def _components(value: Any) -> list[Any]:
    """A composite tensor's component tensors, in TF's order, read through TF's public attributes."""
    if type(value).__name__ == "SparseTensor":
        return [value.indices, value.values, value.dense_shape]
    return [value.values, value.row_splits]


def _from_components(value: Any, components: list[Any]) -> Any:
    """A composite like ``value`` rebuilt from new components, through TF's public constructors."""
    if type(value).__name__ == "SparseTensor":
        return type(value)(*components)
    return type(value).from_row_splits(*components)


def is_nested(seq: Any, *, lists: bool = True, expand_composites: bool = False) -> bool:
    """``tf.nest.is_nested``: whether ``seq`` is a list, tuple, namedtuple, mapping or ``attrs`` object.

    ``lists=False``: a list is a leaf (``tf.data``'s rule). ``expand_composites``: a
    ``SparseTensor``/``RaggedTensor`` is nested too.
    """
    kind = type(seq)
    if kind in _LEAVES:
        return False
    if kind is tuple or kind is dict:
        return True
    if isinstance(seq, list):
        return lists
    return (
        isinstance(seq, (tuple, Mapping))
        or hasattr(kind, "__attrs_attrs__")
        or (expand_composites and _is_composite(seq))
    )


def _sorted_keys(mapping: Mapping[Any, Any]) -> list[Any]:
    try:
        return sorted(mapping)
    except TypeError:
        raise TypeError(
            f"tf.nest only supports mappings with sortable keys (TF walks keys in sorted order). "
            f"Received keys {list(mapping)!r:.200}. Use keys of one type, e.g. all str."
        ) from None


def _keys(mapping: Mapping[Any, Any], sort_keys: bool = True) -> list[Any]:
    return _sorted_keys(mapping) if sort_keys else list(mapping)


def _children(seq: Any, sort_keys: bool = True) -> list[Any]:
    """The children of a nested value, in TF's order (``is_nested(seq)`` holds)."""
    if isinstance(seq, Mapping):
        return [seq[k] for k in _keys(seq, sort_keys)]
    if isinstance(seq, (list, tuple)):
        return list(seq)
    if hasattr(type(seq), "__attrs_attrs__"):
        return [getattr(seq, a.name) for a in type(seq).__attrs_attrs__]
    return _components(seq)


def _rebuild(seq: Any, children: list[Any], sort_keys: bool = True) -> Any:
    """A value like ``seq`` holding ``children`` (in :func:`_children`'s order)."""
    kind = type(seq)
    if kind is tuple or kind is list:
        return kind(children)
    if isinstance(seq, Mapping):
        by_key = dict(zip(_keys(seq, sort_keys), children))
        if isinstance(seq, collections.defaultdict):
            out: collections.defaultdict[Any, Any] = collections.defaultdict(seq.default_factory)
            out.update((k, by_key[k]) for k in seq)
            return out
        rebuild: Callable[[Any], Any] = kind  # dict, OrderedDict, or another mapping class
        return rebuild((k, by_key[k]) for k in seq)
    if isinstance(seq, tuple) and hasattr(seq, "_fields"):
        return kind(*children)
    if isinstance(seq, (list, tuple)):
        return kind(children)  # a list or tuple subclass (a torch.return_types structseq) from an iterable
    if hasattr(kind, "__attrs_attrs__"):
        return kind(*children)
    return _from_components(seq, children)


def _nested_other(s: Any, lists: bool, composites: bool) -> bool:
    """:func:`is_nested` for a value that is not a plain tuple, list or dict (positional: a hot path)."""
    if isinstance(s, list):
        return lists
    return isinstance(s, (tuple, Mapping)) or hasattr(type(s), "__attrs_attrs__") or (composites and _is_composite(s))


def flatten(
    structure: Any,
    expand_composites: bool = False,
    *,
    lists: bool = True,
    sort_keys: bool = True,
    only: type | tuple[type, ...] | None = None,
) -> list[Any]:
    """``tf.nest.flatten``: the leaves of ``structure`` in TF's order (mapping keys sorted).

    A leaf (also ``None``) flattens to a one-element list. ``lists=False``: lists are leaves;
    ``sort_keys=False``: mappings in insertion order; ``only=types``: just the leaves of those types.
    """
    leaves = _LEAVES if only is None else _leaf_types(only)
    if type(structure) in leaves:
        return [structure] if only is None or isinstance(structure, only) else []
    out: list[Any] = []
    append = out.append

    def walk(s: Any) -> None:
        kind = type(s)
        if kind is tuple or (kind is list and lists):
            for child in s:
                if type(child) in leaves:
                    if only is None or isinstance(child, only):
                        append(child)
                else:
                    walk(child)
        elif kind is dict:
            for k in _sorted_keys(s) if sort_keys else s:
                walk(s[k])
        elif kind in leaves or not _nested_other(s, lists, expand_composites):
            if only is None or isinstance(s, only):
                append(s)
        else:
            for child in _children(s, sort_keys):
                walk(child)

    walk(structure)
    return out


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


def _assert_same(a: Any, b: Any, check_types: bool, lists: bool, composites: bool, first: Any, second: Any) -> None:
    nested_a = is_nested(a, lists=lists, expand_composites=composites)
    nested_b = is_nested(b, lists=lists, expand_composites=composites)
    if nested_a != nested_b:
        nested, leaf = (a, b) if nested_a else (b, a)
        raise ValueError(
            "The two structures don't have the same nested structure: substructure "
            f'"{_describe(nested)}" is a sequence, while substructure "{_describe(leaf)}" is not.\n\n'
            f"First structure: {first!r:.300}\n\nSecond structure: {second!r:.300}\n\n"
            "Make both values nest lists, tuples and dicts the same way."
        )
    if not nested_a:
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
    children_a, children_b = _children(a), _children(b)
    if isinstance(a, Mapping) != isinstance(b, Mapping) or len(children_a) != len(children_b):
        raise ValueError(
            f"The two structures don't have the same number of elements: {len(children_a)} and {len(children_b)}.\n\n"
            f"First structure: {first!r:.300}\n\nSecond structure: {second!r:.300}"
        )
    for x, y in zip(children_a, children_b):
        _assert_same(x, y, check_types, lists, composites, first, second)


def assert_same_structure(
    nest1: Any, nest2: Any, check_types: bool = True, expand_composites: bool = False, *, lists: bool = True
) -> None:
    """``tf.nest.assert_same_structure``: an error unless both values nest lists, tuples and dicts alike.

    ``ValueError`` when the nesting or the dict keys differ; ``TypeError`` when (with
    ``check_types``) the container types differ.
    """
    _assert_same(nest1, nest2, check_types, lists, expand_composites, nest1, nest2)


def pack_sequence_as(
    structure: Any, flat_sequence: Any, expand_composites: bool = False, *, lists: bool = True, sort_keys: bool = True
) -> Any:
    """``tf.nest.pack_sequence_as``: ``flat_sequence`` shaped as ``structure`` (inverse of ``flatten``)."""
    if not isinstance(flat_sequence, (list, tuple)):
        raise TypeError(
            f"tf.nest.pack_sequence_as: flat_sequence must be a list or tuple of leaves. Received "
            f"a value of type {type(flat_sequence).__name__}: {flat_sequence!r:.200}. "
            "Pass tf.nest.flatten(...) of a value of the same structure."
        )
    items = iter(flat_sequence)

    def take(_: Any) -> Any:
        return next(items)

    try:
        packed = _map_one(take, structure, lists, None, expand_composites, sort_keys)
        missing = next(items, _END) is not _END
    except StopIteration:
        missing = True
    if missing:
        leaves = len(flatten(structure, expand_composites, lists=lists, sort_keys=sort_keys))
        raise ValueError(
            f"Could not pack sequence: the structure has {leaves} leaves, but flat_sequence has "
            f"{len(flat_sequence)} items. Structure: {structure!r:.200}; flat_sequence: {flat_sequence!r:.200}."
        )
    return packed


_END = object()


_LEAF_SETS: dict[Any, frozenset[type]] = {}


def _leaf_types(only: type | tuple[type, ...]) -> frozenset[type]:
    """``_LEAVES`` and the types of ``only=`` (made once per ``only``: a map runs every step)."""
    found = _LEAF_SETS.get(only)
    if found is None:
        found = _LEAF_SETS[only] = _LEAVES | frozenset(only if isinstance(only, tuple) else (only,))
    return found


def _map_one(func: Callable[[Any], Any], s: Any, lists: bool, only: Any, composites: bool, sort_keys: bool) -> Any:
    """``func`` applied to the leaves of one structure, in flatten order."""
    # Types that are leaves whatever they hold: func's own types too (a KerasTensor is not walked).
    leaves = _LEAVES if only is None else _leaf_types(only)
    return _walk(func, s, leaves, only, lists, composites, sort_keys)


def _walk(
    func: Callable[[Any], Any],
    s: Any,
    leaves: frozenset[type],
    only: Any,
    lists: bool,
    composites: bool,
    sort_keys: bool,
) -> Any:
    # Positional arguments and leaf children handled in the loops, not by a call each: a fit
    # step maps its batch and a functional model every layer call's arguments through here.
    kind = type(s)
    if kind in leaves:
        return func(s) if only is None or isinstance(s, only) else s
    if kind is tuple or (kind is list and lists):
        out = []
        for c in s:
            if type(c) in leaves:
                out.append(func(c) if only is None or isinstance(c, only) else c)
            else:
                out.append(_walk(func, c, leaves, only, lists, composites, sort_keys))
        return out if kind is list else tuple(out)
    if kind is dict:
        keys = _sorted_keys(s) if sort_keys else list(s)
        mapped = {}
        for k in keys:
            v = s[k]
            if type(v) in leaves:
                mapped[k] = func(v) if only is None or isinstance(v, only) else v
            else:
                mapped[k] = _walk(func, v, leaves, only, lists, composites, sort_keys)
        return mapped if not sort_keys or keys == list(s) else {k: mapped[k] for k in s}
    if _nested_other(s, lists, composites):
        children = [_walk(func, c, leaves, only, lists, composites, sort_keys) for c in _children(s, sort_keys)]
        return _rebuild(s, children, sort_keys)
    return func(s) if only is None or isinstance(s, only) else s


def _map_up_to(
    func: Callable[..., Any], s: Any, others: tuple[Any, ...], lists: bool, only: Any, sort_keys: bool
) -> Any:
    """``func`` over the first structure's leaves, the others taken at the same keys and positions."""
    if not is_nested(s, lists=lists):
        return func(s, *others) if only is None or isinstance(s, only) else s
    if isinstance(s, Mapping):
        keys = _keys(s, sort_keys)
        children = [_map_up_to(func, s[k], tuple(o[k] for o in others), lists, only, sort_keys) for k in keys]
    else:
        children = [
            _map_up_to(func, c, tuple(o[i] for o in others), lists, only, sort_keys) for i, c in enumerate(_children(s))
        ]
    return _rebuild(s, children, sort_keys)


def map_structure(
    func: Callable[..., Any],
    *structure: Any,
    check_types: bool = True,
    expand_composites: bool = False,
    lists: bool = True,
    only: type | tuple[type, ...] | None = None,
    strict: bool = True,
    sort_keys: bool = True,
    **unexpected: Any,
) -> Any:
    """``tf.nest.map_structure``: ``func`` applied to the matching leaves of every structure.

    The structures must match (``check_types=True`` also compares container types); the result
    has the structure of the first, and ``func`` runs on the leaves in :func:`flatten`'s order.
    unison's options (the module docstring tells who uses them): ``lists=False`` (lists are
    leaves), ``only=types`` (``func`` applies to leaves of those types, other leaves are kept),
    ``strict=False`` (walk the first structure, take the others at its keys and positions),
    ``sort_keys=False`` (mappings in insertion order).
    """
    if unexpected:
        raise ValueError(
            "tf.nest.map_structure takes only the keyword arguments check_types and expand_composites "
            f"(and unison's lists, only, strict, sort_keys). Received: {sorted(unexpected)}"
        )
    if not callable(func):
        raise TypeError(f"tf.nest.map_structure: func must be callable. Received: {func!r:.100}")
    if not structure:
        raise ValueError("tf.nest.map_structure needs at least one structure. Received none.")
    first = structure[0]
    if len(structure) == 1:
        leaves = _LEAVES if only is None else _leaf_types(only)
        return _walk(func, first, leaves, only, lists, expand_composites, sort_keys)
    if not strict:
        return _map_up_to(func, first, structure[1:], lists, only, sort_keys)
    for other in structure[1:]:
        assert_same_structure(first, other, check_types, expand_composites, lists=lists)
    columns = zip(*(flatten(s, expand_composites, lists=lists, sort_keys=sort_keys) for s in structure))
    results = iter([func(*leaves) if only is None or isinstance(leaves[0], only) else leaves[0] for leaves in columns])
    return _map_one(lambda _: next(results), first, lists, None, expand_composites, sort_keys)


__all__ = ["assert_same_structure", "flatten", "is_nested", "map_structure", "pack_sequence_as"]
