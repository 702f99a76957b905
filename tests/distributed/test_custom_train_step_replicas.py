"""A user-overridden ``train_step`` on every strategy: N replicas equal one device (1e-5), and
it trains under ParameterServerStrategy, with the step scheduled onto the workers."""

from __future__ import annotations

import sys

import cloudpickle
import custom_step_fns
import numpy as np
import pytest
from custom_step_fns import STYLES, fit_style

import unison as tf
from unison.distribute.parameter_server import protocol
from unison.testing import run_distributed
from unison.testing.ps_cluster import LocalParameterServerCluster

# 19 full global batches of 16 and an uneven last one (the replicas get 1 and 1 rows): 20 Adam steps.
N_ROWS, BATCH = 19 * 16 + 2, 16


def _close(a: np.ndarray, b: np.ndarray, rtol: float) -> bool:
    return np.allclose(a, b, rtol=rtol, atol=rtol * max(1.0, float(np.abs(b).max(initial=0.0))))


@pytest.fixture(scope="module")
def one_replica() -> dict:
    return fit_style(None, "builtin", N_ROWS, BATCH)


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("style", ["torch", "tf"])
def test_custom_train_step_on_two_replicas_matches_one_device(one_replica: dict, style: str) -> None:
    results = run_distributed(fit_style, world_size=2, args=(["/cpu:0", "/cpu:1"], style, N_ROWS, BATCH), timeout=240)
    for res in results:
        assert res["replicas"] == 2 and res["iterations"] == 20
        for got, want in zip(res["weights"], one_replica["weights"]):
            assert _close(got, want, 1e-5), np.abs(got - want).max()
        for key in ("loss", "accuracy"):
            assert abs(res["history"][key][0] - one_replica["history"][key][0]) <= 1e-5, key
    for got, want in zip(results[0]["weights"], results[1]["weights"]):
        assert np.array_equal(got, want)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_custom_train_step_trains_under_parameter_server_strategy() -> None:
    cloudpickle.register_pickle_by_value(custom_step_fns)  # the workers cannot import the tests
    cloudpickle.register_pickle_by_value(sys.modules["replica_fns"])
    with LocalParameterServerCluster(num_workers=2, num_ps=1) as cluster:
        for style in ("torch", "tf"):
            strategy = tf.distribute.ParameterServerStrategy(cluster.resolver(), timeout_seconds=60)
            try:
                with strategy.scope():
                    model = custom_step_fns._mlp(STYLES[style], batchnorm=False)
                    model.compile(
                        optimizer=tf.keras.optimizers.SGD(0.1),
                        loss="sparse_categorical_crossentropy",
                        metrics=["accuracy"],
                    )
                x, y = custom_step_fns.make_data(256)
                history = model.fit(x, y, batch_size=16, epochs=4, steps_per_epoch=10, verbose=0)
                losses = history.history["loss"]
                assert sorted(history.history) == ["accuracy", "loss"], style
                assert losses[-1] < losses[0], (style, losses)
                assert history.history["accuracy"][-1] > 0.35, style  # 4 classes: chance is 0.25
                # every scheduled step was applied once, by the servers (the optimizer's counter
                # is a worker-side object: the coordinator's stays at 0, as TF's does)
                updates = sum(
                    sum(strategy._servers.call(ps, protocol.PS_STATS)[0]["updates"].values())
                    for ps in range(len(strategy._servers))
                )
                assert updates >= 4 * 10 * len(model.trainable_weights), (style, updates)
            finally:
                if strategy._coordinator is not None:
                    strategy._coordinator.shutdown()
