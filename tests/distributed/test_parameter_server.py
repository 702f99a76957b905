"""ParameterServerStrategy on a real cluster: `unison server` processes (2 workers, 2 PS) on
loopback, this test process as the chief. TF's tutorial paths train; shards and sparse pulls do
what they promise; failures of workers and parameter servers end as TF promises (or better)."""

from __future__ import annotations

import sys
import time

import cloudpickle
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import unison as tf
from unison.distribute.parameter_server import (
    CancelledError,
    FunctionError,
    ParameterServerUnavailableError,
    protocol,
)
from unison.testing.ps_cluster import LocalParameterServerCluster

# The workers cannot import this test module: send its functions by value, as for a __main__.
cloudpickle.register_pickle_by_value(sys.modules[__name__])

pytestmark = pytest.mark.timeout(240)
W = np.linspace(-1.0, 1.0, 10).astype("float32")


def dataset_fn(input_context):
    """TF's tutorial shape: an endless per-worker dataset of a linearly separable problem."""
    batch = input_context.get_per_replica_batch_size(64)
    rng = np.random.default_rng(input_context.input_pipeline_id)

    def batches():
        while True:
            x = rng.standard_normal((batch, 10)).astype("float32")
            yield torch.from_numpy(x), torch.from_numpy((x @ W > 0).astype("int64"))

    return batches()


def _updates(strategy) -> int:
    """Gradient applications summed over every shard of every parameter server."""
    servers = strategy._servers
    return sum(sum(servers.call(i, protocol.PS_STATS)[0]["updates"].values()) for i in range(len(servers)))


@pytest.fixture(scope="module")
def cluster():
    with LocalParameterServerCluster(num_workers=2, num_ps=2) as c:
        yield c


@pytest.fixture
def strategy(cluster):
    s = tf.distribute.ParameterServerStrategy(cluster.resolver(), timeout_seconds=30)
    yield s
    if s._coordinator is not None:
        s._coordinator.shutdown()


