"""DistributedOptimizer: the one gradient-synchronisation path of unison.

It wraps any ``torch.optim.Optimizer`` by composition. During ``backward()`` gradients are
packed into buckets whose all-reduce starts as soon as each bucket is complete (see
:mod:`unison.optim.buckets`); ``step()`` waits for what is still in flight, checks the verdicts
that travelled with the gradients, writes the reduced gradients back and steps the wrapped
optimizer. Strategies use it with ``op=Sum`` (their loss is already divided by the global batch
size); a raw PyTorch loop uses the default ``op=Average``, Horovod-style.

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
import time
import weakref
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import torch

from unison.comm.communicator import Communicator, LocalCommunicator, joined
from unison.comm.reduce_op import ReduceOp
from unison.core.contention import follow_load
from unison.debug.straggler import active_timings
from unison.errors import ElasticMembershipError, format_choices
from unison.optim.amp import scaled_step
from unison.optim.buckets import Bucket, plan_buckets
from unison.optim.compression import Compression, Compressor
from unison.optim.fused_step import DirectAdam
from unison.optim.protocol import WrappingOptimizer
from unison.optim.safety import all_finite, check_consistency, first_nonfinite, nonfinite_error
from unison.optim.zero import ShardedState
from unison.optim.zero2 import GradientShards

# Horovod's spellings (hvd.Average, hvd.Sum, hvd.Adasum)
Average = ReduceOp.AVERAGE
Sum = ReduceOp.SUM
Adasum = ReduceOp.ADASUM
_NONFINITE = ("raise", "skip", "keep")
# Which DistributedOptimizer wraps a torch optimizer (by id; an entry goes with its wrapper): how
# a strategy's step hook finds an optimizer's one synchroniser without marking the user's object.
_WRAPPERS: weakref.WeakValueDictionary[int, DistributedOptimizer] = weakref.WeakValueDictionary()
# Wrappers for optimizers that are not torch optimizers (a Keras optimizer): a higher layer
# registers a factory, so ``DistributedOptimizer(keras_opt, ...)`` (Horovod's Keras API) returns
# its wrapper while this module knows nothing of Keras. A factory returns None to decline.
_FOREIGN: list[Callable[..., Any]] = []


def discard_in_flight() -> None:
    """:meth:`DistributedOptimizer.discard_step` on every live wrapper (an elastic job re-formed)."""
    for wrapper in list(_WRAPPERS.values()):
        wrapper.discard_step()


def register_foreign_wrapper(factory: Callable[..., Any]) -> None:
    """Let ``DistributedOptimizer(optimizer, **kwargs)`` return ``factory(optimizer, **kwargs)``.

    For an ``optimizer`` that is not a ``torch.optim.Optimizer``; the factory returns ``None``
    when the optimizer is not its kind.
    """
    if factory not in _FOREIGN:
        _FOREIGN.append(factory)


def _check_named_parameters(
    named: Iterable[tuple[str, torch.nn.Parameter]] | None, optimizer: torch.optim.Optimizer
) -> list[tuple[str, torch.nn.Parameter]]:
    in_optimizer = [p for g in optimizer.param_groups for p in g["params"]]
    if named is None:
        return [(f"param.{i}", p) for i, p in enumerate(in_optimizer)]
    pairs = list(named)
    for item in pairs:
        if not (
            isinstance(item, tuple)
            and len(item) == 2
            and isinstance(item[0], str)
            and isinstance(item[1], torch.Tensor)
        ):
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


def _check_compression(compression: Any) -> Compressor:
    if isinstance(compression, Compressor):
        return compression
    if isinstance(compression, str) and compression in Compression.all():
        return Compression.all()[compression]
    raise ValueError(
        f"Unknown compression {compression!r}. Expected one of unison.Compression.none, .fp16, "
        f".bf16 (or the strings {format_choices(Compression.all())})."
    )


class DistributedOptimizer(WrappingOptimizer):
    """Synchronises gradients across replicas, then steps the wrapped optimizer.

    It is a ``torch.optim.Optimizer`` (as Horovod's is): ``param_groups``, ``state``,
    ``defaults``, ``state_dict``/``load_state_dict``, ``add_param_group`` and ``zero_grad`` are the
    wrapped optimizer's, so torch's LR schedulers and ``isinstance`` checks work. With
    ``torch.amp.GradScaler``, write the usual three lines::

        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()

    The scaler hands its step to this optimizer, which reduces the gradients first, so unscaling,
    the overflow check, the skip and the next scale are the same on every replica (see
    :mod:`unison.optim.amp`); ``clip_grad_norm`` then clips the unscaled gradients.

    Args:
        optimizer: the ``torch.optim.Optimizer`` to wrap (it keeps its own state).
        named_parameters: ``model.named_parameters()``; names appear in error messages.
        compression: ``Compression.none`` (default), ``.fp16`` or ``.bf16`` on the wire.
        backward_passes_per_step: communicate only on every k-th backward; the k local
            gradients are accumulated first (with ``Average``, divided by k too).
        op: ``Average`` (divide the sum by the replicas), ``Sum``, or ``Adasum``.
        gradient_predivide_factor: Horovod's: with ``Average``, gradients are divided by this
            factor before the sum and by ``size / factor`` after it (same average, a different
            range on the wire).
        bucket_cap_mb: the size of one gradient bucket.
        nonfinite: ``"raise"`` (an error naming ranks and parameter), ``"skip"`` (every
            replica skips that step; counted in ``skipped_steps``) or ``"keep"`` (leave the
            reduced non-finite values for a ``GradScaler`` to handle).
        clip_grad_norm: clip the global norm of the *reduced* gradients (same on every replica).
        shard_optimizer_state: ZeRO-1, each replica keeps the optimizer state of its shard only.
        shard_gradients: ZeRO-2 (implies ``shard_optimizer_state``): gradients are
            reduce-scattered per bucket, so each replica keeps only the reduced gradients of
            the parameters it owns and steps only those; the updated values are then shared.
            Op ``Average`` or ``Sum``, no compression.
        error_feedback: with compression, add what the cast lost back into the next step.
        check_consistency: before the first reduction, check that every replica holds the same
            parameters and trains with the same optimizer class and hyper-parameters (and the
            loss and global batch noted by :mod:`unison.optim.agreement`): an error naming the
            first that differs; ``False`` skips the check.
        recheck_every: repeat that check before the reduction of every ``recheck_every``-th step
            (parameter values drift apart only through a bug or a replica that stepped alone;
            one check costs about one small all-gather); ``0``: only before the first.
        gradient_transform: called with the parameters after synchronisation, before the step
            (the Keras front end clips here).
        communicator: the replicas to synchronise with; default: the job this process joined.
        hooks: ``False`` registers no per-parameter gradient hooks: no bucket starts during
            ``backward()`` and backward passes are not counted (a step that follows every
            backward pass it owns, like ``fit``'s on one replica, saves their cost).
        gradients: ``"reduce"`` (default) SUM/Average-reduces them; ``"reduced"``: something
            else reduced them already (FSDP2's reduce-scatter during backward), so
            ``synchronize()`` only shares the non-finite verdict (one flag, every replica).

    Given a Keras optimizer instead (Horovod's ``hvd.DistributedOptimizer(keras_opt)``), the
    constructor returns the Keras-side wrapper (``unison.horovod.keras_optimizer``), which
    drives this class from ``fit``.

    Contract: every replica calls ``backward()`` ``backward_passes_per_step`` times and then
    ``step()``; all of them see identical reduced gradients and take the same decisions.
    """

    def __new__(cls, optimizer: Any = None, *args: Any, **kwargs: Any) -> Any:
        # Horovod's keras API spells it the same: hvd.DistributedOptimizer(keras_optimizer)
        if optimizer is not None and not isinstance(optimizer, torch.optim.Optimizer):
            for factory in _FOREIGN:
                wrapped = factory(optimizer, *args, **kwargs)
                if wrapped is not None:
                    return wrapped
        return super().__new__(cls)

    # torch.amp.GradScaler hands its step to this optimizer (scaled_step): unscale, overflow
    # check and skip then act on the reduced gradients, identically on every replica.
    _step_supports_amp_scaling = True

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        named_parameters: Iterable[tuple[str, torch.nn.Parameter]] | None = None,
        compression: Compressor = Compression.none,
        backward_passes_per_step: int = 1,
        op: ReduceOp | str = Average,
        gradient_predivide_factor: float = 1.0,
        bucket_cap_mb: float = 25.0,
        nonfinite: str = "raise",
        clip_grad_norm: float | None = None,
        shard_optimizer_state: bool = False,
        shard_gradients: bool = False,
        error_feedback: bool = False,
        gradient_transform: Callable[[list[torch.nn.Parameter]], None] | None = None,
        communicator: Communicator | None = None,
        num_groups: int = 0,
        groups: Any = None,
        sparse_as_dense: bool = False,
        check_consistency: bool = True,
        recheck_every: int = 1000,
        hooks: bool = True,
        gradients: str = "reduce",
    ) -> None:
        if isinstance(optimizer, DistributedOptimizer):
            raise ValueError(
                "The optimizer is already a DistributedOptimizer; wrap the torch optimizer "
                "once. Received: DistributedOptimizer(DistributedOptimizer(...))"
            )
        if not isinstance(optimizer, torch.optim.Optimizer):
            raise TypeError(
                "DistributedOptimizer wraps a torch.optim.Optimizer. Received: "
                f"{type(optimizer).__name__}. Example: DistributedOptimizer(torch.optim.Adam("
                "model.parameters()), named_parameters=model.named_parameters())"
            )
        op = ReduceOp.parse(op, ("AVERAGE", "SUM", "ADASUM"), "unison.Average, unison.Sum or unison.Adasum")
        if (
            isinstance(backward_passes_per_step, bool)
            or not isinstance(backward_passes_per_step, int)
            or backward_passes_per_step < 1
        ):
            raise ValueError(
                "backward_passes_per_step must be an integer >= 1. "
                f"Received: backward_passes_per_step={backward_passes_per_step!r}"
            )
        if (
            isinstance(gradient_predivide_factor, bool)
            or not isinstance(gradient_predivide_factor, (int, float))
            or gradient_predivide_factor <= 0
        ):
            raise ValueError(
                "gradient_predivide_factor must be a number > 0. "
                f"Received: gradient_predivide_factor={gradient_predivide_factor!r}"
            )
        if gradient_predivide_factor != 1.0 and op is not Average:
            raise ValueError(
                "gradient_predivide_factor is only supported with op=unison.Average (as in "
                f"Horovod). Received: op={op}, gradient_predivide_factor={gradient_predivide_factor}"
            )
        if bucket_cap_mb <= 0:
            raise ValueError(f"bucket_cap_mb must be > 0. Received: bucket_cap_mb={bucket_cap_mb}")
        if nonfinite not in _NONFINITE:
            raise ValueError(
                f"nonfinite must be one of {format_choices(_NONFINITE)}. Received: nonfinite={nonfinite!r}"
            )
        if clip_grad_norm is not None and clip_grad_norm <= 0:
            raise ValueError(f"clip_grad_norm must be > 0. Received: clip_grad_norm={clip_grad_norm}")
        if not isinstance(shard_gradients, bool):
            raise ValueError(f"shard_gradients must be True or False. Received: shard_gradients={shard_gradients!r}")
        if shard_gradients and (op is Adasum or _check_compression(compression).compresses or error_feedback):
            raise ValueError(
                "shard_gradients=True (ZeRO-2) reduce-scatters plain gradients: it supports op=unison.Average "
                f"or unison.Sum without compression or error_feedback. Received: op={op}, "
                f"compression={compression!r}, error_feedback={error_feedback}. Drop one of them."
            )
        if isinstance(recheck_every, bool) or not isinstance(recheck_every, int) or recheck_every < 0:
            raise ValueError(f"recheck_every must be an integer >= 0. Received: recheck_every={recheck_every!r}")
        if gradients not in ("reduce", "reduced"):
            raise ValueError(f"gradients must be 'reduce' or 'reduced'. Received: gradients={gradients!r}")
        self._wrap(optimizer)
        _WRAPPERS[id(optimizer)] = self
        self.reduces = gradients == "reduce"
        self.op = op
        self.gradient_predivide_factor = float(gradient_predivide_factor)
        self.compression = _check_compression(compression)
        self.backward_passes_per_step = backward_passes_per_step
        self.nonfinite = nonfinite
        self.clip_grad_norm = clip_grad_norm
        self.error_feedback = error_feedback
        self.gradient_transform = gradient_transform
        self.comm = communicator if communicator is not None else (joined() or LocalCommunicator())
        self._named = _check_named_parameters(named_parameters, optimizer)
        self._names = {id(p): n for n, p in self._named}
        self._trainable = [p for _, p in self._named if p.requires_grad]
        self._bucket_cap = int(bucket_cap_mb * 1024 * 1024)
        self._buckets = plan_buckets(self._trainable, self._bucket_cap) if self.reduces else []
        self._bucket_of: dict[int, Bucket] = {id(p): b for b in self._buckets for p in b.params}
        self._passes: dict[int, int] = {}
        self._next_launch = 0
        self._skip = False
        self.in_step = False  # step() is stepping the wrapped optimizer (strategy.run's hook stays out)
        # A fused torch Adam/AdamW: its kernel called straight when step() would do just that.
        self._direct = DirectAdam.of(optimizer)
        self._scaler_active = False
        self._synchronized = False
        # Horovod's Keras API broadcasts the weights only after the first step (a callback), so
        # its wrapper turns the check of identical starting weights off.
        self._check_consistency = bool(check_consistency)
        self._checked = False
        self.recheck_every = recheck_every
        self.consistency_checks = 0  # how many times the replicas compared (tests, reports)
        self.steps = 0
        self.skipped_steps = 0
        # compute vs collective wait per step (unison.debug.straggler_report); the timeline's
        # phases when UNISON_TIMELINE is on
        self.timings = active_timings()
        self._timeline = self.comm.timeline
        self._first_grad = 0.0
        self._step_end = 0.0
        self._waited = 0.0  # seconds blocked in this step's collectives so far
        self.zero2 = GradientShards(self._buckets, self.comm) if shard_gradients and self.comm.is_distributed else None
        self.sharded = (
            ShardedState(optimizer, self.comm, owners=self.zero2.owner if self.zero2 else None)
            if (shard_optimizer_state or shard_gradients) and self.comm.is_distributed
            else None
        )
        # (torch leaves Tensor.register_post_accumulate_grad_hook unannotated)
        self._watch = hooks and self.reduces
        self._hooks = (
            [p.register_post_accumulate_grad_hook(self._on_grad) for p in self._trainable]  # type: ignore[no-untyped-call]
            if self._watch
            else []
        )

    # --- the wrapped optimizer's state, gathered when sharded ---------------------------------
    def state_dict(self) -> dict[str, Any]:
        """The wrapped optimizer's state; with ``shard_optimizer_state``, gathered from every shard.

        Sharded, this is a collective: every replica must call it (a checkpoint does).
        """
        state = self.optimizer.state_dict()
        if self.sharded is None:
            return state
        merged: dict[Any, Any] = {}
        for rank in range(self.comm.world_size):
            part = self.comm.broadcast_object(
                state["state"] if rank == self.comm.rank else None, src=rank, name=f"optimizer_state_from_rank{rank}"
            )
            merged.update(part)
        state["state"] = dict(sorted(merged.items()))
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a full state; with ``shard_optimizer_state`` each replica keeps its shard only."""
        self.optimizer.load_state_dict(state_dict)
        if self.sharded is not None:
            for p in list(self.optimizer.state):
                if id(p) not in self.sharded._owned_ids:
                    del self.optimizer.state[p]

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group to the wrapped optimizer; its parameters are synchronised from now on."""
        if getattr(self, "zero2", None) is not None:
            raise ValueError(
                "add_param_group is not supported with shard_gradients=True (the shards are planned "
                "once). Put every parameter group in the torch optimizer before wrapping it."
            )
        self.optimizer.add_param_group(param_group)
        for bucket in self._buckets:
            if bucket.pending is not None:
                self._wait(bucket.pending)
            bucket.reset()
        known = {id(p) for _, p in self._named}
        start = len(self._named)
        new = [p for p in self.optimizer.param_groups[-1]["params"] if id(p) not in known]
        self._named += [(f"param.{start + i}", p) for i, p in enumerate(new)]
        self._names.update({id(p): n for n, p in self._named})
        added = [p for p in new if p.requires_grad]
        self._trainable += added
        self._buckets = plan_buckets(self._trainable, self._bucket_cap)
        self._bucket_of = {id(p): b for b in self._buckets for p in b.params}
        if self._watch:
            self._hooks += [p.register_post_accumulate_grad_hook(self._on_grad) for p in added]
        self._next_launch = 0
        self._passes.clear()
        self._checked = False  # every replica must add the same group: checked before the next reduction

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear gradients and start a fresh accumulation (in-flight buckets are drained)."""
        for bucket in self._buckets:
            if bucket.pending is not None:
                self._wait(bucket.pending)  # keep every replica's collectives matched
            bucket.reset()
        if self.zero2 is not None:
            self.zero2.discard()
        self._next_launch = 0
        self._passes.clear()
        self.optimizer.zero_grad(set_to_none=set_to_none)

    # --- overlap: buckets launch while backward runs -------------------------------------------
    @property
    def _overlaps(self) -> bool:
        return self.comm.is_distributed and self.op is not Adasum

    def _on_grad(self, param: torch.Tensor) -> None:
        key = id(param)
        self._synchronized = False
        if self._timeline is not None and self._first_grad == 0.0:
            self._first_grad = time.perf_counter()
        count = self._passes.get(key, 0) + 1
        if count > self.backward_passes_per_step:
            raise RuntimeError(
                f"Gradient of '{self._names[key]}' was computed {count} times before step(), but "
                f"backward_passes_per_step={self.backward_passes_per_step}. Call step() after "
                "every backward_passes_per_step backward passes, or raise that setting."
            )
        self._passes[key] = count
        if count == self.backward_passes_per_step and self._overlaps:
            bucket = self._bucket_of[key]
            bucket.ready += 1
            if bucket.ready == len(bucket.params):
                self._launch_in_order()

    @property
    def _prescale(self) -> float:
        # Horovod's gradient_predivide_factor chooses the pre-division; otherwise compressed
        # buckets are pre-divided by the replicas so an fp16 sum stays in range.
        if self.gradient_predivide_factor != 1.0:
            return 1.0 / self.gradient_predivide_factor
        return 1.0 / self.comm.world_size if self.compression.compresses else 1.0

    def _check_once(self) -> None:
        # Before the first gradient leaves: replicas with different models would otherwise
        # exchange buffers of different sizes (a crash deep in gloo) or silently diverge.
        if not self._checked:
            self._checked = True
            if self._check_consistency:
                check_consistency(self._named, self.comm, optimizer=self.optimizer)
                self.consistency_checks += 1

    def _launch(self, bucket: Bucket) -> None:
        self._check_once()
        if self.zero2 is not None:
            self.zero2.launch(bucket, self._prescale)
            return
        if bucket.buffer is None:
            # one host's replicas: the bucket lives in the shared-memory segment (no copy into
            # it and out of it in the all-reduce); elsewhere, or when it is full, in private memory
            shared = getattr(self.comm, "shared_memory", None)
            bucket.allocate = shared.empty if shared is not None else None
        buf = bucket.pack(self.compression, self._prescale, self.error_feedback)
        bucket.pending = self.comm.all_reduce_async(buf, name=f"gradients.bucket{bucket.index}")

    def _launch_in_order(self) -> None:
        # Launch every consecutive complete bucket: a later bucket waits for earlier ones so
        # every replica issues the same collectives in the same order.
        while self._next_launch < len(self._buckets):
            bucket = self._buckets[self._next_launch]
            if bucket.ready < len(bucket.params):
                break
            self._launch(bucket)
            self._next_launch += 1

    # --- synchronisation -----------------------------------------------------------------------
    def synchronize(self) -> None:
        """Finish the gradient reduction now (launch what is left, wait, check, write back)."""
        if self._synchronized:
            return  # already synchronised since the last backward (e.g. by a manual call)
        self._synchronized = True
        self.steps += 1
        timeline = self._timeline
        started = time.perf_counter() if timeline is not None else 0.0
        if not self.reduces:
            self._share_verdict()
        elif not self.comm.is_distributed:
            self._synchronize_local()
        else:
            self._check_once()
            self._reduce_buckets()
        self.timings.step_done(self._waited)
        self._waited = 0.0
        if self.recheck_every and self.steps % self.recheck_every == 0:
            self._checked = False  # every replica counts the same steps: all check again next step
        if timeline is not None:
            self._record_phases(started)
        if not self._scaler_active:  # with a GradScaler, clipping waits until it has unscaled
            self._clip()
        self._passes.clear()

    def _record_phases(self, sync_started: float) -> None:
        """Forward (from the previous step's end, data included) and backward (from the first
        gradient) of this step, and its synchronisation, on the timeline's ``steps`` track."""
        tl, first = self._timeline, self._first_grad or sync_started
        assert tl is not None
        if self._step_end:
            tl.add("steps", "forward", self._step_end, first, {"step": self.steps})
        tl.add("steps", "backward", first, sync_started, {"step": self.steps})
        tl.add("steps", "synchronize", sync_started, time.perf_counter(), {"step": self.steps})
        self._first_grad = 0.0

    @property
    def collective_wait_s(self) -> float:
        """Seconds this process spent blocked in gradient collectives (every DistributedOptimizer's)."""
        return self.timings.total_wait_s

    def _clip(self) -> None:
        if self.clip_grad_norm is None:
            return
        if self.zero2 is not None:
            self.zero2.clip_(self._trainable, self.clip_grad_norm)
            return
        grads = [p for p in self._trainable if p.grad is not None]
        if grads:
            torch.nn.utils.clip_grad_norm_(grads, self.clip_grad_norm)

    @property
    def _policy(self) -> str:
        # under a GradScaler the scaler decides about non-finite (reduced) gradients
        return "keep" if self._scaler_active else self.nonfinite

    def _synchronize_local(self) -> None:
        if self._policy != "keep" and not all_finite(self._trainable):
            self._nonfinite_verdict(first_nonfinite(self._named))
            return
        if self.op is Average and self.backward_passes_per_step > 1:
            for p in self._trainable:
                if p.grad is not None:
                    p.grad.mul_(1.0 / self.backward_passes_per_step)

    def _share_verdict(self) -> None:
        """Gradients reduced elsewhere (FSDP2): one non-finite flag for every replica, nothing else."""
        if self._policy == "keep":
            return
        finite = all_finite(self._trainable)
        if self.comm.is_distributed:
            flag = torch.tensor([0.0 if finite else 1.0], device=self._trainable[0].device if self._trainable else None)
            finite = float(self.comm.all_reduce(flag, name="gradients.nonfinite_verdict").item()) == 0.0
        if not finite:
            local = next((n for n, p in self._named if p.grad is not None and not all_finite([p])), None)
            self._nonfinite_verdict(local)

    def _wait(self, pending: Any) -> None:
        """Wait for a bucket's collective, counting the time blocked (the straggler report's wait)."""
        since = time.perf_counter()
        self.comm.wait(pending)
        self._waited += time.perf_counter() - since

    def _reduce_buckets(self) -> None:
        """Reduce every bucket (the time blocked in its collectives adds to ``_waited``)."""
        if self.op is Adasum:
            for bucket in self._buckets:
                buf = bucket.pack(self.compression, 1.0, self.error_feedback)
                parts = self.comm.all_gather(buf.reshape(1, -1), name=f"adasum.bucket{bucket.index}")
                bucket.combine_adasum([part.reshape(-1) for part in parts])
        else:
            while self._next_launch < len(self._buckets):
                self._launch(self._buckets[self._next_launch])
                self._next_launch += 1
            for bucket in self._buckets:
                if bucket.pending is not None:  # (ZeRO-2 may have waited for it already)
                    self._wait(bucket.pending)
        self._next_launch = 0
        if self.zero2 is not None:
            bad = self.zero2.collect(self._buckets)
        else:
            bad = any([bucket.read_flags()[1] for bucket in self._buckets])  # read every bucket's flags
        if bad and self._policy != "keep":
            for bucket in self._buckets:
                bucket.reset()
            local = first_nonfinite(self._named)
            if self.zero2 is not None:
                local = self.zero2.local_nonfinite(self._buckets, self._names)
                self.zero2.discard()
            self._nonfinite_verdict(local)
            return
        scale = 1.0
        if self.op is Average:
            scale = 1.0 / (self.comm.world_size * self.backward_passes_per_step)
        elif self.op is Sum and self.compression.compresses:
            scale = float(self.comm.world_size)
        scale /= self._prescale if self.op is Average else 1.0
        if self.zero2 is not None:
            self.zero2.write_back(self._buckets, scale, poison=bad)
        for bucket in self._buckets:
            if self.zero2 is None:
                bucket.write_back(scale)
            bucket.reset()

    def _nonfinite_verdict(self, local: str | None) -> None:
        """Every replica got the same flag: raise everywhere, or skip the step everywhere."""
        if self.nonfinite == "raise":
            raise nonfinite_error(local, self.comm, self.steps)
        self.skipped_steps += 1
        for p in self._trainable:
            p.grad = None  # torch optimizers leave parameters without gradients untouched

    @contextlib.contextmanager
    def skip_synchronize(self) -> Iterator[None]:
        """Inside this block ``step()`` does not synchronise (call ``synchronize()`` first)."""
        self._skip = True
        try:
            yield
        finally:
            self._skip = False

    def step(self, closure: Any = None, grad_scaler: Any = None, gradient_transform: Any = None) -> Any:
        """Synchronise gradients (unless inside ``skip_synchronize``) and step the optimizer.

        This is the one caller of :meth:`synchronize` on every update path (``fit``'s step on any
        number of replicas, Keras's ``apply_gradients``, a torch loop's ``step()``).
        ``grad_scaler`` is passed by ``torch.amp.GradScaler.step(opt)``, not by users: the scaler
        then unscales and checks the reduced gradients, the same on every replica.
        ``gradient_transform`` replaces the one given at construction for this step (Keras's
        ``apply_gradients`` clips with the optimizer that applies them).
        """
        follow_load()  # a step boundary: idle threads spin only while the host is quiet (core/contention.py)
        if grad_scaler is not None:
            return scaled_step(self, grad_scaler, closure)
        if self._optimizer_step_pre_hooks:
            self._run_step_hooks(self._optimizer_step_pre_hooks, closure)
        if not self._skip:
            self.synchronize()
        transform = gradient_transform if gradient_transform is not None else self.gradient_transform
        if transform is not None:
            transform(self._trainable)
        timeline = self._timeline  # the optimizer's phase is timed for the timeline only
        since = time.perf_counter() if timeline is not None else 0.0
        self.in_step = True
        try:
            if self.sharded is None:
                direct = closure is None and self._direct is not None and self._direct.step()
                result = None if direct else self.optimizer.step(closure)
            else:
                with self.sharded.owned_only():
                    result = self.optimizer.step(closure)
                self.sharded.share_updates()
        finally:
            self.in_step = False
            self.mark_stepped()
            if timeline is not None:
                self._step_end = time.perf_counter()
                timeline.add("steps", "optimizer", since, self._step_end, {"step": self.steps})
        if self._optimizer_step_post_hooks:
            self._run_step_hooks(self._optimizer_step_post_hooks, closure)
        return result

    def mark_stepped(self) -> None:
        """Record that the optimizer stepped: the next step needs a fresh synchronisation."""
        self._synchronized = False

    def optimizer_state_bytes(self) -> int:
        """Bytes of optimizer state this replica holds (smaller with ``shard_optimizer_state``)."""
        if self.sharded is not None:
            return self.sharded.state_bytes()
        return sum(
            v.numel() * v.element_size()
            for s in self.optimizer.state.values()
            for v in s.values()
            if isinstance(v, torch.Tensor)
        )

    def discard_step(self) -> None:
        """Forget this step's gradient collectives without waiting for them (the group re-formed).

        After an elastic job re-forms (``hvd.elastic.run``), the buckets launched in the old
        group will never complete; the next backward pass starts a fresh step in the new group.
        """
        if self.sharded is not None or self.zero2 is not None:
            raise ElasticMembershipError(
                "The elastic job re-formed at a new size, but this DistributedOptimizer shards its state "
                "(shard_optimizer_state / shard_gradients) over the old size. Elastic jobs support "
                "replicated optimizer state only: drop shard_optimizer_state/shard_gradients."
            )
        for bucket in self._buckets:
            bucket.reset()
        if self.zero2 is not None:
            self.zero2.discard()
        self._next_launch = 0
        self._passes.clear()
        self._synchronized = False
        self._waited = 0.0
        self._checked = False  # a new member checks its model against the others: so must everyone

    def remove_hooks(self) -> None:
        """Detach from the parameters (the wrapped optimizer keeps working alone)."""
        for h in self._hooks:
            h.remove()
        self._hooks = []
        if _WRAPPERS.get(id(self.optimizer)) is self:
            del _WRAPPERS[id(self.optimizer)]

    @staticmethod
    def of(optimizer: torch.optim.Optimizer) -> DistributedOptimizer | None:
        """The ``DistributedOptimizer`` that synchronises ``optimizer``, if one wraps it.

        A strategy asks this (through ``Strategy.gradient_synchronizer``) before it synchronises
        a torch optimizer's step itself, so a step is never synchronised twice.
        """
        wrapper = _WRAPPERS.get(id(optimizer))
        return wrapper if wrapper is not None and wrapper.optimizer is optimizer else None
