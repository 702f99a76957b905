"""DistributedOptimizer: the one gradient-synchronisation path of unison.

It wraps any ``torch.optim.Optimizer`` by composition. During ``backward()`` gradients are
packed into buckets whose all-reduce starts as soon as each bucket is complete (see
:mod:`unison.optim.buckets`); ``step()`` waits for what is still in flight, writes the reduced
gradients back and calls the wrapped optimizer. Strategies use it with ``op=Sum`` (their loss is
already divided by the global batch size); a raw PyTorch loop uses the default ``op=Average``,
Horovod-style.

Example:
    >>> import torch
    >>> from unison.comm import LocalCommunicator
    >>> model = torch.nn.Linear(2, 1)
    >>> opt = DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.1),
    ...                            named_parameters=model.named_parameters(),
    ...                            communicator=LocalCommunicator())
    >>> model(torch.ones(4, 2)).sum().backward(); opt.step(); opt.zero_grad()
"""

from __future__ import annotations

import contextlib
import enum
from typing import Any, Iterable, Iterator

import torch

from unison.comm.communicator import Communicator, LocalCommunicator
from unison.optim.buckets import Bucket, plan_buckets


class ReduceOp(enum.Enum):
    """How gradients of the replicas are combined."""

    AVERAGE = "average"
    SUM = "sum"


Average = ReduceOp.AVERAGE
Sum = ReduceOp.SUM


def _check_named_parameters(
    named: Iterable[tuple[str, torch.nn.Parameter]] | None, optimizer: torch.optim.Optimizer
) -> list[tuple[str, torch.nn.Parameter]]:
    in_optimizer = [p for g in optimizer.param_groups for p in g["params"]]
    if named is None:
        return [(f"param.{i}", p) for i, p in enumerate(in_optimizer)]
    pairs = list(named)
    for item in pairs:
        if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str)
                and isinstance(item[1], torch.Tensor)):
            raise ValueError(
                "named_parameters must be (name, tensor) pairs, as model.named_parameters() "
                f"yields. Received an element: {item!r:.80}"
            )
    names = [n for n, _ in pairs]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"named_parameters has duplicate names: {dupes}. Each name must be unique.")
    known = {id(p) for p in in_optimizer}
    missing = [n for n, p in pairs if id(p) not in known]
    if missing:
        raise ValueError(
            f"Parameters {missing[:5]} are in named_parameters but not in the wrapped optimizer. "
            "Pass the same parameters to both (e.g. torch.optim.Adam(model.parameters()) with "
            "named_parameters=model.named_parameters())."
        )
    return pairs


