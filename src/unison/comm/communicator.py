"""Collectives with named errors over one torch.distributed process group.

The rest of unison talks to other replicas only through a :class:`Communicator`. It knows
nothing of models: it moves tensors. ``LocalCommunicator`` is the one-replica case (every
collective is the identity), so callers never branch on the world size.

Example:
    >>> import torch
    >>> comm = LocalCommunicator()
    >>> comm.all_reduce(torch.ones(2)).tolist()
    [1.0, 1.0]
"""

from __future__ import annotations

import atexit
import datetime
import gc
import os
import socket
import time
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, cast

import torch
import torch.distributed as dist

from unison.cluster.placement import TORCHRUN_SOURCE, ProcessPlacement
from unison.comm import shm as _shm
from unison.comm import signed_objects
from unison.comm.store import AuthenticatedStore, private_file_store
from unison.debug import attach as _attach_debug
from unison.debug import detach as _detach_debug
from unison.debug import recorder as _recorder
from unison.debug.flight import FlightRecorder, Slot
from unison.debug.timeline import Timeline, start_timeline
from unison.errors import CollectiveMismatchError, CollectiveTimeoutError, UnisonError

_REDUCE_OPS = {"sum": dist.ReduceOp.SUM, "max": dist.ReduceOp.MAX, "min": dist.ReduceOp.MIN}


