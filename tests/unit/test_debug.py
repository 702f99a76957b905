"""unison.debug in one process: the flight recorder, the divergence analysis, stragglers, the timeline."""

from __future__ import annotations

import io
import json

import pytest
import torch

import unison
from unison.comm.communicator import check_collectives, collective_timeout
from unison.debug.flight import FlightRecorder, capacity_from_env
from unison.debug.hang import first_divergence, format_report, missing_at
from unison.debug.straggler import StepTimings, analyse
from unison.debug.timeline import Timeline, merge


def _issue(rec: FlightRecorder, seq: int) -> None:
    rec.end(rec.begin(seq, "all_reduce", torch.ones(2, 3)))


def test_the_ring_keeps_the_last_n_collectives_with_their_call_site() -> None:
    rec = FlightRecorder(capacity=3)
    for seq in range(1, 6):
        _issue(rec, seq)
    records = rec.records()
    assert [r["seq"] for r in records] == [3, 4, 5]
    assert records[0]["shape"] == [2, 3] and records[0]["dtype"] == "float32" and records[0]["done"]
    assert records[0]["site"].endswith("in _issue")
    assert rec.current() is None
    open_slot = rec.begin(6, "broadcast")
    assert rec.current() is open_slot and not rec.records()[-1]["done"]


def test_a_recorder_of_capacity_zero_records_nothing() -> None:
    rec = FlightRecorder(capacity=0)
    _issue(rec, 1)
    _issue(rec, 2)
    assert rec.records() == [] and rec.current() is None


def test_dump_prints_this_replicas_collectives() -> None:
    out = io.StringIO()
    unison.debug.dump(out)
    assert out.getvalue().startswith("rank 0:")


def _snap(rank: int, ops: list[tuple[str, list[int]]], state: str = "waiting") -> dict:
    records = [
        {
            "seq": i + 1,
            "op": op,
            "shape": shape,
            "dtype": "float32",
            "site": f"t.py:{i} in step",
            "done": True,
            "wait_s": 0.0,
        }
        for i, (op, shape) in enumerate(ops)
    ]
    return {"rank": rank, "seq": len(ops), "state": state, "current": len(ops), "records": records, "stack": []}


def test_the_first_divergence_is_a_different_op_shape_or_a_rank_that_stopped() -> None:
    same = [("all_reduce", [4]), ("all_reduce", [4])]
    assert first_divergence({0: _snap(0, same), 1: _snap(1, same)}) is None
    k, text = first_divergence({0: _snap(0, same), 1: _snap(1, [("all_reduce", [4]), ("broadcast", [4])])})
    assert k == 2 and "rank 1 issued broadcast float32[4]" in text
    k, text = first_divergence({0: _snap(0, same), 1: _snap(1, [("all_reduce", [4]), ("all_reduce", [8])])})
    assert k == 2 and "float32[8]" in text
    k, text = first_divergence({0: _snap(0, same), 1: _snap(1, same[:1], state="exited")})
    assert k == 2 and "rank 1 never issued it (its last was #1; the process exited)" in text


def test_the_report_names_silent_ranks_and_the_missing_ones() -> None:
    snaps = {0: _snap(0, [("all_reduce", [4])])}
    report = format_report(snaps, 3, 2.0)
    assert "Ranks [1, 2] published nothing within 2.0s" in report
    assert missing_at(snaps, 3, 1) == [1, 2]


def test_unison_collective_timeout_overrides_and_is_checked(monkeypatch) -> None:
    monkeypatch.delenv("UNISON_COLLECTIVE_TIMEOUT", raising=False)
    assert collective_timeout(300.0) == 300.0
    monkeypatch.setenv("UNISON_COLLECTIVE_TIMEOUT", "2.5")
    assert collective_timeout(300.0) == 2.5
    for bad in ("0", "-1", "soon", "inf"):
        monkeypatch.setenv("UNISON_COLLECTIVE_TIMEOUT", bad)
        with pytest.raises(ValueError, match="UNISON_COLLECTIVE_TIMEOUT must be a number of seconds > 0"):
            collective_timeout(300.0)


