"""All-reduce through shared memory when every replica runs on this host (CPU tensors).

gloo moves even a few bytes between two processes of one host through loopback TCP: 1.1-2 ms
per all-reduce on the development VM, whatever the size up to 400 kB, which is more than a
whole training step of the seed MLP. Replicas of one host can instead meet in one
shared-memory segment: each copies its tensor into its own slot, each sums one slice of every
slot (in rank order, so every replica gets bit-identical sums), and each copies the summed
slices back: about 60 us for the seed MLP's 400 kB gradient (``benchmarks/optimizer.py``).

Synchronisation needs no atomics: each rank owns one counter (on its own cache line) that only
it writes, and waits until every counter reached the generation it needs. x86-64 makes a core's
stores visible to the others in program order, so a raised counter means its rank's data is
there; on other architectures unison keeps gloo. A wait yields the core (replicas may share
cores) and, while it lasts, watches the time limit and whether the ranks it waits for still
exist, so a dead or stuck replica becomes an error (which the communicator names), not a hang.

The segment is set up once per process group by :func:`attach`, a vote through the rendezvous
store: rank 0 creates the file, every rank maps it and checks a nonce (a rank on another host
cannot), and only if every rank succeeded do they all use it; otherwise all keep gloo. The
file is unlinked as soon as every rank mapped it, so a job killed later leaves nothing in
``/dev/shm`` (a rank 0 killed in the moment between creating and unlinking it leaves one file,
which the next job's rank 0 removes). ``UNISON_SHM_ALLREDUCE=0`` turns the path off (gloo for everything).

Example:
    >>> import torch
    >>> SharedMemoryReducer.supports(torch.ones(3)), SharedMemoryReducer.supports(torch.ones(3) > 0)
    (True, False)
"""

from __future__ import annotations

import datetime
import mmap
import os
import platform
import re
import secrets
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from unison.errors import SharedMemoryError, UnisonError

_LINE = 64  # one counter per cache line: ranks spinning on their own lines do not share one
_SLOT_BYTES = 4 << 20  # per rank; larger tensors go through in pieces of this size
_YIELD_S = 0.002  # wait this long yielding the core before sleeping between checks
_SLEEP_S = 0.0002
_CHECK_EVERY_S = 0.5  # while sleeping: how often to check the time limit and the peers
_SUPPORTED = (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.int64)
_ATTACHES = [0]  # how many process groups this process joined (keys of each vote are separate)


