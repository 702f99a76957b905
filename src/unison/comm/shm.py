"""All-reduce through shared memory when every replica runs on this host (CPU tensors).

gloo moves even a few bytes between two processes of one host through loopback TCP: 1.1-2 ms
per all-reduce on the development VM, whatever the size up to 400 kB, which is more than a
whole training step of the seed MLP. Replicas of one host can instead meet in one
shared-memory segment: each sums one slice of every replica's tensor (in rank order, so every
replica gets bit-identical sums), and each copies the others' summed slices into its own
tensor. A tensor allocated in the segment (:meth:`SharedMemoryReducer.empty`: the
DistributedOptimizer's gradient buckets) is read there in place and summed in place; any other
tensor first has the slices the others sum copied into this rank's staging slot.

Synchronisation needs no atomics: each rank owns three counters (on its own cache line) that
only it writes, and waits until every rank's counter reached the chunk it needs. x86-64 makes
a core's stores visible to the others in program order, so a raised counter means its rank's
data is there; on other architectures unison keeps gloo. A wait spins briefly (when every
replica has a core of its own), then yields the core, then blocks on a futex; while it lasts it
watches the time limit and whether the ranks it waits for still exist, so a dead or stuck
replica becomes an error (which the communicator names), not a hang.

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

_LINE = 64  # one header line per rank: only that rank writes it, the others read it
_SLOT_BYTES = 2 << 20  # per rank: two staging regions of 1 MiB; larger tensors go through in 1 MiB chunks
_SMALL_BYTES = 64 << 10  # up to this size every rank sums the whole tensor itself (one barrier, not three)
_ARENA_MIB = 32  # per rank, by default: tensors allocated here (gradient buckets) skip the copies in and out
# How long a wait spins on the counters before it yields the core (only when every replica has
# a core). Measured on the loaded 2-core VM: spinning 30 us cost 60 us per small all-reduce
# (the scheduler often put both replicas on one core), yielding at once 25-40 us.
_SPIN_S = 0.0
_YIELD_S = 300e-6  # then how long it yields the core before it blocks in the kernel
_SLEEP_S = 0.01  # the longest one blocking wait lasts before the counters are read again
_CHECK_EVERY_S = 0.5  # while blocked: how often to check the time limit and the peers
_SUPPORTED = (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.int64)
_ATTACHES = [0]  # how many process groups this process joined (keys of each vote are separate)
# A rank's header line, in int64 words: its three counters, then per staging region the
# signature of what it reduces and where its tensor lies, then which rank it sleeps on.
_READY, _REDUCED, _DONE, _SIG, _BASE, _SLEEPING = 0, 1, 2, 3, 5, 7


class SharedMemoryReducer:
    """The all-reduce of one host's replicas through one mapped shared-memory segment.

    The segment holds a header line per rank, then each rank's staging slot (two regions of
    ``slot_bytes // 2``), then each rank's arena (``arena_bytes``). A tensor goes through in
    chunks of one region; chunk ``k`` (counted over the reducer's life) stages in region
    ``k % 2``. Each chunk is a reduce-scatter then an all-gather:

    1. every rank makes its chunk readable to the others: a tensor in this rank's arena
       (:meth:`empty`) already is, and then its place is announced; any other tensor has the
       slices the other ranks sum copied into the staging region. Counter ``ready`` = k + 1.
    2. each rank sums its own slice of the chunk over every rank, in rank order, into its own
       arena tensor in place (or its staging region). Counter ``reduced`` = k + 1.
    3. each rank copies the other ranks' summed slices into its tensor (and, if staged, its
       own). Counter ``done`` = k + 1: its readers may reuse the memory.

    A staged tensor costs (for 2 ranks) half a copy in, the sum, and one copy out; an arena
    tensor only the sum and half a copy. Only the owner ever writes a rank's slot, arena or
    header line, so no cache line is written by two cores.

    Args:
        buffer: the mapped segment (see :func:`_segment_bytes`).
        rank: this replica's rank.
        world_size: number of replicas (all on this host).
        slot_bytes: bytes per staging slot (a multiple of 128).
        pids: every rank's process id (to tell a dead replica from a slow one).
        timeout_s: seconds a collective may wait for the others.
        arena_bytes: bytes per rank that :meth:`empty` hands out (a multiple of 64).
    """

    def __init__(
        self,
        buffer: mmap.mmap,
        rank: int,
        world_size: int,
        slot_bytes: int,
        pids: list[int],
        timeout_s: float,
        arena_bytes: int = 0,
    ) -> None:
        self.rank = rank
        self.world_size = world_size
        self.slot_bytes = slot_bytes
        self.arena_bytes = arena_bytes
        self.pids = pids
        self.timeout_s = timeout_s
        self._buffer = buffer
        header = np.ndarray((world_size, _LINE // 8), np.int64, buffer=buffer, offset=_LINE)
        self._header = header
        self._base_addr = header.ctypes.data - _LINE
        # The counters through ctypes: reading one costs ~50 ns, a numpy element ~300 ns.
        self._counters = [
            [ctypes.c_int64.from_address(header[r:].ctypes.data + 8 * c) for r in range(world_size)]
            for c in (_READY, _REDUCED, _DONE)
        ]
        self._sleeping = [
            ctypes.c_int64.from_address(header[r:].ctypes.data + 8 * _SLEEPING) for r in range(world_size)
        ]
        self._sigs = [
            [ctypes.c_int64.from_address(header[r:].ctypes.data + 8 * (_SIG + region)) for r in range(world_size)]
            for region in (0, 1)
        ]
        self._peers = [r for r in range(world_size) if r != rank]
        self._slots_at = _header_bytes(world_size)
        self._arenas_at = self._slots_at + world_size * slot_bytes
        self._data = torch.frombuffer(buffer, dtype=torch.uint8, count=len(buffer))
        self._region_bytes = slot_bytes // 2
        self._small_bytes = min(_SMALL_BYTES, self._region_bytes)
        self._arena_used = 0
        self._chunk = 0  # chunks reduced so far (every rank counts the same)
        self._views: dict[tuple[torch.dtype, int, int], _ChunkViews] = {}
        self._broken: BaseException | None = None
        # Spinning helps only when every replica has a core of its own.
        self._spin_s = _SPIN_S if world_size <= len(os.sched_getaffinity(0)) else 0.0
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

    def empty(self, numel: int, dtype: torch.dtype) -> torch.Tensor | None:
        """A tensor of ``numel`` elements in this rank's arena of the segment, or ``None`` if
        the arena is full (or the dtype unsupported): the caller allocates elsewhere.

        All-reducing a tensor that lives here (or any contiguous piece of one) skips the copy
        into the segment and the copy of this rank's summed slice out: the other replicas
        read it in place. Its contents start undefined; the memory is never handed out twice
        and lives as long as the tensor (and the mapping) does.
        """
        if dtype not in _SUPPORTED or numel < 0:
            return None
        nbytes = numel * torch.empty((), dtype=dtype).element_size()
        at = self._arena_used
        if at + nbytes > self.arena_bytes:
            return None
        self._arena_used = at + (nbytes + _LINE - 1) // _LINE * _LINE
        start = self._arenas_at + self.rank * self.arena_bytes + at
        return self._data[start : start + nbytes].view(dtype)

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
        if tensor.requires_grad:
            # Like gloo, reduce tensors that require grad (parameters) in place, outside autograd.
            with torch.no_grad():
                self._reduce(tensor, op)
        else:
            self._reduce(tensor, op)

    def _reduce(self, tensor: torch.Tensor, op: str) -> None:
        # a non-contiguous tensor goes through a contiguous copy
        work = tensor if tensor.is_contiguous() else tensor.contiguous()
        flat = work.view(-1)
        if flat.numel() == 0:
            return  # every replica holds the same (empty) shape: nothing to meet for
        try:
            nbytes = flat.numel() * flat.element_size()
            if nbytes <= self._small_bytes:
                self._reduce_small(flat, op)
            else:
                self._reduce_chunked(flat, op, nbytes)
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
            at = [self._slots_at + s * self.slot_bytes + region * self._region_bytes for s in range(self.world_size)]
            regions = [self._data[a : a + n * size].view(dtype) for a in at]
            # Slice bounds on cache lines (chunks start on one): full-line vector loads and stores.
            per_line = _LINE // size
            bounds = [
                min(n, (n * r // self.world_size + per_line - 1) // per_line * per_line) for r in range(self.world_size)
            ]
            bounds.append(n)
            slices = [(bounds[r], bounds[r + 1]) for r in range(self.world_size)]
            if len(self._views) > 512:
                self._views.clear()
            views = self._views[key] = _ChunkViews(regions, slices)
        return views

    def _arena_offset(self, flat: torch.Tensor, nbytes: int) -> int:
        """Where ``flat`` starts in the segment if it lies in this rank's arena, else -1."""
        start = self._base_addr + self._arenas_at + self.rank * self.arena_bytes
        at = flat.data_ptr()
        if start <= at and at + nbytes <= start + self.arena_bytes:
            return at - self._base_addr
        return -1

    def _reduce_small(self, flat: torch.Tensor, op: str) -> None:
        # One barrier: every rank combines the whole (small) tensor itself from every region,
        # straight into its own tensor. The next chunk uses the other region, and the one
        # after it waits until every rank has left this one.
        k = self._chunk
        self._chunk = k + 1
        region = k % 2
        views = self._views_for(flat.dtype, flat.numel(), region)
        self._wait(_DONE, k - 1)  # every rank has read this region's previous contents
        views.inputs[self.rank].copy_(flat)
        sig = self._sigs[region][self.rank].value = _signature(flat, op)
        self._arrive(_READY, k + 1)
        self._wait(_READY, k + 1)
        self._check_same(sig, region)
        _combine(op, views.inputs, flat)
        self._arrive(_REDUCED, k + 1, wake=False)
        self._arrive(_DONE, k + 1)

    def _reduce_chunked(self, flat: torch.Tensor, op: str, nbytes: int) -> None:
        per_chunk = self._region_bytes // flat.element_size()
        total = flat.numel()
        sig = _signature(flat, op)
        # An arena tensor is read in place, but its owner then waits until the others have read
        # it (one more barrier): for less than one chunk, staging it costs less than that.
        base = self._arena_offset(flat, nbytes) if nbytes >= self._region_bytes else -1
        line = self._header[self.rank]
        others: list[torch.Tensor | None] = []  # every rank's whole tensor where it lies in its arena
        rank = self.rank
        for start in range(0, total, per_chunk):
            piece = flat[start : start + per_chunk]
            n = piece.numel()
            k = self._chunk
            self._chunk = k + 1
            region = k % 2
            views = self._views_for(flat.dtype, n, region)
            lo, hi = views.slices[rank]
            self._wait(_DONE, k - 1)  # every rank has read this region's previous contents
            if base < 0:  # stage the slices the other ranks sum
                staged = views.inputs[rank]
                if lo > 0:
                    staged[:lo].copy_(piece[:lo])
                if hi < n:
                    staged[hi:].copy_(piece[hi:])
            self._sigs[region][rank].value = sig
            line[_BASE + region] = base
            self._arrive(_READY, k + 1)
            self._wait(_READY, k + 1)
            if start == 0:
                self._check_same(sig, region)
                others = [self._arena_tensor(p, region, flat.dtype, total) for p in range(self.world_size)]
            parts = [
                views.inputs[p] if t is None else t[start : start + n] for p, t in enumerate(others)
            ]  # rank p's chunk, wherever it is
            parts[rank] = piece  # this rank reads its own tensor
            if hi > lo:
                sliced = [p[lo:hi] for p in parts]
                if base >= 0:  # the sum in place, into this rank's own tensor
                    _combine(op, sliced, sliced[rank], in_place=rank, scratch=views.inputs[rank][lo:hi])
                else:
                    _combine(op, sliced, views.inputs[rank][lo:hi])
            self._arrive(_REDUCED, k + 1)
            self._wait(_REDUCED, k + 1)
            for p in range(self.world_size):
                plo, phi = views.slices[p]
                if phi > plo and (p != rank or base < 0):
                    src = views.inputs[p] if others[p] is None or p == rank else parts[p]
                    piece[plo:phi].copy_(src[plo:phi])
            self._arrive(_DONE, k + 1)
        if base >= 0:
            # the others read this tensor in place: they must be done before its owner changes it
            self._wait(_DONE, self._chunk)

    def _arena_tensor(self, p: int, region: int, dtype: torch.dtype, numel: int) -> torch.Tensor | None:
        """Rank ``p``'s whole tensor if it announced one in its arena, else ``None`` (staged)."""
        base = int(self._header[p, _BASE + region])
        if base < 0:
            return None
        size = torch.empty((), dtype=dtype).element_size()
        low = self._arenas_at + p * self.arena_bytes
        if base < low or base + numel * size > low + self.arena_bytes:
            raise self._fail(SharedMemoryError(f"rank {p} announced a tensor outside its arena (offset {base})", [p]))
        return self._data[base : base + numel * size].view(dtype)

    def _fail(self, error: SharedMemoryError) -> SharedMemoryError:
        self._broken = error
        return error

    def _check_same(self, sig: int, region: int) -> None:
        """After the first barrier of an all-reduce: every rank reduces the same op, dtype and size."""
        sigs = [s.value for s in self._sigs[region]]
        if any(s != sig for s in sigs):
            described = "; ".join(f"rank {r}: {_describe_signature(s)}" for r, s in enumerate(sigs))
            raise self._fail(
                SharedMemoryError(
                    f"the replicas issued different all-reduces ({described}); every replica must reduce "
                    "the same shape and dtype with the same op at the same point",
                    [],
                )
            )

    def _arrive(self, counter: int, value: int, wake: bool = True) -> None:
        mine = self._counters[counter][self.rank]
        mine.value = value
        # Wake the peers blocked on this rank's counters, only if one said it sleeps (a futex
        # wake costs ~1-2 us even with no waiter).
        if wake and any(self._sleeping[r].value == self.rank + 1 for r in self._peers):
            _futex(ctypes.addressof(mine), _FUTEX_WAKE, _WAKE_ALL)

    def _wait(self, counter: int, value: int) -> None:
        """Until every rank's ``counter`` reached ``value``: spin on the counters, then yield the
        core, then block in the kernel on the missing rank's counter (woken by its ``_arrive``),
        checking the time limit and the peers' liveness every ``_CHECK_EVERY_S``."""
        counters = self._counters[counter]
        peers = self._peers
        missing = next((r for r in peers if counters[r].value < value), None)
        if missing is None:
            return
        start = time.monotonic()
        spin_until = start + self._spin_s
        yield_until = start + _YIELD_S
        next_check = start + _CHECK_EVERY_S
        sleeping = self._sleeping[self.rank]
        while True:
            missing = next((r for r in peers if counters[r].value < value), None)
            if missing is None:
                return
            now = time.monotonic()
            if now < spin_until:
                continue
            if now < yield_until:
                os.sched_yield()  # a peer may be waiting for this core
                continue
            if now >= next_check:
                next_check = now + _CHECK_EVERY_S
                self._check_peers(counter, value, now - start)
            # Say which rank this one sleeps on, then block unless its counter moved meanwhile.
            # (The waker reads this flag without a fence: in the rare race where it misses
            # it, the wait ends at _SLEEP_S instead of at the wake.)
            target = counters[missing]
            sleeping.value = missing + 1
            seen = target.value
            if seen < value:
                _futex(
                    ctypes.addressof(target), _FUTEX_WAIT, seen & 0xFFFFFFFF, _timespec(min(_SLEEP_S, next_check - now))
                )
            sleeping.value = 0

    def _check_peers(self, counter: int, value: int, waited: float) -> None:
        missing = [r for r in range(self.world_size) if self._counters[counter][r].value < value]
        dead = [r for r in missing if self._watch_pids and not _alive(self.pids[r])]
        if dead:
            raise self._fail(
                SharedMemoryError(
                    f"rank(s) {dead} (pid {[self.pids[r] for r in dead]}) exited without arriving "
                    "(shared-memory all-reduce on this host)",
                    missing,
                )
            )
        if waited > self.timeout_s:
            raise self._fail(
                SharedMemoryError(
                    f"timed out after {self.timeout_s:.0f}s waiting for ranks {missing} "
                    "(shared-memory all-reduce on this host)",
                    missing,
                )
            )