class Communicator:
    """Collectives of this replica's process group; every call takes part on every replica.

    Args:
        rank: this replica's global rank.
        world_size: number of replicas.
        device: where this replica's tensors live (collective buffers go there).
        timeout_s: seconds a collective may take before it fails with a named error.
        shared_memory: when every replica runs on this host, the shared-memory all-reduce
            (:mod:`unison.comm.shm`) that replaces gloo's for CPU tensors; ``None``: gloo only.

    The contract: every replica issues the same collectives in the same order (the sequence
    number in error messages is that order), so a mismatch shows up as a named failure.
    """

    def __init__(
        self,
        rank: int,
        world_size: int,
        device: torch.device,
        timeout_s: float,
        store: Any = None,
        local_rank: int | None = None,
        local_size: int | None = None,
        shared_memory: _shm.SharedMemoryReducer | None = None,
    ) -> None:
        self.rank = rank
        self.world_size = world_size
        self.device = device
        self.timeout_s = timeout_s
        self.store = store
        self.local_rank = rank if local_rank is None else local_rank
        self.local_size = world_size if local_size is None else local_size
        self._seq = 0
        self._sum_options = dist.AllreduceOptions()  # for the gradient path's all-reduces
        self._sum_options.reduceOp = dist.ReduceOp(dist.ReduceOp.SUM)
        self.bytes_reduced = 0  # bytes this replica handed to all-reduce (for measurements)
        self.shared_memory = shared_memory
        # what unison.debug sees: the process's flight recorder, the hang watchdog (set by
        # connect), the timeline when UNISON_TIMELINE asks for one
        self.recorder = _recorder()
        self.explainer: Any = None
        self.timeline: Timeline | None = None
        # Agree on each gloo/NCCL collective's op, shape and dtype before it runs (connect sets
        # it from UNISON_CHECK_COLLECTIVES): gloo aborts the receiving process on a size mismatch.
        self.check_signatures = False
        # the MAC key of broadcast_object/all_gather_object (connect derives it from the job's
        # secret; None: no secret, torch's unsigned object collectives) and their count so far
        self.object_key: bytes | None = None
        self.object_calls = 0
        self._max_options = dist.AllreduceOptions()
        self._max_options.reduceOp = dist.ReduceOp(dist.ReduceOp.MAX)
        # under an elastic agent (unison.comm.elastic): a lost worker is the agent's to report,
        # and the survivors re-form at once, so a failure does not wait to learn who is missing
        self.elastic = False
        self._group_sockets: dict[int, str] = {}  # fd -> socket inode of the group reform() joined

    @property
    def collective_count(self) -> int:
        """How many collectives this replica has issued (every replica issues the same ones)."""
        return self._seq

    # The failure path: a torch RuntimeError from deep inside gloo/NCCL becomes an error that
    # names the operation, its sequence number, this rank and the ranks that never arrived.
    def _run(
        self,
        op_name: str,
        fn: Callable[[], Any],
        tensor: torch.Tensor | None = None,
        asynchronous: bool = False,
        kind: str = "",
        agree: bool = True,
    ) -> Any:
        """``kind`` (``all_reduce/sum``, ``broadcast/src=0``) is recorded, and checked across replicas
        first when signatures are checked; ``agree=False`` for the shared-memory all-reduce, which
        compares op, dtype and size itself at its first barrier."""
        self._seq += 1
        slot = self._begin(op_name, tensor, blocking=not asynchronous, kind=kind)
        try:
            if kind and agree and self.check_signatures:
                self._agree(op_name, kind, tensor)
            out = fn()
        except CollectiveMismatchError:
            raise  # already named, with the job's report
        except RuntimeError as exc:
            raise self._named_error(op_name, self._seq, exc) from exc
        if not asynchronous and slot.seq == self._seq:  # (the recorder may be off)
            self._end(slot, blocking=True)
        return out

    def _begin(self, op_name: str, tensor: torch.Tensor | None, blocking: bool = True, kind: str = "") -> Slot:
        """Record collective ``self._seq``; a blocking one raises the job's report after an incident.

        (An asynchronous one raises it when waited for, where its own failure would surface.)
        """
        explainer = self.explainer
        if blocking and explainer is not None and explainer.incident:
            raise self._incident_error(op_name, self._seq)
        return self.recorder.begin(self._seq, op_name, tensor, kind)

    def _agree(self, op_name: str, kind: str, tensor: torch.Tensor | None) -> None:
        """Check that every replica issues the same collective now, or raise on every replica.

        One 16-byte MAX all-reduce of (signature, -signature): every replica learns whether all
        signatures were equal (max == min) before the data moves. ``kind`` names the operation
        and its arguments that must agree (``all_reduce/sum``, ``broadcast/src=0``); the shape
        and dtype come from ``tensor``. torch's ``TORCH_DISTRIBUTED_DEBUG=DETAIL`` does the same
        with an all-gather; here it is on by default for gloo, whose receiving process aborts
        (``std::terminate``) when the sizes differ.
        """
        text = kind
        if tensor is not None:
            text += f" {str(tensor.dtype).removeprefix('torch.')}{list(tensor.shape)}"
        sig = zlib.crc32(text.encode()) + 1  # > 0, so -sig never equals a signature
        shared = self.shared_memory
        if shared is not None:
            # Every replica on this host: agree through the segment (microseconds, not a gloo round
            # trip). A replica all-reducing there meanwhile (a different op, dtype or size) makes
            # the segment's own check fail on every replica at once, instead of each side waiting
            # in a different transport until the timeout.
            pair = torch.tensor([sig, -sig], dtype=torch.int64)
            try:
                shared.all_reduce(pair, "max")
            except _shm.SharedMemoryError as exc:
                if exc.missing:
                    raise  # a replica is gone or late: the ordinary failure path names it
                self._mismatch(op_name, text, "an all-reduce through shared memory")
        else:
            pair = torch.tensor([sig, -sig], dtype=torch.int64, device=self.device)
            group = cast(dist.ProcessGroup, dist.group.WORLD)
            group.allreduce([pair], self._max_options).wait()
        if int(pair[0]) == -int(pair[1]):
            return
        self._mismatch(op_name, text, "a different operation, shape, dtype or root")

    def _mismatch(self, op_name: str, text: str, other: str) -> None:
        """Raise the named error of collectives that differ across replicas, with the job's report."""
        seq = self._seq
        report = ""
        if self.explainer is not None:  # every replica's recorder and stack, through the store
            report = "\n" + self.explainer.explain(op_name, seq, "the replicas issued different collectives")
        raise CollectiveMismatchError(
            f"Collective '{op_name}' (#{seq}) does not match across replicas on {self._where()}: this replica "
            f"issued {text}, and at least one other replica issued {other} at the same point. Every replica must issue the same collectives in the "
            f"same order with the same shapes; the report below names the replica that differs and where "
            f"each one was (a branch on the rank, or data of a different size per replica, causes this). "
            f"The check costs one 16-byte all-reduce per collective: UNISON_CHECK_COLLECTIVES=0 turns it "
            f"off.{report}"
        )

    def _incident_error(self, op_name: str, seq: int) -> CollectiveTimeoutError:
        """Another replica's collective failed: this one would only hang until the timeout."""
        report = self.explainer.report_after_incident(op_name, seq)
        return CollectiveTimeoutError(
            f"Collective '{op_name}' (#{seq}) was not started on {self._where()}: a collective of this "
            f"job already failed on another replica, so this one could never complete.\n{report}"
        )

    def _end(self, slot: Slot, blocking: bool) -> None:
        FlightRecorder.end(slot)
        tl = self.timeline
        if tl is not None:
            if blocking:
                tl.add("collectives", slot.op, slot.issued, slot.ended, {"seq": slot.seq})
            else:  # launched during backward, waited for in the step
                tl.add("collectives", f"{slot.op} queued", slot.issued, slot.waited, {"seq": slot.seq})
                tl.add("collectives", slot.op, slot.waited, slot.ended, {"seq": slot.seq})

    def _named_error(self, op_name: str, seq: int, exc: RuntimeError) -> UnisonError:
        """The one error of a failed collective: which one, where, after how long, and who is missing."""
        text = str(exc).strip()
        first = text.splitlines()[0] if text else type(exc).__name__
        lowered = first.lower()
        kind = CollectiveTimeoutError if "timeout" in lowered or "timed out" in lowered else UnisonError
        report = ""
        if self.explainer is not None:  # every replica's recorder and stack, through the store
            report = "\n" + self.explainer.explain(op_name, seq, first)
        return kind(
            f"Collective '{op_name}' (#{seq}) failed on {self._where()} after at most {self.timeout_s:.0f}s: "
            f"{first}. {self._diagnose(op_name, seq, exc)}{report}"
        )

    def _where(self) -> str:
        """This replica, in the words of a failure message."""
        return f"rank {self.rank} of {self.world_size}"

    def _diagnose(self, op_name: str, seq: int, exc: RuntimeError) -> str:
        """Who did not arrive at the failed collective (a subclass may know more, e.g. task names)."""
        if self.elastic:
            return (
                "A worker of this elastic job was lost (or its connection broke); hvd.elastic.run rolls "
                "back to the last commit and re-forms the job without it."
            )
        if isinstance(exc, _shm.SharedMemoryError):  # the counters already say who is missing
            missing = f"Ranks {exc.missing} did not arrive at this collective." if exc.missing else ""
        elif self.explainer is not None:  # the replicas' snapshots said who issued it
            gone = self.explainer.missing
            missing = f"Ranks {gone} did not arrive at this collective." if gone else "Every replica reached it."
        else:
            missing = self._ranks_not_arrived(op_name, seq)
        cause = (
            "A replica that crashed, was killed, hangs, or took a different code path (issuing "
            "other collectives) causes this; its own error says why."
        )
        return f"{missing} {cause}" if missing else cause

    def _ranks_not_arrived(self, op_name: str, seq: int) -> str:
        """Ask the rendezvous store which replicas also reached (and failed in) this collective."""
        if self.store is None or self.world_size < 2:
            return ""
        prefix = f"unison/arrived/{seq}/"
        try:
            self.store.set(f"{prefix}{self.rank}", op_name)
            deadline = time.monotonic() + min(5.0, max(1.0, self.timeout_s / 2))
            arrived = {self.rank}
            while time.monotonic() < deadline and len(arrived) < self.world_size:
                for r in range(self.world_size):
                    if r not in arrived and self.store.check([f"{prefix}{r}"]):
                        arrived.add(r)
                time.sleep(0.05)
        except Exception as exc:  # the store lives in replica 0 / the launcher: it may be gone
            return f"(The rendezvous store could not be asked which replicas arrived: {exc}.)"
        missing = sorted(set(range(self.world_size)) - arrived)
        if not missing:
            return "Every replica reached this collective."
        return f"Ranks {missing} did not arrive at this collective."

    @property
    def is_distributed(self) -> bool:
        """True when there is more than one replica."""
        return self.world_size > 1

    def all_reduce(
        self, tensor: torch.Tensor, op: str = "sum", name: str = "all_reduce", match_name: bool = False
    ) -> torch.Tensor:
        """Reduce ``tensor`` in place across replicas and return it.

        ``match_name``: the replicas must also give the same ``name`` (Horovod matches its named
        collectives by name; two different ones must not be reduced together). Checked with the
        collective's signature, when signatures are checked.
        """
        self.bytes_reduced += tensor.numel() * tensor.element_size()
        kind = f"all_reduce/{op}" + (f" name={name}" if match_name else "")
        shared = self.shared_memory
        if shared is not None and shared.supports(tensor):
            # the segment compares op, dtype and size itself; a name needs the signature check first
            self._run(name, lambda: shared.all_reduce(tensor, op), tensor, kind=kind, agree=match_name)
        else:
            self._run(name, lambda: dist.all_reduce(tensor, op=_REDUCE_OPS[op]), tensor, kind=kind)
        return tensor

    def all_reduce_async(self, tensor: torch.Tensor, name: str = "all_reduce") -> Pending:
        """Start a SUM all-reduce of ``tensor`` in place; ``wait()`` the returned handle.

        Through shared memory the reduction runs in ``wait()`` (it takes tens of microseconds
        and needs this thread, so there is nothing to overlap), so its failure surfaces there
        as it does with gloo. Handles are waited in launch order on every replica.
        """
        self.bytes_reduced += tensor.numel() * tensor.element_size()
        shared = self.shared_memory
        if shared is not None and shared.supports(tensor):
            self._seq += 1
            slot = self._begin(name, tensor, blocking=False)
            slot.kind = "all_reduce/sum"  # (the recorder's last slot when it is off: harmless)
            return Pending(_Deferred(lambda: shared.all_reduce(tensor, "sum")), self._seq, name, slot)
        # The gradient path calls this every bucket of every step: straight to the process
        # group, skipping dist.all_reduce's per-call argument checks (about 50 us on a slow CPU).
        # a Communicator exists only after init_process_group, so the world group is set
        group, options = cast(dist.ProcessGroup, dist.group.WORLD), self._sum_options
        work = self._run(
            name, lambda: group.allreduce([tensor], options), tensor, asynchronous=True, kind="all_reduce/sum"
        )
        return Pending(work, self._seq, name, self._slot_of(self._seq))

    def reduce_scatter_async(self, output: torch.Tensor, tensor: torch.Tensor, name: str = "reduce_scatter") -> Pending:
        """Start a SUM reduce-scatter: ``output`` gets this rank's 1/N slice of the summed ``tensor``.

        ``tensor`` holds ``world_size * output.numel()`` elements. SUM only: gloo's CPU
        reduce-scatter has no other operation (divide afterwards for a mean).
        """
        self.bytes_reduced += tensor.numel() * tensor.element_size()
        scatter = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor
        work = self._run(
            name,
            lambda: scatter(output, tensor, op=dist.ReduceOp.SUM, async_op=True),
            tensor,
            asynchronous=True,
            kind="reduce_scatter/sum",
        )
        return Pending(work, self._seq, name, self._slot_of(self._seq))

    def _slot_of(self, seq: int) -> Slot | None:
        slot = self.recorder.last
        return slot if slot.seq == seq else None

    def wait(self, pending: Pending) -> None:
        """Wait for an asynchronous collective, translating failures like the blocking calls."""
        slot = pending.slot
        if slot is not None and slot.seq != pending.seq:
            slot = None  # the ring wrapped while it was in flight
        if self.explainer is not None and self.explainer.incident:
            raise self._incident_error(pending.name, pending.seq)
        if slot is not None:
            FlightRecorder.waiting(slot)
        try:
            pending.work.wait()
        except RuntimeError as exc:
            raise self._named_error(pending.name, pending.seq, exc) from exc
        if slot is not None:
            self._end(slot, blocking=False)

    def broadcast(self, tensor: torch.Tensor, src: int = 0, name: str = "broadcast") -> torch.Tensor:
        """Overwrite ``tensor`` on every replica with rank ``src``'s value."""
        self._run(name, lambda: dist.broadcast(tensor, src=src), tensor, kind=f"broadcast/src={src}")
        return tensor

    def broadcast_coalesced(self, tensors: Iterable[torch.Tensor], src: int = 0, name: str = "broadcast") -> None:
        """Overwrite ``tensors`` in place on every replica with rank ``src``'s values.

        One collective per dtype: the tensors of a dtype travel as one flat buffer, so a model's
        hundreds of parameters and buffers cost a handful of broadcasts, not hundreds.

        Example:
            >>> import torch
            >>> weights = [torch.ones(2), torch.zeros(3)]
            >>> LocalCommunicator().broadcast_coalesced(weights)   # one replica: unchanged
            >>> [w.tolist() for w in weights]
            [[1.0, 1.0], [0.0, 0.0, 0.0]]
        """
        if not self.is_distributed:
            return
        by_dtype: dict[torch.dtype, list[torch.Tensor]] = {}
        for t in tensors:
            by_dtype.setdefault(t.dtype, []).append(t)
        with torch.no_grad():
            for dtype, group in by_dtype.items():
                flat = torch.cat([t.detach().reshape(-1) for t in group]).to(self.device)
                self.broadcast(flat, src=src, name=f"{name}.{dtype}")
                offset = 0
                for t in group:
                    t.copy_(flat[offset : offset + t.numel()].view_as(t))
                    offset += t.numel()

    def all_gather(self, tensor: torch.Tensor, name: str = "all_gather") -> list[torch.Tensor]:
        """Gather ``tensor`` from every replica; sizes along dim 0 may differ between replicas."""
        local_n = torch.tensor([tensor.shape[0]], dtype=torch.int64, device=self.device)
        sizes = [torch.zeros_like(local_n) for _ in range(self.world_size)]
        self._run(name + ".sizes", lambda: dist.all_gather(sizes, local_n), kind="all_gather.sizes")
        counts = [int(s.item()) for s in sizes]
        longest = max(counts)
        padded = tensor.new_zeros((longest, *tensor.shape[1:]))
        padded[: tensor.shape[0]] = tensor
        out = [torch.empty_like(padded) for _ in range(self.world_size)]
        self._run(name, lambda: dist.all_gather(out, padded.contiguous()), padded, kind="all_gather")
        return [t[:n] for t, n in zip(out, counts)]

    def broadcast_object(self, obj: Any, src: int = 0, name: str = "broadcast_object") -> Any:
        """Send a picklable object from ``src`` to every replica (small control data only).

        With the job's secret the pickle travels signed and is unpickled only if its MAC holds
        (:mod:`unison.comm.signed_objects`).
        """
        key = self.object_key
        if key is None:
            payload = [obj if self.rank == src else None]
            self._run(name, lambda: dist.broadcast_object_list(payload, src=src), kind=f"broadcast_object/src={src}")
            return payload[0]
        self.object_calls += 1
        head = signed_objects.header(name, self.object_calls, src)
        packed = signed_objects.pack(obj, key, head).to(self.device) if self.rank == src else None
        size = torch.tensor([0 if packed is None else packed.numel()], dtype=torch.int64, device=self.device)
        self.broadcast(size, src=src, name=f"{name}.size")
        if packed is None:
            packed = torch.empty(int(size.item()), dtype=torch.uint8, device=self.device)
        self.broadcast(packed, src=src, name=name)
        if self.rank == src:
            return obj  # as torch's: the sender keeps its own object
        return signed_objects.unpack(packed, key, head, name, src, self.rank)

    def all_gather_object(self, obj: Any, name: str = "all_gather_object") -> list[Any]:
        """Gather one picklable object from every replica (small control data only; signed as
        :meth:`broadcast_object`'s when the job has a secret)."""
        key = self.object_key
        if key is None:
            out: list[Any] = [None] * self.world_size
            self._run(name, lambda: dist.all_gather_object(out, obj), kind="all_gather_object")
            return out
        self.object_calls += 1
        mine = signed_objects.pack(obj, key, signed_objects.header(name, self.object_calls, self.rank))
        parts = self.all_gather(mine.to(self.device), name=name)
        return [
            signed_objects.unpack(part, key, signed_objects.header(name, self.object_calls, r), name, r, self.rank)
            for r, part in enumerate(parts)
        ]

    def barrier(self, name: str = "barrier") -> None:
        """Block until every replica arrives."""
        self._run(name, lambda: dist.barrier(), kind="barrier")

    def leave_group(self) -> None:
        """Abandon this process group without a collective: its peers blocked in it fail at once.

        The elastic path (:mod:`unison.comm.elastic`) calls it as soon as a collective failed or
        the membership changed, before waiting for the others. gloo does not close its
        connections when a group is destroyed while one of its operations failed (a survivor
        still waiting in the old group for this replica would wait for the whole timeout), so
        the sockets the group opened (:meth:`reform` noted them) are shut down first: every
        peer's pending read or write on them fails now.
        """
        self.shared_memory = None
        _detach_debug()
        self.explainer = None
        _shut_down_sockets(self._group_sockets)
        self._group_sockets = {}
        if dist.is_initialized():
            dist.destroy_process_group()
        gc.collect()  # free the old group now (a traceback may still hold it)

    def reform(self, store: Any, rank: int, world_size: int, local: tuple[int, int] | None = None) -> None:
        """Join a new process group in place: another rank, size and store (after :meth:`leave_group`).

        The old group, if still joined, is left first. Everything that holds this object (a
        ``DistributedOptimizer``, ``unison.rank()``) sees the new group. The shared-memory
        all-reduce and the hang explainer stay off (gloo fails at once when a peer's
        connection closes). ``local`` is ``(local rank, local size)`` among the workers of this
        host (default: every worker on this host).

        Example::

            comm.leave_group()
            comm.reform(dist.PrefixStore("generation/2", store), rank=1, world_size=2)
        """
        self.leave_group()
        self.object_calls = 0  # a new group: its object collectives are counted from the start
        backend = "nccl" if self.device.type == "cuda" else "gloo"
        before = _socket_fds()
        try:
            dist.init_process_group(
                backend,
                store=store,
                rank=rank,
                world_size=world_size,
                timeout=datetime.timedelta(seconds=self.timeout_s),
            )
        except RuntimeError as exc:
            raise UnisonError(
                f"Rank {rank} of {world_size} could not form the new process group within {self.timeout_s:.0f}s: "
                f"{str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__}. A member "
                "died while the group re-formed."
            ) from exc
        # the group's own connections (gloo connects every pair while the group forms)
        self._group_sockets = {fd: inode for fd, inode in _socket_fds().items() if before.get(fd) != inode}
        self.rank, self.world_size = rank, world_size
        self.local_rank, self.local_size = local if local is not None else (rank, world_size)
        self.store = store

    def shutdown(self) -> None:
        """Leave the process group (idempotent)."""
        self.shared_memory = None  # its views go, and with them the mapping
        _detach_debug()  # the hang watchdog watches this group's store: it stops with the group
        if dist.is_initialized():
            # gloo's threads free each finished collective's tensors, which takes the GIL; the
            # group's destructor joins those threads while holding it. Let a thread still
            # freeing the last collective finish first (a DDP program torn down right after
            # its last all-reduce deadlocked or aborted at exit about one run in twelve here).
            time.sleep(0.01)
            dist.destroy_process_group()