@pytest.mark.slow
def test_tf_tutorial_custom_loop_trains_and_every_scheduled_step_is_applied(strategy):
    torch.manual_seed(0)
    with strategy.scope():
        model = torch.nn.Sequential(torch.nn.Linear(10, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
        optimizer = torch.optim.RMSprop(model.parameters(), lr=0.01)
        accuracy = tf.keras.metrics.SparseCategoricalAccuracy()

    def step_fn(iterator):
        def replica_fn(x, y):
            logits = model(x)
            loss = tf.nn.compute_average_loss(F.cross_entropy(logits, y, reduction="none"))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            accuracy.update_state(y, logits)
            return loss.detach()

        x, y = next(iterator)
        return strategy.reduce(tf.distribute.ReduceOp.SUM, strategy.run(replica_fn, args=(x, y)), axis=None)

    coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)

    def per_worker_dataset_fn():
        return strategy.distribute_datasets_from_function(dataset_fn)

    iterator = iter(coordinator.create_per_worker_dataset(per_worker_dataset_fn))
    for _ in range(3):
        accuracy.reset_state()
        for _ in range(60):
            coordinator.schedule(step_fn, args=(iterator,))
        coordinator.join()
    assert accuracy.result() > 0.9, accuracy.result()
    # every sample of the last epoch counted exactly once, whichever worker ran it
    assert accuracy.state()[1].item() == 60 * 64
    final = coordinator.fetch(coordinator.schedule(step_fn, args=(iterator,)))
    assert isinstance(final, torch.Tensor) and final.item() < 0.4
    coordinator.join()
    # each parameter got one update per step (4 parameters, 181 steps)
    assert _updates(strategy) == 4 * 181
    # join() refreshed the coordinator's copies from the servers
    assert torch.equal(strategy.read_variable(model[0].weight), model[0].weight.detach())


def test_fit_with_dataset_creator_trains_and_evaluates_on_workers_and_here(strategy):
    with strategy.scope():
        model = tf.keras.Sequential(
            [
                tf.keras.layers.Dense(16, activation="relu", input_shape=(10,)),
                tf.keras.layers.Dense(2, activation="softmax"),
            ]
        )
        model.compile(tf.keras.optimizers.SGD(0.1), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    x = np.random.default_rng(7).standard_normal((400, 10)).astype("float32")
    y = (x @ W > 0).astype("int64")
    creator = tf.keras.utils.experimental.DatasetCreator(dataset_fn)
    history = model.fit(creator, epochs=3, steps_per_epoch=40, verbose=0, validation_data=(x, y))
    assert sorted(history.history) == ["accuracy", "loss", "val_accuracy", "val_loss"]
    assert history.history["val_accuracy"][-1] > 0.9
    assert history.history["loss"][-1] < history.history["loss"][0]
    on_workers = model.evaluate(creator, steps=8, verbose=0, return_dict=True)
    assert on_workers["accuracy"] > 0.9
    with pytest.raises(ValueError, match="steps_per_epoch"):
        model.fit(creator, epochs=1)
    with pytest.raises(ValueError, match="steps="):
        model.evaluate(creator)
    # numpy arrays: each worker reads its own shard of rows
    history = model.fit(x, y, batch_size=32, epochs=1, steps_per_epoch=10, verbose=0)
    assert history.history["accuracy"][0] > 0.85

    # evaluation on the workers runs in inference mode: with dropout, one fixed batch scores the same twice
    with strategy.scope():
        dropped = tf.keras.Sequential(
            [
                tf.keras.layers.Dense(16, input_shape=(10,)),
                tf.keras.layers.Dropout(0.5),
                tf.keras.layers.Dense(2, activation="softmax"),
            ]
        )
        dropped.compile("sgd", loss="sparse_categorical_crossentropy")
    fixed = tf.keras.utils.experimental.DatasetCreator(_same_batch)
    first, second = (dropped.evaluate(fixed, steps=2, verbose=0) for _ in range(2))
    assert first == pytest.approx(second, rel=1e-6)
    with pytest.raises(ValueError, match="validation_steps="):
        dropped.fit(fixed, epochs=1, steps_per_epoch=1, validation_data=fixed, verbose=0)


def _same_batch(input_context):
    x = torch.from_numpy(np.random.default_rng(0).standard_normal((32, 10)).astype("float32"))
    while True:
        yield x, (x.sum(1) > 0).long()


def test_sharded_variables_follow_the_partitioner_and_gather_back_equal(cluster):
    partitioners = tf.distribute.experimental.partitioners
    strategy = tf.distribute.ParameterServerStrategy(
        cluster.resolver(), variable_partitioner=partitioners.FixedShardsPartitioner(3)
    )
    with strategy.scope():
        table = torch.nn.Linear(4, 10)  # weight (10, 4): shards of 4, 3, 3 rows
    shards = strategy.variable_shards(table.weight)
    assert [s["rows"] for s in shards] == [(0, 4), (4, 7), (7, 10)]
    assert {s["task"] for s in shards} == {"ps:0", "ps:1"}
    assert torch.equal(strategy.read_variable(table.weight), table.weight.detach())
    # one shard's rows on its server are exactly the slice the partitioner assigned
    _, part = strategy._servers.call(int(shards[1]["task"][-1]), protocol.PS_PULL, {"names": [shards[1]["shard"]]})
    assert torch.equal(part[0], table.weight.detach()[4:7])

    strategy = tf.distribute.ParameterServerStrategy(
        cluster.resolver(), variable_partitioner=partitioners.MaxSizePartitioner(max_shard_bytes=4 * 4 * 4)
    )
    with strategy.scope():
        table = torch.nn.Linear(4, 10)  # 16 bytes per row, at most 64 per shard: 3 shards
    assert [s["rows"] for s in strategy.variable_shards(table.weight)] == [(0, 4), (4, 7), (7, 10)]
    assert torch.equal(strategy.read_variable(table.weight), table.weight.detach())
    assert len(strategy.variable_shards(table.bias)) == 1  # 40 bytes fit in one 64-byte shard


def test_coordinator_side_changes_reach_the_servers_at_the_next_schedule(strategy):
    with strategy.scope():
        layer = torch.nn.Linear(3, 1)
        optimizer = torch.optim.SGD(layer.parameters(), lr=0.0)
    coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)

    def step_fn(x):
        optimizer.zero_grad()
        layer(x).sum().backward()
        optimizer.step()
        return layer.weight.detach().clone()  # what the worker pulled before this step

    x = torch.ones(2, 3)
    coordinator.schedule(step_fn, args=(x,))
    coordinator.join()
    unchanged = layer.weight.detach().clone()
    # a restore on the coordinator (in place, as load_state_dict does) goes to the servers
    layer.load_state_dict({"weight": torch.full((1, 3), 5.0), "bias": torch.zeros(1)})
    assert torch.equal(coordinator.schedule(step_fn, args=(x,)).fetch(), torch.full((1, 3), 5.0))
    coordinator.join()
    assert torch.equal(layer.weight.detach(), torch.full((1, 3), 5.0)) and not torch.equal(unchanged, layer.weight)
    # so does a new learning rate: lr 0 left the weight alone, lr 0.5 moves it by 0.5 * grad (2 per entry)
    optimizer.param_groups[0]["lr"] = 0.5
    coordinator.schedule(step_fn, args=(x,))
    coordinator.join()
    assert torch.allclose(layer.weight.detach(), torch.full((1, 3), 4.0))


def test_sparse_embedding_steps_pull_and_push_only_the_touched_rows(strategy):
    rows, dim, batch = 200_000, 16, 64
    with strategy.scope():
        embedding = tf.keras.layers.Embedding(rows, dim)
        head = torch.nn.Linear(dim, 1)
        optimizer = torch.optim.SGD(list(embedding.parameters()) + list(head.parameters()), lr=0.5)
    before = embedding.embeddings.detach().clone()
    coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)

    def step_fn(ids, labels):
        logits = head(embedding(ids).mean(1)).squeeze(1)
        loss = F.binary_cross_entropy_with_logits(logits, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    generator = torch.Generator().manual_seed(0)
    all_ids = [torch.randint(0, rows, (batch, 2), generator=generator) for _ in range(10)]
    start = coordinator.worker_stats()
    for ids in all_ids:
        coordinator.schedule(step_fn, args=(ids, torch.rand(batch, generator=generator)))
    coordinator.join()
    moved = sum(s["bytes_sent"] + s["bytes_received"] for s in coordinator.worker_stats()) - sum(
        s["bytes_sent"] + s["bytes_received"] for s in start
    )
    touched = torch.unique(torch.cat([i.reshape(-1) for i in all_ids]))
    # per step at most: the ids (8 bytes) and rows (64 bytes) pulled, ids and gradient rows pushed,
    # and the dense head pulled and pushed; the table itself is 12.8 MB
    per_step_bound = 2 * batch * 2 * (8 + 4 * dim) + 4 * 4 * (dim + 1)
    assert moved <= 10 * per_step_bound, moved
    assert moved < embedding.embeddings.nbytes / 50
    changed = (embedding.embeddings.detach() != before).any(1).nonzero().reshape(-1)
    assert set(changed.tolist()) <= set(touched.tolist())
    assert len(changed) > 0.9 * len(touched)  # plain SGD: every touched row moved, no other


def test_sharded_sparse_table_with_padding_and_momentum(cluster):
    strategy = tf.distribute.ParameterServerStrategy(
        cluster.resolver(), variable_partitioner=tf.distribute.experimental.partitioners.FixedShardsPartitioner(2)
    )
    with strategy.scope():
        table = torch.nn.Embedding(1000, 4, padding_idx=0)
        optimizer = torch.optim.SGD(table.parameters(), lr=0.1, momentum=0.9)
    assert [s["rows"] for s in strategy.variable_shards(table.weight)] == [(0, 500), (500, 1000)]
    before = table.weight.detach().clone()
    coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)

    def step_fn(ids):
        optimizer.zero_grad()
        table(ids).sum().backward()
        optimizer.step()

    ids = torch.tensor([[0, 3, 3], [499, 500, 999]])  # the padding row, a duplicate, both shards' edges
    coordinator.schedule(step_fn, args=(ids,))
    coordinator.join()
    after = table.weight.detach()
    assert torch.equal(after[0], before[0])  # padding_idx: no gradient
    assert torch.allclose(after[3], before[3] - 0.2) and torch.allclose(after[999], before[999] - 0.1)
    assert torch.allclose(after[500], before[500] - 0.1)
    untouched = torch.ones(1000, dtype=torch.bool)
    untouched[[0, 3, 499, 500, 999]] = False
    assert torch.equal(after[untouched], before[untouched])
    state = strategy.optimizer_state(optimizer)[0]  # SGD's momentum buffer is sparse on the server
    assert state["momentum_buffer"].shape == (1000, 4) and state["momentum_buffer"][3].tolist() == [2.0] * 4
    with pytest.raises(FunctionError, match="received id 1000, outside \\[0, input_dim=1000\\)"):
        coordinator.schedule(step_fn, args=(torch.tensor([[1000]]),)).fetch()
    coordinator.shutdown()


