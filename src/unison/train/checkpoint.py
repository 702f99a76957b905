"""``tf.train.Checkpoint``: save and restore models, optimizers and variables by name.

A checkpoint is one file, ``<prefix>.unison``, written atomically and with a SHA-256 by
:func:`unison.core.atomic_io.write_verified` (kind ``tf.train.Checkpoint``) and checked on every read. It
holds, for each keyword given to ``Checkpoint``, that object's ``state_dict()`` (modules, torch
optimizers, ``DistributedOptimizer``, anything with ``state_dict``/``load_state_dict``) or the
value of a variable/tensor, plus ``save_counter``. Nothing in it depends on the number of
replicas, so a checkpoint written by N replicas restores into a model built without a strategy
or with any other number of replicas. Only the chief (rank 0 of the job this process joined)
writes; every replica may call ``save`` (as TF requires of multi-worker programs) and gets the
same path back.

``save(prefix)`` numbers the files as TF does (``prefix-1``, ``prefix-2``... from
``save_counter``) and records them in the directory's ``checkpoint`` file (TF's format), which
``tf.train.latest_checkpoint(directory)`` reads. With a sharding callback in
``tf.train.CheckpointOptions`` the values are spread over shard files next to it (see
:mod:`unison.train.sharding`).

Example:
    >>> import tempfile, torch, unison as tf
    >>> model = torch.nn.Linear(2, 1)
    >>> ckpt = tf.train.Checkpoint(model=model, step=tf.Variable(3))
    >>> path = ckpt.save(tempfile.mkdtemp() + "/ckpt")
    >>> path.endswith("ckpt-1")
    True
    >>> ckpt.restore(path).assert_consumed() is not None
    True
"""

from __future__ import annotations

import inspect
import io
import os
from typing import Any

import torch

from unison.comm.communicator import joined
from unison.core.atomic_io import VerificationError, read_verified, write_verified
from unison.debug.timeline import span
from unison.errors import CorruptCheckpointError
from unison.train.optimizer_state import optimizer_state, restore_optimizer_state
from unison.train.sharded_files import read_shards, shard_files, write_shards
from unison.train.tracking import DictWrapper, ListWrapper, as_state_dict, as_tree

KIND = "tf.train.Checkpoint"
SUFFIX = ".unison"
_FORMAT = 1
_STATE_FILE = "checkpoint"


def _is_chief() -> bool:
    comm = joined()
    return comm is None or comm.rank == 0


def _kind(obj: Any) -> str:
    if isinstance(obj, Checkpoint):
        return "checkpoint"
    if isinstance(obj, torch.Tensor):
        return "tensor"
    if isinstance(obj, (list, tuple)):
        return "list"
    if isinstance(obj, dict):
        return "dict"
    if callable(getattr(obj, "state_dict", None)) and callable(getattr(obj, "load_state_dict", None)):
        return "state_dict"
    if hasattr(obj, "torch_optimizer"):
        return "keras_optimizer"  # a unison.keras optimizer: its torch optimizer once built
    raise ValueError(
        f"tf.train.Checkpoint was expecting a trackable object (a torch.nn.Module, an optimizer, a "
        f"tf.Variable or tensor, another Checkpoint, a list or dict of those, a tf.data iterator, or anything "
        f"with state_dict() and load_state_dict()), got {type(obj).__name__}: {obj!r:.80}."
    )


def _shape(value: Any) -> tuple[int, ...] | None:
    """A tensor's shape; None for a lazy module's parameter that has no shape yet."""
    if not isinstance(value, torch.Tensor) or torch.nn.parameter.is_lazy(value):
        return None
    return tuple(value.shape)


def _structure(state: Any, limit: int = 8) -> str:
    """A short description of a saved object: its keys and tensor shapes."""
    if isinstance(state, torch.Tensor):
        return f"tensor{tuple(state.shape)}"
    if isinstance(state, dict) and "state" in state and "param_groups" in state:
        sizes = [len(g.get("params", [])) for g in state["param_groups"]]
        return f"optimizer state (param_groups of {sizes} parameters)"
    if isinstance(state, dict):
        items = [f"{k}: {_shape(v) or 'unbuilt'}" if isinstance(v, torch.Tensor) else str(k) for k, v in state.items()]
        more = f", ... {len(items) - limit} more" if len(items) > limit else ""
        return "{" + ", ".join(items[:limit]) + more + "}"
    return type(state).__name__


