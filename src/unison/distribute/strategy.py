"""The Strategy base class, the current-strategy stack and replica contexts (tf.distribute's API).

One process per replica: inside ``strategy.run(fn)`` each replica runs ``fn`` on its own data
and returns its own (local) result; ``reduce``/``gather`` combine those results across replicas.
Parameters created under ``scope()`` are mirrored: at the end of the ``with`` block replica 0's
values are broadcast to every replica, so all start equal. Inside ``run``, every
``optimizer.step()`` first SUM-reduces the gradients through the one synchronisation path
(:class:`unison.optim.DistributedOptimizer`); scale the loss with
``unison.nn.compute_average_loss`` so N replicas compute the gradient of the global batch.

Example:
    >>> import torch, unison as tf
    >>> strategy = tf.distribute.get_strategy()          # the default, one replica
    >>> strategy.num_replicas_in_sync
    1
    >>> strategy.reduce(tf.distribute.ReduceOp.SUM, torch.tensor([1.0, 2.0]), axis=0).item()
    3.0
"""

from __future__ import annotations

import contextlib
import enum
import secrets
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import torch
from torch.nn.modules.module import register_module_parameter_registration_hook
from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook

from unison.comm.communicator import Communicator, LocalCommunicator
from unison.distribute.input import DistributedDataset, InputContext, InputPlacement, PerReplicaDataset
from unison.optim.distributed import DistributedOptimizer, Sum


class ReduceOp(enum.Enum):
    """How ``Strategy.reduce`` and ``ReplicaContext.all_reduce`` combine values."""

    SUM = "SUM"
    MEAN = "MEAN"


_STACK: list[Strategy] = []  # the current-strategy stack entered by scope() (innermost = current, as in TF)
_REPLICA_CONTEXT: list[ReplicaContext] = []


class StrategyExtended:
    """Advanced, per-process facts of a strategy (TF's ``strategy.extended``).

    Attributes:
        communicator: this replica's collectives.
        device: the torch device this replica computes on.
        replica_id: this process's replica index in ``[0, num_replicas_in_sync)``.
    """

    def __init__(self, communicator: Communicator, device: torch.device) -> None:
        self.communicator = communicator
        self.device = device
        self.replica_id = communicator.rank

    @property
    def should_checkpoint(self) -> bool:
        """True on the one replica that writes files (the chief)."""
        return self.replica_id == 0

    @property
    def should_save_summary(self) -> bool:
        """True on the one replica that prints progress and summaries (the chief)."""
        return self.replica_id == 0


class ReplicaContext:
    """The context of one replica inside ``strategy.run`` (TF's ``tf.distribute.ReplicaContext``)."""

    def __init__(self, strategy: Strategy) -> None:
        self.strategy = strategy

    @property
    def num_replicas_in_sync(self) -> int:
        return self.strategy.num_replicas_in_sync

    @property
    def replica_id_in_sync_group(self) -> int:
        return self.strategy.extended.replica_id

    def all_reduce(self, reduce_op: ReduceOp | str, value: torch.Tensor) -> torch.Tensor:
        """Combine ``value`` of every replica (SUM or MEAN); every replica gets the result."""
        return self.strategy.reduce(reduce_op, value, axis=None)


