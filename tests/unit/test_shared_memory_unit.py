"""Pure-logic parts of the shared-memory all-reduce (unison.comm.shm); the collective itself is
tested on real processes in tests/distributed/test_shared_memory.py."""

from __future__ import annotations

import os
import platform

import pytest
import torch

from unison.comm import shm


def test_supported_tensors_are_cpu_numbers_whatever_their_strides() -> None:
    assert shm.SharedMemoryReducer.supports(torch.ones(3, dtype=torch.float64))
    assert shm.SharedMemoryReducer.supports(torch.ones(3, dtype=torch.int64))
    assert not shm.SharedMemoryReducer.supports(torch.ones(3) > 0)  # bool: gloo
    # strides may differ between replicas: they must not decide the path (a copy is reduced)
    assert shm.SharedMemoryReducer.supports(torch.ones(3, 4).t())
    assert not shm.SharedMemoryReducer.supports(torch.ones(3, dtype=torch.complex64))


def test_who_wants_the_shared_memory_path(monkeypatch: pytest.MonkeyPatch) -> None:
    cpu = torch.device("cpu")
    monkeypatch.setenv("UNISON_SHM_ALLREDUCE", "0")
    assert "UNISON_SHM_ALLREDUCE=0" in shm._wanted(cpu, "gloo")
    monkeypatch.delenv("UNISON_SHM_ALLREDUCE")
    assert "nccl" in shm._wanted(torch.device("cuda", 0), "nccl")
    if platform.machine().lower() in ("x86_64", "amd64") and os.path.isdir("/dev/shm"):
        assert shm._wanted(cpu, "gloo") == ""
    monkeypatch.setattr(platform, "machine", lambda: "aarch64")
    assert "aarch64" in shm._wanted(cpu, "gloo")  # no store order guarantee: gloo


@pytest.mark.skipif(not os.path.isdir("/dev/shm"), reason="no /dev/shm")
def test_a_segment_of_another_job_or_size_is_refused() -> None:
    path, nonce = shm._create_segment(2, 4096)
    try:
        buffer = shm._map(path, nonce, 2, 4096)
        assert buffer[:16] == nonce
        with pytest.raises(OSError, match="not this job's segment"):
            shm._map(path, bytes(16), 2, 4096)
        with pytest.raises(OSError, match="expected"):
            shm._map(path, nonce, 3, 4096)
    finally:
        os.unlink(path)


def test_an_unknown_op_is_refused_before_any_rank_waits() -> None:
    import mmap

    buffer = mmap.mmap(-1, shm._segment_bytes(2, 4096))
    reducer = shm.SharedMemoryReducer(buffer, 0, 2, 4096, [os.getpid(), os.getpid()], 1.0)
    with pytest.raises(ValueError, match="Unknown reduction op 'avg'"):
        reducer.all_reduce(torch.ones(4), "avg")


def test_a_rank_that_never_comes_to_the_vote_is_named_not_a_raw_store_error() -> None:
    import datetime

    import torch.distributed as dist

    from unison.errors import UnisonError

    store = dist.TCPStore(
        "127.0.0.1", 0, 1, is_master=True, wait_for_workers=False, timeout=datetime.timedelta(seconds=5)
    )
    # rank 1 of 2 alone: rank 0 never publishes the segment
    with pytest.raises(UnisonError, match=r"waited 1s for ranks \[0\].*UNISON_SHM_ALLREDUCE=0"):
        shm.attach(store, 1, 2, torch.device("cpu"), "gloo", 1.0)


def test_the_arena_hands_out_aligned_tensors_until_it_is_full() -> None:
    import mmap

    buffer = mmap.mmap(-1, shm._segment_bytes(2, 4096, 4096))
    reducer = shm.SharedMemoryReducer(buffer, 1, 2, 4096, [os.getpid(), os.getpid()], 1.0, arena_bytes=4096)
    a = reducer.empty(3, torch.float32)
    b = reducer.empty(1000, torch.bfloat16)
    assert a is not None and b is not None and a.numel() == 3 and b.dtype == torch.bfloat16
    assert b.data_ptr() - a.data_ptr() == 64  # each on its own cache line
    assert reducer._arena_offset(b, 2000) >= 0
    assert reducer._arena_offset(torch.ones(3), 12) == -1  # an ordinary tensor is staged
    assert reducer.empty(1024, torch.float32) is None  # full: the caller allocates elsewhere
    assert reducer.empty(4, torch.bool) is None  # not a dtype the reducer sums
    a.fill_(7)
    b.fill_(1)
    assert float(a.sum()) == 21.0 and float(b.float().sum()) == 1000.0  # no overlap


def test_an_arena_size_that_is_not_a_number_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from unison.errors import UnisonError

    monkeypatch.setenv("UNISON_SHM_ARENA_MIB", "lots")
    with pytest.raises(UnisonError, match="UNISON_SHM_ARENA_MIB must be a number of MiB.*'lots'"):
        shm._arena_bytes(2, 4096)
    monkeypatch.setenv("UNISON_SHM_ARENA_MIB", "0")
    assert shm._arena_bytes(2, 4096) == 0


@pytest.mark.parametrize("in_place", [-1, 0, 1, 2, 3])
def test_combining_in_place_sums_in_rank_order_whichever_part_is_the_output(in_place: int) -> None:
    gen = torch.Generator().manual_seed(3)
    parts = [torch.randn(257, generator=gen) * 10**i for i in range(4)]
    want = ((parts[0] + parts[1]) + parts[2]) + parts[3]
    parts = [p.clone() for p in parts]
    out = parts[in_place] if in_place >= 0 else torch.empty(257)
    shm._combine("sum", parts, out, in_place=in_place, scratch=torch.empty(257))
    assert torch.equal(out, want)  # bit for bit: the same order of roundings on every rank
