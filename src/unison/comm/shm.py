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

import ctypes
import datetime
import mmap
import os
import platform
import re
import secrets
import time
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import torch

from unison.errors import SharedMemoryError, UnisonError

_LINE = 64  # one counter per cache line: ranks spinning on their own lines do not share one
_SLOT_BYTES = 2 << 20  # per rank: two regions of 1 MiB; larger tensors go through in 1 MiB chunks
_SMALL_BYTES = 16 << 10  # up to this size every rank sums the whole tensor itself (one barrier, not two)
_SPINS = 200  # yields of the core before a wait blocks in the kernel (~0.1-1 ms)
_CHECK_EVERY_S = 0.5  # while blocked: how often to check the time limit and the peers
_SUPPORTED = (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.int64)
_ATTACHES = [0]  # how many process groups this process joined (keys of each vote are separate)


class SharedMemoryReducer:
    """The all-reduce of one host's replicas through one mapped shared-memory segment.

    Each slot (``world_size`` input slots, then one result slot) holds two regions of
    ``slot_bytes // 2``; a tensor goes through in chunks of one region, chunk ``k`` (counted
    over the reducer's life) in region ``k % 2``, so copying chunk ``k + 1`` in overlaps the
    peers still reducing chunk ``k``. Every rank owns one phase counter: chunk ``k`` is copied
    in at phase ``2k + 1`` and this rank's slice of it summed at phase ``2k + 2``.

    Args:
        buffer: the mapped segment (header, then ``world_size + 1`` slots of ``slot_bytes``).
        rank: this replica's rank.
        world_size: number of replicas (all on this host).
        slot_bytes: bytes per slot (a multiple of 64).
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
        self._flag_addr = [self._flags[r:].ctypes.data for r in range(world_size)]
        # Next to each counter, on its cache line: what the rank is reducing (op, dtype, size) for
        # the two regions in turn. Compared at the first barrier of every all-reduce, so replicas
        # that issued different all-reduces fail at once instead of summing unrelated bytes.
        self._sigs = np.ndarray((world_size, 2), np.int64, buffer=buffer, offset=_LINE + 8, strides=(_LINE, 8))
        self._peers = [r for r in range(world_size) if r != rank]
        data_offset = _header_bytes(world_size)
        self._data = torch.frombuffer(
            buffer, dtype=torch.uint8, offset=data_offset, count=(world_size + 1) * slot_bytes
        )
        self._region_bytes = slot_bytes // 2
        self._small_bytes = min(_SMALL_BYTES, self._region_bytes)
        self._chunk = 0  # chunks reduced so far (every rank counts the same)
        self._views: dict[tuple[torch.dtype, int, int], _ChunkViews] = {}
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

        Every replica gets the same bits: each element is combined in rank order
        (``x0 + x1 + x2 ...``), whichever rank computes it.

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
            if flat.numel() == 0:
                return  # every replica holds the same (empty) shape: nothing to meet for
            try:
                if flat.numel() * flat.element_size() <= self._small_bytes:
                    self._reduce_small(flat, op)
                else:
                    self._reduce_chunked(flat, op)
            except BaseException as exc:
                # Interrupted between two barriers (Ctrl-C, a dead peer): this rank no longer
                # agrees with the others on the phase, so later calls must not proceed.
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

    def _views_for(self, dtype: torch.dtype, n: int, region: int) -> _ChunkViews:
        # Buckets have the same sizes every step: build the region views once per (dtype, size).
        key = (dtype, n, region)
        views = self._views.get(key)
        if views is None:
            size = torch.empty((), dtype=dtype).element_size()
            at = [s * self.slot_bytes + region * self._region_bytes for s in range(self.world_size + 1)]
            slots = [self._data[a : a + n * size].view(dtype) for a in at]
            # Slice bounds on cache lines: two ranks writing their slices of the result never
            # share a line.
            per_line = _LINE // size
            bounds = [
                min(n, (n * r // self.world_size + per_line - 1) // per_line * per_line) for r in range(self.world_size)
            ]
            bounds.append(n)
            slices = [(bounds[r], bounds[r + 1]) for r in range(self.world_size)]
            if len(self._views) > 512:
                self._views.clear()
            views = self._views[key] = _ChunkViews(slots[:-1], slots[-1], slices)
        return views

    def _reduce_small(self, flat: torch.Tensor, op: str) -> None:
        # One barrier: every rank combines the whole (small) tensor itself from every slot,
        # straight into its own tensor. The next chunk uses the other region, and the one
        # after it waits (at its own barrier) for every rank to have left this one.
        k = self._chunk
        self._chunk = k + 1
        views = self._views_for(flat.dtype, flat.numel(), k % 2)
        views.inputs[self.rank].copy_(flat)
        sig = self._sigs[self.rank, k % 2] = _signature(flat, op)
        self._arrive_and_wait(2 * k + 1)
        self._check_same(sig, k % 2)
        _combine(op, views.inputs, flat)
        self._arrive(2 * k + 2)

    def _reduce_chunked(self, flat: torch.Tensor, op: str) -> None:
        # reduce-scatter + all-gather, pipelined by one chunk: copy chunk c in, then copy the
        # previous chunk's result out (its slices were summed meanwhile), then sum this rank's
        # slice of chunk c.
        per_chunk = self._region_bytes // flat.element_size()
        total = flat.numel()
        previous: tuple[torch.Tensor, torch.Tensor, int] | None = None
        sig = _signature(flat, op)
        for start in range(0, total, per_chunk):
            piece = flat[start : start + per_chunk]
            k = self._chunk
            self._chunk = k + 1
            views = self._views_for(flat.dtype, piece.numel(), k % 2)
            views.inputs[self.rank].copy_(piece)
            self._sigs[self.rank, k % 2] = sig
            self._arrive(2 * k + 1)
            if previous is not None:
                out, result, done = previous
                self._wait(done)
                out.copy_(result)
            self._wait(2 * k + 1)
            if start == 0:
                self._check_same(sig, k % 2)
            lo, hi = views.slices[self.rank]
            if hi > lo:
                _combine(op, [s[lo:hi] for s in views.inputs], views.result[lo:hi])
            self._arrive(2 * k + 2)
            previous = (piece, views.result, 2 * k + 2)
        if previous is not None:
            out, result, done = previous
            self._wait(done)
            out.copy_(result)

    def _check_same(self, sig: int, region: int) -> None:
        """After the first barrier of an all-reduce: every rank reduces the same op, dtype and size."""
        sigs = self._sigs[:, region]
        if (sigs != sig).any():
            described = "; ".join(f"rank {r}: {_describe_signature(int(s))}" for r, s in enumerate(sigs))
            self._broken = SharedMemoryError(
                f"the replicas issued different all-reduces ({described}); every replica must reduce "
                "the same shape and dtype with the same op at the same point",
                [],
            )
            raise self._broken

    def _arrive(self, phase: int) -> None:
        self._flags[self.rank] = phase
        # Wake peers blocked on this counter (a futex wake with no waiter costs ~1 us).
        _futex(self._flag_addr[self.rank], _FUTEX_WAKE, _WAKE_ALL)

    def _arrive_and_wait(self, phase: int) -> None:
        self._arrive(phase)
        self._wait(phase)

    def _wait(self, phase: int) -> None:
        """Until every rank's counter reached ``phase``: spin yielding the core, then block in
        the kernel on the missing rank's counter (woken by its ``_arrive``), checking the time
        limit and the peers' liveness every ``_CHECK_EVERY_S``."""
        flags = self._flags
        peers = self._peers
        if all(flags[r] >= phase for r in peers):
            return
        start = time.monotonic()
        spins = 0
        next_check = start + _CHECK_EVERY_S
        while True:
            missing = next((r for r in peers if flags[r] < phase), None)
            if missing is None:
                return
            spins += 1
            if spins < _SPINS:
                os.sched_yield()  # a peer may be waiting for this core
                continue
            now = time.monotonic()
            if now >= next_check:
                next_check = now + _CHECK_EVERY_S
                self._check_peers(phase, now - start)
            value = int(flags[missing])
            if value < phase:
                # Returns when the counter changes (or at once if it already did), or at the timeout.
                _futex(self._flag_addr[missing], _FUTEX_WAIT, value & 0xFFFFFFFF, _timespec(next_check - now))

    def _check_peers(self, phase: int, waited: float) -> None:
        missing = [r for r in range(self.world_size) if self._flags[r] < phase]
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


