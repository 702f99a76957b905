"""A small GPT trained offline on the Python standard library's own source, through unison.keras.

    python examples/gpt.py                                   # one replica, mixed_bfloat16
    python examples/gpt.py --devices /cpu:0,/cpu:1           # two CPU replicas (MirroredStrategy)
    python examples/gpt.py --precision float32 --epochs 1

The corpus is the ``.py`` files of the running Python's standard library (no download), read
as bytes: a byte-level tokenizer with 256 ids. The model is a decoder-only Transformer: token
and position embeddings, ``--layers`` pre-norm blocks of causal ``MultiHeadAttention`` and an
MLP, and an output layer tied to the token embedding (the logits are ``h @ embeddings.T``).
It trains with ``fit`` under ``MirroredStrategy`` and the ``mixed_bfloat16`` policy (variables
float32, computation bfloat16 under ``torch.autocast``), prints loss and perplexity per epoch
and samples a few lines at the end.
"""

from __future__ import annotations

import argparse
import math
import pathlib
import sysconfig
import time

import numpy as np
import torch
import torch.nn.functional as F

import unison as tf
from unison import keras
from unison.keras import layers


def read_corpus(max_bytes: int) -> np.ndarray:
    """Bytes of the standard library's ``.py`` files, in a fixed order, up to ``max_bytes``."""
    root = pathlib.Path(sysconfig.get_paths()["stdlib"])
    chunks, total = [], 0
    for path in sorted(root.glob("*.py")):
        data = path.read_bytes()
        chunks.append(data)
        total += len(data)
        if total >= max_bytes:
            break
    if not chunks:
        raise SystemExit(f"No .py files under {root}: this example needs the Python standard library's source.")
    return np.frombuffer(b"".join(chunks)[:max_bytes], dtype=np.uint8)


def make_sequences(corpus: np.ndarray, seq_len: int) -> tuple[np.ndarray, np.ndarray]:
    """Non-overlapping windows: inputs are bytes 0..T-1, targets bytes 1..T (the next byte)."""
    n = (len(corpus) - 1) // seq_len
    x = corpus[: n * seq_len].reshape(n, seq_len).astype("int64")
    y = corpus[1 : n * seq_len + 1].reshape(n, seq_len).astype("int64")
    return x, y


class Block(layers.Layer):
    """Pre-norm Transformer block: x + attention(norm(x)), then x + mlp(norm(x))."""

    def __init__(self, d_model: int, heads: int, dropout: float, **kwargs):
        super().__init__(**kwargs)
        self.norm1 = layers.LayerNormalization(epsilon=1e-5)
        self.attention = layers.MultiHeadAttention(num_heads=heads, key_dim=d_model // heads, dropout=dropout)
        self.norm2 = layers.LayerNormalization(epsilon=1e-5)
        self.up = layers.Dense(4 * d_model, activation="gelu")
        self.down = layers.Dense(d_model)

    def call(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm1(x)
        x = x + self.attention(h, h, use_causal_mask=True)
        return x + self.down(self.up(self.norm2(x)))


class GPT(keras.Model):
    """Token + position embeddings, N blocks, a final norm, logits tied to the token embedding."""

    def __init__(self, vocab: int, seq_len: int, d_model: int, heads: int, n_layers: int, dropout: float = 0.0):
        super().__init__(name="gpt")
        self.tokens = layers.Embedding(vocab, d_model, embeddings_initializer="random_normal")
        self.positions = layers.Embedding(seq_len, d_model, embeddings_initializer="random_normal")
        self.blocks = torch.nn.ModuleList([Block(d_model, heads, dropout) for _ in range(n_layers)])
        self.norm = layers.LayerNormalization(epsilon=1e-5)

    def call(self, ids: torch.Tensor) -> torch.Tensor:
        steps = torch.arange(ids.shape[1], device=ids.device)
        x = self.tokens(ids) + self.positions(steps)
        for block in self.blocks:
            x = block(x)
        return F.linear(self.norm(x), self.tokens.embeddings)  # weight tying


class EpochReport(keras.callbacks.Callback):
    """Loss and perplexity per epoch, printed by the chief only."""

    def __init__(self, show) -> None:
        super().__init__()
        self.show, self.start = show, time.perf_counter()

    def on_epoch_end(self, epoch, logs=None):
        loss = logs["loss"]
        self.show(
            f"epoch {epoch + 1}: loss {loss:.4f} - perplexity {math.exp(loss):.2f} - "
            f"{time.perf_counter() - self.start:.1f}s"
        )


@torch.no_grad()
def sample(model: GPT, prompt: bytes, length: int, seq_len: int, temperature: float, seed: int) -> str:
    """Continue ``prompt`` byte by byte from the model's distribution."""
    model.eval()
    generator = torch.Generator().manual_seed(seed)
    device = next(model.parameters()).device
    ids = list(prompt)
    for _ in range(length):
        context = torch.tensor([ids[-seq_len:]], device=device)
        logits = model(context)[0, -1].float() / temperature
        ids.append(int(torch.multinomial(torch.softmax(logits, -1).cpu(), 1, generator=generator)))
    return bytes(ids).decode("utf-8", errors="replace")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", default=None, help="e.g. /cpu:0,/cpu:1 (default: one replica)")
    parser.add_argument("--precision", default="mixed_bfloat16", choices=["float32", "mixed_bfloat16"])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--steps-per-epoch", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=32, help="global batch size")
    parser.add_argument("--seq-len", type=int, default=64)
    parser.add_argument("--d-model", type=int, default=128)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--learning-rate", type=float, default=3e-3)
    parser.add_argument("--max-bytes", type=int, default=2_000_000)
    parser.add_argument("--samples", type=int, default=3, help="lines to sample at the end")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    keras.mixed_precision.set_global_policy(args.precision)
    strategy = tf.distribute.MirroredStrategy(args.devices.split(",") if args.devices else None)
    show = print if strategy.extended.should_save_summary else (lambda *a, **k: None)
    x, y = make_sequences(read_corpus(args.max_bytes), args.seq_len)
    show(
        f"{len(x)} sequences of {args.seq_len} bytes; {strategy.num_replicas_in_sync} replica(s); "
        f"policy {args.precision}"
    )

    torch.manual_seed(args.seed)
    with strategy.scope():
        model = GPT(256, args.seq_len, args.d_model, args.heads, args.layers)
        model.compile(
            optimizer=keras.optimizers.AdamW(args.learning_rate, weight_decay=0.01, global_clipnorm=1.0),
            loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        )
    model.build((1, args.seq_len))
    show(f"{model.count_params():,} parameters")
    history = model.fit(
        x,
        y,
        batch_size=args.batch_size,
        epochs=args.epochs,
        steps_per_epoch=args.steps_per_epoch,
        verbose=0,
        callbacks=[EpochReport(show)],
    )
    final = history.history["loss"][-1]
    show(f"final loss {final:.4f} - perplexity {math.exp(final):.2f}")
    for i in range(args.samples):
        text = sample(model, b"def ", 120, args.seq_len, temperature=0.8, seed=args.seed + i)
        show(f"sample {i + 1}: {text.splitlines()[0] if text.strip() else text!r}")


if __name__ == "__main__":
    main()
