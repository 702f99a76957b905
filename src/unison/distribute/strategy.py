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
import secrets
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, TypeVar

import torch
from torch.nn.modules.module import register_module_parameter_registration_hook
from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook

from unison.comm.communicator import Communicator, LocalCommunicator
from unison.comm.functional import differentiable_all_reduce
from unison.comm.reduce_op import ReduceOp
from unison.distribute.input import DistributedDataset, InputContext, InputPlacement, PerReplicaDataset
from unison.distribute.input_options import (
    InputOptions,
    ValueContext,
    check_input_options,
    distribute_values_from_function,
)
from unison.optim.distributed import DistributedOptimizer, Sum

# The current-strategy stack entered by scope()/as_current(): the one process-wide mutable state a
# strategy keeps (TF's model); nothing outside this module touches it.
_STACK: list[Strategy] = []
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
        """Combine ``value`` of every replica (SUM or MEAN); every replica gets the result.

        Differentiable, as in TF: for a floating-point tensor the gradients flowing back into
        the result are combined the same way across replicas, so a loss computed from the
        global value trains every replica's contribution (synchronised BatchNormalization
        reduces its batch statistics this way).

        Example:
            >>> import torch, unison as tf
            >>> x = torch.ones(2, requires_grad=True)
            >>> ctx = tf.distribute.get_replica_context()        # one replica outside any scope
            >>> ctx.all_reduce(tf.distribute.ReduceOp.SUM, x * 3).sum().backward()
            >>> x.grad.tolist()
            [3.0, 3.0]
        """
        op = _reduce_op(reduce_op)
        if not (isinstance(value, torch.Tensor) and value.is_floating_point()):
            return self.strategy.reduce(op, value, axis=None)
        total = differentiable_all_reduce(
            value.to(self.strategy.extended.device), self.strategy._comm, name=f"replica_context.all_reduce.{op.value}"
        )
        return total / self.num_replicas_in_sync if op is ReduceOp.MEAN else total


_Executor = TypeVar("_Executor")


