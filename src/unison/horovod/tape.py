"""Horovod's TensorFlow training-loop API: ``DistributedGradientTape`` and ``broadcast_variables``.

A TF2 custom loop made data-parallel the Horovod way::

    with tf.GradientTape() as tape:
        loss_value = loss(labels, model(images, training=True))
    tape = hvd.DistributedGradientTape(tape)           # gradient() now averages across processes
    grads = tape.gradient(loss_value, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
    if first_batch:
        hvd.broadcast_variables(model.variables, root_rank=0)

Example:
    >>> import torch, unison as hvd, unison as tf
    >>> hvd.init()
    >>> w = tf.Variable([1.0, 2.0])
    >>> with tf.GradientTape() as tape:
    ...     y = tf.reduce_sum(w * w)
    >>> hvd.DistributedGradientTape(tape).gradient(y, [w])[0].tolist()   # one process: 2w
    [2.0, 4.0]
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch

from unison.comm.reduce_op import ReduceOp
from unison.core.tape import GradientTape
from unison.horovod.basics import _comm
from unison.horovod.collectives import _check_compression, _check_process_set, reduce_group
from unison.ops import nest
from unison.optim.compression import Compression, Compressor
from unison.optim.distributed import Adasum, Average


class DistributedGradientTape:
    """A ``GradientTape`` whose ``gradient()`` reduces the gradients across all processes.

    Horovod's ``hvd.DistributedGradientTape(tape, ...)``: wrap the tape that recorded the loss;
    ``gradient()`` returns the gradients averaged (``op=Average``, default), summed or
    Adasum-combined over every process, in one collective per dtype. Everything else (``watch``,
    ``stop_recording``, ``jacobian``, ...) is the wrapped tape's.

    Args:
        gradtape: the ``tf.GradientTape`` (unison's) that recorded the computation.
        device_dense, device_sparse: accepted for Horovod compatibility (torch places the data).
        compression: ``Compression.none`` / ``.fp16`` / ``.bf16`` on the wire.
        sparse_as_dense: accepted (unison's gradients are dense).
        op: ``Average``, ``Sum`` or ``Adasum``.
        gradient_predivide_factor: with ``Average``, divide by this before the sum and by
            ``size / factor`` after it.
        num_groups, groups: accepted (unison fuses all gradients of a dtype into one buffer).
        process_set: only the global process set.
        scale_local_gradients: divide the gradients of sources given to
            :meth:`register_local_source` (not reduced) by ``size()``, as Horovod does.

    Contract: every process calls ``gradient()`` with the same sources in the same order.
    """

    def __init__(
        self,
        gradtape: GradientTape,
        device_dense: str = "",
        device_sparse: str = "",
        compression: Compressor = Compression.none,
        sparse_as_dense: bool = False,
        op: ReduceOp | str = Average,
        gradient_predivide_factor: float = 1.0,
        num_groups: int = 0,
        groups: Any = None,
        process_set: Any = None,
        scale_local_gradients: bool = True,
    ) -> None:
        if not isinstance(gradtape, GradientTape):
            raise TypeError(
                "DistributedGradientTape wraps a tf.GradientTape. Received: "
                f"{type(gradtape).__name__}. Example: tape = hvd.DistributedGradientTape(tape)"
            )
        self._op = ReduceOp.parse(op, ("AVERAGE", "SUM", "ADASUM"), "unison.Average, unison.Sum or unison.Adasum")
        factor = gradient_predivide_factor
        if isinstance(factor, bool) or not isinstance(factor, (int, float)) or factor <= 0:
            raise ValueError(f"gradient_predivide_factor must be a number > 0. Received: {factor!r}")
        if factor != 1.0 and self._op is not Average:
            raise ValueError(
                "gradient_predivide_factor is only supported with op=hvd.Average (as in Horovod). "
                f"Received: op={self._op}, gradient_predivide_factor={factor}"
            )
        _check_process_set(process_set, "DistributedGradientTape")
        self._tape = gradtape
        self._compression = _check_compression(compression, "DistributedGradientTape")
        self._predivide = float(factor)
        self._scale_local = bool(scale_local_gradients)
        self._local_sources: set[int] = set()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._tape, name)  # watch, stop_recording, reset, jacobian, ...

    def __enter__(self) -> DistributedGradientTape:
        self._tape.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._tape.__exit__(*exc)

    def register_local_source(self, source: torch.Tensor) -> None:
        """Keep ``source``'s gradient local (not reduced), e.g. a per-process embedding."""
        self._local_sources.add(id(source))

    def gradient(
        self,
        target: Any,
        sources: Any,
        output_gradients: Any = None,
        unconnected_gradients: Any = "none",
        use_generic_names: bool = False,
    ) -> Any:
        """The wrapped tape's gradients of ``target``, reduced across processes (same structure).

        ``None`` gradients (sources the target does not depend on) stay ``None`` and are not
        sent, as in Horovod; every process must have the same ``None`` pattern.
        """
        grads = self._tape.gradient(target, sources, output_gradients, unconnected_gradients)
        flat_sources = nest.flatten(sources)
        flat = nest.flatten(grads)
        comm = _comm()
        if not comm.is_distributed:
            return grads
        shared = [
            i for i, (g, s) in enumerate(zip(flat, flat_sources)) if g is not None and id(s) not in self._local_sources
        ]
        reduced = reduce_group(
            [flat[i] for i in shared],
            self._op,
            self._compression,
            "DistributedGradientTape",
            prescale=1.0 / self._predivide,
            postscale=self._predivide,
            comm=comm,
        )
        out = list(flat)
        for i, r in zip(shared, reduced):
            out[i] = r
        if self._scale_local and self._op is not Adasum:
            for i, (g, s) in enumerate(zip(flat, flat_sources)):
                if g is not None and id(s) in self._local_sources:
                    out[i] = g / comm.world_size
        return nest.pack_sequence_as(grads, out)


def broadcast_variables(variables: Iterable[torch.Tensor], root_rank: int = 0, process_set: Any = None) -> None:
    """Overwrite ``variables`` in place with ``root_rank``'s values (Horovod's ``broadcast_variables``).

    Args:
        variables: tensors/variables, e.g. ``model.variables`` or an optimizer's variables.
        root_rank: the process whose values everyone gets.

    Example:
        >>> import unison as hvd, unison as tf
        >>> hvd.init(); v = tf.Variable([3.0]); hvd.broadcast_variables([v], root_rank=0); v.numpy()
        array([3.], dtype=float32)
    """
    _check_process_set(process_set, "broadcast_variables")
    items = list(variables)
    for i, v in enumerate(items):
        if not isinstance(v, torch.Tensor):
            raise TypeError(
                f"broadcast_variables expects variables or tensors; element {i} is {type(v).__name__} {v!r:.60}. "
                "Pass e.g. model.variables."
            )
    comm = _comm()
    size = comm.world_size
    if isinstance(root_rank, bool) or not isinstance(root_rank, int) or not 0 <= root_rank < size:
        raise ValueError(f"broadcast_variables: root_rank must be in 0..{size - 1}. Received: root_rank={root_rank!r}")
    if not comm.is_distributed or not items:
        return
    lazy = [i for i, v in enumerate(items) if torch.nn.parameter.is_lazy(v)]
    if lazy:
        raise ValueError(
            f"broadcast_variables: variables {lazy[:5]} are not built yet (their shapes are unknown until the model "
            "first runs). Broadcast after the first step, as Horovod's examples do (if first_batch: ...)."
        )
    unique = list({id(v): v for v in items}.values())  # a variable listed twice is sent once
    with torch.no_grad():
        comm.broadcast_coalesced(unique, src=root_rank, name="broadcast_variables")


__all__ = ["DistributedGradientTape", "broadcast_variables"]
