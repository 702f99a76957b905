"""The seed program of unison: TensorFlow's MNIST example with only the import changed.

Run it as ``python examples/mnist_seed.py`` (one replica, or every GPU), or choose the strategy:

    python examples/mnist_seed.py --devices /cpu:0,/cpu:1      # two CPU replicas on this host
    python examples/mnist_seed.py --epochs 1
    python examples/mnist_seed.py --tensorboard logs        # then: tensorboard --logdir logs
    unison launch --nproc-per-node 2 examples/mnist_seed.py  # two replicas under the launcher

MNIST is read from $UNISON_DATA_DIR/mnist (e.g. UNISON_DATA_DIR=../shared/data).
"""

import argparse

import unison as tf

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--devices", default=None, help="comma-separated TF device strings, e.g. /cpu:0,/cpu:1")
parser.add_argument("--epochs", type=int, default=5)
parser.add_argument("--verbose", default="auto", help="Keras verbosity: auto, 0, 1 or 2")
parser.add_argument("--tensorboard", default=None, metavar="DIR", help="write TensorBoard logs to DIR")
args = parser.parse_args()

# choose the distribution strategy
strategy = tf.distribute.MirroredStrategy(args.devices.split(",") if args.devices else None)

# define the model inside the strategy's scope
with strategy.scope():
    model = tf.keras.Sequential(
        [
            tf.keras.layers.Dense(128, activation="relu", input_shape=(784,)),
            tf.keras.layers.Dense(10, activation="softmax"),
        ]
    )

    # compile it with the distributed optimizer
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])

# load the data set
(x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
x_train = x_train.reshape(-1, 784).astype("float32") / 255
x_test = x_test.reshape(-1, 784).astype("float32") / 255

# train
verbose = args.verbose if args.verbose == "auto" else int(args.verbose)
callbacks = [tf.keras.callbacks.TensorBoard(log_dir=args.tensorboard)] if args.tensorboard else []
model.fit(x_train, y_train, epochs=args.epochs, validation_data=(x_test, y_test), verbose=verbose, callbacks=callbacks)
