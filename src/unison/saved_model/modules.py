"""``tf.saved_model`` for modules (``tf.Module`` and other ``torch.nn.Module``): variables, and the
object rebuilt from its own class when this process has that class.

TF exports a ``tf.Module`` with its traced ``tf.function`` graphs, so ``loaded.multiply(x)``
works without the Python code. unison has no graphs; what it writes is:

* ``variables/variables.unison``: a ``tf.train.Checkpoint(root=module)`` of the variables;
* its tensor attributes that are not variables (TF captures them as constants), beside them;
* in ``saved_model.json``: the module tree (each node's class, name, plain attributes: numbers,
  strings, booleans, ``None`` and lists of them; lists and dicts of sub-modules and variables;
  functions held as attributes, by name, when the class's own module defines them at its top
  level or they are unison's tensor functions such as ``tf.nn.relu``) and which variables train.

``tf.saved_model.load`` then rebuilds the object from its own classes *if every class of the
tree is already defined in this process* (imported modules and ``__main__`` are looked up in
``sys.modules``; nothing is imported, only ``tf.Module`` subclasses are rebuilt and only
functions their own module defines are set, so a directory cannot make it run other code): the instance is made without calling ``__init__``, its
plain attributes, sub-modules and variables are set, and its methods (its ``tf.function``s) are
the class's. That is the same object TF's restored functions compute with, as long as the
class's code is the code it was exported with. Otherwise (a class this process does not have,
a module that is not a ``tf.Module``) ``load`` returns a :class:`LoadedModule`: the attribute tree
and variables, whose methods raise an error saying how to rebuild the module and restore them.

Example:
    >>> import os, tempfile, unison as tf
    >>> class Scale(tf.Module):
    ...     def __init__(self):
    ...         self.w = tf.Variable(3.0)
    ...     @tf.function
    ...     def multiply(self, x):
    ...         return x * self.w
    >>> path = os.path.join(tempfile.mkdtemp(), "saved")
    >>> tf.saved_model.save(Scale(), path)
    >>> loaded = tf.saved_model.load(path)  # a Scale when this module defines Scale at top level
    >>> float(loaded.w)
    3.0
"""

from __future__ import annotations

import json
import os
import sys
import types
from typing import Any

import torch

from unison.core.atomic_io import atomic_write_text
from unison.saved_model.signatures import _SignatureMap

_PLAIN = (bool, int, float, str, type(None))


def _plain(value: Any) -> bool:
    if isinstance(value, _PLAIN):
        return True
    return isinstance(value, (list, tuple)) and all(_plain(v) for v in value)


# TF's pure tensor functions a module may hold (``activation=tf.nn.relu``): looked up by name too.
_TENSOR_FUNCTION_MODULES = frozenset(
    {"unison.ops.math", "unison.ops.nn", "unison.ops.array", "unison.ops.indexing", "unison.nn"}
)


def _function_ref(value: Any, home: str) -> str | None:
    """``module:qualname`` of a plain top-level function of ``home`` (the class's own module) or
    of unison's tensor functions; None for anything else (lambdas, closures, imports of others)."""
    if not isinstance(value, types.FunctionType) or "<locals>" in value.__qualname__:
        return None
    if value.__module__ != home and value.__module__ not in _TENSOR_FUNCTION_MODULES:
        return None
    return f"{value.__module__}:{value.__qualname__}"


def _find_function(ref: str, home: str) -> Any:
    """The function ``ref`` names, if it passes :func:`_function_ref`'s rule (never imports)."""
    module_name, _, qualname = ref.partition(":")
    fn: Any = sys.modules.get(module_name)
    for part in qualname.split("."):
        fn = getattr(fn, part, None)
    return fn if fn is not None and _function_ref(fn, home) == ref else None


def _container(value: Any, path: str, constants: dict[str, torch.Tensor]) -> dict[str, Any]:
    """A list/tuple/dict attribute: its modules (as trees), variables (restored from the
    checkpoint by path), nested containers and plain items."""
    items = value.items() if isinstance(value, dict) else enumerate(value)
    out: dict[str, Any] = {}
    for key, item in items:
        where = f"{path}{key}."
        if isinstance(item, torch.nn.Parameter):
            out[str(key)] = {"variable": True}
        elif isinstance(item, torch.nn.Module):
            out[str(key)] = {"module": _tree(item, where, constants)}
        elif isinstance(item, (list, tuple, dict)):
            out[str(key)] = {"container": _container(item, where, constants)}
        elif _plain(item):
            out[str(key)] = {"plain": item}
        else:
            out[str(key)] = {"unsupported": type(item).__name__}
    kind = "dict" if isinstance(value, dict) else "tuple" if isinstance(value, tuple) else "list"
    return {"type": kind, "items": out}


