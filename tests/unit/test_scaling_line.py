"""The end-of-fit scaling line (unison.keras.utils.scaling): measured, compared with one replica, explained."""

from __future__ import annotations

import pytest

from unison.keras.utils import scaling
from unison.keras.utils.scaling import ScalingFigures, end_of_fit, fit_figures, scaling_line


def _fig(replicas: int, seconds: float, wait: float = 0.0, batch: int = 32) -> ScalingFigures:
    return ScalingFigures(
        replicas=replicas,
        samples=60000,
        seconds=seconds,
        wait_seconds=wait,
        global_batch=batch,
        device="cpu",
        cores_per_replica=2 // replicas,
        parameters=101770,
    )


@pytest.mark.timeout(60)
def test_two_replicas_slower_than_one_are_told_why_and_what_helps(tmp_path) -> None:
    path = tmp_path / "scaling.json"
    assert end_of_fit(_fig(1, 34.5), path) is None  # one replica: recorded, nothing printed
    line = end_of_fit(_fig(2, 88.0, wait=40.0), path)
    assert line is not None and "\n" not in line
    assert line.startswith(
        "Scaling: 2 replicas ran 682 samples/s (341 per replica), 0.39x one replica's 1,739 samples/s"
    )
    assert ": slower than one. Why: 45% of the time went to communication (101,770 parameters" in line
    assert "the CPU replicas share this host's cores (1 core each)" in line
    assert "What would help: a bigger global batch (batch_size=256" in line and "or one replica per GPU." in line


@pytest.mark.timeout(60)
def test_a_speedup_is_stated_without_advice_when_communication_is_small(tmp_path) -> None:
    path = tmp_path / "scaling.json"
    end_of_fit(_fig(1, 40.0, batch=512), path)
    line = end_of_fit(_fig(2, 22.0, wait=1.1, batch=512), path)
    assert line == (
        "Scaling: 2 replicas ran 2,727 samples/s (1,364 per replica), 1.82x one replica's 1,500 samples/s; "
        "5% of the time in communication."
    )


@pytest.mark.timeout(60)
def test_without_a_one_replica_run_nothing_is_guessed(tmp_path) -> None:
    line = end_of_fit(_fig(2, 88.0, wait=40.0), tmp_path / "none.json")
    assert line is not None and "x one replica" not in line and "slower" not in line
    assert "45% of the time in communication (no 1-replica fit of this model and batch_size on this machine" in line
    # another batch size is another comparison
    end_of_fit(_fig(1, 34.5, batch=64), tmp_path / "none.json")
    assert "no 1-replica fit" in str(end_of_fit(_fig(2, 88.0, wait=40.0), tmp_path / "none.json"))


@pytest.mark.timeout(60)
def test_an_unwritable_cache_never_fails_the_fit(tmp_path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert end_of_fit(_fig(1, 10.0), blocker / "scaling.json") is None
    assert scaling.one_replica_reference("k", blocker / "scaling.json") is None


@pytest.mark.timeout(120)
def test_figures_are_read_from_a_keras_model(monkeypatch, tmp_path) -> None:
    import unison as tf

    monkeypatch.setenv("UNISON_CACHE_DIR", str(tmp_path / "datasets"))
    model = tf.keras.Sequential([tf.keras.Input((784,)), tf.keras.layers.Dense(128), tf.keras.layers.Dense(10)])
    fig = fit_figures(model, replicas=1, samples=1000, seconds=2.0, global_batch=32)
    assert fig.parameters == 101770 and fig.device == "cpu" and fig.wait_seconds == 0.0
    assert scaling.reference_path() == tmp_path / "scaling.json"
    assert scaling_line(fig, None).startswith("Scaling: 1 replicas ran 500 samples/s")


@pytest.mark.timeout(120)
def test_a_verbose_one_replica_fit_records_the_reference_and_prints_nothing(monkeypatch, tmp_path, capsys) -> None:
    import numpy as np

    import unison as tf
    from unison.keras.trainers import loop

    monkeypatch.setenv("UNISON_CACHE_DIR", str(tmp_path / "datasets"))
    monkeypatch.setattr(loop, "MIN_REFERENCE_S", 0.0)
    model = tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(2)])
    model.compile(optimizer="sgd", loss="mse")
    data = tf.data.Dataset.from_tensor_slices((np.ones((50, 8), "float32"), np.ones((50, 2), "float32"))).batch(10)
    model.fit(data, epochs=2, verbose=2)
    assert "Scaling:" not in capsys.readouterr().out
    recorded = scaling.one_replica_reference(scaling.reference_key(18, 10, "cpu"))
    assert recorded is not None and recorded > 0  # the dataset's batch of 10, not fit's default 32
    model.fit(data, epochs=1, verbose=0)  # a silent fit records nothing new
    assert scaling.one_replica_reference(scaling.reference_key(18, 10, "cpu")) == recorded