def test_function_errors_name_the_worker_cancel_the_queue_and_leave_the_coordinator_usable(strategy):
    coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)

    def fails(x):
        if x == 3:
            raise ZeroDivisionError("step 3 divided by zero")
        time.sleep(0.05)
        return x

    values = [coordinator.schedule(fails, args=(i,)) for i in range(8)]
    with pytest.raises(FunctionError, match=r"worker:\d.*ZeroDivisionError: step 3 divided by zero") as info:
        coordinator.join()
    assert "in fails" in info.value.remote_traceback  # the worker-side frame of the function
    assert values[0].fetch() == 0
    with pytest.raises(FunctionError):
        values[3].fetch()
    assert any(isinstance(_error(v), CancelledError) for v in values[4:])
    # the error was reported once; the coordinator goes on
    assert coordinator.schedule(fails, args=(5,)).fetch() == 5
    coordinator.join()

    iterator = iter(coordinator.create_per_worker_dataset(strategy.distribute_datasets_from_function(dataset_fn)))
    with pytest.raises(TypeError, match="Pass it as an argument"):
        coordinator.schedule(lambda: next(iterator))
    with pytest.raises(TypeError, match="next\\(iterator\\) inside the function"):
        next(iterator)
    with pytest.raises(TypeError, match="schedule needs a callable"):
        coordinator.schedule(42)
    import threading

    lock = threading.Lock()
    with pytest.raises(TypeError, match="must be picklable"):
        coordinator.schedule(lambda: lock.locked())
    with pytest.raises(TypeError, match="Linear was passed to schedule.*closure"):
        coordinator.schedule(lambda m: m, args=(torch.nn.Linear(2, 2),))
    # a result the worker cannot send back is that function's error, not a lost worker (no retry loop)
    with pytest.raises(FunctionError, match="worker:\\d"):
        coordinator.schedule(lambda: torch.eye(2).to_sparse()).fetch()
    with pytest.raises(FunctionError):
        coordinator.join()
    assert coordinator.requeued == 0 and coordinator.schedule(fails, args=(1,)).fetch() == 1