_DTYPES = list(_SUPPORTED)
_OPS = ["sum", "max", "min"]


def _signature(flat: torch.Tensor, op: str) -> int:
    """(elements, dtype, op) of an all-reduce as one int64 (what the ranks compare)."""
    return (flat.numel() << 8) | (_DTYPES.index(flat.dtype) << 2) | _OPS.index(op)


def _describe_signature(sig: int) -> str:
    dtype = str(_DTYPES[(sig >> 2) & 0x3F]).replace("torch.", "")
    return f"{sig >> 8} x {dtype} ({_OPS[sig & 3]})"


class _ChunkViews(NamedTuple):
    inputs: list[torch.Tensor]  # every rank's input region for this chunk
    result: torch.Tensor  # the result region
    slices: list[tuple[int, int]]  # [lo, hi) each rank sums


# torch's overloaded builtins have no single callable type in its stubs; each is called as fn(a, b, out=...)
_COMBINE: dict[str, Callable[..., torch.Tensor]] = {"sum": torch.add, "max": torch.maximum, "min": torch.minimum}


def _combine(op: str, parts: list[torch.Tensor], out: torch.Tensor) -> None:
    """``out = parts[0] (op) parts[1] (op) ...`` in rank order (the same bits on every rank),
    one vectorised pass per part and no copy of ``parts[0]`` first."""
    fn = _COMBINE[op]
    if len(parts) == 1:
        out.copy_(parts[0])
        return
    fn(parts[0], parts[1], out=out)
    for part in parts[2:]:
        fn(out, part, out=out)


# Blocking waits use Linux futexes on the counters themselves (shared, not private: the
# counters live in a mapping shared between processes).
_FUTEX_WAIT, _FUTEX_WAKE, _WAKE_ALL = 0, 1, 1 << 30
_SYS_FUTEX = 202  # x86-64, the only architecture this path runs on


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


def _timespec(seconds: float) -> _Timespec:
    seconds = max(seconds, 1e-4)
    return _Timespec(int(seconds), int((seconds % 1) * 1e9))


_LIBC = ctypes.CDLL(None, use_errno=True) if platform.system() == "Linux" else None


def _futex(address: int, op: int, value: int, timeout: _Timespec | None = None) -> None:
    # Its result needs no check: a wait returns on a wake, a changed counter, a signal or the
    # timeout alike, and the caller re-reads the counters in every case.
    assert _LIBC is not None  # _wanted keeps other systems on gloo
    _LIBC.syscall(
        _SYS_FUTEX, ctypes.c_void_p(address), op, value, None if timeout is None else ctypes.byref(timeout), None, 0
    )


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
    if platform.system() != "Linux" or not os.path.isdir("/dev/shm"):
        return "no /dev/shm (or no futex: not Linux)"
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
