"""Small, learnable stand-ins for the data sets of the programs under examples/keras_io and examples/tf_tutorials.

Each writer produces the exact on-disk format the original program reads (so the program runs with
only its data path changed and nothing is downloaded), and puts real signal in it so that accuracy
and loss figures mean something when unison and TensorFlow are compared on the same files:

- ``aclImdb/``: the IMDB review tree (``train/{pos,neg,unsup}``, ``test/{pos,neg}``, files
  ``<id>_<stars>.txt``); reviews mix neutral filler with a few sentiment words of their label's side
  and some of the other side (not all separable), HTML ``<br />`` breaks and punctuation, as the
  real reviews have.
- ``ml-latest-small/``: MovieLens ``ratings.csv`` (``userId,movieId,rating,timestamp``, half stars
  0.5-5) and ``movies.csv`` (``movieId,title,genres``); ratings come from user and movie latent
  factors plus biases, so the dot-product model can learn them.
- ``FordA/``: UCR ``FordA_TRAIN.tsv`` / ``FordA_TEST.tsv`` (label -1/1 first, then 500 z-normalised
  values, tab separated); class 1 carries a burst of a higher frequency.
- ``auto-mpg.data``: the UCI Auto MPG file (whitespace separated, ``?`` for missing horsepower,
  a tab before the quoted car name); MPG falls with weight and horsepower as in the real data.
- ``heart.csv``: the Cleveland heart-disease table TF's tutorials download (``age,sex,cp,trestbps,
  chol,fbs,restecg,thalach,exang,oldpeak,slope,ca,thal,target``; ``thal`` a string, ``oldpeak``
  with one decimal, the rest integers); the target follows age, chest pain, heart rate, ST
  depression, vessels and thal through a logistic model, as the real risk factors do.
- ``cifar10/cifar-10-batches-py/``: CIFAR-10's python pickle batches (``data_batch_1..5``,
  ``test_batch``: dicts of uint8 ``data`` rows and ``labels``), each class a faint colour and stripe
  pattern under strong noise (not trivially separable); found by ``keras.datasets.cifar10`` through
  ``$UNISON_DATA_DIR``.

Run: ``python examples/program_data.py all DIR [--scale small|full]``.
"""

from __future__ import annotations

import argparse
import io
import pickle
import struct
from pathlib import Path
from typing import Any

import numpy as np

_POSITIVE = "great excellent wonderful superb brilliant loved enjoyable masterpiece beautiful touching".split()
_NEGATIVE = "terrible awful boring worst waste poor dull horrible stupid disappointing".split()
_FILLER = (
    "the movie film story actor actress plot scene director was is a an and of to it this that with "
    "for on as his her they character time music ending watch some very really just about"
).split()


_SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]


def _rare_word(n: int) -> str:
    """The ``n``-th of the made-up names that give the reviews a vocabulary as large as IMDB's."""
    out = ""
    while True:
        n, digit = divmod(n, len(_SYLLABLES))
        out += _SYLLABLES[digit]
        if n == 0:
            return out + "x"


def _review(rng: np.random.Generator, positive: bool, rare: list[str]) -> str:
    words = list(rng.choice(_FILLER, int(rng.integers(30, 90)))) + rare
    side, other = (_POSITIVE, _NEGATIVE) if positive else (_NEGATIVE, _POSITIVE)
    # Two to five sentiment words of the label's side and up to two of the other side: a few reviews
    # are not decided by their words (a majority vote gets ~96%), so the comparison of two frameworks'
    # accuracies is not saturated (with 3-6 and at most one, both reached 0.99 in 3 epochs; with 1-3
    # and up to two, neither learned in 3 epochs).
    for _ in range(int(rng.integers(2, 6))):
        words.insert(int(rng.integers(0, len(words))), str(rng.choice(side)))
    for _ in range(int(rng.integers(0, 3))):
        words.insert(int(rng.integers(0, len(words))), str(rng.choice(other)))
    sentences = [" ".join(words[i : i + 12]).capitalize() + "." for i in range(0, len(words), 12)]
    return "<br /><br />".join([" ".join(sentences[:2]), *sentences[2:]])


