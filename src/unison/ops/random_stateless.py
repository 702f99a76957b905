"""``tf.random``'s seeded streams: ``Generator``, the ``stateless_*`` ops, ``fold_in``/``split``.

TF draws these from counter-based Philox streams keyed by a seed. unison keeps the contract
(the same seed gives the same values, run to run; a Generator's state is TF's int64 vector and
advances with each draw; ``split`` gives independent streams) on torch's generator: each draw
seeds a private torch stream from a 64-bit mix of the seed (or of the Generator's key and
counter) inside ``torch.random.fork_rng``, so the global stream is left as it was. The values are
not TF's (TF's Philox counters have no torch counterpart); distributions, dtypes and shapes are.

Example:
    >>> import unison as tf
    >>> a = tf.random.stateless_uniform([3], seed=[1, 2])
    >>> b = tf.random.stateless_uniform([3], seed=[1, 2])
    >>> bool((a == b).all())
    True
    >>> g = tf.random.Generator.from_seed(1)
    >>> g.state.tolist()
    [1, 0, 0]
"""

from __future__ import annotations

import contextlib
import enum
import os
from collections.abc import Iterator
from typing import Any

import numpy as np
import torch

from unison.errors import InvalidArgumentError
from unison.ops.dtypes import as_dtype, to_tensor

_M64 = (1 << 64) - 1


class Algorithm(enum.Enum):
    """``tf.random.Algorithm``: the counter-based RNG a Generator names (its state size differs)."""

    PHILOX = 1
    THREEFRY = 2
    AUTO_SELECT = 3


def _alg(alg: Any) -> Algorithm:
    if isinstance(alg, Algorithm):
        return alg
    if alg is None:
        return Algorithm.AUTO_SELECT
    if isinstance(alg, str) and alg.lower() in ("philox", "threefry", "auto_select"):
        return Algorithm[alg.upper()]
    if isinstance(alg, int) and alg in (1, 2, 3):
        return Algorithm(alg)
    raise ValueError(f"tf.random: `alg` must be 'philox', 'threefry' or 'auto_select'. Received: alg={alg!r}")


def _state_size(alg: Algorithm) -> int:
    return 2 if alg is Algorithm.THREEFRY else 3


def _splitmix(x: int) -> int:
    """A 64-bit mixer (SplitMix64's finaliser): nearby seeds give unrelated torch seeds."""
    x = (x + 0x9E3779B97F4A7C15) & _M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _M64
    return x ^ (x >> 31)


def _mix(words: list[int]) -> int:
    h = 0
    for w in words:
        h = _splitmix(h ^ (int(w) & _M64))
    return h


@contextlib.contextmanager
def _seeded(words: list[int]) -> Iterator[None]:
    """Run a draw on torch's CPU generator seeded from ``words``, restoring the global stream."""
    from unison.ops.determinism import seeded

    with torch.random.fork_rng(devices=[]), seeded():
        torch.manual_seed(_mix(words))
        yield


def _seed_words(seed: Any, op: str) -> list[int]:
    t = to_tensor(seed)
    if not isinstance(t, torch.Tensor) or t.is_floating_point() or t.shape != (2,):
        shape = list(t.shape) if hasattr(t, "shape") else seed
        raise InvalidArgumentError(
            None,
            None,
            f"tf.random.{op}: `seed` must be an integer tensor of shape [2]. Received: seed of shape {shape}",
        )
    return [int(v) for v in t.tolist()]


def create_rng_state(seed: Any, alg: Any) -> torch.Tensor:
    """``tf.random.create_rng_state``: the int64 state vector (3 for Philox, 2 for ThreeFry) of a seed:
    an integer is split into 64-bit words, least significant first, as TF does."""
    size = _state_size(_alg(alg))
    if isinstance(seed, (int, np.integer)):
        value, words = int(seed), []
        if value < 0:
            value &= _M64
        while value:
            words.append(value & _M64)
            value >>= 64
    else:
        words = [int(v) & _M64 for v in np.asarray(to_tensor(seed)).reshape(-1).tolist()]
    words = (words + [0] * size)[:size]
    signed = [w - (1 << 64) if w >= 1 << 63 else w for w in words]
    return torch.tensor(signed, dtype=torch.int64)


_RESERVED = 256  # TF's Philox samples reserved per output value of a stateful draw


def _numel(shape: Any) -> int:
    dims = np.asarray(to_tensor(shape) if not isinstance(shape, (list, tuple)) else shape, dtype=np.int64)
    return int(np.prod(dims.reshape(-1))) if dims.size else 1


