"""Small-model step cost: unison ``fit`` vs a plain PyTorch loop vs TensorFlow's ``fit``.

Three small models, where per-step overhead (not arithmetic) decides the speed:

- ``rec``: keras.io's collaborative-filtering ``RecommenderNet``, a subclassed model of four
  embeddings (user/movie vectors and biases) and a dot product, batch 64, binary cross-entropy;
- ``mlp``: TF's Fashion-MNIST classification tutorial's ``Sequential`` (Flatten, Dense 128 relu,
  Dense 10), batch 32, sparse categorical cross-entropy with ``accuracy``;
- ``cnn``: a tiny CNN (Conv2D 8x3x3 relu, MaxPooling, Flatten, Dense 10) on 28x28x1, batch 64.

Data are random arrays of the real shapes (the machine has no Fashion-MNIST; speed does not
depend on the values). Systems: ``unison`` (the Keras program with ``import unison as tf``),
``tf`` (the same program with ``import tensorflow as tf``, run by ``--tf-python``; skipped with
the reason when TensorFlow does not import there) and ``plain`` (the same model and Adam in a
hand-written PyTorch loop: shuffle, slice, forward, loss, backward, step; no metrics). Each run is
a fresh process with one compute thread (``--threads``; 0 leaves each library's default); systems are interleaved within every repeat and their
order rotated. A child times every epoch: the table gives the median ms/step of the epochs after
the first, and the first epoch's time over a later one's (warm-up).

    python benchmarks/small_models.py --repeats 3 --tf-python /work/tfvenv/bin/python
    python benchmarks/small_models.py --profile rec     # cProfile of unison's fit, top entries
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
BATCH = {"rec": 64, "mlp": 32, "cnn": 64}
THREADS = int(os.environ.get("BENCH_THREADS", "1"))  # 0: each library's default thread count


def _data(model: str, rows: int) -> tuple[Any, Any]:
    import numpy as np

    rng = np.random.default_rng(0)
    if model == "rec":
        x = np.stack([rng.integers(0, 610, rows), rng.integers(0, 9724, rows)], 1).astype("int64")
        return x, rng.random(rows).astype("float32")
    shape = (rows, 28, 28) if model == "mlp" else (rows, 28, 28, 1)
    return rng.random(shape).astype("float32"), rng.integers(0, 10, rows).astype("int64")


def _keras_model(tf: Any, model: str) -> Any:
    keras = tf.keras
    layers = keras.layers
    if model == "rec":

        class RecommenderNet(keras.Model):
            def __init__(self, num_users: int, num_movies: int, embedding_size: int) -> None:
                super().__init__()
                self.user_embedding = layers.Embedding(num_users, embedding_size, embeddings_initializer="he_normal")
                self.user_bias = layers.Embedding(num_users, 1)
                self.movie_embedding = layers.Embedding(num_movies, embedding_size, embeddings_initializer="he_normal")
                self.movie_bias = layers.Embedding(num_movies, 1)

            def call(self, inputs: Any) -> Any:
                user_vector = self.user_embedding(inputs[:, 0])
                user_bias = self.user_bias(inputs[:, 0])
                movie_vector = self.movie_embedding(inputs[:, 1])
                movie_bias = self.movie_bias(inputs[:, 1])
                dot_user_movie = tf.tensordot(user_vector, movie_vector, 2)
                x = dot_user_movie + user_bias + movie_bias
                return tf.nn.sigmoid(x)

        net = RecommenderNet(610, 9724, 50)
        net.compile(loss=keras.losses.BinaryCrossentropy(), optimizer=keras.optimizers.Adam(learning_rate=0.001))
        return net
    if model == "mlp":
        net = keras.Sequential(
            [layers.Input((28, 28)), layers.Flatten(), layers.Dense(128, activation="relu"), layers.Dense(10)]
        )
    else:
        net = keras.Sequential(
            [
                layers.Input((28, 28, 1)),
                layers.Conv2D(8, 3, activation="relu"),
                layers.MaxPooling2D(),
                layers.Flatten(),
                layers.Dense(10),
            ]
        )
    net.compile(
        optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"]
    )
    return net


def _child_keras(module: str, model: str, steps: int, epochs: int) -> list[float]:
    if module == "tensorflow":
        import tensorflow as tf

        if THREADS:
            tf.config.threading.set_intra_op_parallelism_threads(THREADS)
            tf.config.threading.set_inter_op_parallelism_threads(THREADS)
    else:
        import torch

        if THREADS:
            torch.set_num_threads(THREADS)
        import unison as tf  # type: ignore[no-redef]
    x, y = _data(model, steps * BATCH[model])
    net = _keras_model(tf, model)
    times: list[float] = []

    class Timer(tf.keras.callbacks.Callback):
        def on_epoch_begin(self, epoch: int, logs: Any = None) -> None:
            self.start = time.perf_counter()

        def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
            times.append(time.perf_counter() - self.start)

    net.fit(x, y, batch_size=BATCH[model], epochs=epochs, verbose=0, callbacks=[Timer()])
    return times


def _child_plain(model: str, steps: int, epochs: int) -> list[float]:
    import torch
    from torch import nn

    if THREADS:
        torch.set_num_threads(THREADS)
    x_np, y_np = _data(model, steps * BATCH[model])
    x, y = torch.from_numpy(x_np), torch.from_numpy(y_np)
    if model == "rec":

        class Rec(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.u, self.ub = nn.Embedding(610, 50), nn.Embedding(610, 1)
                self.m, self.mb = nn.Embedding(9724, 50), nn.Embedding(9724, 1)

            def forward(self, inputs: torch.Tensor) -> torch.Tensor:
                u, m = inputs[:, 0], inputs[:, 1]
                dot = torch.tensordot(self.u(u), self.m(m), 2)
                return torch.sigmoid(dot + self.ub(u) + self.mb(m))

        net: nn.Module = Rec()

        def loss_fn(out: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
            return nn.functional.binary_cross_entropy(out.squeeze(-1), target)
    else:
        if model == "mlp":
            net = nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
        else:
            x = x.permute(0, 3, 1, 2).contiguous()
            net = nn.Sequential(
                nn.Conv2d(1, 8, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(8 * 13 * 13, 10)
            )
        loss_fn = nn.functional.cross_entropy
    optimizer = torch.optim.Adam(net.parameters(), lr=0.001)
    batch = BATCH[model]
    times = []
    for _ in range(epochs):
        start = time.perf_counter()
        order = torch.randperm(len(x))
        for i in range(0, len(x), batch):
            index = order[i : i + batch]
            loss = loss_fn(net(x[index]), y[index])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        times.append(time.perf_counter() - start)
    return times


def run_child(system: str, model: str, args: argparse.Namespace) -> dict[str, float] | str:
    env = {**os.environ, "BENCH_THREADS": str(args.threads), "PYTHONUNBUFFERED": "1", "TF_CPP_MIN_LOG_LEVEL": "2"}
    if args.threads:
        env["OMP_NUM_THREADS"] = str(args.threads)
    python = sys.executable
    if system == "tf":
        python = args.tf_python
        env.pop("PYTHONPATH", None)
        env["CUDA_VISIBLE_DEVICES"] = ""
    else:
        env["PYTHONPATH"] = os.pathsep.join([os.path.join(REPO, "src"), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    cmd = [python, os.path.abspath(__file__), "--child", system, model, "--steps", str(args.steps)]
    cmd += ["--epochs", str(args.epochs)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=args.timeout)
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()
        return f"exit {proc.returncode}: {tail[-1] if tail else ''}"
    times = json.loads(proc.stdout.strip().splitlines()[-1])
    later = statistics.median(times[1:])
    return {"ms_per_step": later / args.steps * 1e3, "first_over_later": times[0] / later}


def _profile(model: str, steps: int) -> None:
    import cProfile
    import pstats

    import torch

    if THREADS:
        torch.set_num_threads(THREADS)
    import unison as tf

    x, y = _data(model, steps * BATCH[model])
    net = _keras_model(tf, model)
    net.fit(x, y, batch_size=BATCH[model], epochs=1, verbose=0)
    profiler = cProfile.Profile()
    profiler.enable()
    net.fit(x, y, batch_size=BATCH[model], epochs=1, verbose=0)
    profiler.disable()
    pstats.Stats(profiler).sort_stats("tottime").print_stats(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--child", nargs=2, metavar=("SYSTEM", "MODEL"))
    parser.add_argument("--models", default="rec,mlp,cnn")
    parser.add_argument("--systems", default="unison,plain,tf")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=150, help="steps per epoch")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--tf-python", default="/work/tfvenv/bin/python")
    parser.add_argument("--timeout", type=int, default=900)
    parser.add_argument("--threads", type=int, default=1, help="compute threads per system (0: library default)")
    parser.add_argument("--profile", metavar="MODEL")
    args = parser.parse_args()
    if args.profile:
        _profile(args.profile, args.steps)
        return
    if args.child:
        system, model = args.child
        if system == "plain":
            times = _child_plain(model, args.steps, args.epochs)
        else:
            times = _child_keras("tensorflow" if system == "tf" else "unison", model, args.steps, args.epochs)
        print(json.dumps(times))
        return
    systems = args.systems.split(",")
    if "tf" in systems:
        check = subprocess.run([args.tf_python, "-c", "import tensorflow"], capture_output=True, text=True)
        if check.returncode != 0:
            print(f"tf skipped: TensorFlow does not import with {args.tf_python}")
            systems.remove("tf")
    results: dict[tuple[str, str], list[dict[str, float]]] = {}
    errors: dict[tuple[str, str], str] = {}
    for repeat in range(args.repeats):
        for model in args.models.split(","):
            order = systems[repeat % len(systems) :] + systems[: repeat % len(systems)]
            for system in order:
                result = run_child(system, model, args)
                if isinstance(result, str):
                    errors[(system, model)] = result
                else:
                    results.setdefault((system, model), []).append(result)
                print(f"repeat {repeat} {model} {system}: {result}", file=sys.stderr, flush=True)
    print("| model | system | ms/step (median) | steps/s | vs TF | first epoch / later |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for model in args.models.split(","):
        tf_ms = (
            statistics.median(r["ms_per_step"] for r in results.get(("tf", model), []))
            if ("tf", model) in results
            else None
        )
        for system in systems:
            runs = results.get((system, model))
            if not runs:
                print(f"| {model} | {system} | {errors.get((system, model), 'no run')} | | | |")
                continue
            ms = statistics.median(r["ms_per_step"] for r in runs)
            warm = statistics.median(r["first_over_later"] for r in runs)
            ratio = f"{ms / tf_ms:.2f}x" if tf_ms else "-"
            print(f"| {model} | {system} | {ms:.2f} | {1e3 / ms:.0f} | {ratio} | {warm:.2f} |")


if __name__ == "__main__":
    main()
