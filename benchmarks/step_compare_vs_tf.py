"""Step-by-step comparison of a keras.io model under unison and under TensorFlow, from the same weights.

The two issue-25 programs' models (keras.io collaborative filtering; the miniature GPT, dropout
set by ``--dropout``) are built under the framework ``--framework`` names; ``--save-init`` writes the
initial weights, ``--init`` loads another run's (so both frameworks start from the same numbers),
and ``fit`` trains on the same rows in the same order (``--shuffle`` off by default). The per-step
running loss (what ``fit`` logs), the weights after training and (collaborative filtering) the
val_loss go to ``--out`` (npz); ``--compare A.npz B.npz INIT.npz`` prints the largest weight
difference per variable relative to the update.

``--dense-embedding-grads`` (TF only) turns the ``tf.IndexedSlices`` gradients of the Embedding
tables into dense tensors before Keras's Adam sees them. Without it, Keras 3's TF backend squares
each looked-up row's gradient separately (``ops.square`` keeps the slices, duplicates unsummed) and
only then adds them into the second moment: a token seen k times in a batch gets
``sum(g_i**2)`` where Adam (and Keras on JAX or torch, and unison) has ``(sum g_i)**2``.

Run (from the repository root; the data from ``examples/program_data.py movielens|imdb DIR --scale
bench``, the GPT's tokens from ``--tokens``: a TF run that writes them with TextVectorization):

    PROGRAM_DATA=DIR /work/tfvenv/bin/python benchmarks/step_compare_vs_tf.py --model movielens \\
        --framework tf --steps 10 --save-init /tmp/init.npz --out /tmp/tf.npz
    PROGRAM_DATA=DIR PYTHONPATH=src python benchmarks/step_compare_vs_tf.py --model movielens \\
        --framework unison --steps 10 --init /tmp/init.npz --out /tmp/un.npz
    python benchmarks/step_compare_vs_tf.py --compare /tmp/tf.npz /tmp/un.npz /tmp/init.npz
"""

from __future__ import annotations

import argparse
import os
import string
import sys
from pathlib import Path
from typing import Any

import numpy as np


def _framework(name: str) -> tuple[Any, Any, Any]:
    if name == "tf":
        import tensorflow as tf
        from tensorflow import keras
        from tensorflow.keras import layers
    else:
        import unison as tf
        from unison import keras
        from unison.keras import layers
    return tf, keras, layers


def movielens_data(root: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int, int]:
    """The example's own preprocessing (pandas, ``df.sample(frac=1, random_state=42)``, 90/10 split)."""
    import pandas as pd

    df = pd.read_csv(root / "ml-latest-small" / "ratings.csv")
    users = {x: i for i, x in enumerate(df["userId"].unique().tolist())}
    movies = {x: i for i, x in enumerate(df["movieId"].unique().tolist())}
    df["user"], df["movie"] = df["userId"].map(users), df["movieId"].map(movies)
    df["rating"] = df["rating"].values.astype(np.float32)
    low, high = min(df["rating"]), max(df["rating"])
    df = df.sample(frac=1, random_state=42)
    x = df[["user", "movie"]].values
    y = df["rating"].apply(lambda r: (r - low) / (high - low)).values
    split = int(0.9 * df.shape[0])
    return x[:split], y[:split], x[split:], y[split:], len(users), len(movies)


def movielens_model(tf: Any, keras: Any, layers: Any, num_users: int, num_movies: int) -> Any:
    class RecommenderNet(keras.Model):
        def __init__(self) -> None:
            super().__init__()
            reg = keras.regularizers.l2(1e-6)
            self.user_embedding = layers.Embedding(
                num_users, 50, embeddings_initializer="he_normal", embeddings_regularizer=reg
            )
            self.user_bias = layers.Embedding(num_users, 1)
            self.movie_embedding = layers.Embedding(
                num_movies, 50, embeddings_initializer="he_normal", embeddings_regularizer=reg
            )
            self.movie_bias = layers.Embedding(num_movies, 1)

        def call(self, inputs: Any) -> Any:
            user, movie = inputs[:, 0], inputs[:, 1]
            dot = tf.tensordot(self.user_embedding(user), self.movie_embedding(movie), 2)  # the example's
            return tf.nn.sigmoid(dot + self.user_bias(user) + self.movie_bias(movie))

    return RecommenderNet()