class SharedMemoryReducer:
    """The all-reduce of one host's replicas through one mapped shared-memory segment.

    Args:
        buffer: the mapped segment (header, then ``world_size + 1`` slots of ``slot_bytes``).
        rank: this replica's rank.
        world_size: number of replicas (all on this host).
        slot_bytes: bytes per slot.
        pids: every rank's process id (to tell a dead replica from a slow one).
        timeout_s: seconds a collective may wait for the others.
    """

    def __init__(
        self, buffer: mmap.mmap, rank: int, world_size: int, slot_bytes: int, pids: list[int], timeout_s: float
    ) -> None:
        self.rank = rank
        self.world_size = world_size
        self.slot_bytes = slot_bytes
        self.pids = pids
        self.timeout_s = timeout_s
        self._buffer = buffer
        # counters live in cache lines 1..world_size (line 0 holds the nonce)
        self._flags = np.ndarray((world_size,), np.int64, buffer=buffer, offset=_LINE, strides=(_LINE,))
        data_offset = _header_bytes(world_size)
        self._data = torch.frombuffer(
            buffer, dtype=torch.uint8, offset=data_offset, count=(world_size + 1) * slot_bytes
        )
        self._generation = 0
        self._views: dict[tuple[torch.dtype, int], tuple[list[torch.Tensor], torch.Tensor, int, int]] = {}
        self._broken: BaseException | None = None
        # Peers in another PID namespace (containers sharing /dev/shm) are invisible here:
        # then only the timeout can tell a dead replica from a slow one.
        self._watch_pids = all(_alive(pid) for pid in pids)

    @staticmethod
    def supports(tensor: torch.Tensor) -> bool:
        """Whether ``tensor`` can go through shared memory (else the caller uses gloo).

        The answer depends only on the tensor's device and dtype (not its strides, which may
        differ between replicas), so every replica issuing the same collective decides the same way.
        """
        return tensor.device.type == "cpu" and tensor.dtype in _SUPPORTED

    def all_reduce(self, tensor: torch.Tensor, op: str = "sum") -> None:
        """Reduce ``tensor`` in place over every replica (``op``: ``sum``, ``max`` or ``min``).

        Raises:
            SharedMemoryError: a replica exited or did not arrive within ``timeout_s``; every
                later call raises it again (the replicas no longer agree on where they are).
        """
        if self._broken is not None:
            raise self._broken
        if op not in _COMBINE:
            raise ValueError(f"Unknown reduction op {op!r}; expected one of {sorted(_COMBINE)}.")
        # Like gloo, reduce tensors that require grad (parameters) in place, outside autograd;
        # a non-contiguous tensor goes through a contiguous copy.
        with torch.no_grad():
            work = tensor if tensor.is_contiguous() else tensor.contiguous()
            flat = work.view(-1)
            per_piece = self.slot_bytes // tensor.element_size()
            try:
                for start in range(0, flat.numel(), per_piece):
                    self._reduce_piece(flat[start : start + per_piece], op)
            except BaseException as exc:
                # Interrupted between two barriers (Ctrl-C, a dead peer): this rank no longer
                # agrees with the others on the generation, so later calls must not proceed.
                if self._broken is None:
                    self._broken = (
                        exc
                        if isinstance(exc, SharedMemoryError)
                        else SharedMemoryError(
                            f"an earlier shared-memory all-reduce on this rank was interrupted "
                            f"({type(exc).__name__}); the replicas are out of step",
                            [],
                        )
                    )
                raise
            if work is not tensor:
                tensor.copy_(work)

    def _piece_views(self, dtype: torch.dtype, n: int) -> tuple[list[torch.Tensor], torch.Tensor, int, int]:
        # Buckets have the same sizes every step: build the slot views once per (dtype, size).
        key = (dtype, n)
        views = self._views.get(key)
        if views is None:
            nbytes = n * torch.empty((), dtype=dtype).element_size()
            slots = [
                self._data[r * self.slot_bytes : r * self.slot_bytes + nbytes].view(dtype)
                for r in range(self.world_size + 1)
            ]
            lo, hi = n * self.rank // self.world_size, n * (self.rank + 1) // self.world_size
            if len(self._views) > 256:
                self._views.clear()
            views = self._views[key] = (slots[:-1], slots[-1], lo, hi)
        return views

    def _reduce_piece(self, piece: torch.Tensor, op: str) -> None:
        slots, result, lo, hi = self._piece_views(piece.dtype, piece.numel())
        self._generation += 1
        generation = self._generation
        slots[self.rank].copy_(piece)
        self._arrive(2 * generation - 1)
        if hi > lo:  # this rank's slice of the result, summed in rank order on every rank
            _combine(op, [s[lo:hi] for s in slots], result[lo:hi])
        self._arrive(2 * generation)  # every slice is done: read the whole result
        piece.copy_(result)

    def _arrive(self, target: int) -> None:
        flags = self._flags
        flags[self.rank] = target
        if flags.min() >= target:
            return
        start = time.monotonic()
        next_check = start + _CHECK_EVERY_S
        while flags.min() < target:
            now = time.monotonic()
            if now - start < _YIELD_S:
                os.sched_yield()  # a peer may be waiting for this core
                continue
            time.sleep(_SLEEP_S)
            if now >= next_check:
                next_check = now + _CHECK_EVERY_S
                self._check_peers(target, now - start)

    def _check_peers(self, target: int, waited: float) -> None:
        missing = [r for r in range(self.world_size) if self._flags[r] < target]
        dead = [r for r in missing if self._watch_pids and not _alive(self.pids[r])]
        if dead:
            self._broken = SharedMemoryError(
                f"rank(s) {dead} (pid {[self.pids[r] for r in dead]}) exited without arriving "
                "(shared-memory all-reduce on this host)",
                missing,
            )
        elif waited > self.timeout_s:
            self._broken = SharedMemoryError(
                f"timed out after {self.timeout_s:.0f}s waiting for ranks {missing} "
                "(shared-memory all-reduce on this host)",
                missing,
            )
        if self._broken is not None:
            raise self._broken


# torch's overloaded builtins have no single callable type in its stubs; each is called as fn(a, b, out=a)
_COMBINE: dict[str, Callable[..., torch.Tensor]] = {"sum": torch.add, "max": torch.maximum, "min": torch.minimum}


def _combine(op: str, parts: list[torch.Tensor], out: torch.Tensor) -> None:
    fn = _COMBINE[op]
    out.copy_(parts[0])
    for part in parts[1:]:
        fn(out, part, out=out)  # rank order: the same bits on every rank


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
        return state not in (b"Z", b"X")  # an exited child its parent has not reaped yet is a zombie
    except (OSError, IndexError):
        return False


def _header_bytes(world_size: int) -> int:
    return _LINE * (1 + world_size)


def _segment_bytes(world_size: int, slot_bytes: int) -> int:
    return _header_bytes(world_size) + (world_size + 1) * slot_bytes


def _wanted(device: torch.device, backend: str) -> str:
    """Why this rank will not use shared memory, or ``""`` if it will."""
    if os.environ.get("UNISON_SHM_ALLREDUCE", "1").strip() == "0":
        return "UNISON_SHM_ALLREDUCE=0"
    if backend != "gloo" or device.type != "cpu":
        return f"backend {backend} on {device.type}"
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return f"architecture {platform.machine()} (store order not guaranteed)"
    if not os.path.isdir("/dev/shm"):
        return "no /dev/shm"
    return ""


def _sweep_stale_segments() -> None:
    """Remove segments of killed jobs (their creator died between creating and unlinking)."""
    try:
        names = os.listdir("/dev/shm")
    except OSError:
        return
    for name in names:
        parts = name.split("-")
        if len(parts) == 3 and parts[0] == "unison" and parts[1].isdigit() and not _alive(int(parts[1])):
            try:
                os.unlink(os.path.join("/dev/shm", name))
            except OSError:
                pass