def test_unison_check_collectives_defaults_to_gloo_and_is_checked(monkeypatch) -> None:
    monkeypatch.delenv("UNISON_CHECK_COLLECTIVES", raising=False)
    assert check_collectives("gloo") and not check_collectives("nccl")
    monkeypatch.setenv("UNISON_CHECK_COLLECTIVES", "1")
    assert check_collectives("nccl")
    monkeypatch.setenv("UNISON_CHECK_COLLECTIVES", "0")
    assert not check_collectives("gloo")
    monkeypatch.setenv("UNISON_CHECK_COLLECTIVES", "sometimes")
    with pytest.raises(ValueError, match="UNISON_CHECK_COLLECTIVES must be auto, 1 or 0"):
        check_collectives("gloo")


def test_unison_flight_recorder_is_checked(monkeypatch) -> None:
    monkeypatch.setenv("UNISON_FLIGHT_RECORDER", "lots")
    with pytest.raises(ValueError, match="UNISON_FLIGHT_RECORDER must be an integer >= 0"):
        capacity_from_env()
    monkeypatch.setenv("UNISON_FLIGHT_RECORDER", "8")
    assert capacity_from_env() == 8


def test_a_straggler_is_the_rank_that_computes_longer_than_the_median() -> None:
    figures = {
        0: {"steps": 10, "wall_s": 1.0, "wait_s": 0.8, "host": "a"},
        1: {"steps": 10, "wall_s": 1.0, "wait_s": 0.02, "host": "b"},
        2: {"steps": 10, "wall_s": 1.0, "wait_s": 0.79, "host": "c"},
    }
    report = analyse(figures, threshold=0.2)
    assert report.stragglers == [1]
    assert "rank 1 (b)" in report.message() and "waits 2% of its 100.0 ms step" in report.message()
    assert "<- straggler" in report.table().splitlines()[2]
    assert analyse({0: figures[0], 2: figures[2]}).stragglers == []


def test_step_timings_skip_the_first_step_and_reset_per_window() -> None:
    t = StepTimings()
    t.step_done(0.5)
    t.step_done(0.25)
    assert t.steps == 1 and t.wait_s == 0.25 and t.total_wait_s == 0.75
    assert t.take()["steps"] == 1 and t.steps == 0
    with pytest.raises(ValueError, match="threshold must be a number >= 0"):
        unison.debug.straggler_report(threshold=-1)


def test_timelines_of_every_rank_merge_into_one_trace(tmp_path) -> None:
    path = str(tmp_path / "trace.json")
    for rank in range(2):
        tl = Timeline(path, rank, 2)
        tl.add("collectives", "gradients.bucket0", 1.0, 1.5)
        tl.write_own()
    assert merge(path, 3, wait_s=0.1) == [0, 1]
    events = json.load(open(path))["traceEvents"]
    spans = [e for e in events if e["ph"] == "X"]
    assert {e["pid"] for e in spans} == {0, 1} and all(e["dur"] == pytest.approx(5e5) for e in spans)


def test_doctor_on_one_task_checks_shared_memory_and_says_what_else_it_needs(monkeypatch, capsys) -> None:
    import argparse

    from unison.launch import doctor

    monkeypatch.setenv(
        "TF_CONFIG", '{"cluster": {"worker": ["127.0.0.1:2222"]}, "task": {"type": "worker", "index": 0}}'
    )
    assert doctor.run(argparse.Namespace(timeout=5.0, no_bandwidth=True)) == 0
    out = capsys.readouterr().out
    assert "OK    shared memory on" in out and "run it on every task of a cluster" in out
    monkeypatch.setenv(
        "TF_CONFIG", '{"cluster": {"worker": ["127.0.0.1:2222"]}, "task": {"type": "worker", "index": 5}}'
    )
    assert doctor.run(argparse.Namespace(timeout=5.0, no_bandwidth=True)) == 2
    assert "unison doctor: error:" in capsys.readouterr().err


def test_doctor_reports_fake_versions_only_when_asked(monkeypatch) -> None:
    from unison.launch import doctor

    monkeypatch.delenv("UNISON_DOCTOR_FAKE_VERSIONS", raising=False)
    assert doctor.versions()["torch"] == torch.__version__
    monkeypatch.setenv("UNISON_DOCTOR_FAKE_VERSIONS", '{"torch": "0.0"}')
    assert doctor.versions()["torch"] == "0.0"
