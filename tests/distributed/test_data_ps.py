"""tf.data pipelines under ParameterServerStrategy (real `unison server` workers and PS on loopback)."""

from __future__ import annotations

import sys

import cloudpickle
import numpy as np
import pytest

import unison as tf
from unison.testing.ps_cluster import LocalParameterServerCluster

cloudpickle.register_pickle_by_value(sys.modules[__name__])
pytestmark = pytest.mark.timeout(300)
W = np.linspace(-1.0, 1.0, 10).astype("float32")


def _data(n: int = 512, seed: int = 0):
    x = np.random.default_rng(seed).standard_normal((n, 10)).astype("float32")
    return x, (x @ W > 0).astype("int64")


def dataset_fn(input_context):
    x, y = _data()
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shard(
        input_context.num_input_pipelines, input_context.input_pipeline_id
    )
    return ds.shuffle(512).batch(input_context.get_per_replica_batch_size(32)).repeat().prefetch(2)


@pytest.fixture(scope="module")
def strategy():
    with LocalParameterServerCluster(num_workers=2, num_ps=1) as cluster:
        s = tf.distribute.ParameterServerStrategy(cluster.resolver(), timeout_seconds=30)
        yield s
        if s._coordinator is not None:
            s._coordinator.shutdown()


def _model(strategy):
    with strategy.scope():
        model = tf.keras.Sequential(
            [
                tf.keras.layers.Dense(16, activation="relu", input_shape=(10,)),
                tf.keras.layers.Dense(2, activation="softmax"),
            ]
        )
        model.compile(tf.keras.optimizers.SGD(0.1), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


@pytest.mark.slow
def test_fit_on_tf_data_under_parameter_server(strategy):
    model = _model(strategy)
    xv, yv = _data(200, seed=1)
    val = tf.data.Dataset.from_tensor_slices((xv, yv)).batch(50)
    # a dataset function (DatasetCreator) building a tf.data pipeline on each worker
    creator = tf.keras.utils.experimental.DatasetCreator(dataset_fn)
    h = model.fit(creator, epochs=2, steps_per_epoch=30, validation_data=val, verbose=0)
    assert h.history["val_accuracy"][-1] > 0.85
    # a tf.data dataset itself: every worker iterates its own copy
    x, y = _data()
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(512).batch(32).repeat()
    h = model.fit(ds, epochs=1, steps_per_epoch=20, verbose=0)
    assert h.history["accuracy"][0] > 0.85
    assert model.evaluate(val, verbose=0, return_dict=True)["accuracy"] > 0.85


def test_create_per_worker_dataset_accepts_dataset_fn_dataset_and_distributed(strategy):
    coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)
    x, y = _data()
    sources = [
        lambda: tf.data.Dataset.from_tensor_slices((x, y)).batch(8).repeat(),
        tf.data.Dataset.from_tensor_slices((x, y)).batch(8).repeat(),
        strategy.distribute_datasets_from_function(dataset_fn),
    ]

    def rows(iterator):
        xb, yb = next(iterator)
        return int(xb.shape[0])

    for source in sources:
        iterator = iter(coordinator.create_per_worker_dataset(source))
        results = [coordinator.schedule(rows, args=(iterator,)) for _ in range(4)]
        coordinator.join()
        assert [r.fetch() for r in results] in ([8] * 4, [32] * 4)
