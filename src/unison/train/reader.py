"""``tf.train.list_variables``, ``tf.train.load_checkpoint``, ``tf.train.load_variable``.

A checkpoint is read as TF presents it: a flat map from a key to a tensor, the key being the
object path from the ``Checkpoint`` to the variable, as TF names it
(``model/dense_1/w/.ATTRIBUTES/VARIABLE_VALUE``): a module's ``state_dict`` key ``dense_1.w``
becomes ``dense_1/w``, nested ``Checkpoint`` objects add their name, optimizer state is listed
under the optimizer's name (its slots by parameter index: torch numbers them, TF names them after
the variable), and TF's ``_CHECKPOINTABLE_OBJECT_GRAPH`` entry is there, with ``save_counter`` once a
``save`` has counted (a checkpoint only ever ``write``-n has none, as in TF). The
keys come from :mod:`unison.train.object_graph`: a positional root's values have no ``root/`` in
front, as in TF.

Example:
    >>> import tempfile, unison as tf
    >>> path = tf.train.Checkpoint(step=tf.Variable(3)).write(tempfile.mkdtemp() + "/ckpt")
    >>> tf.train.list_variables(path)
    [('_CHECKPOINTABLE_OBJECT_GRAPH', []), ('step/.ATTRIBUTES/VARIABLE_VALUE', [])]
    >>> int(tf.train.load_variable(path, "step/.ATTRIBUTES/VARIABLE_VALUE"))
    3
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np
import torch

from unison.errors import NotFoundError

_VALUE = "/.ATTRIBUTES/VARIABLE_VALUE"
_GRAPH = "_CHECKPOINTABLE_OBJECT_GRAPH"


class VariableDType:
    """A saved value's dtype as TF's reader gives it: ``.name`` (``"float32"``), equal to the torch dtype."""

    def __init__(self, dtype: torch.dtype | None) -> None:
        self.torch_dtype = dtype
        self.name = "string" if dtype is None else str(dtype).replace("torch.", "")

    @property
    def as_numpy_dtype(self) -> Any:
        """The numpy type (``np.float32``...)."""
        return np.object_ if self.torch_dtype is None else torch.empty(0, dtype=self.torch_dtype).numpy().dtype.type

    def __eq__(self, other: object) -> bool:
        if isinstance(other, VariableDType):
            return self.name == other.name
        if isinstance(other, torch.dtype):
            return other == self.torch_dtype
        return isinstance(other, str) and other == self.name

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return f"tf.{self.name}"


def _entries(payload: dict[str, Any]) -> dict[str, Any]:
    from unison.train.object_graph import object_graph

    out: dict[str, Any] = {node.key: node.tensor() for node in object_graph(payload) if node.key is not None}
    counter = int(payload.get("save_counter", 0))
    if counter:  # TF makes save_counter on the first save (or a restore of one): write() alone has none
        out["save_counter" + _VALUE] = torch.tensor(counter, dtype=torch.int64)
    out[_GRAPH] = json.dumps(sorted(payload["objects"])).encode()
    return dict(sorted(out.items()))


def _resolve(ckpt_dir_or_file: str | os.PathLike[str]) -> str:
    from unison.train.checkpoint import latest_checkpoint

    path = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(path):
        latest = latest_checkpoint(path)
        if latest is None:
            raise ValueError(
                f"Couldn't find 'checkpoint' file or checkpoints in given directory {path!r}. Save a checkpoint "
                "there first, or pass a checkpoint path (as returned by save())."
            )
        return latest
    return path


class CheckpointReader:
    """What ``tf.train.load_checkpoint`` returns: the checkpoint's values by TF key."""

    def __init__(self, path: str) -> None:
        from unison.train.checkpoint import _read_payload

        self.path = path
        self._entries = _entries(_read_payload(path))

    def get_variable_to_shape_map(self) -> dict[str, list[int]]:
        """Key -> shape (a list, ``[]`` for a scalar)."""
        return {k: list(v.shape) if isinstance(v, torch.Tensor) else [] for k, v in self._entries.items()}

    def get_variable_to_dtype_map(self) -> dict[str, VariableDType]:
        """Key -> dtype (``.name`` is TF's dtype name)."""
        return {k: VariableDType(v.dtype if isinstance(v, torch.Tensor) else None) for k, v in self._entries.items()}

    def has_tensor(self, name: str) -> bool:
        """Whether the checkpoint holds ``name``."""
        return name in self._entries

    def get_tensor(self, name: str) -> Any:
        """The value saved under ``name``, as a numpy array (bytes for the object graph)."""
        if name not in self._entries:
            close = [k for k in self._entries if name in k or k.startswith(name.split("/")[0] + "/")][:5]
            raise NotFoundError(
                None,
                None,
                f"Key {name} not found in checkpoint. {name!r} not found in checkpoint {self.path!r}. Keys like it: {close or 'none'}; every key: "
                "tf.train.list_variables(path).",
            )
        value = self._entries[name]
        return value.detach().cpu().numpy() if isinstance(value, torch.Tensor) else value


def load_checkpoint(ckpt_dir_or_file: str | os.PathLike[str]) -> CheckpointReader:
    """``tf.train.load_checkpoint``: a reader of a checkpoint (a directory means its latest)."""
    return CheckpointReader(_resolve(ckpt_dir_or_file))


def list_variables(ckpt_dir_or_file: str | os.PathLike[str]) -> list[tuple[str, list[int]]]:
    """``tf.train.list_variables``: ``(key, shape)`` of every saved value, sorted by key."""
    return sorted(load_checkpoint(ckpt_dir_or_file).get_variable_to_shape_map().items())


def load_variable(ckpt_dir_or_file: str | os.PathLike[str], name: str) -> Any:
    """``tf.train.load_variable``: one saved value as a numpy array (``name`` may omit TF's suffix)."""
    reader = load_checkpoint(ckpt_dir_or_file)
    if not reader.has_tensor(name) and reader.has_tensor(name + _VALUE):
        name += _VALUE
    return reader.get_tensor(name)
