"""keras.utils.PyDataset / Sequence in fit, evaluate and predict: order, shuffle, epoch hook, errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from unison import keras

pytestmark = pytest.mark.timeout(120)


def _batch(i: int, n: int = 4) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(100 + i)
    x = rng.normal(size=(n, 3)).astype("float32")
    return x, (x @ np.array([[1.0], [-2.0], [0.5]], "float32") + 0.3).astype("float32")


class Recorded(keras.utils.PyDataset):
    """Five fixed batches; records which index was read and counts on_epoch_end calls."""

    def __init__(self, n: int = 5, weights: bool = False, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.n, self.weights = n, weights
        self.reads: list[int] = []
        self.ends = 0
        self.begins: list[int] = []  # len(reads) when each pass began

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, index: int):  # type: ignore[no-untyped-def]
        self.reads.append(index)
        x, y = _batch(index)
        if self.weights:
            return x, y, np.full((len(x),), float(index + 1), "float32")
        return x, y

    def on_epoch_begin(self) -> None:
        self.begins.append(len(self.reads))

    def on_epoch_end(self) -> None:
        self.ends += 1


def _model() -> keras.Model:
    keras.utils.set_random_seed(3)
    model = keras.Sequential([keras.layers.Dense(1, input_shape=(3,))])
    model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse")
    return model


def _replay(start: list[np.ndarray], order: list[int], weights: bool = False) -> list[np.ndarray]:
    """Plain torch SGD from the weights ``start`` on the same batches in the same order."""
    kernel, bias = (torch.tensor(w, requires_grad=True) for w in start)
    for i in order:
        x, y = (torch.from_numpy(a) for a in _batch(i))
        per_sample = ((x @ kernel + bias - y) ** 2).mean(dim=1)
        w = torch.full((len(x),), float(i + 1)) if weights else torch.ones(len(x))
        loss = (per_sample * w).sum() / len(x)
        loss.backward()
        with torch.no_grad():
            for p in (kernel, bias):
                p -= 0.05 * p.grad
                p.grad = None
    return [kernel.detach().numpy(), bias.detach().numpy()]


@pytest.mark.parametrize("weights", [False, True])
def test_fit_reads_each_item_once_per_epoch_in_order_without_shuffle(weights: bool) -> None:
    model = _model()
    expected = _replay(model.get_weights(), list(range(5)) * 2, weights)
    data = Recorded(weights=weights)
    history = model.fit(data, epochs=2, shuffle=False, verbose=0)
    assert data.reads == [0] + list(range(5)) * 2 and data.ends == 2  # item 0 is first read for the shapes
    assert data.begins == [1, 6]
    assert len(history.history["loss"]) == 2
    for got, want in zip(model.get_weights(), expected):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_shuffle_permutes_batch_indices_each_epoch() -> None:
    model = _model()
    initial = model.get_weights()
    data = Recorded(n=6)
    model.fit(data, epochs=3, verbose=0)  # shuffle=True is fit's default
    order = data.reads[1:]  # after the first read, for the shapes
    epochs = [order[i * 6 : (i + 1) * 6] for i in range(3)]
    assert all(sorted(e) == list(range(6)) for e in epochs) and data.ends == 3
    assert any(e != list(range(6)) for e in epochs) and len({tuple(e) for e in epochs}) > 1
    for got, want in zip(model.get_weights(), _replay(initial, order)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_threads_read_ahead_in_order_and_steps_per_epoch_continues() -> None:
    model = _model()
    data = Recorded(workers=3, max_queue_size=2)
    with pytest.warns(UserWarning, match="ran out of data"):  # 5 batches: the second epoch gets 2 (Keras 3)
        model.fit(data, epochs=3, steps_per_epoch=3, shuffle=False, verbose=0)
    assert data.reads[1:6] == [0, 1, 2, 3, 4]  # the second epoch continues where the first stopped
    assert data.reads[6:9] == [0, 1, 2]  # the third starts a new pass
    assert data.ends >= 1


def test_evaluate_and_predict_visit_items_in_order() -> None:
    model = _model()
    kernel, bias = model.get_weights()
    xs, ys = zip(*(_batch(i) for i in range(5)))
    x, y = np.concatenate(xs), np.concatenate(ys)
    want = float(np.mean((x @ kernel + bias - y) ** 2))
    assert model.evaluate(Recorded(), verbose=0) == pytest.approx(want, rel=1e-5)
    np.testing.assert_allclose(model.predict(Recorded(), verbose=0), x @ kernel + bias, rtol=1e-5, atol=1e-6)


def test_validation_data_may_be_a_py_dataset_and_sequence_is_its_keras2_name() -> None:
    assert keras.utils.Sequence is keras.utils.PyDataset
    iterated = Recorded(n=3)
    for i, (x, _) in enumerate(iterated):  # Keras 2's Sequence.__iter__: the batches in order
        np.testing.assert_array_equal(x, _batch(i)[0])
    assert iterated.reads == [0, 1, 2]
    model = _model()
    history = model.fit(Recorded(), validation_data=Recorded(n=2), epochs=1, verbose=0)
    kernel, bias = model.get_weights()
    xs, ys = zip(*(_batch(i) for i in range(2)))
    want = float(np.mean((np.concatenate(xs) @ kernel + bias - np.concatenate(ys)) ** 2))
    assert history.history["val_loss"][0] == pytest.approx(want, rel=1e-5)


def test_subclass_without_super_init_gets_keras_defaults() -> None:
    class Bare(keras.utils.PyDataset):
        def __len__(self) -> int:
            return 1

        def __getitem__(self, index: int):  # type: ignore[no-untyped-def]
            return _batch(index)

    bare = Bare()
    assert (bare.workers, bare.use_multiprocessing, bare.max_queue_size) == (1, False, 10)
    model = _model()
    model.fit(bare, epochs=1, verbose=0)


def test_mistakes_are_explained() -> None:
    with pytest.raises(ValueError, match="workers must be an integer >= 1"):
        Recorded(workers=0)
    with pytest.raises(NotImplementedError, match="must define __len__"):
        len(keras.utils.PyDataset())
    model = _model()
    with pytest.raises(ValueError, match="`y` must not be given"):
        model.fit(Recorded(), np.zeros(5), verbose=0)
    with pytest.raises(ValueError, match="empty"):
        model.fit(Recorded(n=0), verbose=0)

    class Endless(Recorded):
        @property
        def num_batches(self) -> int | None:
            return None

    with pytest.raises(ValueError, match="steps_per_epoch"):
        model.fit(Endless(), epochs=1, verbose=0)
    endless = Endless()
    model.fit(endless, epochs=2, steps_per_epoch=4, verbose=0)
    assert endless.reads[1:] == list(range(8))

    class BadLen(Recorded):
        @property
        def num_batches(self) -> int | None:
            return "3"  # type: ignore[return-value]

    with pytest.raises(TypeError, match="must return an int"):
        model.fit(BadLen(), verbose=0)
