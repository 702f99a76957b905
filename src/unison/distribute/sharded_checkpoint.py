"""Checkpoints of sharded state that restore on any number of replicas (PyTorch's DCP).

Each replica writes only the shards it holds (``torch.distributed.checkpoint``); the files
record every tensor's global shape and which slice each file holds, so a checkpoint written by
2 replicas loads on 1, 2 or 3: each reader reads the slices that overlap its own shard. The
state dicts come from ``torch.distributed.checkpoint.state_dict`` (parameter names without
FSDP's wrappers, optimizer state keyed by parameter name), so a sharded model, a plain model
and a model under :class:`unison.DistributedOptimizer` all read the same checkpoint.

Writes are atomic: every replica writes into one fresh temporary directory beside the target;
once all are done (DCP's metadata file is written last, by the chief), the chief fsyncs the
directory, moves it onto the target and fsyncs the parent. A crash leaves the previous
checkpoint or the new one, never a mix. The path must be on a file system every replica sees.

Example::

    >>> import os, tempfile, torch
    >>> from unison.distribute.sharded_checkpoint import ShardedCheckpoint
    >>> model = torch.nn.Linear(3, 2)
    >>> opt = torch.optim.Adam(model.parameters())
    >>> path = os.path.join(tempfile.mkdtemp(), "ckpt")
    >>> ShardedCheckpoint(model, opt).save(path) == path
    True
    >>> ShardedCheckpoint(torch.nn.Linear(3, 2)).restore(path)
"""

from __future__ import annotations

import contextlib
import os
import shutil
import uuid
import warnings
from typing import Any

import torch

from unison.comm.communicator import Communicator
from unison.core.atomic_io import fsync_directory
from unison.distribute import zero_checkpoint
from unison.distribute.shard_manifest import verify_manifest, write_manifest
from unison.distribute.sharding import sharding_communicator
from unison.errors import CorruptCheckpointError, IncompatibleCheckpointError

__all__ = ["IncompatibleCheckpointError", "ShardedCheckpoint"]

_MODEL, _OPTIMIZER = "model", "optimizer"