class _Deferred:
    """The work handle of a collective that runs when it is waited for (shared memory)."""

    def __init__(self, run: Callable[[], None]) -> None:
        self._run: Callable[[], None] | None = run

    def wait(self) -> bool:
        run, self._run = self._run, None
        if run is not None:
            run()
        return True


@dataclass
class Pending:
    """An asynchronous collective in flight: its work handle, sequence number and name."""

    work: Any
    seq: int
    name: str
    slot: Slot | None = None


class LocalCommunicator(Communicator):
    """The one-replica communicator: every collective returns its input unchanged."""

    def __init__(self, device: torch.device | None = None) -> None:
        super().__init__(0, 1, device or torch.device("cpu"), timeout_s=0.0)

    def all_reduce(
        self, tensor: torch.Tensor, op: str = "sum", name: str = "all_reduce", match_name: bool = False
    ) -> torch.Tensor:
        return tensor

    def all_reduce_async(self, tensor: torch.Tensor, name: str = "all_reduce") -> Pending:
        raise UnisonError("all_reduce_async needs more than one replica; check is_distributed first.")

    def broadcast(self, tensor: torch.Tensor, src: int = 0, name: str = "broadcast") -> torch.Tensor:
        return tensor

    def all_gather(self, tensor: torch.Tensor, name: str = "all_gather") -> list[torch.Tensor]:
        return [tensor]

    def broadcast_object(self, obj: Any, src: int = 0, name: str = "broadcast_object") -> Any:
        return obj

    def all_gather_object(self, obj: Any, name: str = "all_gather_object") -> list[Any]:
        return [obj]

    def barrier(self, name: str = "barrier") -> None:
        return None

    def shutdown(self) -> None:
        return None


