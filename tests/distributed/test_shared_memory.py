"""The shared-memory all-reduce of one host's replicas (unison.comm.shm) on real processes."""

from __future__ import annotations

import datetime
import os

import numpy as np
import pytest
import shm_fns as fns
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from unison.comm import shm
from unison.testing import run_distributed

_WHY_NOT = shm._wanted(torch.device("cpu"), "gloo")
pytestmark = pytest.mark.skipif(bool(_WHY_NOT), reason=f"no shared-memory all-reduce here: {_WHY_NOT}")


def _unison_segments() -> set[str]:
    return {f for f in os.listdir("/dev/shm") if f.startswith("unison-")}


@pytest.mark.slow
@pytest.mark.parametrize("world", [2, 3])
def test_every_op_and_dtype_reduces_exactly_and_identically_on_every_replica(world: int) -> None:
    before = _unison_segments()
    results = run_distributed(fns.reduce_everything, world, timeout=120)
    want = fns.expected(world)
    for rank, res in enumerate(results):
        assert res["shared_memory"], f"rank {rank} fell back to gloo"
        for key, value in want.items():
            # summed in rank order on every replica: the one-process sum, bit for bit
            assert np.array_equal(res[key], value), (rank, key)
            assert np.array_equal(res[key], results[0][key]), (rank, key)
        for name in ("f32", "f64", "i64", "big", "tiny", "strided", "param"):
            assert np.allclose(res[f"{name}.sum"], res[f"{name}.gloo"], rtol=1e-6, atol=1e-5)
        assert res["collectives"] == results[0]["collectives"] == 3 * 9 + 1
        # the segment is unlinked once every replica has mapped it
        assert not (set(res["shm_files"]) - before), res["shm_files"]
    assert _unison_segments() == before


def test_switched_off_by_the_environment_gloo_gives_the_same_results() -> None:
    results = run_distributed(fns.reduce_everything, 2, timeout=120, env={"UNISON_SHM_ALLREDUCE": "0"})
    want = fns.expected(2)
    for res in results:
        assert not res["shared_memory"]
        for key in ("f64.sum", "i64.sum", "i64.max", "f32.min", "big.max"):
            assert np.array_equal(res[key], want[key]), key
        assert np.allclose(res["big.sum"], want["big.sum"], rtol=1e-6, atol=1e-5)


def test_a_replica_that_exits_is_named_within_seconds_not_the_timeout() -> None:
    # Processes of our own (not run_distributed, which stops at the first death) so the
    # survivor's error can be read; the collective's timeout is 120 s.
    store = dist.TCPStore(
        "127.0.0.1", 0, 2, is_master=True, wait_for_workers=False, timeout=datetime.timedelta(seconds=60)
    )
    ctx = mp.get_context("spawn")
    receive, send = ctx.Pipe(duplex=False)
    procs = [ctx.Process(target=fns.die_or_survive, args=(rank, store.port, send), daemon=True) for rank in range(2)]
    for p in procs:
        p.start()
    try:
        assert receive.poll(60), "the surviving replica reported nothing within 60 s"
        message = receive.recv()
    finally:
        for p in procs:
            p.join(timeout=10)
            if p.is_alive():
                p.kill()
    assert procs[1].exitcode == 3
    waited, text = message
    assert waited < 5.0, message
    assert "Collective 'after.the.death' (#2) failed on rank 0 of 2" in text
    assert "rank(s) [1]" in text and "exited without arriving" in text


@pytest.mark.slow
@pytest.mark.parametrize("world", [2, 3])
def test_every_size_around_the_chunk_and_every_dtype_sums_to_the_reference(world: int) -> None:
    results = run_distributed(fns.reduce_sweep, world, timeout=180)
    checked = 0
    for dtype_name in fns.SWEEP_DTYPES:
        dtype = getattr(torch, dtype_name)
        size = torch.empty((), dtype=dtype).element_size()
        for n in fns.sweep_sizes(size):
            for op in ("sum", "max", "min"):
                want = fns.to_numpy(fns.sweep_expected(world, dtype_name, n, op))
                for rank, res in enumerate(results):
                    got = res[f"{dtype_name}.{n}.{op}"]
                    # combined in rank order on every replica: the one-process result, bit for bit
                    # (so integers are exact and every replica holds the same floats)
                    assert got.shape == (n,), (rank, dtype_name, n, op)
                    assert np.array_equal(got, want), (rank, dtype_name, n, op)
                    checked += 1
                    for mode in fns.ARENA_MODES:
                        if mode == "mixed" and op != "sum":
                            continue
                        assert np.array_equal(res[f"{dtype_name}.{n}.{op}.{mode}"], want), (
                            rank,
                            dtype_name,
                            n,
                            op,
                            mode,
                        )
                        checked += 1
            if dtype.is_floating_point and n:
                # and that rounded sum is within (world - 1) roundings (half an ulp each, scaled
                # by the magnitudes summed) of the float64 sum
                exact, magnitude = fns.sweep_float64_sum(world, dtype_name, n)
                unit = float(torch.finfo(dtype).eps) / 2
                got = results[0][f"{dtype_name}.{n}.sum"].astype(np.float64)
                assert np.all(np.abs(got - exact) <= (world - 1) * unit * magnitude), (dtype_name, n)
    assert checked == world * (3 + 3 + 1) * sum(
        len(fns.sweep_sizes(torch.empty((), dtype=getattr(torch, d)).element_size())) for d in fns.SWEEP_DTYPES
    )
    for n in (3, 5000, 300_000, 700_001):
        want = fns.to_numpy(fns.sweep_expected(world, "float32", n, "sum"))
        for res in results:
            assert np.array_equal(res[f"default.{n}"], want), n
