# Source: TensorFlow's tutorial "Distributed training with Keras"
# (tensorflow/docs, site/en/tutorials/distribute/keras.ipynb, TF 2.21 docs), its code cells in
# order, as one program.
#
# Lines changed from the tutorial:
#   - `import tensorflow as tf` -> `import unison as tf`
#   - `tfds.load('mnist', ...)` -> `tf.keras.datasets.mnist.load_data()` + `tf.data.Dataset.from_tensor_slices`
#     (no tensorflow_datasets here), with the channel axis tfds gives (`[..., None]`);
#     `num_train_examples`/`num_test_examples` from the arrays
#   - the notebook magics (`%load_ext tensorboard`, `!ls`, `%tensorboard`) -> `print(os.listdir(...))`
#   - EPOCHS = 12 -> read from $EPOCHS (default 12); $TRAIN_SAMPLES cuts the data (CI)
#   - './training_checkpoints', './logs', 'my_model.keras' under $WORK_DIR (default '.')
#   - MirroredStrategy() -> MirroredStrategy(devices from $UNISON_EXAMPLE_DEVICES, default None)
# Run: UNISON_DATA_DIR=../shared/data python examples/tf/keras_distributed.py

import unison as tf

import os

work_dir = os.environ.get("WORK_DIR", ".")

print(tf.__version__)

(x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
if os.environ.get("TRAIN_SAMPLES"):
  x_train, y_train = x_train[:int(os.environ["TRAIN_SAMPLES"])], y_train[:int(os.environ["TRAIN_SAMPLES"])]
mnist_train = tf.data.Dataset.from_tensor_slices((x_train[..., None], y_train))
mnist_test = tf.data.Dataset.from_tensor_slices((x_test[..., None], y_test))

devices = os.environ.get("UNISON_EXAMPLE_DEVICES")
strategy = tf.distribute.MirroredStrategy(devices.split(",") if devices else None)

print('Number of devices: {}'.format(strategy.num_replicas_in_sync))

# You can also do info.splits.total_num_examples to get the total
# number of examples in the dataset.

num_train_examples = len(x_train)
num_test_examples = len(x_test)

BUFFER_SIZE = 10000

BATCH_SIZE_PER_REPLICA = 64
BATCH_SIZE = BATCH_SIZE_PER_REPLICA * strategy.num_replicas_in_sync

def scale(image, label):
  image = tf.cast(image, tf.float32)
  image /= 255

  return image, label

train_dataset = mnist_train.map(scale).cache().shuffle(BUFFER_SIZE).batch(BATCH_SIZE)
eval_dataset = mnist_test.map(scale).batch(BATCH_SIZE)

with strategy.scope():
  model = tf.keras.Sequential([
      tf.keras.layers.Conv2D(32, 3, activation='relu', input_shape=(28, 28, 1)),
      tf.keras.layers.MaxPooling2D(),
      tf.keras.layers.Flatten(),
      tf.keras.layers.Dense(64, activation='relu'),
      tf.keras.layers.Dense(10)
  ])

  model.compile(loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                optimizer=tf.keras.optimizers.Adam(learning_rate=0.001),
                metrics=['accuracy'])

# Define the checkpoint directory to store the checkpoints.
checkpoint_dir = os.path.join(work_dir, 'training_checkpoints')
# Define the name of the checkpoint files.
checkpoint_prefix = os.path.join(checkpoint_dir, "ckpt_{epoch:04d}.weights.h5")

# Define a function for decaying the learning rate.
# You can define any decay function you need.
def decay(epoch):
  if epoch < 3:
    return 1e-3
  elif epoch >= 3 and epoch < 7:
    return 1e-4
  else:
    return 1e-5

# Define a callback for printing the learning rate at the end of each epoch.
class PrintLR(tf.keras.callbacks.Callback):
  def on_epoch_end(self, epoch, logs=None):
    print('\nLearning rate for epoch {} is {}'.format(epoch + 1, model.optimizer.learning_rate.numpy()))

# Put all the callbacks together.
callbacks = [
    tf.keras.callbacks.TensorBoard(log_dir=os.path.join(work_dir, 'logs')),
    tf.keras.callbacks.ModelCheckpoint(filepath=checkpoint_prefix,
                                       save_weights_only=True),
    tf.keras.callbacks.LearningRateScheduler(decay),
    PrintLR()
]

EPOCHS = int(os.environ.get("EPOCHS", 12))

model.fit(train_dataset, epochs=EPOCHS, callbacks=callbacks)

# Check the checkpoint directory.
print(sorted(os.listdir(checkpoint_dir)))

import pathlib
latest_checkpoint = sorted(pathlib.Path(checkpoint_dir).glob('*'))[-1]

model.load_weights(latest_checkpoint)

eval_loss, eval_acc = model.evaluate(eval_dataset)

print('Eval loss: {}, Eval accuracy: {}'.format(eval_loss, eval_acc))

print(sorted(os.listdir(os.path.join(work_dir, 'logs'))))

path = os.path.join(work_dir, 'my_model.keras')

model.save(path)

unreplicated_model = tf.keras.models.load_model(path)

unreplicated_model.compile(
    loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    optimizer=tf.keras.optimizers.Adam(),
    metrics=['accuracy'])

eval_loss, eval_acc = unreplicated_model.evaluate(eval_dataset)

print('Eval loss: {}, Eval Accuracy: {}'.format(eval_loss, eval_acc))

with strategy.scope():
  replicated_model = tf.keras.models.load_model(path)
  replicated_model.compile(loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                           optimizer=tf.keras.optimizers.Adam(),
                           metrics=['accuracy'])

  eval_loss, eval_acc = replicated_model.evaluate(eval_dataset)
  print ('Eval loss: {}, Eval Accuracy: {}'.format(eval_loss, eval_acc))
