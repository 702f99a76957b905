"""A custom training loop under MirroredStrategy: TF's structure, PyTorch inside.

    python examples/custom_loop.py                          # one replica
    python examples/custom_loop.py --devices /cpu:0,/cpu:1  # two CPU replicas

What TF does with ``GradientTape`` you do with ``loss.backward()``; inside ``strategy.run`` every
``optimizer.step()`` first sums the gradients of all replicas, so divide the per-example losses
by the *global* batch size (``tf.nn.compute_average_loss``).
"""

import argparse

import torch
import torch.nn.functional as F

import unison as tf

parser = argparse.ArgumentParser()
parser.add_argument("--devices", default=None)
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--batch-size", type=int, default=64, help="global batch size")
args = parser.parse_args()

strategy = tf.distribute.MirroredStrategy(args.devices.split(",") if args.devices else None)
print_ = print if strategy.extended.should_save_summary else (lambda *a, **k: None)

with strategy.scope():
    # Parameters created here are mirrored: replica 0's values are copied to every replica.
    model = torch.nn.Sequential(torch.nn.Linear(784, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

(x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
x_train = torch.from_numpy(x_train.reshape(-1, 784).astype("float32") / 255)
y_train = torch.from_numpy(y_train.astype("int64"))
x_test = torch.from_numpy(x_test.reshape(-1, 784).astype("float32") / 255)
y_test = torch.from_numpy(y_test.astype("int64"))


def global_batches(x, y, batch_size, seed):
    """Every replica builds the same list of global batches; each takes its rows of each one."""
    order = torch.randperm(len(x), generator=torch.Generator().manual_seed(seed))
    return [(x[order[i : i + batch_size]], y[order[i : i + batch_size]]) for i in range(0, len(x), batch_size)]


def train_step(x, y, global_batch_size):
    logits = model(x)
    per_example = F.cross_entropy(logits, y, reduction="none")
    loss = tf.nn.compute_average_loss(per_example, global_batch_size=global_batch_size)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()  # gradients are summed across replicas first
    correct = (logits.argmax(1) == y).sum()
    return per_example.sum().detach(), correct


for epoch in range(args.epochs):
    batches = global_batches(x_train, y_train, args.batch_size, seed=epoch)
    total_loss, total_correct = torch.zeros(()), torch.zeros(())
    for (x, y), (gx, _) in zip(strategy.experimental_distribute_dataset(batches), batches):
        loss_sum, correct = strategy.run(train_step, args=(x, y, len(gx)))
        total_loss += loss_sum
        total_correct += correct
    loss = strategy.reduce(tf.distribute.ReduceOp.SUM, total_loss).item() / len(x_train)
    acc = strategy.reduce(tf.distribute.ReduceOp.SUM, total_correct).item() / len(x_train)
    with torch.no_grad():
        # Evaluation: each replica scores its shard; the sums are reduced.
        test = strategy.experimental_distribute_dataset([(x_test, y_test)])
        ((xt, yt),) = list(test)
        correct = (model(xt).argmax(1) == yt).sum()
        val_acc = strategy.reduce(tf.distribute.ReduceOp.SUM, correct).item() / len(x_test)
    print_(f"epoch {epoch + 1}: loss {loss:.4f} - accuracy {acc:.4f} - val_accuracy {val_acc:.4f}")