class ShardedCheckpoint:
    """Save and restore a (sharded or plain) model and its optimizer across replica counts.

    The shape of ``tf.train.Checkpoint(model=..., optimizer=...)``: build it on every replica
    with the same objects, call ``save(path)`` / ``restore(path)`` on every replica together.

    Args:
        model: the model (sharded by :func:`unison.distribute.sharding.shard_model` or not).
        optimizer: a ``torch.optim`` optimizer built on ``model``'s parameters, or a
            :class:`unison.DistributedOptimizer`; with ``shard_optimizer_state`` or
            ``shard_gradients`` (ZeRO-1/2) each replica writes and reads the state of the
            parameters it owns (:mod:`unison.distribute.zero_checkpoint`), on any replica count.
        communicator: the job; by default the strategy's or ``unison.init()``'s.
    """

    def __init__(self, model: torch.nn.Module, optimizer: Any = None, communicator: Communicator | None = None) -> None:
        if not isinstance(model, torch.nn.Module):
            raise TypeError(f"ShardedCheckpoint needs a torch.nn.Module as model. Received: {type(model).__name__}")
        self.model = model
        # ZeRO-1/2: the ids of the parameters whose optimizer state this replica holds.
        self._owned: set[int] | None = _zero_owned(optimizer)
        self.optimizer = _plain_optimizer(optimizer) if optimizer is not None else None
        self.comm = sharding_communicator(communicator)

    @contextlib.contextmanager
    def _quiet_alone(self) -> Any:
        # One replica reads and writes alone on purpose; DCP warns that it "assumes" so.
        with warnings.catch_warnings():
            if not self.comm.is_distributed:
                warnings.filterwarnings("ignore", message="torch.distributed is disabled")
            yield

    # --- state dicts ------------------------------------------------------------------------
    def _state(self) -> dict[str, Any]:
        from torch.distributed.checkpoint.state_dict import get_model_state_dict, get_optimizer_state_dict

        state: dict[str, Any] = {_MODEL: get_model_state_dict(self.model)}
        if self.optimizer is not None and self._owned is not None:
            state[_OPTIMIZER] = zero_checkpoint.owned_state(self.model, self.optimizer)
        elif self.optimizer is not None:
            state[_OPTIMIZER] = get_optimizer_state_dict(self.model, self.optimizer)
        return state

    def save(self, path: str | os.PathLike[str]) -> str:
        """Write this replica's shards into the checkpoint directory ``path`` (every replica calls it).

        Returns:
            ``path`` as a string, once the checkpoint is complete on disk.
        """
        import torch.distributed.checkpoint as dcp

        target = os.path.abspath(os.fspath(path))
        parent, name = os.path.split(target)
        tmp_name = f".tmp-{uuid.uuid4().hex[:12]}-{name}" if self.comm.rank == 0 else None
        tmp = os.path.join(parent, self.comm.broadcast_object(tmp_name, name="sharded_checkpoint.tmp_name"))
        if self.comm.rank == 0:
            os.makedirs(tmp)
        self.comm.barrier(name="sharded_checkpoint.dir_created")
        try:
            with self._quiet_alone():
                dcp.save(self._state(), checkpoint_id=tmp, no_dist=not self.comm.is_distributed)
            self.comm.barrier(name="sharded_checkpoint.written")
            if self.comm.rank == 0:
                write_manifest(tmp)  # a SHA-256 per file: a damaged shard is named on restore
                _publish(tmp, target)
        except BaseException:
            if self.comm.rank == 0 and os.path.isdir(tmp):
                shutil.rmtree(tmp, ignore_errors=True)
            raise
        self.comm.barrier(name="sharded_checkpoint.published")
        return target

    def restore(self, path: str | os.PathLike[str]) -> None:
        """Load ``path`` into the model (and optimizer) on this replica's shards (every replica calls it).

        Raises:
            FileNotFoundError: ``path`` holds no complete sharded checkpoint.
            IncompatibleCheckpointError: parameter names or shapes differ (both are named), or
                an optimizer is restored from a checkpoint saved without one.
        """
        import torch.distributed.checkpoint as dcp
        from torch.distributed.checkpoint.state_dict import (
            get_model_state_dict,
            set_model_state_dict,
            set_optimizer_state_dict,
        )

        source = os.path.abspath(os.fspath(path))
        if os.path.isdir(source):
            verify_manifest(source)  # first: it names a truncated or changed file, .metadata included
        saved = _saved_shapes(source)
        model_state = get_model_state_dict(self.model)
        _check_compatible(source, saved, _global_shapes(model_state), self.optimizer is not None)
        if self.optimizer is not None and (self._owned is not None or zero_checkpoint.FORMAT_KEY in saved):
            self._restore_zero(source, model_state)
            return
        state = self._state()
        with self._quiet_alone():
            dcp.load(state, checkpoint_id=source, no_dist=not self.comm.is_distributed)
        set_model_state_dict(self.model, state[_MODEL])
        if self.optimizer is not None:
            set_optimizer_state_dict(self.model, self.optimizer, state[_OPTIMIZER])

    def _restore_zero(self, source: str, model_state: dict[str, Any]) -> None:
        """Each replica reads the optimizer state of the parameters it owns now (all, unsharded)."""
        import torch.distributed.checkpoint as dcp
        from torch.distributed.checkpoint.state_dict import set_model_state_dict

        assert self.optimizer is not None
        if any(hasattr(v, "to_local") for v in model_state.values()):
            raise IncompatibleCheckpointError(
                f"The sharded checkpoint at {source!r} holds ZeRO-1/2 optimizer state, which restores into a "
                "replicated model (DistributedOptimizer or a torch optimizer), not into a model sharded by "
                "shard_model(). Restore the model only (ShardedCheckpoint(model)) and keep the optimizer fresh."
            )
        names = zero_checkpoint.parameter_names(self.model)
        wanted = [name for pid, name in names.items() if self._owned is None or pid in self._owned]
        target, _ = zero_checkpoint.template(_saved_specs(source), wanted)
        state = {_MODEL: model_state, _OPTIMIZER: target}
        with self._quiet_alone():
            dcp.load(state, checkpoint_id=source, no_dist=not self.comm.is_distributed)
        set_model_state_dict(self.model, state[_MODEL])
        zero_checkpoint.install(self.model, self.optimizer, state[_OPTIMIZER], self._owned)


def _zero_owned(optimizer: Any) -> set[int] | None:
    """The parameters a ZeRO-1/2 ``DistributedOptimizer`` keeps state for here (None: not ZeRO)."""
    sharded = getattr(optimizer, "sharded", None)
    return set(sharded._owned_ids) if sharded is not None else None


def _plain_optimizer(optimizer: Any) -> torch.optim.Optimizer:
    from unison.optim.distributed import DistributedOptimizer

    if isinstance(optimizer, DistributedOptimizer):
        optimizer = optimizer.optimizer
    if not isinstance(optimizer, torch.optim.Optimizer):
        raise TypeError(
            f"ShardedCheckpoint needs a torch.optim.Optimizer as optimizer. Received: {type(optimizer).__name__}"
        )
    return optimizer