class Strategy:
    """A distribution strategy: where replicas run and how they synchronise.

    Subclasses only decide placement (which processes, which devices); the API is shared.
    """

    # TF's name for "steps are scheduled onto workers by a ClusterCoordinator" (Keras asks it
    # instead of importing the parameter-server stack to run an isinstance check).
    _should_use_with_coordinator: bool = False

    def __init__(self, communicator: Communicator, device: torch.device) -> None:
        self.extended = StrategyExtended(communicator, device)
        self._optimizers: dict[int, DistributedOptimizer] = {}

    # --- facts -------------------------------------------------------------------------------
    @property
    def num_replicas_in_sync(self) -> int:
        """How many replicas train in lockstep."""
        return self.extended.communicator.world_size

    @property
    def _comm(self) -> Communicator:
        return self.extended.communicator

    # --- scope: mirrored variables -----------------------------------------------------------
    @contextlib.contextmanager
    def scope(self) -> Iterator[Strategy]:
        """Make this the current strategy; parameters created inside start equal on all replicas."""
        created: list[torch.nn.Parameter] = []

        def track(module: torch.nn.Module, name: str, param: Any) -> None:
            if param is not None:
                created.append(param)

        handle = register_module_parameter_registration_hook(track)
        _STACK.append(self)
        try:
            yield self
        finally:
            _STACK.pop()
            handle.remove()
        self.broadcast_tensors([p for p in created if not isinstance(p, torch.nn.parameter.UninitializedParameter)])

    def broadcast_tensors(self, tensors: Iterable[torch.Tensor], src: int = 0) -> None:
        """Overwrite ``tensors`` on every replica with replica ``src``'s values, in place."""
        if not self._comm.is_distributed:
            return
        by_dtype: dict[torch.dtype, list[torch.Tensor]] = {}
        for t in tensors:
            by_dtype.setdefault(t.dtype, []).append(t)
        for dtype, group in by_dtype.items():
            flat = torch.cat([t.detach().reshape(-1) for t in group]).to(self.extended.device)
            self._comm.broadcast(flat, src=src, name=f"broadcast_variables.{dtype}")
            offset = 0
            with torch.no_grad():
                for t in group:
                    t.copy_(flat[offset: offset + t.numel()].view_as(t))
                    offset += t.numel()

    # --- running replica functions -------------------------------------------------------------
    def run(self, fn: Callable[..., Any], args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None) -> Any:
        """Run ``fn(*args, **kwargs)`` on this replica; returns this replica's result.

        Every ``optimizer.step()`` inside ``fn`` first SUM-reduces its parameters' gradients
        across replicas (the loss must be divided by the global batch size).
        """
        if not callable(fn):
            raise TypeError(f"strategy.run needs a callable. Received: fn={fn!r}")
        _REPLICA_CONTEXT.append(ReplicaContext(self))
        pre = register_optimizer_step_pre_hook(self._before_step)
        post = register_optimizer_step_post_hook(self._after_step)
        try:
            with self.scope():
                return fn(*args, **(kwargs or {}))
        finally:
            pre.remove()
            post.remove()
            _REPLICA_CONTEXT.pop()

    def gradient_synchronizer(self, optimizer: torch.optim.Optimizer) -> DistributedOptimizer:
        """The one ``DistributedOptimizer`` (SUM) that synchronises ``optimizer`` in this strategy.

        ``strategy.run`` custom loops and Keras's ``apply_gradients`` both reach the optimizer's
        gradients through it, so there is one synchronisation path per optimizer.
        """
        return self._synchronizer(optimizer)

    def _synchronizer(self, optimizer: torch.optim.Optimizer) -> DistributedOptimizer:
        sync = self._optimizers.get(id(optimizer))
        if sync is None or sync.optimizer is not optimizer:
            sync = DistributedOptimizer(optimizer, op=Sum, communicator=self._comm)
            self._optimizers[id(optimizer)] = sync
        return sync

    def _before_step(self, optimizer: torch.optim.Optimizer, args: Any, kwargs: Any) -> None:
        if _fully_sharded(optimizer):
            return  # FSDP2 (shard_model) reduce-scatters these gradients itself during backward
        if self._comm.is_distributed and not getattr(optimizer, "_unison_synchronized", False):
            self._synchronizer(optimizer).synchronize()

    def _after_step(self, optimizer: torch.optim.Optimizer, args: Any, kwargs: Any) -> None:
        sync = self._optimizers.get(id(optimizer))
        if sync is not None:
            sync.mark_stepped()

    # --- cross-replica combination -----------------------------------------------------------------
    def reduce(self, reduce_op: ReduceOp | str, value: Any, axis: int | None = None) -> torch.Tensor:
        """Combine every replica's ``value``; with ``axis``, also reduce along that axis.

        MEAN with an axis is the mean over all elements of every replica (replicas holding
        fewer rows weigh less), as in TF.
        """
        op = _reduce_op(reduce_op)
        t = torch.as_tensor(value)
        if not t.is_floating_point():
            t = t.to(torch.float64 if op is ReduceOp.MEAN else t.dtype)
        count = torch.tensor(1.0, dtype=torch.float64)
        if axis is not None:
            count = torch.tensor(float(t.shape[axis]), dtype=torch.float64)
            t = t.sum(dim=axis)
        t = t.to(self.extended.device).clone()
        self._comm.all_reduce(t, name=f"strategy.reduce.{op.value}")
        if op is ReduceOp.MEAN:
            if axis is None:
                return t / self.num_replicas_in_sync
            count = self._comm.all_reduce(count.to(self.extended.device), name="strategy.reduce.count")
            return t / count.to(t.dtype)
        return t

    def gather(self, value: torch.Tensor, axis: int = 0) -> torch.Tensor:
        """Concatenate every replica's ``value`` along ``axis`` (sizes along it may differ)."""
        t = torch.as_tensor(value).to(self.extended.device)
        moved = t.movedim(axis, 0).contiguous()
        parts = self._comm.all_gather(moved, name="strategy.gather")
        return torch.cat(parts, dim=0).movedim(0, axis)

    def experimental_local_results(self, value: Any) -> tuple[Any, ...]:
        """The values held by this process's replicas (one process, one replica)."""
        return (value,)

    # --- input --------------------------------------------------------------------------------
    def _input_placement(self) -> InputPlacement:
        """Which worker this replica belongs to (one worker unless a multi-worker strategy)."""
        return InputPlacement(self.num_replicas_in_sync, self.extended.replica_id)

    def experimental_distribute_dataset(self, dataset: Iterable[Any], options: Any = None) -> DistributedDataset:
        """Turn an iterable of global batches into this replica's per-replica batches.

        Every replica must call it (replica 0 draws the seed of the pipeline's unseeded shuffles,
        so that all replicas see the same global batches). A ``tf.data`` pipeline on several
        workers is sharded by its ``AutoShardPolicy`` (see :class:`DistributedDataset`).
        """
        if not hasattr(dataset, "__iter__"):
            raise TypeError(
                "experimental_distribute_dataset expects an iterable of global batches (a tf.data "
                "Dataset, a list, a torch DataLoader, a generator function's result...). Received: "
                f"{type(dataset).__name__}"
            )
        seed = self._comm.broadcast_object(secrets.randbits(63), name="distribute_dataset.seed")
        return DistributedDataset(dataset, self.num_replicas_in_sync, self.extended.replica_id,
                                  self.extended.device, self._input_placement(), seed)

    def distribute_datasets_from_function(self, dataset_fn: Callable[[InputContext], Iterable[Any]],
                                          options: Any = None) -> PerReplicaDataset:
        """Call ``dataset_fn(InputContext)`` in each input pipeline; it returns per-replica batches."""
        ctx = InputContext(num_input_pipelines=self.num_replicas_in_sync,
                           input_pipeline_id=self.extended.replica_id,
                           num_replicas_in_sync=self.num_replicas_in_sync)
        return PerReplicaDataset(dataset_fn(ctx), self.extended.device)


