"""``tf.Module``: a named container of variables and sub-modules, on ``torch.nn.Module``.

A ``tf.Module`` *is* a ``torch.nn.Module``: a ``tf.Variable`` assigned to an attribute is a
registered parameter (torch optimizers, ``state_dict`` and ``tf.train.Checkpoint`` see it) and a
sub-module is a registered child. On top of that it has TF's API:

* ``name`` (default: the class name in snake case) and ``name_scope`` (``"<name>/"``);
* ``variables``, ``trainable_variables``, ``non_trainable_variables`` and ``submodules``,
  found as TF finds them: in attributes, including lists, tuples and dicts of them, in the
  order TF uses (this module's attributes sorted by name, then each sub-module's, recursively),
  each object once;
* deferred restoration: a checkpoint restored into a module whose variables do not exist yet
  (they are made on the first call, as in the guide's ``FlexibleDenseModule``) keeps their
  values and assigns each when the attribute that holds it is set, as TF does.

The user's ``__call__`` is the computation (TF has no ``forward``); a module that defines
``forward`` instead works too (torch's ``__call__``).

Example:
    >>> import unison as tf
    >>> class Scale(tf.Module):
    ...     def __init__(self, name=None):
    ...         super().__init__(name=name)
    ...         self.w = tf.Variable(2.0, name="w")
    ...         self.frozen = tf.Variable(1.0, trainable=False)
    ...     def __call__(self, x):
    ...         return self.w * x + self.frozen
    >>> m = Scale()
    >>> m.name, m.name_scope.name, [v.name for v in m.trainable_variables]
    ('scale', 'scale/', ['w:0'])
    >>> float(m(tf.constant(3.0)))
    7.0
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import torch

__all__ = ["Module"]

_F = TypeVar("_F", bound=Callable[..., Any])

# Attributes torch.nn.Module keeps for itself, and ours: not TF-tracked state.
_TORCH_INTERNALS = frozenset(vars(torch.nn.Module()))
_OWN = frozenset({"_tf_module_name", "_tf_pending"})


# TF's camel_to_snake: an underscore before a capital that follows a lower-case letter or digit,
# or that starts a capitalised word (not at the start): "MyHTTPModule" -> "my_http_module".
_CAMEL = re.compile(r"((?<=[a-z0-9])[A-Z]|(?!^)[A-Z](?=[a-z]))")


def _snake(name: str) -> str:
    return _CAMEL.sub(r"_\1", name).lower()


class NameScope:
    """``module.name_scope``: a context manager whose ``name`` is ``"<module name>/"``.

    unison tensors carry no op names, so entering it changes nothing else.
    """

    def __init__(self, name: str) -> None:
        self.name = name

    def __enter__(self) -> str:
        return self.name

    def __exit__(self, *exc: object) -> None:
        return None

    def __repr__(self) -> str:
        return f"<tf.name_scope {self.name!r}>"


def _leaves(value: Any) -> Iterator[Any]:
    """The objects in an attribute value: itself, or the items of (nested) lists, tuples and dicts."""
    if isinstance(value, (list, tuple)) and not isinstance(value, torch.Tensor):
        for item in value:
            yield from _leaves(item)
    elif isinstance(value, dict):
        for key in sorted(value, key=str):
            yield from _leaves(value[key])
    elif isinstance(value, torch.nn.ModuleList):
        for item in value:
            yield item
    else:
        yield value


def _attributes(module: torch.nn.Module) -> list[tuple[str, Any]]:
    """``module``'s TF-tracked attributes, sorted by name (TF's traversal order)."""
    found: dict[str, Any] = {}
    found.update(module._parameters)
    found.update(module._modules)
    for key, value in vars(module).items():
        if key not in _TORCH_INTERNALS and key not in _OWN:
            found[key] = value
    return sorted(((k, v) for k, v in found.items() if v is not None), key=lambda kv: kv[0])


def _walk(
    module: torch.nn.Module, want: Callable[[Any], bool], seen: set[int], visited: set[int] | None = None
) -> Iterator[Any]:
    """TF's ``_flatten_module``: matches among this module's attributes, then each sub-module's."""
    visited = {id(module)} if visited is None else visited
    children: list[torch.nn.Module] = []
    for _, value in _attributes(module):
        for leaf in _leaves(value):
            if id(leaf) not in seen and want(leaf):
                seen.add(id(leaf))
                yield leaf
            if isinstance(leaf, torch.nn.Module) and id(leaf) not in visited:
                visited.add(id(leaf))
                children.append(leaf)
    for child in children:
        yield from _walk(child, want, seen, visited)


