"""The training loop of TF's "Custom training with tf.distribute.Strategy" tutorial, timed.

Runs under TensorFlow or unison: ``BENCH_TF_MODULE=tensorflow`` or ``unison`` (the only
difference, as in the tutorial's one changed import). MirroredStrategy with its default devices
(one CPU replica here), the tutorial's model, loss, metrics, Adam, ``strategy.run`` of a
GradientTape step inside ``tf.function``. Data: random images of Fashion-MNIST's shape (speed
does not depend on the pixel values). One untimed warm-up epoch, then ``BENCH_EPOCHS`` timed
epochs; prints one JSON line.
"""

import importlib
import json
import os
import time

import numpy as np

tf = importlib.import_module(os.environ.get("BENCH_TF_MODULE", "unison"))

ROWS = int(os.environ.get("BENCH_ROWS", 6400))
EPOCHS = int(os.environ.get("BENCH_EPOCHS", 1))
rng = np.random.default_rng(0)
train_images = rng.random((ROWS, 28, 28, 1), dtype=np.float32)
train_labels = rng.integers(0, 10, ROWS).astype(np.int64)

strategy = tf.distribute.MirroredStrategy()
BATCH_SIZE_PER_REPLICA = 64
GLOBAL_BATCH_SIZE = BATCH_SIZE_PER_REPLICA * strategy.num_replicas_in_sync
train_dataset = tf.data.Dataset.from_tensor_slices((train_images, train_labels)).shuffle(ROWS).batch(GLOBAL_BATCH_SIZE)
train_dist_dataset = strategy.experimental_distribute_dataset(train_dataset)


def create_model():
    regularizer = tf.keras.regularizers.L2(1e-5)
    return tf.keras.Sequential(
        [
            tf.keras.layers.Conv2D(32, 3, activation="relu", kernel_regularizer=regularizer),
            tf.keras.layers.MaxPooling2D(),
            tf.keras.layers.Conv2D(64, 3, activation="relu", kernel_regularizer=regularizer),
            tf.keras.layers.MaxPooling2D(),
            tf.keras.layers.Flatten(),
            tf.keras.layers.Dense(64, activation="relu", kernel_regularizer=regularizer),
            tf.keras.layers.Dense(10, kernel_regularizer=regularizer),
        ]
    )


with strategy.scope():
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")

    def compute_loss(labels, predictions, model_losses):
        loss = tf.nn.compute_average_loss(loss_object(labels, predictions))
        if model_losses:
            loss += tf.nn.scale_regularization_loss(tf.add_n(model_losses))
        return loss

    train_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="train_accuracy")
    model = create_model()
    optimizer = tf.keras.optimizers.Adam(learning_rate=0.001)


def train_step(inputs):
    images, labels = inputs
    with tf.GradientTape() as tape:
        predictions = model(images, training=True)
        loss = compute_loss(labels, predictions, model.losses)
    gradients = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    train_accuracy.update_state(labels, predictions)
    return loss


@tf.function
def distributed_train_step(dataset_inputs):
    per_replica_losses = strategy.run(train_step, args=(dataset_inputs,))
    return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica_losses, axis=None)


def epoch():
    total_loss, num_batches = 0.0, 0
    for x in train_dist_dataset:
        total_loss += distributed_train_step(x)
        num_batches += 1
    return float(total_loss / num_batches), num_batches


epoch()  # warm-up: tracing (TF), lazy builds (unison)
train_accuracy.reset_state()
start = time.perf_counter()
for _ in range(EPOCHS):
    loss, steps = epoch()
seconds = time.perf_counter() - start
print(
    json.dumps({"seconds": seconds, "steps": steps * EPOCHS, "loss": loss, "accuracy": float(train_accuracy.result())})
)