class DistributedOptimizer:
    """Synchronises gradients across replicas, then steps the wrapped optimizer.

    Args:
        optimizer: the ``torch.optim.Optimizer`` to wrap (it keeps its own state).
        named_parameters: ``model.named_parameters()``; names appear in error messages.
        op: ``Average`` (divide the sum by replicas x passes) or ``Sum``.
        bucket_cap_mb: the size of one gradient bucket.
        backward_passes_per_step: communicate only on every k-th backward; the k local
            gradients are accumulated first.
        communicator: the replicas to synchronise with; default: the job this process joined
            (a single process synchronises with nobody).

    Contract: every replica calls ``backward()`` exactly ``backward_passes_per_step`` times and
    then ``step()``; all of them see identical reduced gradients.
    """

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        named_parameters: Iterable[tuple[str, torch.nn.Parameter]] | None = None,
        op: ReduceOp = Average,
        bucket_cap_mb: float = 25.0,
        backward_passes_per_step: int = 1,
        communicator: Communicator | None = None,
    ) -> None:
        if not isinstance(optimizer, torch.optim.Optimizer):
            raise TypeError(
                "DistributedOptimizer wraps a torch.optim.Optimizer. Received: "
                f"{type(optimizer).__name__}. Example: DistributedOptimizer(torch.optim.Adam("
                "model.parameters()), named_parameters=model.named_parameters())"
            )
        if not isinstance(op, ReduceOp):
            raise ValueError(f"Unknown op {op!r}. Expected unison.Average or unison.Sum.")
        if not isinstance(backward_passes_per_step, int) or backward_passes_per_step < 1:
            raise ValueError(
                "backward_passes_per_step must be an integer >= 1. "
                f"Received: backward_passes_per_step={backward_passes_per_step!r}"
            )
        if bucket_cap_mb <= 0:
            raise ValueError(f"bucket_cap_mb must be > 0. Received: bucket_cap_mb={bucket_cap_mb}")
        self.optimizer = optimizer
        self.op = op
        self.backward_passes_per_step = backward_passes_per_step
        self.comm = communicator if communicator is not None else default_communicator()
        self._named = _check_named_parameters(named_parameters, optimizer)
        self._names = {id(p): n for n, p in self._named}
        trainable = [p for _, p in self._named if p.requires_grad]
        self._buckets = plan_buckets(trainable, int(bucket_cap_mb * 1024 * 1024))
        self._bucket_of: dict[int, Bucket] = {id(p): b for b in self._buckets for p in b.params}
        self._passes: dict[int, int] = {}
        self._next_launch = 0
        self._skip = False
        self._synchronized = False
        self._hooks: list[Any] = []
        self._hooks = [p.register_post_accumulate_grad_hook(self._on_grad) for p in trainable]

    # --- composition: the wrapped optimizer's API -------------------------------------------
    @property
    def param_groups(self) -> list[dict[str, Any]]:
        return self.optimizer.param_groups

    @property
    def state(self) -> Any:
        return self.optimizer.state

    def state_dict(self) -> dict[str, Any]:
        return self.optimizer.state_dict()

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.optimizer.load_state_dict(state_dict)

    def zero_grad(self, set_to_none: bool = True) -> None:
        self.optimizer.zero_grad(set_to_none=set_to_none)

    # --- synchronisation ---------------------------------------------------------------------
    def _on_grad(self, param: torch.Tensor) -> None:
        key = id(param)
        self._synchronized = False
        count = self._passes.get(key, 0) + 1
        if count > self.backward_passes_per_step:
            raise RuntimeError(
                f"Gradient of '{self._names[key]}' was computed {count} times before step(), but "
                f"backward_passes_per_step={self.backward_passes_per_step}. Call step() after "
                "every backward_passes_per_step backward passes, or raise that setting."
            )
        self._passes[key] = count
        if count == self.backward_passes_per_step and self.comm.is_distributed:
            bucket = self._bucket_of[key]
            bucket.ready += 1
            if bucket.ready == len(bucket.params):
                self._launch_in_order()

    def _launch(self, bucket: Bucket) -> None:
        bucket.work = self.comm.all_reduce_async(bucket.pack(), name=f"gradients.bucket{bucket.index}")

    def _launch_in_order(self) -> None:
        # Launch every consecutive complete bucket: a later bucket waits for earlier ones so
        # every replica issues the same collectives in the same order.
        while self._next_launch < len(self._buckets):
            bucket = self._buckets[self._next_launch]
            if bucket.ready < len(bucket.params):
                break
            self._launch(bucket)
            self._next_launch += 1

    def synchronize(self) -> None:
        """Finish the gradient reduction now (launch what is left, wait, write back)."""
        if self._synchronized:
            return  # already synchronised since the last backward (e.g. by a manual call)
        self._synchronized = True
        if not self.comm.is_distributed:
            if self.op is Average and self.backward_passes_per_step > 1:
                self._scale_local(1.0 / self.backward_passes_per_step)
            self._passes.clear()
            return
        while self._next_launch < len(self._buckets):
            self._launch(self._buckets[self._next_launch])
            self._next_launch += 1
        scale = 1.0
        if self.op is Average:
            scale = 1.0 / (self.comm.world_size * self.backward_passes_per_step)
        for bucket in self._buckets:
            self.comm.wait(bucket.work, name=f"gradients.bucket{bucket.index}")
            bucket.unpack(scale)
            bucket.reset()
        self._passes.clear()
        self._next_launch = 0

    def _scale_local(self, scale: float) -> None:
        for _, p in self._named:
            if p.grad is not None:
                p.grad.mul_(scale)

    @contextlib.contextmanager
    def skip_synchronize(self) -> Iterator[None]:
        """Inside this block ``step()`` does not synchronise (call ``synchronize()`` first)."""
        self._skip = True
        try:
            yield
        finally:
            self._skip = False

    def step(self, closure: Any = None) -> Any:
        """Synchronise gradients (unless inside ``skip_synchronize``) and step the optimizer."""
        if not self._skip:
            self.synchronize()
        # Tells a strategy's global step hook that this step is already synchronised.
        setattr(self.optimizer, "_unison_synchronized", True)
        try:
            return self.optimizer.step(closure)
        finally:
            setattr(self.optimizer, "_unison_synchronized", False)
            self.mark_stepped()

    def mark_stepped(self) -> None:
        """Record that the optimizer stepped: the next step needs a fresh synchronisation."""
        self._synchronized = False

    def remove_hooks(self) -> None:
        """Detach from the parameters (the wrapped optimizer keeps working alone)."""
        for h in self._hooks:
            h.remove()
        self._hooks = []


def default_communicator() -> Communicator:
    """The communicator of the job this process already joined, or a local one."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
        from datetime import timedelta

        backend = dist.get_backend()
        device = torch.device("cuda", torch.cuda.current_device()) if backend == "nccl" else torch.device("cpu")
        return Communicator(dist.get_rank(), dist.get_world_size(), device, timedelta(minutes=5).total_seconds())
    return LocalCommunicator()