def connect(
    placement: ProcessPlacement,
    backend: str,
    device: torch.device,
    timeout_s: float,
    store: dist.Store | None = None,
    secret: bytes | None = None,
) -> Communicator:
    """Join (or create) the default process group described by ``placement``.

    Args:
        placement: this process's rank, world size and rendezvous address.
        backend: ``"gloo"`` (CPU) or ``"nccl"`` (CUDA).
        device: this replica's device.
        timeout_s: collective timeout in seconds.
        store: an already-created rendezvous store (the launcher's own process passes the store
            it serves); ``None`` opens the job's private ``FileStore`` (``placement.store_dir``)
            or connects to the ``TCPStore`` at ``placement.master_addr:master_port``.
        secret: the job's secret; when given, every value this replica reads from the store
            (gloo's addresses, the shared-memory segment) must carry its HMAC
            (:class:`unison.comm.store.AuthenticatedStore`).

    Returns:
        A :class:`Communicator` for this replica.
    """
    previous = _previous_join(placement, device)
    if previous is not None:
        # A second strategy in the same process (TF's guides make several in a row): the process
        # group and the shared-memory vote exist once per process, so the first join serves it.
        # Joining again would wait on store keys the first vote already consumed (a hang).
        previous.timeout_s = timeout_s
        return previous
    timeout = datetime.timedelta(seconds=timeout_s)
    if dist.is_initialized() and store is None:
        store = _default_store()
    elif store is not None and secret is not None:
        store = AuthenticatedStore(store, secret)
    if not dist.is_initialized():
        _import_torch_compiler_first()
        if placement.source == TORCHRUN_SOURCE and store is None:
            # torchrun's agent owns this store (every interface, no authentication): only
            # unison's own values in it (the shared-memory vote) can carry the job's MAC.
            attempt_store = _agent_store_for_this_attempt(placement, timeout)
            if attempt_store is not None:
                dist.init_process_group(
                    backend, store=attempt_store, rank=placement.rank, world_size=placement.world_size, timeout=timeout
                )
            else:
                dist.init_process_group(
                    backend,
                    init_method="env://",
                    rank=placement.rank,
                    world_size=placement.world_size,
                    timeout=timeout,
                )
            store = _default_store()
            if secret is not None:
                store = AuthenticatedStore(store, secret)
        else:
            if store is None:
                store = _open_store(placement, timeout_s)
                if secret is not None:
                    store = AuthenticatedStore(store, secret)
            dist.init_process_group(
                backend,
                store=store,
                rank=placement.rank,
                world_size=placement.world_size,
                timeout=timeout,
            )
    shared_memory = None
    if store is not None and placement.world_size > 1 and placement.local_world_size == placement.world_size:
        # Every replica on this host: they vote on a shared-memory all-reduce (all or none).
        shared_memory = _shm.attach(store, placement.rank, placement.world_size, device, backend, timeout_s)
    comm = Communicator(
        placement.rank,
        placement.world_size,
        device,
        timeout_s,
        store=store,
        local_rank=placement.local_rank,
        local_size=placement.local_world_size,
        shared_memory=shared_memory,
    )
    comm.check_signatures = check_collectives(backend)
    comm.object_key = signed_objects.object_key(secret) if secret is not None else None
    comm.explainer = _attach_debug(store, placement.rank, placement.world_size, timeout_s)
    comm.timeline = start_timeline(placement.rank, placement.world_size)
    if not _JOINED:
        # Leave the process group before the interpreter tears down: gloo's threads destroyed
        # during static destruction abort the process ("terminate called without an active
        # exception"), seen about one run in six under torchrun.
        atexit.register(comm.shutdown)
    _JOINED.append(comm)
    return comm


