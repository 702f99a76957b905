"""Horovod's Keras ``DistributedOptimizer``: ``hvd.DistributedOptimizer(keras_optimizer)``.

Horovod wraps a Keras optimizer so that ``model.fit`` averages the gradients of every process
before each update. Here the wrapper is a Keras optimizer whose torch optimizer is unison's
:class:`~unison.optim.DistributedOptimizer` over the inner optimizer's: ``fit``'s
``backward()`` starts the bucketed all-reduces and the step waits for them, the one
gradient-synchronisation path unison has. Use it with ``unison.init()`` / ``unison launch``
(one process per replica, no strategy); under a ``tf.distribute`` strategy the strategy
already synchronises and the plain Keras optimizer is the one to compile with.

Example:
    >>> import unison as hvd
    >>> from unison import keras
    >>> hvd.init()
    >>> opt = hvd.DistributedOptimizer(keras.optimizers.Adam(0.001))
    >>> type(opt).__name__, opt.name
    ('DistributedOptimizer', 'DistributedAdam')
"""

from __future__ import annotations

from typing import Any

import torch

from unison.comm.reduce_op import ReduceOp
from unison.horovod.basics import _comm
from unison.horovod.collectives import _check_compression, _check_process_set
from unison.keras import optimizers as keras_optimizers
from unison.keras.optimizers import Optimizer, Params
from unison.optim.compression import Compression, Compressor
from unison.optim.distributed import Average, register_foreign_wrapper
from unison.optim.distributed import DistributedOptimizer as TorchDistributedOptimizer


class DistributedOptimizer(Optimizer):
    """A Keras optimizer that averages gradients across processes before the inner one updates.

    Args (Horovod's ``horovod.tensorflow.keras.DistributedOptimizer``):
        optimizer: the Keras optimizer to wrap (an instance or a name such as ``"adam"``).
        name: defaults to ``"Distributed" + the inner class name``.
        compression: ``Compression.none`` / ``.fp16`` / ``.bf16`` on the wire.
        gradient_predivide_factor: with ``Average``, divide before the sum, the rest after.
        op: ``Average`` (default), ``Sum`` or ``Adasum``.
        backward_passes_per_step: in ``fit``, update (and communicate) every k-th batch; the k
            local gradients add up (Keras's ``gradient_accumulation_steps``).
        average_aggregated_gradients: with k > 1, average (not sum) the k gradients.
        device_dense, device_sparse, sparse_as_dense, num_groups, groups,
        scale_local_gradients: accepted for Horovod compatibility (no effect on torch).
        process_set: only the global process set.

    Contract: every process runs the same ``fit`` (same steps per epoch); the learning rate,
    ``iterations`` and hyper-parameters are the inner optimizer's.
    """

    def __init__(
        self,
        optimizer: Any,
        name: str | None = None,
        device_dense: str = "",
        device_sparse: str = "",
        compression: Compressor = Compression.none,
        sparse_as_dense: bool = False,
        gradient_predivide_factor: float = 1.0,
        op: ReduceOp | str = Average,
        backward_passes_per_step: int = 1,
        average_aggregated_gradients: bool = False,
        num_groups: int = 0,
        groups: Any = None,
        process_set: Any = None,
        scale_local_gradients: bool = True,
    ) -> None:
        inner = keras_optimizers.get(optimizer)
        if isinstance(inner, DistributedOptimizer):
            raise ValueError("The optimizer is already a hvd.DistributedOptimizer; wrap the Keras optimizer once.")
        _check_process_set(process_set, "DistributedOptimizer")
        super().__init__(float(inner.learning_rate), name=name or f"Distributed{type(inner).__name__}")
        self.inner_optimizer = inner
        self._counter = inner._counter  # one `iterations` and learning-rate schedule: the inner's
        self._options: dict[str, Any] = {
            "compression": _check_compression(compression, "DistributedOptimizer"),
            "op": op,
            "gradient_predivide_factor": gradient_predivide_factor,
            "backward_passes_per_step": backward_passes_per_step,
        }
        self.average_aggregated_gradients = bool(average_aggregated_gradients)
        # Horovod aggregates k batches locally and communicates once: in fit that is Keras's
        # gradient accumulation (k backward passes, one update), which the torch wrapper counts.
        k = backward_passes_per_step
        if isinstance(k, int) and not isinstance(k, bool) and k > 1:
            self.gradient_accumulation_steps = k
        # fail now (not at the first step) on a bad op / factor / k: the torch wrapper checks them
        probe = torch.nn.Parameter(torch.zeros(1))
        TorchDistributedOptimizer(torch.optim.SGD([probe], lr=0.1), communicator=None, **self._options).remove_hooks()
        self._sync: TorchDistributedOptimizer | None = None

    def _wrap(self, torch_opt: torch.optim.Optimizer) -> TorchDistributedOptimizer:
        if self._sync is None or self._sync.optimizer is not torch_opt:
            if self._sync is not None:
                self._sync.remove_hooks()
            # Horovod's Keras programs broadcast the weights after the first step
            # (BroadcastGlobalVariablesCallback), so the first step may start from different ones.
            self._sync = TorchDistributedOptimizer(
                torch_opt, communicator=_comm(), check_consistency=False, **self._options
            )
            k = self._options["backward_passes_per_step"]
            if k > 1:
                # fit divides each of the k losses by k (their gradients add up to the mean) and
                # the torch wrapper divides by k again: undo that one for Horovod's mean of the k
                # gradients (average_aggregated_gradients=True), and the first too for its sum.
                self._sync.gradient_transform = _times(k if self.average_aggregated_gradients else k * k)
        self._torch_optimizer = self._sync
        self._param_ids = self.inner_optimizer._param_ids
        return self._sync

    def build(self, params: Params) -> torch.optim.Optimizer:
        return self._wrap(self.inner_optimizer.build(params))

    def prebuild(self, params: Params) -> None:
        self.inner_optimizer.prebuild(params)
        built = self.inner_optimizer.torch_optimizer
        if built is not None:
            self._wrap(built)
            self._prebuilt = True

    @property
    def torch_optimizer(self) -> torch.optim.Optimizer | None:
        inner = self.inner_optimizer.torch_optimizer
        return None if inner is None else self._wrap(inner)

    @property
    def learning_rate(self) -> Any:
        return self.inner_optimizer.learning_rate

    @learning_rate.setter
    def learning_rate(self, value: float) -> None:
        self.inner_optimizer.learning_rate = value

    def clip_gradients(self, params: Params) -> None:
        self.inner_optimizer.clip_gradients(params)

    def get_config(self) -> dict[str, Any]:
        return self.inner_optimizer.get_config()

    def __getattr__(self, name: str) -> Any:
        # hyper-parameters of the inner optimizer (beta_1, momentum, ...), as Horovod exposes them
        if name == "inner_optimizer":
            raise AttributeError(name)
        return getattr(self.inner_optimizer, name)


def _times(k: int) -> Any:
    def scale(params: list[torch.nn.Parameter]) -> None:
        with torch.no_grad():
            for p in params:
                if p.grad is not None:
                    p.grad.mul_(k)

    return scale


def _keras_factory(optimizer: Any, *args: Any, **kwargs: Any) -> DistributedOptimizer | None:
    if not isinstance(optimizer, Optimizer):
        return None
    return DistributedOptimizer(optimizer, *args, **kwargs)


register_foreign_wrapper(_keras_factory)

__all__ = ["DistributedOptimizer"]