def _reduce_op(op: ReduceOp | str) -> ReduceOp:
    if isinstance(op, ReduceOp):
        return op
    if isinstance(op, str) and op.upper() in ("SUM", "MEAN"):
        return ReduceOp[op.upper()]
    raise ValueError(f"Unknown reduce op {op!r}. Expected tf.distribute.ReduceOp.SUM or ReduceOp.MEAN.")


class OneDeviceStrategy(Strategy):
    """Everything on one device, one replica (TF's ``tf.distribute.OneDeviceStrategy``).

    Example:
        >>> OneDeviceStrategy("/cpu:0").num_replicas_in_sync
        1
    """

    def __init__(self, device: str) -> None:
        from unison.distribute.devices import parse_device

        spec = parse_device(device)
        if spec.kind == "gpu" and spec.index >= (torch.cuda.device_count() if torch.cuda.is_available() else 0):
            raise ValueError(f"Device {device!r} is not available on this machine. Received: device={device!r}")
        super().__init__(LocalCommunicator(spec.to_torch()), spec.to_torch())


_DEFAULT: list[Strategy] = []


def _default_strategy() -> Strategy:
    if not _DEFAULT:
        _DEFAULT.append(Strategy(LocalCommunicator(), torch.device("cpu")))
    return _DEFAULT[0]


def get_strategy() -> Strategy:
    """The strategy whose ``scope()`` is open, else the default one-replica strategy."""
    return _STACK[-1] if _STACK else _default_strategy()


def has_strategy() -> bool:
    """True inside a non-default strategy's ``scope()``."""
    return bool(_STACK)


def in_cross_replica_context() -> bool:
    """True inside a strategy's ``scope()`` but outside ``strategy.run``."""
    return bool(_STACK) and not _REPLICA_CONTEXT


def in_strategy_run() -> bool:
    """True while a function given to ``strategy.run`` executes (TF's replica context proper)."""
    return bool(_REPLICA_CONTEXT)


def get_replica_context() -> ReplicaContext | None:
    """The replica context inside ``run`` (or outside any scope), ``None`` in cross-replica context."""
    if _REPLICA_CONTEXT:
        return _REPLICA_CONTEXT[-1]
    if _STACK:
        return None
    return ReplicaContext(_default_strategy())


def _fully_sharded(optimizer: torch.optim.Optimizer) -> bool:
    """Whether the optimizer's parameters are DTensors of a sharded model (``shard_model``)."""
    from torch.distributed.tensor import DTensor

    return any(isinstance(p, DTensor) for group in optimizer.param_groups for p in group["params"])