ENV_COLLECTIVE_TIMEOUT = "UNISON_COLLECTIVE_TIMEOUT"


def collective_timeout(timeout_s: float) -> float:
    """``timeout_s``, unless ``UNISON_COLLECTIVE_TIMEOUT`` (seconds > 0) overrides it for the whole job.

    The variable shortens (or lengthens) every collective's timeout without touching the
    program, e.g. to see a hang explained in seconds instead of the default 300.

    Raises:
        ValueError: the variable is not a number > 0.
    """
    raw = os.environ.get(ENV_COLLECTIVE_TIMEOUT, "").strip()
    if not raw:
        return timeout_s
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value > 0 or value == float("inf"):
        raise ValueError(
            f"{ENV_COLLECTIVE_TIMEOUT} must be a number of seconds > 0. Received: {ENV_COLLECTIVE_TIMEOUT}={raw!r}. "
            f"Fix: e.g. {ENV_COLLECTIVE_TIMEOUT}=30, or unset it to use the strategy's timeout_seconds."
        )
    return value


ENV_CHECK_COLLECTIVES = "UNISON_CHECK_COLLECTIVES"


def check_collectives(backend: str) -> bool:
    """Whether replicas agree on each collective's op, shape and dtype before it runs.

    ``UNISON_CHECK_COLLECTIVES``: ``auto`` (the default) checks on gloo, where a size mismatch
    aborts the receiving process instead of raising; ``1`` checks on every backend (NCCL
    included, where a mismatch hangs or reduces garbage); ``0`` never checks.

    Example:
        >>> check_collectives("gloo")
        True

    Raises:
        ValueError: the variable holds something else.
    """
    raw = os.environ.get(ENV_CHECK_COLLECTIVES, "auto").strip().lower()
    if raw in ("", "auto"):
        return backend == "gloo"
    if raw in ("1", "true", "on", "yes"):
        return True
    if raw in ("0", "false", "off", "no"):
        return False
    raise ValueError(
        f"{ENV_CHECK_COLLECTIVES} must be auto, 1 or 0. Received: {ENV_CHECK_COLLECTIVES}={raw!r}. "
        f"Fix: unset it (auto: check on gloo), or set 1 (always) or 0 (never)."
    )