def _mismatch(name: str, saved: Any, current: Any) -> str | None:
    """Why ``saved`` cannot load into an object whose state is ``current`` (None if it can)."""
    if isinstance(saved, torch.Tensor) and isinstance(current, torch.Tensor):
        return None if saved.shape == current.shape else "shapes differ"
    if isinstance(saved, dict) and isinstance(current, dict) and "param_groups" in current:
        want = [len(g["params"]) for g in current["param_groups"]]
        have = [len(g.get("params", [])) for g in saved.get("param_groups", [])]
        return None if want == have else "the optimizers hold different numbers of parameters"
    if isinstance(saved, dict) and isinstance(current, dict):
        missing = [k for k in current if k not in saved]
        unexpected = [k for k in saved if k not in current]
        wrong = [
            k
            for k, v in current.items()
            if k in saved and _shape(v) is not None and _shape(saved[k]) is not None and _shape(v) != _shape(saved[k])
        ]
        if missing or unexpected or wrong:
            parts = [
                f"missing {missing[:5]}" if missing else "",
                f"unexpected {unexpected[:5]}" if unexpected else "",
                f"different shapes for {wrong[:5]}" if wrong else "",
            ]
            return "; ".join(p for p in parts if p)
    return None


class CheckpointLoadStatus:
    """What ``restore``/``read`` matched (TF's load status)."""

    def __init__(self, path: str | None, unmatched_in_file: list[str], unmatched_objects: list[str]) -> None:
        self.path = path
        self.unmatched_in_file = unmatched_in_file
        self.unmatched_objects = unmatched_objects

    def assert_consumed(self) -> CheckpointLoadStatus:
        """Every value in the file was restored and every object got a value (else AssertionError, as TF)."""
        if self.path is None:
            raise AssertionError("No checkpoint specified (save_path=None); nothing is being restored.")
        if self.unmatched_in_file or self.unmatched_objects:
            raise AssertionError(
                f"Checkpoint {self.path!r} was not consumed: values in the file with no object to "
                f"restore into: {self.unmatched_in_file}; objects the file has no value for: "
                f"{self.unmatched_objects}. Use expect_partial() if that is intended."
            )
        return self

    def assert_existing_objects_matched(self) -> CheckpointLoadStatus:
        """Every object of this Checkpoint got a value from the file."""
        if self.path is not None and self.unmatched_objects:
            raise AssertionError(f"Objects {self.unmatched_objects} have no value in checkpoint {self.path!r}.")
        return self

    def assert_nontrivial_match(self) -> CheckpointLoadStatus:
        """At least one object was restored."""
        return self.assert_existing_objects_matched()

    def expect_partial(self) -> CheckpointLoadStatus:
        """Accept a partial restore (unison does not warn about one either)."""
        return self

    def run_restore_ops(self, session: Any = None) -> None:
        """Nothing to run: values were restored eagerly."""


def _entry(obj: Any, where: str) -> dict[str, Any]:
    """What the file holds for ``obj``: ``{"kind", "state"}`` (containers recursively)."""
    kind = _kind(obj)
    if kind == "checkpoint":
        return {"kind": kind, "state": obj._state()}
    if kind == "tensor":
        return {"kind": kind, "state": obj.detach().cpu().clone()}
    if kind == "list":
        return {"kind": kind, "state": [_entry(item, f"{where}[{i}]") for i, item in enumerate(obj)]}
    if kind == "dict":
        for key in obj:
            if not isinstance(key, str):
                raise ValueError(
                    f"tf.train.Checkpoint saves dicts with string keys (TF names dependencies by them). "
                    f"{where!r} has the key {key!r}."
                )
        return {"kind": kind, "state": {key: _entry(item, f"{where}[{key!r}]") for key, item in obj.items()}}
    if kind == "keras_optimizer":
        return {"kind": kind, "state": optimizer_state(obj)}
    return {"kind": kind, "state": obj.state_dict()}


def _tracked(value: Any) -> Any:
    """Lists and dicts become TF's wrappers, so items added later get their restored values."""
    if isinstance(value, list) and not isinstance(value, ListWrapper):
        return ListWrapper(value, on_add=_deliver)
    if isinstance(value, dict) and not isinstance(value, DictWrapper):
        return DictWrapper(value, on_add=_deliver)
    return value


def _deliver(holder: Any, name: str, value: Any) -> None:
    """Give ``value``, just added to ``holder`` under ``name``, the restore value waiting for it."""
    pending = holder.__dict__.get("_pending") if hasattr(holder, "__dict__") else None
    if pending and name in pending:
        entry, path, scope = pending.pop(name)
        _restore_into(value, entry, path, scope)


