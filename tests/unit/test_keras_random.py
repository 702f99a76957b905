"""keras.random: Keras's seed rules (None / int / SeedGenerator), distributions and errors."""

import math

import pytest
import torch

from unison import keras
from unison.keras import random


def test_int_seed_repeats_and_seed_generator_advances():
    assert torch.equal(random.normal((4,), seed=3), random.normal((4,), seed=3))
    gen = random.SeedGenerator(3)
    first, second = random.normal((4,), seed=gen), random.normal((4,), seed=gen)
    assert not torch.equal(first, second)
    again = random.SeedGenerator(3)
    assert torch.equal(random.normal((4,), seed=again), first)  # same seed, same stream
    assert again.state.tolist() == [3, 1]


def test_none_seed_follows_set_random_seed():
    keras.utils.set_random_seed(11)
    a = random.uniform((3,))
    gen_a = random.SeedGenerator()
    keras.utils.set_random_seed(11)
    b = random.uniform((3,))
    gen_b = random.SeedGenerator()
    assert torch.equal(a, b)
    assert torch.equal(random.normal((2,), seed=gen_a), random.normal((2,), seed=gen_b))


def test_distributions_have_the_documented_moments():
    x = random.normal((20000,), mean=2.0, stddev=3.0, seed=0)
    assert x.dtype == torch.float32
    assert abs(float(x.mean()) - 2.0) < 0.1 and abs(float(x.std()) - 3.0) < 0.1
    u = random.uniform((20000,), minval=-1.0, maxval=3.0, seed=0)
    assert float(u.min()) >= -1.0 and float(u.max()) < 3.0 and abs(float(u.mean()) - 1.0) < 0.05
    t = random.truncated_normal((20000,), stddev=2.0, seed=0)
    assert float(t.abs().max()) <= 4.0
    # The variance of a standard normal truncated at +-2 is 1 - 4 phi(2) / (2 Phi(2) - 1) ~= 0.774.
    phi2 = math.exp(-2.0) / math.sqrt(2 * math.pi)
    expected_std = 2.0 * math.sqrt(1 - 4 * phi2 / math.erf(2 / math.sqrt(2)))
    assert abs(float(t.std()) - expected_std) < 0.05
    r = random.randint((1000,), 2, 5, seed=0)
    assert r.dtype == torch.int32 and set(r.tolist()) == {2, 3, 4}
    assert random.normal((2,), dtype="float64").dtype == torch.float64


def test_dropout_shuffle_categorical():
    x = torch.ones(10000)
    out = random.dropout(x, 0.25, seed=1)
    kept = out[out != 0]
    assert torch.allclose(kept, torch.full_like(kept, 1 / 0.75))
    assert abs(float((out == 0).float().mean()) - 0.25) < 0.03
    rows = random.dropout(torch.ones(4, 100), 0.5, noise_shape=(4, 1), seed=2)
    assert all(len(set(r.tolist())) == 1 for r in rows)  # one decision per row
    s = random.shuffle(torch.arange(10), seed=0)
    assert sorted(s.tolist()) == list(range(10)) and s.tolist() != list(range(10))
    cols = random.shuffle(torch.arange(6).reshape(2, 3), axis=1, seed=0)
    assert sorted(cols[0].tolist()) == [0, 1, 2] and (cols[1] - cols[0]).tolist() == [3, 3, 3]
    draws = random.categorical(torch.log(torch.tensor([[0.0, 1.0], [1.0, 0.0]])), 5, seed=0)
    assert draws.dtype == torch.int32 and draws.tolist() == [[1] * 5, [0] * 5]


def test_errors():
    with pytest.raises(TypeError, match="seed must be None, an int or a keras.random.SeedGenerator"):
        random.normal((2,), seed="abc")
    with pytest.raises(TypeError, match="int seed or None"):
        random.SeedGenerator(1.5)
    with pytest.raises(ValueError, match="use keras.random.randint"):
        random.uniform((2,), dtype="int32")
    with pytest.raises(ValueError, match="minval < maxval"):
        random.randint((2,), 5, 5)
    with pytest.raises(ValueError, match=r"rate must be in \[0, 1\)"):
        random.dropout(torch.ones(2), 1.0)
    with pytest.raises(ValueError, match="2-D logits"):
        random.categorical(torch.zeros(3), 1)
    with pytest.raises(AttributeError, match="does not implement keras.random.poisson"):
        random.poisson  # noqa: B018


def test_sampling_layer_with_a_seed_generator():
    # The keras.io VAE's Sampling layer: shape from ops.shape, noise from the layer's SeedGenerator.
    from unison.keras import layers, ops

    class Sampling(layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.seed_generator = random.SeedGenerator(1337)

        def call(self, inputs):
            batch, dim = ops.shape(inputs)
            return inputs + random.normal(shape=(batch, dim), seed=self.seed_generator)

    layer = Sampling()
    a, b = layer(torch.zeros(2, 3)), layer(torch.zeros(2, 3))
    assert a.shape == (2, 3) and not torch.equal(a, b)
    assert torch.equal(a, random.normal((2, 3), seed=random.SeedGenerator(1337)))