def _previous_join(placement: ProcessPlacement, device: torch.device) -> Communicator | None:
    """This process's earlier communicator for the same rank, world and device, if it still holds."""
    if not dist.is_initialized():
        return None
    for comm in reversed(_JOINED):
        if (comm.rank, comm.world_size, comm.device) == (placement.rank, placement.world_size, device):
            return comm
    return None


def _agent_store_for_this_attempt(placement: ProcessPlacement, timeout: datetime.timedelta) -> dist.Store | None:
    """torchrun's agent store, with this restart's keys apart from the previous attempts'.

    The agent keeps one store across restarts (``--max-restarts``), and torch's ``env://``
    does not separate the attempts' keys: a restarted replica could read the address gloo
    published in the failed attempt (``connectFullMesh ... Connection refused``) before the
    new one overwrote it. ``None`` when the agent does not serve the store (torch's ``env://``
    then applies).
    """
    if os.environ.get("TORCHELASTIC_USE_AGENT_STORE") != "True":
        return None
    attempt = os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")
    client = dist.TCPStore(
        placement.master_addr, placement.master_port, placement.world_size, is_master=False, timeout=timeout
    )
    return dist.PrefixStore(f"/unison/attempt_{attempt}", client)


def _open_store(placement: ProcessPlacement, timeout_s: float) -> dist.Store:
    """A replica's connection to its job's store: the private ``FileStore`` or a ``TCPStore``."""
    if placement.store_dir:
        return private_file_store(placement.store_dir, placement.world_size, timeout_s)
    try:
        return dist.TCPStore(
            placement.master_addr,
            placement.master_port,
            placement.world_size,
            is_master=False,
            timeout=datetime.timedelta(seconds=timeout_s),
        )
    except RuntimeError as exc:
        raise UnisonError(
            f"Replica {placement.rank} could not reach the rendezvous store at "
            f"{placement.master_addr}:{placement.master_port} within {timeout_s:.0f}s: "
            f"{str(exc).splitlines()[0]}. The process that owns it (replica 0 or the "
            f"test harness) has probably exited."
        ) from exc


