# Source: TensorFlow tutorial "Convolutional Neural Network (CNN)",
# https://www.tensorflow.org/tutorials/images/cnn (tensorflow/docs, site/en/tutorials/images/cnn.ipynb
# at commit 7c365021, Apache License 2.0). The notebook's code cells, in order; its text cells are left out.
#
# Lines changed from the notebook:
#   - `import tensorflow as tf` -> `import unison as tf`;
#     `from tensorflow.keras import datasets, layers, models` -> `from unison.keras import datasets, layers, models`
#   - `history = model.fit(..., epochs=10, ...)` -> `epochs=int(os.environ.get("EPOCHS", 10))`; `import os` added
# CIFAR-10 is read from $UNISON_DATA_DIR/cifar10/cifar-10-batches-py/ (the python pickle batches, as
# examples/program_data.py writes them); plt.show() does nothing under MPLBACKEND=Agg.
# Run: python examples/program_data.py cifar10 /tmp/data && UNISON_DATA_DIR=/tmp/data MPLBACKEND=Agg python <this file>

import os

import unison as tf

from unison.keras import datasets, layers, models
import matplotlib.pyplot as plt

(train_images, train_labels), (test_images, test_labels) = datasets.cifar10.load_data()

# Normalize pixel values to be between 0 and 1
train_images, test_images = train_images / 255.0, test_images / 255.0

class_names = ['airplane', 'automobile', 'bird', 'cat', 'deer',
               'dog', 'frog', 'horse', 'ship', 'truck']

plt.figure(figsize=(10,10))
for i in range(25):
    plt.subplot(5,5,i+1)
    plt.xticks([])
    plt.yticks([])
    plt.grid(False)
    plt.imshow(train_images[i])
    # The CIFAR labels happen to be arrays, 
    # which is why you need the extra index
    plt.xlabel(class_names[train_labels[i][0]])
plt.show()

model = models.Sequential()
model.add(layers.Conv2D(32, (3, 3), activation='relu', input_shape=(32, 32, 3)))
model.add(layers.MaxPooling2D((2, 2)))
model.add(layers.Conv2D(64, (3, 3), activation='relu'))
model.add(layers.MaxPooling2D((2, 2)))
model.add(layers.Conv2D(64, (3, 3), activation='relu'))

model.summary()

model.add(layers.Flatten())
model.add(layers.Dense(64, activation='relu'))
model.add(layers.Dense(10))

model.summary()

model.compile(optimizer='adam',
              loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=['accuracy'])

history = model.fit(train_images, train_labels, epochs=int(os.environ.get("EPOCHS", 10)), 
                    validation_data=(test_images, test_labels))

plt.plot(history.history['accuracy'], label='accuracy')
plt.plot(history.history['val_accuracy'], label = 'val_accuracy')
plt.xlabel('Epoch')
plt.ylabel('Accuracy')
plt.ylim([0.5, 1])
plt.legend(loc='lower right')

test_loss, test_acc = model.evaluate(test_images,  test_labels, verbose=2)

print(test_acc)