_DTYPES = list(_SUPPORTED)
_OPS = ["sum", "max", "min"]


_CODES = {(dtype, op): (d << 2) | o for d, dtype in enumerate(_DTYPES) for o, op in enumerate(_OPS)}


def _signature(flat: torch.Tensor, op: str) -> int:
    """(elements, dtype, op) of an all-reduce as one int64 (what the ranks compare)."""
    return (flat.numel() << 8) | _CODES[flat.dtype, op]


def _describe_signature(sig: int) -> str:
    dtype = str(_DTYPES[(sig >> 2) & 0x3F]).replace("torch.", "")
    text = f"{sig >> 8} x {dtype} ({_OPS[sig & 3]})"
    if sig == (2 << 8) | _CODES[torch.int64, "max"]:
        # what the communicator reduces to agree on a collective other than an all-reduce
        text += ": the signature check of a broadcast, gather or barrier"
    return text


class _ChunkViews(NamedTuple):
    inputs: list[torch.Tensor]  # every rank's staging region for this chunk
    slices: list[tuple[int, int]]  # [lo, hi) each rank sums


# torch's overloaded builtins have no single callable type in its stubs; each is called as fn(a, b, out=...)
_COMBINE: dict[str, Callable[..., torch.Tensor]] = {"sum": torch.add, "max": torch.maximum, "min": torch.minimum}