def _create_segment(world_size: int, slot_bytes: int) -> tuple[str, bytes]:
    _sweep_stale_segments()
    path = f"/dev/shm/unison-{os.getpid()}-{secrets.token_hex(6)}"
    nonce = secrets.token_bytes(16)
    size = _segment_bytes(world_size, slot_bytes)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        # Reserve every page now: a full /dev/shm fails here (and unison keeps gloo) instead of
        # killing a replica with SIGBUS in the middle of training.
        os.posix_fallocate(fd, 0, size)
        os.pwrite(fd, nonce, 0)
    except OSError:
        os.close(fd)
        os.unlink(path)
        raise
    os.close(fd)
    return path, nonce


_SEGMENT_NAME = re.compile(r"^/dev/shm/unison-\d+-[0-9a-f]{12}$")


def _map(path: str, nonce: bytes, world_size: int, slot_bytes: int) -> mmap.mmap:
    """Map the segment rank 0 announced, after checking that it can only be rank 0's.

    The name must be one unison makes (so a value in the store cannot aim this rank at any
    other file), the file must belong to this user and be private (another user cannot plant
    one), and it must start with the nonce announced with it.
    """
    if not _SEGMENT_NAME.match(path):
        raise OSError(f"{path!r} is not a unison shared-memory segment name")
    size = _segment_bytes(world_size, slot_bytes)
    fd = os.open(path, os.O_RDWR | getattr(os, "O_NOFOLLOW", 0))
    try:
        info = os.fstat(fd)
        if info.st_uid != os.getuid() or info.st_mode & 0o077:
            raise OSError(
                f"{path} belongs to uid {info.st_uid} with mode {info.st_mode & 0o777:o}, not privately to this user"
            )
        if info.st_size != size:
            raise OSError(f"{path} has {info.st_size} bytes, expected {size}")
        buffer = mmap.mmap(fd, size)
    finally:
        os.close(fd)
    if buffer[: len(nonce)] != nonce:
        raise OSError(f"{path} is not this job's segment (another host's /dev/shm?)")
    return buffer


def _wait(
    store: Any, keys: list[str], timeout: datetime.timedelta, rank: int, world_size: int, owners: list[int]
) -> None:
    """``store.wait`` whose timeout names the ranks (``owners[i]`` sets ``keys[i]``) that never came."""
    try:
        store.wait(keys, timeout)
    except RuntimeError as exc:  # a replica died or hangs right after joining the process group
        missing = sorted({owner for owner, key in zip(owners, keys) if not store.check([key])})
        raise UnisonError(
            f"Rank {rank} of {world_size} waited {timeout.total_seconds():.0f}s for ranks {missing} "
            "to set up the shared-memory all-reduce after joining the process group; they never "
            "did (crashed or stuck right after start-up; their own errors say why). "
            "UNISON_SHM_ALLREDUCE=0 skips this step."
        ) from exc


def attach(
    store: Any,
    rank: int,
    world_size: int,
    device: torch.device,
    backend: str,
    timeout_s: float,
    slot_bytes: int = _SLOT_BYTES,
) -> SharedMemoryReducer | None:
    """Set up the shared-memory all-reduce of one host's replicas; every rank must call it.

    Returns the reducer if every rank could map the segment, else ``None`` on every rank (they
    keep gloo). ``store`` is the process group's rendezvous store.
    """
    if slot_bytes % _LINE:
        raise ValueError(f"slot_bytes must be a multiple of {_LINE}. Received: {slot_bytes}")
    _ATTACHES[0] += 1
    prefix = f"unison/shm/{_ATTACHES[0]}/"
    reason = _wanted(device, backend)
    path, nonce = "", b""
    if rank == 0:
        if not reason:
            try:
                path, nonce = _create_segment(world_size, slot_bytes)
            except OSError as exc:
                reason = f"could not create the segment: {exc}"
        store.set(prefix + "path", path)
        store.set(prefix + "nonce", nonce.hex())
    buffer = None
    try:
        timeout = datetime.timedelta(seconds=timeout_s)
        if rank != 0:
            _wait(store, [prefix + "path", prefix + "nonce"], timeout, rank, world_size, [0])
            path = store.get(prefix + "path").decode()
            nonce = bytes.fromhex(store.get(prefix + "nonce").decode())
        if not reason and path:
            try:
                buffer = _map(path, nonce, world_size, slot_bytes)
            except (OSError, ValueError):
                buffer = None
        store.set(prefix + f"ok/{rank}", f"{os.getpid()}" if buffer is not None else "")
        keys = [prefix + f"ok/{r}" for r in range(world_size)]
        _wait(store, keys, timeout, rank, world_size, list(range(world_size)))
        votes = [store.get(k).decode() for k in keys]
    finally:
        if rank == 0 and path:
            os.unlink(path)  # every rank mapped it or gave up: the mappings outlive the name
    if buffer is None or not all(votes):
        return None
    return SharedMemoryReducer(buffer, rank, world_size, slot_bytes, [int(v) for v in votes], timeout_s)