def _import_torch_compiler_first() -> None:
    """Import ``torch._dynamo`` before the process group exists.

    The first torch optimizer imports it anyway (a few seconds, once per process). Imported
    after ``init_process_group``, it keeps references to the default group, so
    ``destroy_process_group`` at exit no longer stops gloo's threads; one of them may then
    release a tensor during interpreter shutdown and abort the replica with "terminate called
    without an active exception" (seen in about one run in twenty, after training finished).
    """
    import torch._dynamo  # noqa: F401


# The process group is process-wide in torch; this records the communicator that joined it so
# Horovod-style calls (unison.rank(), DistributedOptimizer without a communicator) find it.
_JOINED: list[Communicator] = []


def _socket_fds() -> dict[int, str]:
    """This process's socket descriptors and their inodes (Linux's /proc; empty elsewhere)."""
    found: dict[int, str] = {}
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        return found
    for name in names:
        try:
            target = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            continue
        if target.startswith("socket:"):
            found[int(name)] = target
    return found


def _shut_down_sockets(sockets: dict[int, str]) -> None:
    """``shutdown(SHUT_RDWR)`` each connection that still is the one recorded (same fd, same inode)."""
    current = _socket_fds()
    for fd, inode in sockets.items():
        if current.get(fd) != inode:
            continue  # closed (and perhaps reused) since: not ours any more
        try:
            sock = socket.socket(fileno=os.dup(fd))
        except OSError:
            continue
        try:
            # a connection only: gloo's listener thread aborts the process if its socket is shut
            if not sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN):
                sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass  # already shut: nothing waits on it
        finally:
            sock.close()  # closes the duplicate only; gloo closes its own descriptor


def register_joined(comm: Communicator) -> None:
    """Record ``comm`` as this process's job (a join made outside :func:`connect`, e.g. elastic)."""
    if not _JOINED:
        atexit.register(comm.shutdown)
    _JOINED.append(comm)


def joined() -> Communicator | None:
    """The communicator of the job this process joined (by a strategy or ``unison.init()``)."""
    if _JOINED and dist.is_initialized():
        return _JOINED[-1]
    return None


def _default_store() -> Any:
    try:
        from torch.distributed.distributed_c10d import _get_default_store

        return _get_default_store()
    except Exception:  # private API: diagnostics only, never required
        return None