class Checkpoint:
    """Groups trackable objects for saving and restoring (TF's ``tf.train.Checkpoint``).

    Args:
        root: an optional root object (saved under the name ``root``).
        **kwargs: name -> object (``model=``, ``optimizer=``, ``step=tf.Variable(0)``, ...).
    """

    def __init__(self, root: Any = None, **kwargs: Any) -> None:
        objects = dict(kwargs)
        if root is not None:
            objects["root"] = root
        for name, obj in objects.items():
            _kind(obj)
            if name == "save_counter":
                raise ValueError("'save_counter' is reserved by tf.train.Checkpoint; use another name.")
        object.__setattr__(self, "_objects", {name: _tracked(obj) for name, obj in objects.items()})
        # Values of a restore whose objects do not exist yet: name -> (entry, path, scope).
        object.__setattr__(self, "_pending", {})
        from unison.core.variables import Variable

        object.__setattr__(self, "save_counter", Variable(0, trainable=False, dtype=torch.int64, name="save_counter"))

    def __getattr__(self, name: str) -> Any:
        objects = self.__dict__.get("_objects", {})
        if name in objects:
            return objects[name]
        raise AttributeError(f"This tf.train.Checkpoint has no object {name!r}. It holds: {sorted(objects)}")

    def __setattr__(self, name: str, value: Any) -> None:
        """``ckpt.name = obj`` adds ``obj`` as TF does; a value waiting from a restore goes into it."""
        if name.startswith("_") or name == "save_counter":
            if name == "save_counter":
                raise ValueError("'save_counter' is reserved by tf.train.Checkpoint; use another name.")
            object.__setattr__(self, name, value)
            return
        _kind(value)
        value = _tracked(value)
        self._objects[name] = value
        _deliver(self, name, value)

    # --- serialisation -------------------------------------------------------------------------
    def _state(self) -> dict[str, Any]:
        return {name: _entry(obj, name) for name, obj in self._objects.items()}

    def write(self, file_prefix: str | os.PathLike[str], options: Any = None) -> str:
        """Write a checkpoint at ``file_prefix`` (no numbering, no ``checkpoint`` file); return it."""
        prefix = os.fspath(file_prefix)
        # Every replica collects the state (a sharded optimizer gathers its shards collectively);
        # only the chief serialises and writes it.
        objects = self._state()
        if _is_chief():
            with span("checkpoint", "tf.train.Checkpoint.write"):
                payload = {"format": _FORMAT, "save_counter": int(self.save_counter), "objects": objects}
                sharding = getattr(options, "experimental_sharding_callback", None)
                if sharding is not None:
                    payload = write_shards(prefix, payload, sharding)  # the shards first, this file last
                else:
                    for stale in shard_files(prefix):  # of an earlier sharded write of this prefix
                        os.remove(stale)
                buffer = io.BytesIO()
                torch.save(payload, buffer)
                write_verified(prefix + SUFFIX, buffer.getvalue(), kind=KIND)
        # tf.train.CheckpointOptions(experimental_write_callbacks=[...]): after the write, with its path.
        for callback in getattr(options, "experimental_write_callbacks", None) or ():
            callback(prefix) if inspect.signature(callback).parameters else callback()
        return prefix

    def save(self, file_prefix: str | os.PathLike[str], options: Any = None) -> str:
        """Write ``<file_prefix>-<save_counter>`` and record it in the directory's ``checkpoint`` file."""
        self.save_counter.assign_add(1)
        path = self.write(f"{os.fspath(file_prefix)}-{int(self.save_counter)}", options)
        if _is_chief():
            # TF's Checkpoint.save records only the newest path (a CheckpointManager records its list).
            write_checkpoint_state(os.path.dirname(os.path.abspath(path)), path, [path])
        return path

    # --- restoring --------------------------------------------------------------------------------
    def restore(self, save_path: str | os.PathLike[str] | None, options: Any = None) -> CheckpointLoadStatus:
        """Load ``save_path`` (from ``save``/``write``/a manager) into the objects, and ``save_counter``.

        ``restore(None)`` (e.g. ``manager.latest_checkpoint`` before the first save) restores
        nothing, as in TF.
        """
        return self._load(save_path, restore_counter=True)

    def read(self, save_path: str | os.PathLike[str], options: Any = None) -> CheckpointLoadStatus:
        """Load a checkpoint written by ``write`` (``save_counter`` is left alone)."""
        return self._load(save_path, restore_counter=False)

    def _load(self, save_path: str | os.PathLike[str] | None, restore_counter: bool) -> CheckpointLoadStatus:
        if save_path is None:
            return CheckpointLoadStatus(None, [], sorted(self._objects))
        path = os.fspath(save_path)
        payload = _read_payload(path)
        if restore_counter:
            self.save_counter.assign(int(payload.get("save_counter", 0)))
        unmatched_file, unmatched_objects = _restore_objects(self._objects, payload["objects"], path, "", self)
        return CheckpointLoadStatus(path, unmatched_file, unmatched_objects)