def _contained(prefix: str, value: Any) -> Iterator[tuple[str, Any]]:
    """``(path, object)`` for the variables and modules inside a list, tuple or dict attribute."""
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, item in items:
        if isinstance(key, str) and ("." in key or not key):
            continue  # not addressable as a state_dict path
        path = f"{prefix}.{key}"
        if isinstance(item, (torch.nn.Module, torch.nn.Parameter)):
            yield path, item
        elif isinstance(item, (list, tuple, dict)):
            yield from _contained(path, item)


def container_items(module: torch.nn.Module) -> list[tuple[str, Any]]:
    """What TF tracks in list/tuple/dict attributes and torch does not register: ``("layers.0", layer)``."""
    found: list[tuple[str, Any]] = []
    for key, value in vars(module).items():
        if key not in _TORCH_INTERNALS and key not in _OWN and isinstance(value, (list, tuple, dict)):
            found.extend(_contained(key, value))
    return found


def _is_variable(obj: Any) -> bool:
    return isinstance(obj, torch.nn.Parameter)  # tf.Variable is one; a tf.constant attribute is not state


class Module(torch.nn.Module):
    """TF's ``tf.Module``: a named container of variables and sub-modules (see the module doc).

    Args:
        name: the module's name (default: the class name in snake case, as TF); it must be a
            valid Python identifier, as TF requires.
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> Module:
        # TF's tf.Module works when a subclass never calls super().__init__() (TF's basics guide
        # does exactly that): set torch's module state up before the subclass's __init__ runs.
        self = super().__new__(cls)
        torch.nn.Module.__init__(self)
        object.__setattr__(self, "_tf_pending", {})
        return self

    def __init__(self, name: str | None = None) -> None:
        if "_parameters" not in self.__dict__:
            super().__init__()  # made without __new__ (e.g. unpickled): torch's state first
        if name is None:
            name = _snake(type(self).__name__)
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(
                f"{name!r} is not a valid module name. Module names must be valid Python identifiers "
                "(e.g. a valid class name), as in TF."
            )
        object.__setattr__(self, "_tf_module_name", name)
        if "_tf_pending" not in self.__dict__:
            object.__setattr__(self, "_tf_pending", {})

    # --- naming ------------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        """The module's name."""
        return self.__dict__.get("_tf_module_name") or _snake(type(self).__name__)

    @property
    def name_scope(self) -> NameScope:
        """The name scope ``"<name>/"`` (TF's ``tf.name_scope`` object)."""
        return NameScope(self.name + "/")

    @classmethod
    def with_name_scope(cls, method: _F) -> _F:
        """Decorator: run ``method`` inside the module's name scope (TF's; no op names here)."""

        @functools.wraps(method)
        def wrapped(self: Module, *args: Any, **kwargs: Any) -> Any:
            with self.name_scope:
                return method(self, *args, **kwargs)

        return wrapped  # type: ignore[return-value]

    # --- tracked state ---------------------------------------------------------------------------------
    @property
    def variables(self) -> tuple[torch.Tensor, ...]:
        """Every variable of this module and its sub-modules (TF's order, each once)."""
        return tuple(_walk(self, _is_variable, set()))

    @property
    def trainable_variables(self) -> tuple[torch.Tensor, ...]:
        """The variables that train (``trainable=True``)."""
        return tuple(v for v in self.variables if getattr(v, "trainable", v.requires_grad))

    @property
    def non_trainable_variables(self) -> tuple[torch.Tensor, ...]:
        """The variables that do not train."""
        return tuple(v for v in self.variables if not getattr(v, "trainable", v.requires_grad))

    @property
    def submodules(self) -> tuple[torch.nn.Module, ...]:
        """Every module reachable through attributes (TF's order, each once)."""
        return tuple(_walk(self, lambda o: isinstance(o, torch.nn.Module), set()))

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f"{type(self).__name__} defines no computation. A tf.Module subclass defines __call__ (TF's way), "
            "or forward (torch's)."
        )

    def __repr__(self) -> str:
        return f"<{type(self).__module__}.{type(self).__qualname__} object (tf.Module {self.name!r})>"

    # --- state_dict: also the variables and modules TF tracks in lists and dicts -------------------------------
    # torch registers only direct attributes; TF's MLP guide keeps its layers in `self.layers = [...]`.
    def _save_to_state_dict(self, destination: Any, prefix: str, keep_vars: bool) -> None:
        super()._save_to_state_dict(destination, prefix, keep_vars)
        for path, obj in container_items(self):
            if isinstance(obj, torch.nn.Parameter):
                destination[prefix + path] = obj if keep_vars else obj.detach()
            else:
                obj.state_dict(destination=destination, prefix=f"{prefix}{path}.", keep_vars=keep_vars)

    def _load_from_state_dict(
        self,
        state_dict: Any,
        prefix: str,
        local_metadata: Any,
        strict: bool,
        missing_keys: list[str],
        unexpected_keys: list[str],
        error_msgs: list[str],
    ) -> None:
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
        )
        held = container_items(self)
        roots = {f"{prefix}{path.split('.')[0]}." for path, _ in held}
        unexpected_keys[:] = [k for k in unexpected_keys if not any(k.startswith(r) for r in roots)]
        for path, obj in held:
            key = prefix + path
            if isinstance(obj, torch.nn.Parameter):
                if key in state_dict:
                    with torch.no_grad():
                        obj.copy_(state_dict[key])
                elif strict:
                    missing_keys.append(key)
                continue
            sub = {k[len(key) + 1 :]: v for k, v in state_dict.items() if k.startswith(key + ".")}
            result = obj.load_state_dict(sub, strict=False)
            missing_keys.extend(f"{key}.{k}" for k in result.missing_keys)
            unexpected_keys.extend(f"{key}.{k}" for k in result.unexpected_keys)

    # --- deferred restoration (used by tf.train.Checkpoint) ------------------------------------------------
    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        pending = self.__dict__.get("_tf_pending")
        if pending:
            _apply_pending(self, name, value, pending)