class Generator:
    """``tf.random.Generator``: a random stream whose state is an int64 vector that advances.

    ``from_seed`` gives the same stream for the same seed; ``split`` derives independent
    generators; ``reset_from_seed`` restarts. ``state`` is TF's vector (``[counter, 0, key]`` for
    Philox); each draw advances the counter.
    """

    _alg: Algorithm
    _state: torch.Tensor

    def __init__(self, copy_from: Generator | None = None, state: Any = None, alg: Any = None) -> None:
        if copy_from is not None:
            self._alg, self._state = copy_from._alg, copy_from._state.clone()
        else:
            self._alg = _alg(alg)
            size = _state_size(self._alg)
            self._state = (
                create_rng_state(int.from_bytes(os.urandom(8), "little"), self._alg)
                if state is None
                else torch.as_tensor(np.asarray(to_tensor(state)), dtype=torch.int64).reshape(-1)
            )
            if len(self._state) != size:
                raise ValueError(
                    f"tf.random.Generator: a {self._alg.name} state has {size} int64 words. "
                    f"Received: state of {len(self._state)}"
                )

    @classmethod
    def from_seed(cls, seed: Any, alg: Any = None) -> Generator:
        """A generator whose state is ``create_rng_state(seed, alg)``."""
        a = _alg(alg)
        return cls(state=create_rng_state(seed, a), alg=a)

    @classmethod
    def from_non_deterministic_state(cls, alg: Any = None) -> Generator:
        """A generator seeded from the operating system's entropy (a RuntimeError under op determinism, as TF)."""
        from unison.ops.determinism import is_op_determinism_enabled

        if is_op_determinism_enabled():
            raise RuntimeError('"from_non_deterministic_state" cannot be called when determinism is enabled.')
        return cls(alg=alg)

    @classmethod
    def from_state(cls, state: Any, alg: Any) -> Generator:
        """A generator with this state vector."""
        return cls(state=state, alg=alg)

    @classmethod
    def from_key_counter(cls, key: Any, counter: Any, alg: Any) -> Generator:
        """A generator from a key and a counter (``state = counter + [key]``)."""
        counter_words = np.asarray(to_tensor(counter)).reshape(-1).tolist()
        return cls(state=counter_words + [int(np.asarray(to_tensor(key)).reshape(-1)[0])], alg=alg)

    @property
    def state(self) -> torch.Tensor:
        """The int64 state vector."""
        return self._state

    @property
    def algorithm(self) -> int:
        """The algorithm's number (1 Philox, 2 ThreeFry; auto-select is Philox)."""
        return Algorithm.THREEFRY.value if self._alg is Algorithm.THREEFRY else Algorithm.PHILOX.value

    @property
    def key(self) -> torch.Tensor:
        """The key word of the state (its last word)."""
        return self._state[-1].clone()

    def reset(self, state: Any) -> None:
        """Replace the state vector."""
        self._state = torch.as_tensor(np.asarray(to_tensor(state)), dtype=torch.int64).reshape(-1).clone()

    def reset_from_seed(self, seed: Any) -> None:
        """Restart from ``seed`` (as ``from_seed``)."""
        self._state = create_rng_state(seed, self._alg)

    def reset_from_key_counter(self, key: Any, counter: Any) -> None:
        """Restart from a key and counter."""
        self._state = Generator.from_key_counter(key, counter, self._alg)._state

    def skip(self, delta: int) -> None:
        """Advance the counter by ``delta`` draws."""
        self._state = self._state + torch.tensor([int(delta)] + [0] * (len(self._state) - 1))

    @contextlib.contextmanager
    def _draw(self, shape: Any, per_value: int = _RESERVED) -> Iterator[None]:
        words = [int(v) for v in self._state.tolist()]
        # TF's counter advances by the samples it reserves: 256 per value drawn (an empty draw: 0),
        # so the printed state ([257, 0, 0] after one scalar from seed 1) is TF's
        # a new tensor, not an in-place add: a state read before (m.state() of a tf.function) keeps its value
        self._state = self._state + torch.tensor([per_value * _numel(shape)] + [0] * (len(self._state) - 1))
        with _seeded(words):
            yield

    def uniform(
        self, shape: Any, minval: Any = 0, maxval: Any = None, dtype: Any = torch.float32, name: str | None = None
    ) -> torch.Tensor:
        """Uniform values in ``[minval, maxval)``; integer dtypes need ``maxval``."""
        from unison.ops.random_base import uniform

        with self._draw(shape):
            return uniform(shape, minval, maxval, dtype)

    def uniform_full_int(self, shape: Any, dtype: Any = torch.uint64, name: str | None = None) -> torch.Tensor:
        """Integers over the dtype's whole range."""
        with self._draw(shape):
            return _full_int(shape, as_dtype(dtype))

    def normal(
        self, shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = torch.float32, name: str | None = None
    ) -> torch.Tensor:
        """Normal values."""
        from unison.ops.random_base import normal

        with self._draw(shape):
            return normal(shape, mean, stddev, dtype)

    def truncated_normal(
        self, shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = torch.float32, name: str | None = None
    ) -> torch.Tensor:
        """Normal values within two standard deviations."""
        from unison.ops.random_base import truncated_normal

        with self._draw(shape):
            return truncated_normal(shape, mean, stddev, dtype)

    def binomial(
        self, shape: Any, counts: Any, probs: Any, dtype: Any = torch.int32, name: str | None = None
    ) -> torch.Tensor:
        """Binomial counts of successes out of ``counts`` trials of probability ``probs``."""
        with self._draw(shape, _RESERVED * 80):  # TF's binomial sampler reserves 80 x 256 per value
            return _binomial(shape, counts, probs, dtype)

    def make_seeds(self, count: int = 1) -> torch.Tensor:
        """``[2, count]`` int64 seeds for the ``stateless_*`` ops."""
        # TF: one int64 key per seed, over zeros (the two words are scrambled together)
        with self._draw([int(count)]):
            keys = _full_int([int(count)], torch.int64)
        return torch.stack([keys, torch.zeros_like(keys)])

    def state_dict(self) -> dict[str, torch.Tensor]:
        """The state vector, for ``tf.train.Checkpoint(generator=g)`` (TF checkpoints it as a variable)."""
        return {"state": self._state.clone()}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the state a checkpoint saved: the stream goes on from there."""
        state = torch.as_tensor(state_dict["state"], dtype=torch.int64).reshape(-1)
        if len(state) != len(self._state):
            raise ValueError(
                f"tf.random.Generator: the checkpoint holds a state of {len(state)} int64 words, this "
                f"{self._alg.name} generator has {len(self._state)}. Restore into a generator of the same algorithm."
            )
        self._state = state.clone()

    def split(self, count: int = 1) -> list[Generator]:
        """``count`` new generators on independent streams (this one advances)."""
        seeds = self.make_seeds(count)
        return [
            Generator.from_key_counter(seeds[1, i], [int(seeds[0, i])] + [0] * (_state_size(self._alg) - 2), self._alg)
            for i in range(int(count))
        ]


def _full_int(shape: Any, dtype: torch.dtype) -> torch.Tensor:
    from unison.ops.array import _shape

    size = _shape(shape)
    if dtype == torch.uint64:
        return torch.randint(-(2**63), 2**63 - 1, size, dtype=torch.int64).view(torch.uint64)
    info = torch.iinfo(dtype)
    return torch.randint(info.min, info.max, size, dtype=torch.int64).to(dtype)


def _binomial(shape: Any, counts: Any, probs: Any, dtype: Any) -> torch.Tensor:
    from unison.ops.array import _shape

    size = _shape(shape)
    c = torch.broadcast_to(to_tensor(counts).double(), size)
    p = torch.broadcast_to(to_tensor(probs).double(), size)
    return torch.binomial(c.contiguous(), p.contiguous()).to(as_dtype(dtype))


_GLOBAL: list[Generator] = []


def get_global_generator() -> Generator:
    """``tf.random.get_global_generator``: the process's generator (created non-deterministically)."""
    if not _GLOBAL:
        _GLOBAL.append(Generator(alg=None))  # from the OS's entropy
    return _GLOBAL[0]


def set_global_generator(generator: Generator) -> None:
    """``tf.random.set_global_generator``: replace the process's generator."""
    if not isinstance(generator, Generator):
        raise TypeError(f"tf.random.set_global_generator takes a tf.random.Generator. Received: {generator!r:.80}")
    _GLOBAL[:] = [generator]


def fold_in(seed: Any, data: Any, alg: Any = "auto_select") -> torch.Tensor:
    """``tf.random.fold_in``: a new ``[2]`` seed from ``seed`` and an integer (of ``data``'s dtype, as TF)."""
    words = _seed_words(seed, "fold_in")
    dtype = to_tensor(data).dtype
    with _seeded(words + [int(to_tensor(data))]):
        return _full_int([2], dtype)


def split(seed: Any, num: int = 2, alg: Any = "auto_select") -> torch.Tensor:
    """``tf.random.split``: ``[num, 2]`` new seeds from ``seed`` (same dtype)."""
    words = _seed_words(seed, "split")
    with _seeded(words + [-1]):
        return _full_int([int(num), 2], to_tensor(seed).dtype)