def _error(value):
    try:
        value.fetch()
    except Exception as exc:  # noqa: BLE001
        return exc
    return None


@pytest.mark.slow
def test_a_worker_killed_mid_training_loses_no_step_and_rejoins_after_restart():
    with LocalParameterServerCluster(num_workers=2, num_ps=1) as cluster:
        strategy = tf.distribute.ParameterServerStrategy(cluster.resolver(), timeout_seconds=30)
        with strategy.scope():
            model = torch.nn.Linear(10, 2)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)

        def step_fn(x, y):
            time.sleep(0.05)  # long enough that the kill lands while steps are in flight
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            return tf.distribute.get_strategy().worker_index

        x, y = torch.randn(16, 10), torch.randint(0, 2, (16,))
        values = [coordinator.schedule(step_fn, args=(x, y)) for _ in range(60)]
        while sum(v._done.is_set() for v in values) < 10:
            time.sleep(0.01)
        cluster.kill("worker:1")
        coordinator.join()
        ran_on = [v.fetch() for v in values]  # every scheduled step has a result
        assert len(ran_on) == 60 and set(ran_on) <= {0, 1}
        assert _updates(strategy) >= 2 * 60  # at least once: 2 parameters, 60 steps

        cluster.start("worker:1")  # a restarted worker rejoins and gets the function again
        deadline = time.monotonic() + 60
        seen: set[int] = set()
        while 1 not in seen and time.monotonic() < deadline:
            seen |= {v.fetch() for v in [coordinator.schedule(step_fn, args=(x, y)) for _ in range(10)]}
        assert 1 in seen, "the restarted worker never ran a step"
        assert coordinator.requeued >= 1  # the kill did land on a step in flight

        # a restart between two functions, unnoticed by the coordinator: it sends everything again
        coordinator.join()
        cluster.kill("worker:1")
        cluster.start("worker:1")
        values = [coordinator.schedule(step_fn, args=(x, y)) for _ in range(30)]
        coordinator.join()
        assert len([v.fetch() for v in values]) == 30
        coordinator.shutdown()
        with pytest.raises(RuntimeError, match="shut down"):
            coordinator.schedule(step_fn, args=(x, y))


