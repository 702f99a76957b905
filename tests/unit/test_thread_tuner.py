"""The thread tuner's decisions (``core/thread_tuner.py``): off while quiet, the fastest count under
contention, torch's count back when the others leave, and hands off whatever the user chose.

The machine's load is the one thing faked here (``others_runnable``): these tests pin the logic.
The measured effect on real models with real busy processes is in BENCHMARKS.md
(``benchmarks/models_vs_tf.py --contend 2``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest
import torch

import unison as tf
from unison.core import thread_tuner
from unison.core.thread_tuner import ThreadTuner, others_runnable


@pytest.fixture(autouse=True)
def _two_threads(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.delenv("UNISON_THREAD_TUNING", raising=False)
    monkeypatch.setattr(thread_tuner, "LOOK_SECONDS", 0.0)  # a reading after every step
    monkeypatch.setattr(thread_tuner, "HOLD_SECONDS", 60.0)  # one exploration per test
    yield
    torch.set_num_threads(before)


def _load(monkeypatch: pytest.MonkeyPatch, others: list[int]) -> None:
    """What /proc/loadavg reports: ``others[0]`` runnable threads besides ours (change it to change the load)."""
    monkeypatch.setattr(thread_tuner, "others_runnable", lambda: others[0])


def _step(one_thread_ms: float, two_threads_ms: float) -> Callable[[], None]:
    def step() -> None:
        time.sleep((one_thread_ms if torch.get_num_threads() == 1 else two_threads_ms) / 1e3)

    return step


def _run(tuner: ThreadTuner, step: Callable[[], None], calls: int) -> None:
    for _ in range(calls):
        began = tuner.begin()
        try:
            step()
        finally:
            tuner.end(began)


def test_a_quiet_machine_keeps_torchs_count(monkeypatch: pytest.MonkeyPatch) -> None:
    _load(monkeypatch, [0])
    tuner = ThreadTuner()
    _run(tuner, _step(1, 5), 40)  # one thread would be faster, but nobody else wants the cores
    assert torch.get_num_threads() == 2 and tuner.choices == []


def test_under_contention_the_faster_count_is_kept_and_torchs_comes_back_after(monkeypatch: pytest.MonkeyPatch) -> None:
    load = [2]
    _load(monkeypatch, load)
    tuner = ThreadTuner()
    _run(tuner, _step(2, 8), 30)
    assert tuner.choices and tuner.choices[0][0] == 1
    assert sorted(tuner.choices[0][1]) == [1, 2]  # both counts were timed
    assert torch.get_num_threads() == 1
    load[0] = 0  # the other processes end
    _run(tuner, _step(2, 8), 10)
    assert torch.get_num_threads() == 2


def test_under_contention_more_threads_stay_when_they_are_faster(monkeypatch: pytest.MonkeyPatch) -> None:
    _load(monkeypatch, [2])
    tuner = ThreadTuner()
    _run(tuner, _step(9, 3), 30)
    assert tuner.choices and tuner.choices[-1][0] == 2
    assert torch.get_num_threads() == 2


def test_a_count_the_user_set_meanwhile_stands(monkeypatch: pytest.MonkeyPatch) -> None:
    _load(monkeypatch, [2])
    tuner = ThreadTuner()
    _run(tuner, _step(2, 8), 30)
    assert torch.get_num_threads() == 1
    tf.config.threading.set_intra_op_parallelism_threads(2)  # the user's choice, through TF's API
    _run(tuner, _step(2, 8), 30)
    assert torch.get_num_threads() == 2


@pytest.mark.parametrize("choice", ["OMP_NUM_THREADS", "UNISON_THREAD_TUNING", "determinism"])
def test_tuning_stays_off_when_the_user_chose(monkeypatch: pytest.MonkeyPatch, choice: str) -> None:
    _load(monkeypatch, [2])
    if choice == "determinism":
        monkeypatch.setattr(torch, "are_deterministic_algorithms_enabled", lambda: True)
    else:
        monkeypatch.setenv(choice, "2" if choice == "OMP_NUM_THREADS" else "0")
    calls: list[int] = []
    monkeypatch.setattr(torch, "set_num_threads", lambda n: calls.append(n))
    tuner = ThreadTuner()
    _run(tuner, _step(2, 8), 30)
    assert calls == [] and tuner.choices == []


def test_only_the_outermost_step_is_timed(monkeypatch: pytest.MonkeyPatch) -> None:
    _load(monkeypatch, [0])
    outer, inner = ThreadTuner(), ThreadTuner()

    def step() -> None:
        _run(inner, lambda: None, 1)  # a tf.function called inside fit's step

    _run(outer, step, 5)
    assert outer._calls == 5 and inner._calls == 0


def test_a_tf_function_is_tuned_as_one_step_however_it_is_looked_up(monkeypatch: pytest.MonkeyPatch) -> None:
    class Trainer:
        @tf.function
        def step(self) -> int:
            return 1

    t = Trainer()
    assert t.step._tuner is t.step._tuner is Trainer.step._tuner
    for _ in range(3):
        assert t.step() == 1
    assert Trainer.step._tuner._calls == 3


def test_others_runnable_reads_proc_loadavg(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "loadavg"
    path.write_text("0.50 0.40 0.30 3/512 12345\n")
    assert others_runnable(str(path)) == 2  # three running, one of them the reader
    assert others_runnable(str(tmp_path / "missing")) is None
    path.write_text("garbage\n")
    assert others_runnable(str(path)) is None


def test_a_chosen_count_is_measured_again_after_a_while(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(thread_tuner, "HOLD_SECONDS", 0.02)
    _load(monkeypatch, [2])
    tuner = ThreadTuner()
    _run(tuner, _step(2, 8), 60)
    assert len(tuner.choices) >= 2 and all(best == 1 for best, _ in tuner.choices)