def _combine(
    op: str, parts: list[torch.Tensor], out: torch.Tensor, in_place: int = -1, scratch: torch.Tensor | None = None
) -> None:
    """``out = parts[0] (op) parts[1] (op) ...`` in rank order (the same bits on every rank),
    one vectorised pass per part and no copy of ``parts[0]`` first.

    ``out`` may be ``parts[in_place]`` (element by element, in place): the partial results from
    before that part is consumed then go to ``scratch`` (needed from the third part on).
    """
    fn = _COMBINE[op]
    if len(parts) == 1:
        if in_place != 0:
            out.copy_(parts[0])
        return
    into = scratch if in_place >= 2 and scratch is not None else out
    fn(parts[0], parts[1], out=into)
    for i in range(2, len(parts)):
        if i == in_place:
            fn(into, parts[i], out=out)  # this part is read before its element is written
            into = out
        else:
            fn(into, parts[i], out=into)


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


def _segment_bytes(world_size: int, slot_bytes: int, arena_bytes: int = 0) -> int:
    return _header_bytes(world_size) + world_size * (slot_bytes + arena_bytes)


def _arena_bytes(world_size: int, slot_bytes: int) -> int:
    """Bytes of each rank's arena: ``UNISON_SHM_ARENA_MIB`` (default 32), at most an eighth of
    what /dev/shm has free, and 0 where that is too little to matter."""
    text = os.environ.get("UNISON_SHM_ARENA_MIB", str(_ARENA_MIB)).strip()
    try:
        wanted = int(float(text) * (1 << 20))
    except ValueError:
        raise UnisonError(
            f"UNISON_SHM_ARENA_MIB must be a number of MiB (0 turns the arena off). Received: {text!r}"
        ) from None
    try:
        info = os.statvfs("/dev/shm")
        free = info.f_bavail * info.f_frsize
    except OSError:
        return 0
    arena = min(max(wanted, 0), free // 8 // world_size) // _LINE * _LINE
    return arena if arena >= slot_bytes else 0


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


def _create_segment(world_size: int, slot_bytes: int, arena_bytes: int = 0) -> tuple[str, bytes]:
    _sweep_stale_segments()
    path = f"/dev/shm/unison-{os.getpid()}-{secrets.token_hex(6)}"
    nonce = secrets.token_bytes(16)
    size = _segment_bytes(world_size, slot_bytes, arena_bytes)
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


def _map(path: str, nonce: bytes, world_size: int, slot_bytes: int, arena_bytes: int = 0) -> mmap.mmap:
    """Map the segment rank 0 announced, after checking that it can only be rank 0's.

    The name must be one unison makes (so a value in the store cannot aim this rank at any
    other file), the file must belong to this user and be private (another user cannot plant
    one), and it must start with the nonce announced with it.
    """
    if not _SEGMENT_NAME.match(path):
        raise OSError(f"{path!r} is not a unison shared-memory segment name")
    size = _segment_bytes(world_size, slot_bytes, arena_bytes)
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
    path, nonce, arena = "", b"", 0
    if rank == 0:
        if not reason:
            arena = _arena_bytes(world_size, slot_bytes)
            try:
                path, nonce = _create_segment(world_size, slot_bytes, arena)
            except OSError:
                try:  # the arena is an optimisation: without it every tensor is staged
                    arena = 0
                    path, nonce = _create_segment(world_size, slot_bytes, arena)
                except OSError as exc:
                    reason = f"could not create the segment: {exc}"
        store.set(prefix + "arena", str(arena))
        store.set(prefix + "path", path)
        store.set(prefix + "nonce", nonce.hex())
    buffer = None
    try:
        timeout = datetime.timedelta(seconds=timeout_s)
        if rank != 0:
            _wait(store, [prefix + "path", prefix + "nonce"], timeout, rank, world_size, [0])
            path = store.get(prefix + "path").decode()
            nonce = bytes.fromhex(store.get(prefix + "nonce").decode())
            arena = int(store.get(prefix + "arena").decode())
        if not reason and path:
            try:
                buffer = _map(path, nonce, world_size, slot_bytes, arena)
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
    return SharedMemoryReducer(buffer, rank, world_size, slot_bytes, [int(v) for v in votes], timeout_s, arena)
