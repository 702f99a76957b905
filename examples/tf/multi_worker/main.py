# Source: TensorFlow's tutorial "Multi-worker training with Keras"
# (tensorflow/docs, site/en/tutorials/distribute/multi_worker_with_keras.ipynb, TF 2.21 docs),
# the cell `%%writefile main.py`, followed by the tutorial's BackupAndRestore cell.
#
# Lines changed from the tutorial:
#   - `import tensorflow as tf` -> `import unison as tf`
#   - epochs=3, steps_per_epoch=70 -> $EPOCHS / $STEPS_PER_EPOCH (defaults 3 and 70) for CI
#   - the BackupAndRestore cell's backup_dir '/tmp/backup' -> $BACKUP_DIR (default '/tmp/backup')
#
# Run as the tutorial does, one process per worker, each with its TF_CONFIG:
#   TF_CONFIG='{"cluster": {"worker": ["localhost:12345", "localhost:23456"]}, "task": {"type": "worker", "index": 0}}' python main.py &
#   TF_CONFIG='{"cluster": {"worker": ["localhost:12345", "localhost:23456"]}, "task": {"type": "worker", "index": 1}}' python main.py
# (or both at once: `unison launch --tf-config 2 main.py`; see docs/multi_worker.md)

import os
import json

import unison as tf
import mnist_setup

per_worker_batch_size = 64
tf_config = json.loads(os.environ['TF_CONFIG'])
num_workers = len(tf_config['cluster']['worker'])

strategy = tf.distribute.MultiWorkerMirroredStrategy()

global_batch_size = per_worker_batch_size * num_workers
multi_worker_dataset = mnist_setup.mnist_dataset(global_batch_size)

with strategy.scope():
  # Model building/compiling need to be within `strategy.scope()`.
  multi_worker_model = mnist_setup.build_and_compile_cnn_model()

EPOCHS = int(os.environ.get("EPOCHS", 3))
STEPS_PER_EPOCH = int(os.environ.get("STEPS_PER_EPOCH", 70))

multi_worker_model.fit(multi_worker_dataset, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH)

# Multi-worker training with `MultiWorkerMirroredStrategy`
# and the `BackupAndRestore` callback. The training state
# is backed up at epoch boundaries by default.

callbacks = [tf.keras.callbacks.BackupAndRestore(backup_dir=os.environ.get("BACKUP_DIR", '/tmp/backup'))]
with strategy.scope():
  multi_worker_model = mnist_setup.build_and_compile_cnn_model()
multi_worker_model.fit(multi_worker_dataset,
                       epochs=EPOCHS,
                       steps_per_epoch=STEPS_PER_EPOCH,
                       callbacks=callbacks)