def _publish(tmp: str, target: str) -> None:
    """Move the finished temporary directory onto ``target`` (the chief only)."""
    for entry in os.scandir(tmp):
        if entry.is_file():
            fd = os.open(entry.path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
    fsync_directory(tmp)
    parent = os.path.dirname(target)
    old = None
    if os.path.exists(target):
        # A directory cannot be renamed over a non-empty one: move the old one aside first, so
        # the target always names a complete checkpoint or (for an instant) nothing at all.
        old = os.path.join(parent, f".old-{uuid.uuid4().hex[:12]}-{os.path.basename(target)}")
        os.replace(target, old)
    os.replace(tmp, target)
    fsync_directory(parent)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _read_metadata(path: str) -> Any:
    """DCP's ``.metadata`` of ``path``; an emptied or damaged one is a named error, not a bare EOFError."""
    from torch.distributed.checkpoint import FileSystemReader

    try:
        return FileSystemReader(path).read_metadata()
    except Exception as exc:  # EOFError (emptied), UnpicklingError (damaged), ...: the file is unusable
        metadata = os.path.join(path, ".metadata")
        size = os.path.getsize(metadata) if os.path.exists(metadata) else None
        raise CorruptCheckpointError(
            f"The sharded checkpoint {path!r} cannot be restored: its index {metadata!r} ({size} bytes) is "
            f"truncated or damaged ({type(exc).__name__}: {str(exc)[:120] or 'no data'}). Expected the "
            "'.metadata' file ShardedCheckpoint.save wrote last. Restore an older checkpoint, or the "
            "directory from a copy."
        ) from exc


def _saved_shapes(path: str) -> dict[str, tuple[int, ...] | None]:
    """Every entry of the checkpoint at ``path``: its flattened key and global shape (None: not a tensor)."""
    from torch.distributed.checkpoint.metadata import TensorStorageMetadata

    if not os.path.isfile(os.path.join(path, ".metadata")):
        raise FileNotFoundError(
            f"No sharded checkpoint at {path!r} (expected a directory holding a '.metadata' file, "
            "written by ShardedCheckpoint.save). Check the path."
        )
    meta = _read_metadata(path)
    return {
        k: tuple(v.size) if isinstance(v, TensorStorageMetadata) else None for k, v in meta.state_dict_metadata.items()
    }


def _saved_specs(path: str) -> dict[str, tuple[tuple[int, ...], torch.dtype] | None]:
    """Every entry of the checkpoint: its global shape and dtype (None: not a tensor)."""
    from torch.distributed.checkpoint.metadata import TensorStorageMetadata

    meta = _read_metadata(path)
    return {
        k: (tuple(v.size), v.properties.dtype) if isinstance(v, TensorStorageMetadata) else None
        for k, v in meta.state_dict_metadata.items()
    }


def _global_shapes(model_state: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    # A DTensor's .shape is the global (unsharded) shape; a plain tensor's is its own.
    return {f"{_MODEL}.{k}": tuple(v.shape) for k, v in model_state.items() if isinstance(v, torch.Tensor)}


def _check_compatible(
    path: str, saved: dict[str, tuple[int, ...] | None], expected: dict[str, tuple[int, ...]], with_optimizer: bool
) -> None:
    saved_model = {k: v for k, v in saved.items() if k.startswith(_MODEL + ".")}
    missing = sorted(set(expected) - set(saved_model))
    unexpected = sorted(set(saved_model) - set(expected))
    wrong = sorted(k for k in set(expected) & set(saved_model) if saved_model[k] != expected[k])
    if missing or unexpected or wrong:

        def strip(k: str) -> str:
            return k[len(_MODEL) + 1 :]

        lines = [f"The sharded checkpoint at {path!r} does not fit this model."]
        if wrong:
            lines.append(
                "Shapes differ (checkpoint vs model): "
                + ", ".join(f"{strip(k)}: {list(saved_model[k] or ())} vs {list(expected[k])}" for k in wrong)
            )
        if missing:
            lines.append(f"In the model, not in the checkpoint: {[strip(k) for k in missing]}.")
        if unexpected:
            lines.append(f"In the checkpoint, not in the model: {[strip(k) for k in unexpected]}.")
        lines.append(
            "Checkpoint parameters: "
            + ", ".join(f"{strip(k)} {list(v or ())}" for k, v in sorted(saved_model.items()))
            + ". Model parameters: "
            + ", ".join(f"{strip(k)} {list(v)}" for k, v in sorted(expected.items()))
            + ". Build the model with the architecture the checkpoint was saved from."
        )
        raise IncompatibleCheckpointError(" ".join(lines))
    if with_optimizer and not any(k.startswith(_OPTIMIZER + ".") for k in saved):
        raise IncompatibleCheckpointError(
            f"The sharded checkpoint at {path!r} holds no optimizer state, but an optimizer was given "
            "to restore. Restore the model only (ShardedCheckpoint(model)), or save with the optimizer."
        )