def _tree(
    module: torch.nn.Module, path: str, constants: dict[str, torch.Tensor], assets: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The module's class, name, plain attributes, functions and sub-modules; its tensor
    attributes (not variables: TF captures them in its graphs) go into ``constants`` by path,
    its ``tf.saved_model.Asset`` s into ``assets``."""
    from unison.core.module import _OWN, _TORCH_INTERNALS
    from unison.saved_model.resources import Asset

    assets = {} if assets is None else assets

    from unison.ops.random_stateless import Generator

    attrs: dict[str, Any] = {}
    functions: dict[str, str] = {}
    containers: dict[str, Any] = {}
    generators: dict[str, Any] = {}
    for key, value in vars(module).items():
        if key in _TORCH_INTERNALS or key in _OWN:
            continue
        if isinstance(value, Generator):
            # TF saves a tf.random.Generator's state variable: the loaded one goes on from there
            generators[key] = {"state": value.state.tolist(), "alg": value.algorithm}
        elif _plain(value):
            attrs[key] = list(value) if isinstance(value, tuple) else value
        elif isinstance(value, (list, tuple, dict)) and not isinstance(value, torch.nn.Module):
            containers[key] = _container(value, f"{path}{key}.", constants)
        elif isinstance(value, torch.Tensor) and not isinstance(value, torch.nn.Parameter):
            constants[path + key] = value.detach().cpu().clone()
        elif isinstance(value, Asset):
            assets[path + key] = value
        elif (ref := _function_ref(value, type(module).__module__)) is not None:
            functions[key] = ref
    return {
        "class": f"{type(module).__module__}:{type(module).__qualname__}",
        "name": module.__dict__.get("_tf_module_name"),
        "attrs": attrs,
        "functions": functions,
        "containers": containers,
        "generators": generators,
        "children": {
            name: _tree(child, f"{path}{name}.", constants, assets)
            for name, child in module._modules.items()
            if child is not None
        },
    }


def _copy_assets(assets: dict[str, Any], path: str) -> dict[str, str]:
    """Copy each Asset's file into ``path/assets/`` (TF's layout); attribute path -> file name there."""
    import shutil

    out: dict[str, str] = {}
    if not assets:
        return out
    folder = os.path.join(path, "assets")
    os.makedirs(folder, exist_ok=True)
    used: dict[str, str] = {}  # file name -> source, so two different files never share a name
    for key, asset in assets.items():
        source = asset.asset_path.item().decode("utf-8")
        if not os.path.isfile(source):
            raise FileNotFoundError(
                f"tf.saved_model.save: the Asset at {key!r} names {source!r}, which is not a file. "
                "Create the file before saving."
            )
        name = base = os.path.basename(source)
        n = 1
        while name in used and used[name] != os.path.abspath(source):
            stem, ext = os.path.splitext(base)
            name, n = f"{stem}_{n}{ext}", n + 1
        if name not in used:
            shutil.copyfile(source, os.path.join(folder, name))
            used[name] = os.path.abspath(source)
        out[key] = name
    return out


def save_module(obj: torch.nn.Module, path: str, meta_file: str, fmt: str) -> None:
    """Write the variables (a Checkpoint under ``variables/``) and the module tree (chief only)."""
    from unison.train.checkpoint import Checkpoint, _is_chief

    os.makedirs(os.path.join(path, "variables"), exist_ok=True)
    constants: dict[str, torch.Tensor] = {}
    assets: dict[str, Any] = {}
    tree = _tree(obj, "", constants, assets)
    Checkpoint(root=obj, constants=constants).write(os.path.join(path, "variables", "variables"))
    if _is_chief():
        asset_files = _copy_assets(assets, path)
        trainable = [k for k, v in obj.named_parameters() if getattr(v, "trainable", v.requires_grad)]
        meta = {
            "format": fmt,
            "kind": "module",
            "class": f"{type(obj).__module__}.{type(obj).__qualname__}",
            "tree": tree,
            "trainable": trainable,
            "signatures": {},
            "assets": asset_files,
        }
        atomic_write_text(os.path.join(path, meta_file), json.dumps(meta, indent=1))


def _defined_class(spec: str) -> type[Any] | None:
    """The class ``module:qualname`` if this process already has it and it is a tf.Module subclass."""
    from unison.core.module import Module

    module_name, _, qualname = spec.partition(":")
    obj: Any = sys.modules.get(module_name)  # never imports: only what the program already loaded
    for part in qualname.split("."):
        if obj is None or part == "<locals>":
            return None
        obj = getattr(obj, part, None)
    return obj if isinstance(obj, type) and issubclass(obj, Module) else None


_FAILED = object()


def _rebuild_container(spec: dict[str, Any]) -> Any:
    """A container attribute back: variables are placeholders (None) until the checkpoint fills them."""
    items: dict[str, Any] = {}
    for key, item in spec["items"].items():
        if "module" in item:
            value = _rebuild(item["module"])
            if value is None:
                return _FAILED
        elif "container" in item:
            value = _rebuild_container(item["container"])
            if value is _FAILED:
                return _FAILED
        elif "plain" in item:
            value = item["plain"]
        elif "variable" in item:
            value = None
        else:
            return _FAILED  # an item the export could not describe (e.g. a function in a list)
        items[key] = value
    if spec["type"] == "dict":
        return items
    return [items[str(i)] for i in range(len(items))]  # tuples become lists, as TF's wrappers are lists


def _rebuild(node: dict[str, Any]) -> Any:
    cls: Any = _defined_class(node["class"])
    if cls is None:
        return None
    obj: Any = cls.__new__(cls)  # tf.Module.__new__ sets torch's state up; __init__ is not run
    if node.get("name") is not None:
        object.__setattr__(obj, "_tf_module_name", node["name"])
    for key, value in node["attrs"].items():
        object.__setattr__(obj, key, value)
    for key, ref in node.get("functions", {}).items():
        # Only a function the class's own module defines at its top level, or one of unison's
        # tensor functions (never e.g. os.system): looked up where it was, never imported.
        fn = _find_function(ref, type(obj).__module__)
        if fn is None:
            return None
        object.__setattr__(obj, key, fn)
    for key, spec in node.get("generators", {}).items():
        from unison.ops.random_stateless import Generator

        object.__setattr__(obj, key, Generator.from_state(spec["state"], spec["alg"]))
    for key, spec in node.get("containers", {}).items():
        built = _rebuild_container(spec)
        if built is _FAILED:
            return None
        object.__setattr__(obj, key, built)
    for name, child_node in node["children"].items():
        child = _rebuild(child_node)
        if child is None:
            return None
        setattr(obj, name, child)
    return obj


class LoadedModule:
    """What ``tf.saved_model.load`` returns for a module it cannot rebuild: variables, not code.

    Attributes mirror the saved object (``loaded.dense_1.w``); ``variables``,
    ``trainable_variables`` and ``signatures`` (empty) are there as in TF. Calling it, or a
    method of the saved class, raises: this process does not have the class to run.
    """

    _saved_class: str
    _export_dir: str
    _variables: list[torch.Tensor]

    def __init__(self, saved_class: str, export_dir: str) -> None:
        object.__setattr__(self, "_saved_class", saved_class)
        object.__setattr__(self, "_export_dir", export_dir)
        object.__setattr__(self, "_variables", [])
        object.__setattr__(self, "signatures", _SignatureMap({}))

    @property
    def variables(self) -> list[torch.Tensor]:
        return [v for node in self._nodes() for v in node._variables]

    @property
    def trainable_variables(self) -> list[torch.Tensor]:
        return [v for v in self.variables if getattr(v, "trainable", True)]

    @property
    def non_trainable_variables(self) -> list[torch.Tensor]:
        return [v for v in self.variables if not getattr(v, "trainable", True)]

    def _nodes(self) -> list[LoadedModule]:
        out = [self]
        for key in sorted(vars(self)):
            value = vars(self)[key]
            if isinstance(value, LoadedModule):
                out.extend(value._nodes())
        return out

    def _why(self, what: str) -> str:
        prefix = os.path.join(self._export_dir, "variables", "variables")
        spec = self._saved_class  # "module.Class" (the root's) or "module:Class" (a tree node's)
        module_name, _, qualname = spec.partition(":") if ":" in spec else spec.rpartition(".")
        found: Any = sys.modules.get(module_name)
        for part in qualname.split("."):
            found = getattr(found, part, None) if found is not None and part != "<locals>" else None
        if isinstance(found, type):
            why = (
                "a class this process defines, but unison rebuilds only tf.Module subclasses made of tf.Modules, "
                "variables and plain values, and this one (or a part of it, e.g. a Keras layer) is not"
            )
            fix = "Build the object in code and restore the variables into it"
        else:
            why = "a class this process does not define"
            fix = (
                "Import or define the class before tf.saved_model.load to get the object back, or build the "
                "module in code and restore the variables into it"
            )
        return (
            f"{what}: this object was exported from a {self._saved_class}, {why} "
            "(unison keeps the variables of an exported module, not its code; TF keeps traced tf.functions). "
            f"{fix}: tf.train.Checkpoint(root=module).restore({prefix!r})."
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(self._why("It cannot be called"))

    def __getattr__(self, name: str) -> Any:
        # Only reached for names not restored: the module's methods (its tf.functions) and typos.
        if name.startswith("__") or name in ("_saved_class", "_export_dir", "_variables"):
            raise AttributeError(name)
        raise AttributeError(self._why(f"{name!r} was not restored"))

    def __repr__(self) -> str:
        return f"<unison.saved_model.modules.LoadedModule of {self._saved_class} ({len(self.variables)} variables)>"


def _node_for(root: Any, key: str, rebuilt: bool, saved_class: str, path: str) -> tuple[Any, str]:
    """The object holding ``key`` (``a.b.leaf``) and the leaf name; missing LoadedModule nodes are made."""
    node = root
    *parents, leaf = key.split(".")
    for part in parents:
        if isinstance(node, (list, dict)):
            child = node[int(part)] if isinstance(node, list) else node.get(part)
        else:
            child = getattr(node, part, None) if rebuilt else vars(node).get(part)
        if child is None:
            child = LoadedModule(saved_class, path)
            _set(node, part, child)
        node = child
    return node, leaf


def _set(node: Any, name: str, value: Any) -> None:
    if isinstance(node, list):
        node[int(name)] = value
    elif isinstance(node, dict):
        node[name] = value
    elif isinstance(node, LoadedModule):
        object.__setattr__(node, name, value)
    else:
        setattr(node, name, value)


def load_module(path: str, meta: dict[str, Any]) -> Any:
    """The rebuilt object (its own class) when this process has every class, else a LoadedModule."""
    from unison.core.variables import Variable
    from unison.train.checkpoint import _read_payload

    objects = _read_payload(os.path.join(path, "variables", "variables"))["objects"]
    state = objects["root"]["state"]
    constants = {k: e["state"] for k, e in objects.get("constants", {"state": {}})["state"].items()}
    trainable = set(meta.get("trainable", []))
    rebuilt = _rebuild(meta["tree"]) if "tree" in meta else None
    root = rebuilt if rebuilt is not None else LoadedModule(meta["class"], path)
    for key, value in state.items():
        node, leaf = _node_for(root, key, rebuilt is not None, meta["class"], path)
        variable = Variable(value, trainable=key in trainable, name=leaf)
        _set(node, leaf, variable)
        if isinstance(node, LoadedModule):
            node._variables.append(variable)
    from unison.saved_model.resources import Asset

    for key, name in meta.get("assets", {}).items():  # files carried in assets/
        node, leaf = _node_for(root, key, rebuilt is not None, meta["class"], path)
        asset = Asset(os.path.join(path, "assets", name))
        if isinstance(node, (list, dict, LoadedModule)):
            _set(node, leaf, asset)
        else:
            object.__setattr__(node, leaf, asset)
    for key, value in constants.items():  # tensor attributes (TF: constants its graphs captured)
        node, leaf = _node_for(root, key, rebuilt is not None, meta["class"], path)
        if isinstance(node, (list, dict, LoadedModule)):
            _set(node, leaf, value)
        else:
            object.__setattr__(node, leaf, value)
    return root
