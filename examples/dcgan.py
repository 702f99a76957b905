# A DCGAN on MNIST in the shape of TensorFlow's "Deep Convolutional Generative Adversarial Network"
# tutorial (tensorflow.org/tutorials/generative/dcgan): a generator and a discriminator built with
# tf.keras layers, and a train step that records both under two GradientTapes in one `with`, then
# asks each tape for its own gradients.
#
# Lines changed from TF's program: `import tensorflow as tf` -> `import unison as tf`; the image
# grid and GIF (matplotlib, imageio) are left out; $EPOCHS, $STEPS_PER_EPOCH and $TRAIN_SAMPLES
# shorten the run (CI); $SEED seeds it; the losses are printed every epoch.
# Run: UNISON_DATA_DIR=../shared/data python examples/dcgan.py

import os
import time

import unison as tf
from unison.keras import layers

BUFFER_SIZE = 60000
BATCH_SIZE = int(os.environ.get("BATCH_SIZE", "256"))
EPOCHS = int(os.environ.get("EPOCHS", "50"))
STEPS_PER_EPOCH = int(os.environ.get("STEPS_PER_EPOCH", "0")) or None
noise_dim = 100
if os.environ.get("SEED"):
    tf.keras.utils.set_random_seed(int(os.environ["SEED"]))

(train_images, train_labels), (_, _) = tf.keras.datasets.mnist.load_data()
if os.environ.get("TRAIN_SAMPLES"):
    train_images = train_images[: int(os.environ["TRAIN_SAMPLES"])]
train_images = train_images.reshape(train_images.shape[0], 28, 28, 1).astype("float32")
train_images = (train_images - 127.5) / 127.5  # Normalize the images to [-1, 1]

train_dataset = tf.data.Dataset.from_tensor_slices(train_images).shuffle(BUFFER_SIZE).batch(BATCH_SIZE)


def make_generator_model():
    model = tf.keras.Sequential()
    model.add(layers.Input(shape=(noise_dim,)))
    model.add(layers.Dense(7 * 7 * 256, use_bias=False))
    model.add(layers.BatchNormalization())
    model.add(layers.LeakyReLU())

    model.add(layers.Reshape((7, 7, 256)))
    assert model.output_shape == (None, 7, 7, 256)  # Note: None is the batch size

    model.add(layers.Conv2DTranspose(128, (5, 5), strides=(1, 1), padding="same", use_bias=False))
    assert model.output_shape == (None, 7, 7, 128)
    model.add(layers.BatchNormalization())
    model.add(layers.LeakyReLU())

    model.add(layers.Conv2DTranspose(64, (5, 5), strides=(2, 2), padding="same", use_bias=False))
    assert model.output_shape == (None, 14, 14, 64)
    model.add(layers.BatchNormalization())
    model.add(layers.LeakyReLU())

    model.add(layers.Conv2DTranspose(1, (5, 5), strides=(2, 2), padding="same", use_bias=False, activation="tanh"))
    assert model.output_shape == (None, 28, 28, 1)

    return model


def make_discriminator_model():
    model = tf.keras.Sequential()
    model.add(layers.Input(shape=[28, 28, 1]))
    model.add(layers.Conv2D(64, (5, 5), strides=(2, 2), padding="same"))
    model.add(layers.LeakyReLU())
    model.add(layers.Dropout(0.3))

    model.add(layers.Conv2D(128, (5, 5), strides=(2, 2), padding="same"))
    model.add(layers.LeakyReLU())
    model.add(layers.Dropout(0.3))

    model.add(layers.Flatten())
    model.add(layers.Dense(1))

    return model


generator = make_generator_model()
discriminator = make_discriminator_model()

noise = tf.random.normal([1, 100])
generated_image = generator(noise, training=False)
decision = discriminator(generated_image)
print(decision)

# This method returns a helper function to compute cross entropy loss
cross_entropy = tf.keras.losses.BinaryCrossentropy(from_logits=True)


def discriminator_loss(real_output, fake_output):
    real_loss = cross_entropy(tf.ones_like(real_output), real_output)
    fake_loss = cross_entropy(tf.zeros_like(fake_output), fake_output)
    total_loss = real_loss + fake_loss
    return total_loss


def generator_loss(fake_output):
    return cross_entropy(tf.ones_like(fake_output), fake_output)


generator_optimizer = tf.keras.optimizers.Adam(1e-4)
discriminator_optimizer = tf.keras.optimizers.Adam(1e-4)


# Notice the use of `tf.function`
# This annotation causes the function to be "compiled".
@tf.function
def train_step(images):
    noise = tf.random.normal([BATCH_SIZE, noise_dim])

    with tf.GradientTape() as gen_tape, tf.GradientTape() as disc_tape:
        generated_images = generator(noise, training=True)

        real_output = discriminator(images, training=True)
        fake_output = discriminator(generated_images, training=True)

        gen_loss = generator_loss(fake_output)
        disc_loss = discriminator_loss(real_output, fake_output)

    gradients_of_generator = gen_tape.gradient(gen_loss, generator.trainable_variables)
    gradients_of_discriminator = disc_tape.gradient(disc_loss, discriminator.trainable_variables)

    generator_optimizer.apply_gradients(zip(gradients_of_generator, generator.trainable_variables))
    discriminator_optimizer.apply_gradients(zip(gradients_of_discriminator, discriminator.trainable_variables))
    return gen_loss, disc_loss


def train(dataset, epochs):
    for epoch in range(epochs):
        start = time.time()

        for step, image_batch in enumerate(dataset):
            if STEPS_PER_EPOCH is not None and step >= STEPS_PER_EPOCH:
                break
            gen_loss, disc_loss = train_step(image_batch)

        print(f"Epoch {epoch + 1}: gen_loss {float(gen_loss):.4f}, disc_loss {float(disc_loss):.4f}")
        print(f"Time for epoch {epoch + 1} is {time.time() - start} sec")


train(train_dataset, EPOCHS)