def write_imdb(root: Path, per_class: int, seed: int = 0) -> Path:
    """``root/aclImdb`` with ``per_class`` reviews per label in train and in test (and a few unsup)."""
    rng = np.random.default_rng(seed)
    base = root / "aclImdb"
    review_id = 0
    # The real reviews hold ~100k distinct words; keras.io's GPT example samples from 20k logits and
    # looks each up in its vocabulary, so every review carries names of its own until there are 21k.
    rare_per_review = -(-21000 // (4 * per_class))
    rare = iter(_rare_word(n) for n in range(10**9))
    for split in ("train", "test"):
        for label in ("pos", "neg"):
            folder = base / split / label
            folder.mkdir(parents=True, exist_ok=True)
            for _ in range(per_class):
                stars = int(rng.integers(7, 11)) if label == "pos" else int(rng.integers(1, 5))
                names = [next(rare) for _ in range(rare_per_review)]
                (folder / f"{review_id}_{stars}.txt").write_text(_review(rng, label == "pos", names), encoding="utf-8")
                review_id += 1
    unsup = base / "train" / "unsup"
    unsup.mkdir(parents=True, exist_ok=True)
    for i in range(max(2, per_class // 10)):
        (unsup / f"{i}_0.txt").write_text(_review(rng, bool(rng.random() < 0.5), []), encoding="utf-8")
    return base


def write_movielens(root: Path, users: int, movies: int, ratings: int, seed: int = 0) -> Path:
    """``root/ml-latest-small/{ratings,movies}.csv`` with ids that are not contiguous (as the real ones)."""
    rng = np.random.default_rng(seed)
    folder = root / "ml-latest-small"
    folder.mkdir(parents=True, exist_ok=True)
    user_ids = np.arange(1, users + 1)
    movie_ids = np.sort(rng.choice(np.arange(1, movies * 20), movies, replace=False))
    u_f, m_f = rng.normal(0, 0.6, (users, 4)), rng.normal(0, 0.6, (movies, 4))
    u_b, m_b = rng.normal(0, 0.4, users), rng.normal(0, 0.5, movies)
    pairs = {(int(rng.integers(0, users)), int(rng.integers(0, movies))) for _ in range(int(ratings * 1.2))}
    chosen = sorted(pairs)[:ratings]
    lines = ["userId,movieId,rating,timestamp"]
    for u, m in chosen:
        score = 3.5 + u_b[u] + m_b[m] + float(u_f[u] @ m_f[m]) + rng.normal(0, 0.3)
        rating = float(np.clip(np.round(score * 2) / 2, 0.5, 5.0))
        lines.append(f"{user_ids[u]},{movie_ids[m]},{rating},{int(rng.integers(828124615, 1537799250))}")
    (folder / "ratings.csv").write_text("\n".join(lines) + "\n")
    genres = ["Action", "Comedy", "Drama", "Romance", "Thriller", "Animation|Children", "Sci-Fi"]
    movie_lines = ["movieId,title,genres"]
    for i, movie_id in enumerate(movie_ids):
        movie_lines.append(f'{movie_id},"Movie {i}, The ({1950 + i % 70})",{genres[i % len(genres)]}')
    (folder / "movies.csv").write_text("\n".join(movie_lines) + "\n")
    return folder


def _forda_rows(rng: np.random.Generator, n: int, length: int) -> tuple[np.ndarray, np.ndarray]:
    labels = rng.choice([-1, 1], n)
    t = np.arange(length)
    x = rng.normal(0, 1.0, (n, length))
    for row, label in enumerate(labels):
        x[row] += 1.5 * np.sin(2 * np.pi * t / rng.uniform(40, 60) + rng.uniform(0, 6.3))
        if label == 1:  # the "engine issue": a burst of a higher frequency somewhere in the recording
            burst = min(120, length // 3)
            start = int(rng.integers(0, length - burst))
            x[row, start : start + burst] += 1.2 * np.sin(2 * np.pi * t[:burst] / 8.0)
    x = (x - x.mean(axis=1, keepdims=True)) / x.std(axis=1, keepdims=True)  # UCR files are z-normalised
    return x, labels


def write_forda(root: Path, train: int, test: int, length: int = 500, seed: int = 0) -> Path:
    """``root/FordA/FordA_{TRAIN,TEST}.tsv`` (the real series have 500 values; CI writes shorter ones)."""
    rng = np.random.default_rng(seed)
    folder = root / "FordA"
    folder.mkdir(parents=True, exist_ok=True)
    for name, n in (("FordA_TRAIN.tsv", train), ("FordA_TEST.tsv", test)):
        x, y = _forda_rows(rng, n, length)
        rows = [f"{label}\t" + "\t".join(f"{v:.6f}" for v in values) for label, values in zip(y, x)]
        (folder / name).write_text("\n".join(rows) + "\n")
    return folder


def write_auto_mpg(root: Path, rows: int = 398, seed: int = 0) -> Path:
    """``root/auto-mpg.data`` in the UCI file's layout."""
    rng = np.random.default_rng(seed)
    lines = []
    for i in range(rows):
        cylinders = int(rng.choice([4, 6, 8], p=[0.5, 0.25, 0.25]))
        displacement = cylinders * rng.uniform(20, 45)
        horsepower = 20 + displacement * rng.uniform(0.35, 0.55)
        weight = 1500 + displacement * rng.uniform(6, 9) + rng.normal(0, 150)
        acceleration = 24 - horsepower / 15 + rng.normal(0, 1)
        year = int(rng.integers(70, 83))
        origin = int(rng.choice([1, 2, 3], p=[0.62, 0.18, 0.2]))
        mpg = 47 - 0.0075 * weight - 0.03 * horsepower + 0.5 * (year - 76) + 1.5 * (origin > 1) + rng.normal(0, 2)
        hp = "?" if i % 66 == 5 else f"{horsepower:.1f}"  # six rows with no horsepower, as in the real file
        lines.append(
            f"{min(max(mpg, 9.0), 46.6):<7.1f}{cylinders:<4d}{displacement:<12.1f}{hp:<11}{weight:<11.1f}"
            f'{acceleration:<11.1f}{year:<3d}{origin:d}\t"car {i}"'
        )
    path = root / "auto-mpg.data"
    path.write_text("\n".join(lines) + "\n")
    return path


def write_heart(root: Path, rows: int = 303, seed: int = 0) -> Path:
    """``root/heart.csv`` in the layout of TF's heart.csv (every category of each column appears)."""
    rng = np.random.default_rng(seed)
    lines = ["age,sex,cp,trestbps,chol,fbs,restecg,thalach,exang,oldpeak,slope,ca,thal,target"]
    for _ in range(rows):
        age = int(np.clip(rng.normal(54, 9), 29, 77))
        sex = int(rng.random() < 0.68)
        cp = int(rng.choice(5, p=[0.05, 0.1, 0.2, 0.25, 0.4]))
        trestbps = int(np.clip(rng.normal(131, 17), 94, 200))
        chol = int(np.clip(rng.normal(246, 50), 126, 564))
        fbs = int(rng.random() < 0.15)
        restecg = int(rng.choice(3, p=[0.5, 0.1, 0.4]))
        thalach = int(np.clip(rng.normal(150, 22) - 0.5 * (age - 54), 71, 202))
        exang = int(rng.random() < 0.33)
        oldpeak = float(np.clip(rng.gamma(1.2, 0.9), 0.0, 6.2)) * (rng.random() < 0.7)
        slope = int(rng.choice([1, 2, 3], p=[0.47, 0.46, 0.07]))
        ca = int(rng.choice(4, p=[0.58, 0.22, 0.13, 0.07]))
        thal = str(rng.choice(["normal", "reversible", "fixed"], p=[0.55, 0.38, 0.07]))
        score = (
            0.04 * (age - 54)
            + 0.5 * (cp == 4)
            - 0.03 * (thalach - 150)
            + 0.6 * oldpeak
            + 0.7 * ca
            + 1.2 * (thal == "reversible")
            + 0.6 * exang
            - 2.3
        )
        target = int(rng.random() < 1.0 / (1.0 + np.exp(-score)))
        lines.append(
            f"{age},{sex},{cp},{trestbps},{chol},{fbs},{restecg},{thalach},{exang},{oldpeak:.1f},{slope},{ca},{thal},{target}"
        )
    path = root / "heart.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def _cifar_images(rng: np.random.Generator, labels: np.ndarray) -> np.ndarray:
    """Each class: a base colour and a stripe direction/period, both faint under noise (rows of 3072 = 3x32x32).

    The signal is weak on purpose, so the tutorial's CNN does not saturate: each image's colour is
    its class colour moved by a random shift (std 45 per channel, about the distance between class
    colours) and the stripes (amplitude 12) lie under per-pixel noise of std 60. TensorFlow's run of
    the tutorial reaches a test accuracy of about 0.54 after 6 epochs on 5,000 such images (chance: 0.10).
    """
    colours = np.random.default_rng(1234).uniform(40, 215, (10, 3))  # the same class colours in every batch
    yy, xx = np.mgrid[0:32, 0:32]
    images = np.empty((len(labels), 3, 32, 32), np.float64)
    for i, label in enumerate(labels):
        period = 4 + (label % 5)
        stripes = np.sin(2 * np.pi * (xx if label < 5 else yy) / period + rng.uniform(0, 6.3))
        colour = colours[label] + rng.normal(0, 45, 3)
        images[i] = colour[:, None, None] + 12 * stripes[None] + rng.normal(0, 60, (3, 32, 32))
    return np.clip(images, 0, 255).astype(np.uint8).reshape(len(labels), 3072)


class _Python2Pickler(pickle._Pickler):  # type: ignore[name-defined,misc]
    """Pickles ``str``/``bytes`` as Python 2's 8-bit strings (opcodes U/T), as the CIFAR batches were written."""

    dispatch = dict(pickle._Pickler.dispatch)  # type: ignore[attr-defined]

    def _save_string(self, obj: str | bytes) -> None:
        raw = obj.encode("latin1") if isinstance(obj, str) else obj
        self.write((b"U" + bytes([len(raw)])) if len(raw) < 256 else (b"T" + struct.pack("<I", len(raw))))
        self.write(raw)
        self.memoize(obj)

    dispatch[bytes] = _save_string
    dispatch[str] = _save_string


def _python2_pickle(obj: Any) -> bytes:
    buf = io.BytesIO()
    _Python2Pickler(buf, protocol=2).dump(obj)
    # numpy 2 names its module numpy._core; the files (and numpy 1 readers) know numpy.core
    return buf.getvalue().replace(b"numpy._core.multiarray\n", b"numpy.core.multiarray\n")


def write_cifar10(root: Path, train: int, test: int, seed: int = 0) -> Path:
    """``root/cifar10/cifar-10-batches-py/`` with ``train`` images over five batches and ``test``."""
    rng = np.random.default_rng(seed)
    folder = root / "cifar10" / "cifar-10-batches-py"
    folder.mkdir(parents=True, exist_ok=True)
    sizes = [train // 5 + (1 if i < train % 5 else 0) for i in range(5)] + [test]
    names = [*(f"data_batch_{i}" for i in range(1, 6)), "test_batch"]
    for name, n in zip(names, sizes):
        labels = rng.integers(0, 10, n)
        batch = {
            "batch_label": f"{name} of synthetic CIFAR-10",
            "labels": [int(v) for v in labels],
            "data": _cifar_images(rng, labels),
            "filenames": [f"img_{name}_{i}.png" for i in range(n)],
        }
        (folder / name).write_bytes(_python2_pickle(batch))
    return folder


SCALES = {
    # small: CI, seconds per program.
    "small": dict(imdb=40, ml=(60, 120, 3000), forda=(96, 40, 128), mpg=398, cifar=(256, 64), heart=303),
    # bench: what benchmarks/tutorial_programs_vs_tf.py runs on 2 shared cores (the real sets are larger:
    # IMDB 12,500 reviews per label and split, MovieLens 100,836 ratings, FordA 3,601 + 1,320 series of
    # 500 values, CIFAR-10 50,000 + 10,000 images)
    "bench": dict(imdb=1000, ml=(610, 2000, 30000), forda=(1000, 400, 128), mpg=398, cifar=(5000, 1000), heart=303),
}


def write_all(root: Path, scale: str = "small") -> Path:
    """Every data set above into ``root`` at ``scale`` (see ``SCALES``)."""
    s = SCALES[scale]
    write_imdb(root, s["imdb"])
    write_movielens(root, *s["ml"])
    write_forda(root, *s["forda"])
    write_auto_mpg(root, s["mpg"])
    write_cifar10(root, *s["cifar"])
    write_heart(root, s["heart"])
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["all", "imdb", "movielens", "forda", "auto_mpg", "cifar10", "heart"])
    parser.add_argument("root", type=Path)
    parser.add_argument("--scale", choices=sorted(SCALES), default="small")
    args = parser.parse_args()
    s = SCALES[args.scale]
    args.root.mkdir(parents=True, exist_ok=True)
    writers = {
        "all": lambda: write_all(args.root, args.scale),
        "imdb": lambda: write_imdb(args.root, s["imdb"]),
        "movielens": lambda: write_movielens(args.root, *s["ml"]),
        "forda": lambda: write_forda(args.root, *s["forda"]),
        "auto_mpg": lambda: write_auto_mpg(args.root, s["mpg"]),
        "cifar10": lambda: write_cifar10(args.root, *s["cifar"]),
        "heart": lambda: write_heart(args.root, s["heart"]),
    }
    print(writers[args.what]())


if __name__ == "__main__":
    main()
