"""TF's parameter-server training tutorial on unison: ``model.fit`` and a custom loop.

    python examples/ps_tutorial.py                    # starts 2 PS + 2 workers on this machine
    TF_CONFIG=... python examples/ps_tutorial.py      # one task of a real cluster

The structure is the tutorial's: the ``ps``/``worker`` tasks run ``tf.distribute.Server(...).join()``,
the chief builds a ``ParameterServerStrategy`` with a ``MinSizePartitioner``, trains with
``model.fit(DatasetCreator(dataset_fn), epochs, steps_per_epoch)``, then runs a custom loop with
``ClusterCoordinator.schedule``. Inside the step function you write PyTorch: ``loss.backward()``
and ``optimizer.step()`` (which sends the gradients to the parameter servers).
"""

import os

import numpy as np
import torch
import torch.nn.functional as F

import unison as tf

NUM_FEATURES = 10
TRUE_WEIGHTS = np.linspace(-1.0, 1.0, NUM_FEATURES).astype("float32")


def dataset_fn(input_context):
    """Each worker builds its own endless dataset (the tutorial's ``.shuffle().repeat().batch()``)."""
    global_batch_size = 64
    batch_size = input_context.get_per_replica_batch_size(global_batch_size)
    rng = np.random.default_rng(input_context.input_pipeline_id)
    while True:
        x = rng.standard_normal((batch_size, NUM_FEATURES)).astype("float32")
        yield x, (x @ TRUE_WEIGHTS > 0).astype("int64")


def main(cluster_resolver):
    variable_partitioner = tf.distribute.experimental.partitioners.MinSizePartitioner(
        min_shard_bytes=(256 << 10), max_shards=2
    )
    strategy = tf.distribute.ParameterServerStrategy(cluster_resolver, variable_partitioner=variable_partitioner)

    # --- Training with Model.fit ---------------------------------------------------------------
    with strategy.scope():
        model = tf.keras.Sequential(
            [
                tf.keras.layers.Dense(32, activation="relu", input_shape=(NUM_FEATURES,)),
                tf.keras.layers.Dense(2, activation="softmax"),
            ]
        )
        model.compile(tf.keras.optimizers.SGD(0.1), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(tf.keras.utils.experimental.DatasetCreator(dataset_fn), epochs=3, steps_per_epoch=50, verbose=2)

    # --- Training with a custom training loop ---------------------------------------------------
    with strategy.scope():
        model = tf.keras.Sequential(
            [tf.keras.layers.Dense(32, activation="relu", input_shape=(NUM_FEATURES,)), tf.keras.layers.Dense(2)]
        )
        optimizer = torch.optim.RMSprop(model.parameters(), lr=0.01)
        accuracy = tf.keras.metrics.SparseCategoricalAccuracy()

    def step_fn(iterator):
        def replica_fn(batch_data, labels):
            logits = model(torch.as_tensor(batch_data))
            labels = torch.as_tensor(labels)
            loss = tf.nn.compute_average_loss(F.cross_entropy(logits, labels, reduction="none"))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            accuracy.update_state(labels, logits.detach())
            return loss.detach()

        batch_data, labels = next(iterator)
        losses = strategy.run(replica_fn, args=(batch_data, labels))
        return strategy.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None)

    coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)

    def per_worker_dataset_fn():
        return strategy.distribute_datasets_from_function(dataset_fn)

    per_worker_iterator = iter(coordinator.create_per_worker_dataset(per_worker_dataset_fn))
    num_epochs, steps_per_epoch = 3, 50
    for i in range(num_epochs):
        accuracy.reset_state()
        for _ in range(steps_per_epoch):
            coordinator.schedule(step_fn, args=(per_worker_iterator,))
        coordinator.join()  # waits for every scheduled step
        print(f"Finished epoch {i}, accuracy is {accuracy.result():.6f}.")
    loss = coordinator.schedule(step_fn, args=(per_worker_iterator,))
    print(f"Final loss is {float(loss.fetch()):.6f}")


if os.environ.get("TF_CONFIG"):
    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    if resolver.task_type in ("worker", "ps"):
        server = tf.distribute.Server(
            resolver.cluster_spec(),
            job_name=resolver.task_type,
            task_index=resolver.task_id,
            protocol=resolver.rpc_layer or "grpc",
            start=True,
        )
        server.join()
    else:
        main(resolver)
else:
    from unison.testing.ps_cluster import LocalParameterServerCluster

    with LocalParameterServerCluster(num_workers=2, num_ps=2) as cluster:
        main(cluster.resolver())