def _read_payload(path: str) -> dict[str, Any]:
    if os.path.isdir(path):
        raise ValueError(
            f"{path!r} is a directory; restore takes a checkpoint path. Use "
            f"tf.train.latest_checkpoint({path!r}) to find the newest one in it."
        )
    file = path + SUFFIX if os.path.exists(path + SUFFIX) or not os.path.exists(path) else path
    if not os.path.exists(file):
        directory = os.path.dirname(os.path.abspath(path))
        known = checkpoint_state(directory) or []
        raise FileNotFoundError(
            f"No checkpoint at {path!r} (looked for {file!r}). Checkpoints recorded in {directory!r}: "
            f"{known if known else 'none'}. Pass a path returned by save()/write() or "
            "tf.train.latest_checkpoint(directory)."
        )
    try:
        body = read_verified(file, kind=KIND)
    except VerificationError as exc:
        raise CorruptCheckpointError(str(exc)) from exc
    try:
        payload: dict[str, Any] = torch.load(io.BytesIO(body), map_location="cpu", weights_only=True)
    except Exception as exc:  # verified bytes torch cannot read: another format version
        raise CorruptCheckpointError(f"{file!r} cannot be read as a tf.train.Checkpoint: {exc}") from exc
    if not isinstance(payload, dict) or payload.get("format") != _FORMAT:
        raise CorruptCheckpointError(f"{file!r} has an unknown checkpoint format.")
    if "shards" in payload:  # written with a tf.train.experimental sharding callback
        return read_shards(file[: -len(SUFFIX)] if file.endswith(SUFFIX) else file, payload)
    return payload


def _restore_objects(
    objects: dict[str, Any], saved: dict[str, Any], path: str, scope: str, holder: Any = None
) -> tuple[list[str], list[str]]:
    """Restore ``saved`` (name -> entry) into ``objects``; entries with no object wait on ``holder``."""
    unmatched_file: list[str] = []
    unmatched_objects = [scope + n for n in objects if n not in saved]
    for name, entry in saved.items():
        if name in objects:
            more = _restore_into(objects[name], entry, path, f"{scope}{name}")
            unmatched_file += more[0]
            unmatched_objects += more[1]
            continue
        unmatched_file.append(scope + name)
        pending = holder.__dict__.get("_pending") if holder is not None and hasattr(holder, "__dict__") else None
        if pending is not None:
            pending[name] = (entry, path, scope + name)  # TF's deferred restoration
    return unmatched_file, unmatched_objects


def _children(obj: Any) -> dict[str, Any]:
    if isinstance(obj, Checkpoint):
        return dict(obj._objects)
    if isinstance(obj, dict):
        return {str(k): v for k, v in obj.items()}
    return {str(i): v for i, v in enumerate(obj)}


def _restore_into(obj: Any, entry: dict[str, Any], path: str, name: str) -> tuple[list[str], list[str]]:
    """Restore one saved entry into ``obj``, matching by path when their kinds differ (as TF does)."""
    kind, saved_kind = _kind(obj), entry["kind"]
    if kind in ("checkpoint", "list", "dict") and saved_kind != "tensor" and saved_kind != "keras_optimizer":
        return _restore_objects(_children(obj), as_tree(entry)["state"], path, name + ".", obj)
    if kind == "tensor" and saved_kind == "tensor":
        _restore_tensor(obj, entry["state"], path, name)
    elif kind == "keras_optimizer" and saved_kind == "keras_optimizer":
        if not restore_optimizer_state(obj, entry["state"], path, name, _restore_state):
            # iterations and the learning rate are restored; TF too restores slots when they are made
            return [f"{name} (optimizer not built yet: its slots are restored when it is built)"], []
    elif kind == "state_dict" and saved_kind in ("state_dict", "checkpoint"):
        state = entry["state"] if saved_kind == "state_dict" else as_state_dict(entry)
        _restore_state(obj, state, path, name)
    else:
        raise ValueError(
            f"Checkpoint {path!r} holds a {saved_kind} under {name!r}, but this Checkpoint's {name!r} is a {kind}."
        )
    return [], []


