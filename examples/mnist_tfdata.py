"""The seed program with a tf.data input pipeline: ``fit`` on a shuffled, batched Dataset.

    python examples/mnist_tfdata.py                          # one replica
    python examples/mnist_tfdata.py --devices /cpu:0,/cpu:1  # two CPU replicas on this host

MNIST is read from $UNISON_DATA_DIR/mnist (e.g. UNISON_DATA_DIR=../shared/data).
"""

import argparse

import unison as tf

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--devices", default=None, help="comma-separated TF device strings, e.g. /cpu:0,/cpu:1")
parser.add_argument("--epochs", type=int, default=5)
parser.add_argument("--verbose", default="auto", help="Keras verbosity: auto, 0, 1 or 2")
args = parser.parse_args()

strategy = tf.distribute.MirroredStrategy(args.devices.split(",") if args.devices else None)

with strategy.scope():
    model = tf.keras.Sequential(
        [
            tf.keras.layers.Dense(128, activation="relu", input_shape=(784,)),
            tf.keras.layers.Dense(10, activation="softmax"),
        ]
    )
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])

(x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
x_train = x_train.reshape(-1, 784).astype("float32") / 255
x_test = x_test.reshape(-1, 784).astype("float32") / 255

train = tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(60000).batch(32)
test = tf.data.Dataset.from_tensor_slices((x_test, y_test)).batch(32)

verbose = args.verbose if args.verbose == "auto" else int(args.verbose)
model.fit(train, epochs=args.epochs, validation_data=test, verbose=verbose)