def _apply_pending(owner: Module, name: str, value: Any, pending: dict[str, torch.Tensor]) -> None:
    """Give a newly set attribute the checkpoint values waiting for it."""
    if isinstance(value, torch.Tensor) and name in pending:
        _assign(value, pending.pop(name), f"{owner.name}.{name}")
        return
    prefix = name + "."
    below = {k[len(prefix) :]: pending.pop(k) for k in [k for k in pending if k.startswith(prefix)]}
    if below and isinstance(value, torch.nn.Module):
        restore_module_state(value, below)


def _assign(variable: torch.Tensor, value: torch.Tensor, where: str) -> None:
    if tuple(variable.shape) != tuple(value.shape):
        raise ValueError(
            f"The checkpoint value for {where!r} has shape {tuple(value.shape)}, but the variable made for it has "
            f"shape {tuple(variable.shape)}. The module is built differently from the one that was saved."
        )
    with torch.no_grad():
        variable.copy_(value.to(variable.device, variable.dtype))


def restore_module_state(module: torch.nn.Module, state: dict[str, torch.Tensor]) -> list[str]:
    """Restore ``state`` (``state_dict`` keys) into ``module``; keep values for variables not made yet.

    Returns the keys kept for later (a tf.Module assigns them when their attribute is set; other
    modules cannot, and the caller reports them).
    """
    current = module.state_dict(keep_vars=True)
    waiting: list[str] = []
    for key, value in state.items():
        target = current.get(key)
        if target is not None:
            _assign(target, value, key)
            continue
        owner, attr = _owner_of(module, key)
        if isinstance(owner, Module):
            owner.__dict__["_tf_pending"][attr] = value
        waiting.append(key)
    return waiting


def _owner_of(module: torch.nn.Module, key: str) -> tuple[torch.nn.Module, str]:
    """The deepest existing module on ``key``'s path (through lists and dicts), and the rest below it."""
    parts = key.split(".")
    owner, rest = module, 0
    node: Any = module
    for i in range(len(parts) - 1):
        node = _child(node, parts[i])
        if node is None:
            break
        if isinstance(node, torch.nn.Module):
            owner, rest = node, i + 1
    return owner, ".".join(parts[rest:])


def _child(node: Any, part: str) -> Any:
    if isinstance(node, dict):
        return node.get(part)
    if isinstance(node, (list, tuple)):
        return node[int(part)] if part.isdigit() and int(part) < len(node) else None
    return getattr(node, part, None)
