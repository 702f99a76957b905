# Source: keras.io "Simple MNIST convnet" by fchollet (keras-team/keras-io,
# examples/vision/mnist_convnet.py, Apache License 2.0), as one program, with the model built and
# compiled inside `tf.distribute.MirroredStrategy().scope()`.
#
# Lines changed from the example:
#   - `from tensorflow import keras` -> `import unison as tf` + `from unison import keras`
#   - `from tensorflow.keras import layers` -> `from unison.keras import layers`
#   - added: `strategy = tf.distribute.MirroredStrategy(...)` (devices from $UNISON_EXAMPLE_DEVICES,
#     default None: every GPU, else one CPU replica), a print of its replica count, and
#     `with strategy.scope():` around the model's construction, summary and compile (indented)
#   - epochs = 15 -> $EPOCHS (default 15); $TRAIN_SAMPLES / $TEST_SAMPLES cut the data (CI)
# Run: UNISON_DATA_DIR=../shared/data python examples/tf/mnist_convnet.py
#      (two replicas: the same with UNISON_EXAMPLE_DEVICES=/cpu:0,/cpu:1)

"""
## Setup
"""

import os

import numpy as np
import unison as tf
from unison import keras
from unison.keras import layers

"""
## Prepare the data
"""

# Model / data parameters
num_classes = 10
input_shape = (28, 28, 1)

# Load the data and split it between train and test sets
(x_train, y_train), (x_test, y_test) = keras.datasets.mnist.load_data()
if os.environ.get("TRAIN_SAMPLES"):
    x_train, y_train = x_train[:int(os.environ["TRAIN_SAMPLES"])], y_train[:int(os.environ["TRAIN_SAMPLES"])]
if os.environ.get("TEST_SAMPLES"):
    x_test, y_test = x_test[:int(os.environ["TEST_SAMPLES"])], y_test[:int(os.environ["TEST_SAMPLES"])]

# Scale images to the [0, 1] range
x_train = x_train.astype("float32") / 255
x_test = x_test.astype("float32") / 255
# Make sure images have shape (28, 28, 1)
x_train = np.expand_dims(x_train, -1)
x_test = np.expand_dims(x_test, -1)
print("x_train shape:", x_train.shape)
print(x_train.shape[0], "train samples")
print(x_test.shape[0], "test samples")


# convert class vectors to binary class matrices
y_train = keras.utils.to_categorical(y_train, num_classes)
y_test = keras.utils.to_categorical(y_test, num_classes)

"""
## Build the model
"""

devices = os.environ.get("UNISON_EXAMPLE_DEVICES")
strategy = tf.distribute.MirroredStrategy(devices.split(",") if devices else None)
print("Number of devices: {}".format(strategy.num_replicas_in_sync))

with strategy.scope():
    model = keras.Sequential(
        [
            keras.Input(shape=input_shape),
            layers.Conv2D(32, kernel_size=(3, 3), activation="relu"),
            layers.MaxPooling2D(pool_size=(2, 2)),
            layers.Conv2D(64, kernel_size=(3, 3), activation="relu"),
            layers.MaxPooling2D(pool_size=(2, 2)),
            layers.Flatten(),
            layers.Dropout(0.5),
            layers.Dense(num_classes, activation="softmax"),
        ]
    )

    model.summary()

    """
    ## Train the model
    """

    batch_size = 128
    epochs = int(os.environ.get("EPOCHS", 15))

    model.compile(loss="categorical_crossentropy", optimizer="adam", metrics=["accuracy"])

model.fit(x_train, y_train, batch_size=batch_size, epochs=epochs, validation_split=0.1)

"""
## Evaluate the trained model
"""

score = model.evaluate(x_test, y_test, verbose=0)
print("Test loss:", score[0])
print("Test accuracy:", score[1])