def test_a_killed_parameter_server_is_named_within_the_timeout_and_stops_scheduling():
    with LocalParameterServerCluster(num_workers=1, num_ps=2) as cluster:
        strategy = tf.distribute.ParameterServerStrategy(
            cluster.resolver(),
            timeout_seconds=10,
            variable_partitioner=tf.distribute.experimental.partitioners.FixedShardsPartitioner(2),
        )
        with strategy.scope():
            model = torch.nn.Linear(10, 4)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)

        def step_fn(x):
            optimizer.zero_grad()
            model(x).sum().backward()
            optimizer.step()

        coordinator.schedule(step_fn, args=(torch.randn(4, 10),))
        coordinator.join()
        cluster.kill("ps:1")
        killed = time.monotonic()
        with pytest.raises(ParameterServerUnavailableError, match="ps:1") as info:
            for _ in range(1000):
                coordinator.schedule(step_fn, args=(torch.randn(4, 10),))
                time.sleep(0.02)
            coordinator.join()
        assert time.monotonic() - killed < 10
        assert info.value.task == "ps:1"
        with pytest.raises(ParameterServerUnavailableError, match="ps:1"):
            coordinator.schedule(step_fn, args=(torch.randn(4, 10),))  # the failure is sticky
        with pytest.raises(ParameterServerUnavailableError, match="ps:1"):
            coordinator.join()
        coordinator.shutdown()


@pytest.mark.slow
def test_a_restarted_coordinator_resumes_from_its_backup_with_the_servers_restored(tmp_path):
    import json
    import os
    import pickle
    import subprocess

    from unison.train.files import BackupFiles

    program = os.path.join(os.path.dirname(__file__), "ps_coordinator.py")
    backup_dir = str(tmp_path / "backup")
    with LocalParameterServerCluster(num_workers=2, num_ps=2) as cluster:
        env = {**os.environ, "PS_TEST_CLUSTER": json.dumps(cluster.cluster)}
        first = subprocess.run(
            [sys.executable, program, str(tmp_path / "first.pkl"), backup_dir, "2"],
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert first.returncode == 3, first.stderr[-3000:]
        saved = BackupFiles(backup_dir, prefix="backup").restore_latest()
        assert saved["epoch"] == 2
        second = subprocess.run(
            [sys.executable, program, str(tmp_path / "second.pkl"), backup_dir, "0"],
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert second.returncode == 0, second.stderr[-3000:]
    with open(tmp_path / "second.pkl", "rb") as f:
        result = pickle.load(f)
    assert result["restored_from"] == (2, 0)
    assert len(result["history"]["loss"]) == 2  # epochs 3 and 4 only
    seen = result["seen"]
    assert seen["epoch"] == 2
    # the servers start the resumed run from the backup: weights and Adam's step count (2 x 30 updates)
    assert np.array_equal(seen["kernel"], saved["model"]["stack.0.kernel"].numpy())
    assert seen["adam_step"] == 60.0
    assert result["history"]["accuracy"][-1] > 0.9


@pytest.mark.slow
def test_the_recommender_example_trains_and_moves_only_touched_rows():
    import os
    import re
    import subprocess

    example = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "recommender_ps.py")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_") and k != "TF_CONFIG"}
    proc = subprocess.run(
        [
            sys.executable,
            example,
            "--users",
            "50000",
            "--items",
            "20000",
            "--epochs",
            "2",
            "--steps-per-epoch",
            "25",
            "--batch-size",
            "256",
        ],
        capture_output=True,
        text=True,
        timeout=200,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    accuracies = [float(a) for a in re.findall(r"^epoch \d/2 - loss: [\d.]+ - accuracy: ([\d.]+)$", proc.stdout, re.M)]
    assert len(accuracies) == 2 and accuracies[-1] > 0.8, proc.stdout
    ratio = re.search(r"\((\d+)x less\)", proc.stdout)
    assert ratio and int(ratio.group(1)) > 100, proc.stdout  # 4.5 MB of tables, a few kB per step