def gpt_model(tf: Any, keras: Any, layers: Any, dropout: float) -> Any:
    """keras.io's miniature GPT (vocabulary 20,000, 80 tokens, one block of 2 heads, 256 wide)."""

    class TransformerBlock(layers.Layer):
        def __init__(self) -> None:
            super().__init__()
            self.att = layers.MultiHeadAttention(2, 256)
            self.ffn = keras.Sequential([layers.Dense(256, activation="relu"), layers.Dense(256)])
            self.layernorm1 = layers.LayerNormalization(epsilon=1e-6)
            self.layernorm2 = layers.LayerNormalization(epsilon=1e-6)
            self.dropout1, self.dropout2 = layers.Dropout(dropout), layers.Dropout(dropout)

        def call(self, inputs: Any) -> Any:
            shape = tf.shape(inputs)
            n = shape[1]
            causal = tf.reshape(tf.cast(tf.range(n)[:, None] >= tf.range(n), tf.bool), [1, n, n])
            causal = tf.tile(causal, tf.concat([tf.expand_dims(shape[0], -1), tf.constant([1, 1], dtype=tf.int32)], 0))
            attention = self.dropout1(self.att(inputs, inputs, attention_mask=causal))
            out1 = self.layernorm1(inputs + attention)
            return self.layernorm2(out1 + self.dropout2(self.ffn(out1)))

    class TokenAndPositionEmbedding(layers.Layer):
        def __init__(self) -> None:
            super().__init__()
            self.token_emb = layers.Embedding(input_dim=20000, output_dim=256)
            self.pos_emb = layers.Embedding(input_dim=80, output_dim=256)

        def call(self, x: Any) -> Any:
            return self.token_emb(x) + self.pos_emb(tf.range(start=0, limit=tf.shape(x)[-1], delta=1))

    inputs = layers.Input(shape=(80,), dtype=tf.int32)
    x = TransformerBlock()(TokenAndPositionEmbedding()(inputs))
    return keras.Model(inputs=inputs, outputs=[layers.Dense(20000)(x), x])


def write_gpt_tokens(data: Path, out: Path) -> None:
    """The example's TextVectorization over the aclImdb reviews (TF), as int32 x/y arrays."""
    import random

    import tensorflow as tf

    random.seed(0)
    files = [
        p for d in ("train/pos", "train/neg", "test/pos", "test/neg") for p in sorted((data / "aclImdb" / d).iterdir())
    ]
    random.shuffle(files)
    lines = [line for f in files for line in f.read_text().splitlines()]

    def standardize(s: Any) -> Any:
        s = tf.strings.regex_replace(tf.strings.lower(s), "<br />", " ")
        return tf.strings.regex_replace(s, f"([{string.punctuation}])", r" \1")

    vectorize = tf.keras.layers.TextVectorization(
        standardize=standardize, max_tokens=19999, output_mode="int", output_sequence_length=81
    )
    vectorize.adapt(tf.data.Dataset.from_tensor_slices(lines).batch(128))
    tokens = vectorize(tf.constant(lines)).numpy().astype("int32")
    np.savez(out, x=tokens[:, :-1], y=tokens[:, 1:])