def _restore_tensor(obj: torch.Tensor, value: torch.Tensor, path: str, name: str) -> None:
    if obj.shape != value.shape:
        raise ValueError(
            f"Checkpoint {path!r}: {name!r} was saved with shape {tuple(value.shape)}, but this "
            f"object has shape {tuple(obj.shape)}. It is a checkpoint of another model."
        )
    with torch.no_grad():
        obj.copy_(value.to(obj.device, obj.dtype))


def _restore_state(obj: Any, state: Any, path: str, name: str) -> None:
    from unison.core.module import Module, restore_module_state

    if isinstance(obj, Module):
        # TF's deferred restoration: values for variables a tf.Module makes on its first call wait
        # on the module and are assigned when the attribute holding the variable is set.
        restore_module_state(obj, state)
        return
    # Iterators of tf.data pipelines (and distributed ones, a layer above) check their own state.
    if getattr(type(obj), "restores_own_position", False):
        obj.load_state_dict(state)  # it checks the pipeline and the position itself
        return
    if _unbuilt_keras_model(obj) and state:
        _restore_when_built(obj, state, path, name)
        return
    current = obj.state_dict()
    problem = _mismatch(name, state, current)
    if problem:
        raise ValueError(
            f"Checkpoint {path!r} does not match {name!r} ({type(obj).__name__}): {problem}. The checkpoint "
            f"holds {_structure(state)}; this object holds {_structure(current)}. It is a checkpoint of "
            "another model: build the same model as the one that was saved, or restore another checkpoint."
        )
    obj.load_state_dict(state)


def _unbuilt_keras_model(obj: Any) -> bool:
    return isinstance(obj, torch.nn.Module) and getattr(obj, "built", True) is False and hasattr(obj, "build")


def _restore_when_built(model: Any, state: Any, path: str, name: str) -> None:
    """TF's deferred restoration: a model whose layers build on their first input gets the
    checkpoint's values as soon as it is built, before its first call computes anything."""

    def restore_first(module: Any, args: tuple[Any, ...]) -> None:
        handle.remove()
        first = args[0] if args else None
        if isinstance(first, torch.Tensor):
            module.build(tuple(first.shape))  # create every lazily-sized weight, then load them
        _restore_state(module, state, path, name)

    handle = model.register_forward_pre_hook(restore_first)


# --- the directory's `checkpoint` file (TF's CheckpointState text format) -------------------------
def checkpoint_state(directory: str | os.PathLike[str]) -> list[str] | None:
    """The checkpoint paths recorded in ``directory/checkpoint``, oldest first (None if no file)."""
    state_file = os.path.join(os.fspath(directory), _STATE_FILE)
    if not os.path.isfile(state_file):
        return None
    paths: list[str] = []
    latest = None
    with open(state_file, encoding="utf-8") as fh:
        for line in fh:
            key, _, value = line.partition(":")
            value = value.strip().strip('"')
            if not value:
                continue
            full = value if os.path.isabs(value) else os.path.join(os.fspath(directory), value)
            if key.strip() == "all_model_checkpoint_paths" and full not in paths:
                paths.append(full)
            elif key.strip() == "model_checkpoint_path":
                latest = full
    if latest is not None and latest not in paths:
        paths.append(latest)
    elif latest is not None:
        paths.remove(latest)
        paths.append(latest)
    return paths


def write_checkpoint_state(directory: str, latest: str, all_paths: list[str]) -> None:
    """Record ``all_paths`` (newest last) in ``directory/checkpoint``, atomically."""
    from unison.core.atomic_io import atomic_write_text

    def rel(p: str) -> str:
        return os.path.relpath(p, directory) if os.path.dirname(os.path.abspath(p)) == os.path.abspath(directory) else p

    ordered = [p for p in dict.fromkeys(all_paths) if p != latest] + [latest]
    lines = [f'model_checkpoint_path: "{rel(latest)}"'] + [f'all_model_checkpoint_paths: "{rel(p)}"' for p in ordered]
    atomic_write_text(os.path.join(directory, _STATE_FILE), "\n".join(lines) + "\n")


def latest_checkpoint(checkpoint_dir: str | os.PathLike[str], latest_filename: str | None = None) -> str | None:
    """``tf.train.latest_checkpoint``: the newest checkpoint recorded in ``checkpoint_dir``, or None."""
    paths = checkpoint_state(checkpoint_dir)
    if not paths:
        return None
    latest = paths[-1]
    return latest if os.path.exists(latest + SUFFIX) else None
