"""A click-through model with large embedding tables under ParameterServerStrategy.

    python examples/recommender_ps.py                 # starts 2 PS + 2 workers on this machine
    TF_CONFIG=... python examples/recommender_ps.py   # one task of a real cluster (see below)

The user and item tables (1,000,000 x 16 and 200,000 x 16 floats, 77 MB) are sharded across the
parameter servers; a step of 512 clicks touches about a thousand rows, and only those rows are
pulled and pushed. The program prints each epoch's loss and accuracy, then the bytes one step
moved against the bytes a dense step (whole tables both ways) would move.

On a real cluster give every process the same ``cluster`` in TF_CONFIG and its own ``task``; the
``ps`` and ``worker`` tasks serve (``tf.distribute.Server(...).join()``, as TF's tutorial does),
the ``chief`` runs the training loop. Set ``UNISON_CLUSTER_TOKEN`` to the same secret everywhere
(``export UNISON_CLUSTER_TOKEN=$(unison token)``; shorter than 128 bits is refused), and across
hosts TLS too (``unison certs``, see docs/security.md).
"""

import argparse
import os

import numpy as np
import torch
import torch.nn.functional as F

import unison as tf

parser = argparse.ArgumentParser()
parser.add_argument("--users", type=int, default=1_000_000)
parser.add_argument("--items", type=int, default=200_000)
parser.add_argument("--dim", type=int, default=16)
parser.add_argument("--batch-size", type=int, default=512)
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--steps-per-epoch", type=int, default=100)
args = parser.parse_args()


def click_dataset(input_context):
    """Generated clicks: a user clicks an item when their hidden tastes agree (each worker its own stream).

    The hidden tastes come from a fixed seed, so every worker labels by the same rule.
    """
    taste = np.random.default_rng(0)
    user_taste = taste.standard_normal(args.users).astype("float32")
    item_taste = taste.standard_normal(args.items).astype("float32")
    rng = np.random.default_rng(1 + input_context.input_pipeline_id)
    while True:
        # popular users and items come back often (a Zipf-like draw), as in real logs
        users = np.minimum(rng.zipf(1.3, args.batch_size) - 1, args.users - 1)
        items = np.minimum(rng.zipf(1.3, args.batch_size) - 1, args.items - 1)
        clicked = (user_taste[users] * item_taste[items] > 0).astype("float32")
        yield torch.from_numpy(users), torch.from_numpy(items), torch.from_numpy(clicked)


class ClickModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.users = tf.keras.layers.Embedding(args.users, args.dim)
        self.items = tf.keras.layers.Embedding(args.items, args.dim)
        self.head = torch.nn.Sequential(torch.nn.Linear(2 * args.dim, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))

    def forward(self, users, items):
        return self.head(torch.cat([self.users(users), self.items(items)], dim=1)).squeeze(1)


def train(resolver):
    strategy = tf.distribute.ParameterServerStrategy(
        resolver,
        variable_partitioner=tf.distribute.experimental.partitioners.MinSizePartitioner(
            min_shard_bytes=8 << 20, max_shards=4
        ),
    )
    with strategy.scope():
        model = ClickModel()
        optimizer = torch.optim.Adagrad(model.parameters(), lr=0.1)
        accuracy = tf.keras.metrics.BinaryAccuracy(threshold=0.0)  # on logits
        mean_loss = tf.keras.metrics.Mean("loss")

    coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)
    per_worker = coordinator.create_per_worker_dataset(strategy.distribute_datasets_from_function(click_dataset))
    iterator = iter(per_worker)

    def step_fn(iterator):
        users, items, clicked = next(iterator)
        logits = model(users, items)
        loss = F.binary_cross_entropy_with_logits(logits, clicked)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()  # pushes the touched rows' gradients; the PS applies Adagrad to those rows
        accuracy.update_state(clicked, logits.detach())
        mean_loss.update_state(loss.detach())

    bytes_before = sum(s["bytes_sent"] + s["bytes_received"] for s in coordinator.worker_stats())
    for epoch in range(args.epochs):
        accuracy.reset_state()
        mean_loss.reset_state()
        for _ in range(args.steps_per_epoch):
            coordinator.schedule(step_fn, args=(iterator,))
        coordinator.join()
        print(f"epoch {epoch + 1}/{args.epochs} - loss: {mean_loss.result():.4f} - accuracy: {accuracy.result():.4f}")
    moved = sum(s["bytes_sent"] + s["bytes_received"] for s in coordinator.worker_stats()) - bytes_before
    steps = args.epochs * args.steps_per_epoch
    dense = 2 * sum(p.nbytes for p in model.parameters())
    print(
        f"bytes per step: {moved / steps / 1e3:.1f} kB sparse vs {dense / 1e6:.1f} MB dense "
        f"({dense / (moved / steps):.0f}x less); tables: "
        f"{', '.join(str(len(strategy.variable_shards(t))) for t in (model.users.embeddings, model.items.embeddings))} shards"
    )


if os.environ.get("TF_CONFIG"):
    cluster_resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    if cluster_resolver.task_type in ("worker", "ps"):
        server = tf.distribute.Server(
            cluster_resolver.cluster_spec(),
            job_name=cluster_resolver.task_type,
            task_index=cluster_resolver.task_id,
            protocol="grpc",
            start=True,
        )
        server.join()
    else:
        train(cluster_resolver)
else:
    from unison.testing.ps_cluster import LocalParameterServerCluster

    with LocalParameterServerCluster(num_workers=2, num_ps=2) as local_cluster:
        train(local_cluster.resolver())