def compare(a_path: str, b_path: str, init_path: str) -> None:
    a, b, init = np.load(a_path), np.load(b_path), np.load(init_path)
    n = min(len(a["losses"]), len(b["losses"]))
    print(f"running loss: largest difference over {n} steps {np.abs(a['losses'][:n] - b['losses'][:n]).max():.3e}")
    for key in ("val_loss",):
        if key in a.files and key in b.files:
            print(f"{key}: {a[key]} vs {b[key]}")
    for k in init.files:
        x, y, z = a[k].ravel(), b[k].ravel(), init[k].ravel()
        step = np.abs(x - z).max()
        rel = np.abs(x - y).max() / max(step, 1e-30)
        print(f"{k:4s} {str(init[k].shape):16s} largest update {step:.3e}  largest difference / update {rel:.3e}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=["movielens", "gpt"])
    parser.add_argument("--framework", choices=["tf", "unison"])
    parser.add_argument("--steps", type=int, default=10, help="batches per epoch (the first steps*batch rows)")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=None, help="default: the example's (64; GPT 16)")
    parser.add_argument("--shuffle", action="store_true", help="fit(shuffle=True) (default: the rows in order)")
    parser.add_argument("--seed", type=int, default=None, help="keras.utils.set_random_seed (none: not called)")
    parser.add_argument("--dropout", type=float, default=0.0, help="GPT dropout rate (the example's: 0.1)")
    parser.add_argument("--dense-embedding-grads", action="store_true", help="TF only: see the module docstring")
    parser.add_argument("--init", help="npz of initial weights to load")
    parser.add_argument("--save-init", help="npz to write the initial weights to")
    parser.add_argument("--out", help="npz for losses and final weights")
    parser.add_argument("--tokens", default="/tmp/gpt_tokens.npz", help="GPT token arrays (written by a TF run)")
    parser.add_argument("--compare", nargs=3, metavar=("A", "B", "INIT"))
    args = parser.parse_args()
    if args.compare:
        compare(*args.compare)
        return
    if not (args.model and args.framework and args.out):
        parser.error("--model, --framework and --out are required (or --compare)")
    data = Path(os.environ.get("PROGRAM_DATA", "."))
    tf, keras, layers = _framework(args.framework)
    if args.seed is not None:
        keras.utils.set_random_seed(args.seed)
    validation = None
    if args.model == "movielens":
        x_train, y_train, x_val, y_val, users, movies = movielens_data(data)
        model = movielens_model(tf, keras, layers, users, movies)
        loss: Any = tf.keras.losses.BinaryCrossentropy()
        batch = args.batch_size or 64
        validation = (x_val, y_val)
        model(x_train[:2])
    else:
        if not Path(args.tokens).exists():
            if args.framework != "tf":
                sys.exit(f"{args.tokens} missing: write it with a --framework tf run first")
            write_gpt_tokens(data, Path(args.tokens))
        tokens = np.load(args.tokens)
        x_train, y_train = tokens["x"], tokens["y"]
        model = gpt_model(tf, keras, layers, args.dropout)
        loss = [tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), None]
        batch = args.batch_size or 16
    optimizer: Any = keras.optimizers.Adam(learning_rate=0.001)
    if args.dense_embedding_grads:
        if args.framework != "tf":
            parser.error("--dense-embedding-grads is for TF runs")

        class DenseAdam(keras.optimizers.Adam):  # type: ignore[misc, name-defined]
            def apply(self, grads: Any, trainable_variables: Any = None) -> Any:
                grads = [tf.convert_to_tensor(g) if isinstance(g, tf.IndexedSlices) else g for g in grads]
                return super().apply(grads, trainable_variables)

        optimizer = DenseAdam(learning_rate=0.001)
    model.compile(optimizer=optimizer, loss=loss)
    shapes = [w.shape for w in model.get_weights()]
    if args.init:
        init = np.load(args.init)  # unison's attention kernels are (256, 512) where Keras's are (256, 2, 256)
        model.set_weights([init[f"w{i}"].reshape(shape) for i, shape in enumerate(shapes)])
    if args.save_init:
        np.savez(args.save_init, **{f"w{i}": w for i, w in enumerate(model.get_weights())})
    losses: list[float] = []

    class Record(keras.callbacks.Callback):  # type: ignore[misc, name-defined]
        def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
            losses.append(float(logs["loss"]))

    n = args.steps * batch
    history = model.fit(
        x_train[:n],
        y_train[:n],
        batch_size=batch,
        epochs=args.epochs,
        shuffle=args.shuffle,
        verbose=0,
        validation_data=validation,
        callbacks=[Record()],
    )
    result = {f"w{i}": w for i, w in enumerate(model.get_weights())}
    result["losses"] = np.array(losses)
    print(args.framework, "loss per epoch", [round(v, 6) for v in history.history["loss"]])
    if "val_loss" in history.history:
        result["val_loss"] = np.array(history.history["val_loss"])
        print(args.framework, "val_loss per epoch", [round(v, 6) for v in history.history["val_loss"]])
    np.savez(args.out, **result)


if __name__ == "__main__":
    main()