class Strategy:
    """A distribution strategy: where replicas run and how they synchronise.

    Subclasses only decide placement (which processes, which devices); the API is shared.
    """

    def __init__(self, communicator: Communicator, device: torch.device) -> None:
        self.extended = StrategyExtended(communicator, device)

    # --- how Keras runs this strategy's steps ---------------------------------------------------
    def step_executor(self, model: Any, executors: Mapping[str, Callable[[Any], _Executor]]) -> _Executor:
        """The executor that runs ``model.fit``'s steps under this strategy.

        Keras's trainer offers its executors by kind (``"local"``: each step runs here, in this
        replica's context; ``"coordinated"``: steps are scheduled onto a cluster's workers) and the
        strategy picks one, so this package never imports Keras. A strategy that needs another
        executor overrides this method.

        Example:
            >>> import unison as tf
            >>> tf.distribute.get_strategy().step_executor(None, {"local": lambda m: "here"})
            'here'
        """
        return executors["local"](model)

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
        try:
            with self.as_current():
                yield self
        finally:
            handle.remove()
        self.broadcast_tensors([p for p in created if not isinstance(p, torch.nn.parameter.UninitializedParameter)])

    @contextlib.contextmanager
    def as_current(self) -> Iterator[Strategy]:
        """Make this the current strategy (``get_strategy()``) for the block, nothing more.

        ``scope()`` does this and also makes the parameters created inside start equal on all
        replicas; a runtime that runs user code under a strategy it already set up (a
        parameter-server worker running a scheduled function, Keras's ``fit`` running the
        model's layers) needs only this part.

        Example:
            >>> import unison as tf
            >>> strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
            >>> with strategy.as_current():
            ...     tf.distribute.get_strategy() is strategy
            True
        """
        _STACK.append(self)
        try:
            yield self
        finally:
            _STACK.pop()

    def broadcast_tensors(self, tensors: Iterable[torch.Tensor], src: int = 0) -> None:
        """Overwrite ``tensors`` on every replica with replica ``src``'s values, in place."""
        self._comm.broadcast_coalesced(tensors, src=src, name="broadcast_variables")

    # --- running replica functions -------------------------------------------------------------
    def run(
        self,
        fn: Callable[..., Any],
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
        options: Any = None,
    ) -> Any:
        """Run ``fn(*args, **kwargs)`` on this replica; returns this replica's result.

        ``options`` (``tf.distribute.RunOptions``) hold TF's TPU/XLA settings; accepted, and the
        result does not depend on them here.

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

    def gradient_synchronizer(self, optimizer: torch.optim.Optimizer, **options: Any) -> DistributedOptimizer:
        """The one ``DistributedOptimizer`` that synchronises ``optimizer``'s gradients.

        The one that already wraps ``optimizer`` (Keras's, or one the program made) if there is
        one; otherwise a new one that SUM-reduces over this strategy's replicas, built with
        ``options`` (``DistributedOptimizer``'s keyword arguments). ``strategy.run``'s step hook
        and Keras's ``apply_gradients`` both reach gradients through it, so a step is synchronised
        once, whoever calls ``step()``.

        Example:
            >>> import torch, unison as tf
            >>> opt = torch.optim.SGD(torch.nn.Linear(2, 1).parameters(), lr=0.1)
            >>> strategy = tf.distribute.get_strategy()
            >>> strategy.gradient_synchronizer(opt) is strategy.gradient_synchronizer(opt)
            True
        """
        if isinstance(optimizer, DistributedOptimizer):
            return optimizer
        sync = DistributedOptimizer.of(optimizer)
        if sync is None:
            sync = DistributedOptimizer(optimizer, **{"op": Sum, "communicator": self._comm, **options})
        return sync

    def forget_synchronizer(self, optimizer: torch.optim.Optimizer) -> None:
        """Detach and drop the synchronizer of ``optimizer`` (a recompiled Keras model replaces it)."""
        sync = DistributedOptimizer.of(optimizer)
        if sync is not None:
            sync.remove_hooks()

    @contextlib.contextmanager
    def replica_context(self) -> Iterator[ReplicaContext]:
        """Run the block as this process's replica, the context ``strategy.run`` gives ``fn``.

        Inside it this strategy is current, ``get_replica_context()`` returns the context and
        metrics read locally. Unlike ``run`` it adds no global optimizer-step hooks: Keras's
        ``fit`` runs each step here, and its optimizer is synchronised by
        :meth:`gradient_synchronizer`.
        """
        context = ReplicaContext(self)
        _REPLICA_CONTEXT.append(context)
        _STACK.append(self)
        try:
            yield context
        finally:
            _STACK.pop()
            _REPLICA_CONTEXT.pop()

    def _before_step(self, optimizer: torch.optim.Optimizer, args: Any, kwargs: Any) -> None:
        if isinstance(optimizer, DistributedOptimizer) or _fully_sharded(optimizer):
            return  # it synchronises itself; FSDP2 (shard_model) reduce-scatters during backward
        if self._comm.is_distributed:
            # a no-op when the optimizer's DistributedOptimizer already synchronised this step
            self.gradient_synchronizer(optimizer).synchronize()

    def _after_step(self, optimizer: torch.optim.Optimizer, args: Any, kwargs: Any) -> None:
        sync = DistributedOptimizer.of(optimizer)
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
        checked = check_input_options(options, "experimental_distribute_dataset")
        seed = self._comm.broadcast_object(secrets.randbits(63), name="distribute_dataset.seed")
        return DistributedDataset(
            dataset,
            self.num_replicas_in_sync,
            self.extended.replica_id,
            self._input_device(checked),
            self._input_placement(),
            seed,
        )

    def distribute_datasets_from_function(
        self, dataset_fn: Callable[[InputContext], Iterable[Any]], options: Any = None
    ) -> PerReplicaDataset:
        """Call ``dataset_fn(InputContext)`` in each input pipeline; it returns per-replica batches.

        ``options`` (:class:`tf.distribute.InputOptions`) are checked as TF checks them; one pipeline
        per replica is what both replication modes give here (one process per replica).
        """
        checked = check_input_options(options, "distribute_datasets_from_function")
        ctx = InputContext(
            num_input_pipelines=self.num_replicas_in_sync,
            input_pipeline_id=self.extended.replica_id,
            num_replicas_in_sync=self.num_replicas_in_sync,
        )
        seed = self._comm.broadcast_object(secrets.randbits(63), name="distribute_datasets_from_function.seed")
        return PerReplicaDataset(dataset_fn(ctx), self._input_device(checked), seed, self.extended.replica_id)

    # TF 2.3's name, still used by tutorials
    experimental_distribute_datasets_from_function = distribute_datasets_from_function

    def _input_device(self, options: InputOptions | None) -> torch.device:
        """Where batches go: the replica's device, or the host with ``experimental_fetch_to_device=False``."""
        if options is not None and not options.fetch_to_device:
            return torch.device("cpu")
        return self.extended.device

    def experimental_distribute_values_from_function(self, value_fn: Callable[[ValueContext], Any]) -> Any:
        """This replica's value: ``value_fn(tf.distribute.experimental.ValueContext(...))``, on its device.

        Example:
            >>> import unison as tf
            >>> s = tf.distribute.get_strategy()
            >>> s.experimental_distribute_values_from_function(lambda ctx: ctx.replica_id_in_sync_group)
            0
        """
        return distribute_values_from_function(self, value_fn)


def _reduce_op(op: ReduceOp | str) -> ReduceOp:
    return ReduceOp.parse(op, ("SUM", "MEAN"), "tf.distribute.ReduceOp.SUM or ReduceOp.MEAN")


class OneDeviceStrategy(Strategy):
    """Everything on one device, one replica (TF's ``tf.distribute.OneDeviceStrategy``).

    Example:
        >>> OneDeviceStrategy("/cpu:0").num_replicas_in_sync
        1
    """

    def __init__(self, device: str) -> None:
        from unison.distribute.devices import parse_device

        spec = parse_device(device)
        visible = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if spec.kind == "gpu" and spec.index >= visible:
            # TF's soft placement (on by default in eager TF 2): the program runs on the CPU.
            warnings.warn(
                f"OneDeviceStrategy: device {device!r} is not available on this machine "
                f"({visible} visible GPU(s)); running on '/cpu:0' instead, as TensorFlow's soft "
                f"placement does.",
                stacklevel=2,
            )
            spec = parse_device("/cpu:0")
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
