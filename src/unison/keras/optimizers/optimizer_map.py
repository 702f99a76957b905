"""``keras.optimizers.OptimizerMap``: which optimizer updates which variable, by path (Keras 3.15).

A mutable mapping from variable paths, or regular expressions matched in full against them, to
optimizers, with a default for every unmatched path. ``MultiOptimizer``, which trains with such a
map, is not built yet (unison's weights carry no Keras paths).

Example:
    >>> from unison.keras import optimizers
    >>> m = OptimizerMap(default_optimizer=optimizers.RMSprop())
    >>> m["encoder/.*"] = optimizers.SGD()
    >>> m["encoder/layer_0/dense"].name, m["decoder"].name
    ('sgd', 'rmsprop')
"""

from __future__ import annotations

import re
from collections.abc import Iterator, MutableMapping
from typing import Any

from unison.keras.optimizers.optimizer import Optimizer

__all__ = ["OptimizerMap"]


class OptimizerMap(MutableMapping[str, Optimizer]):
    """Keras ``OptimizerMap(default_optimizer, optimizer_map=None)``.

    Raises:
        TypeError: a default that is not a Keras ``Optimizer``; a map that is not a dict.
    """

    def __init__(self, default_optimizer: Optimizer, optimizer_map: dict[str, Optimizer] | None = None) -> None:
        if not isinstance(default_optimizer, Optimizer):
            raise TypeError(f"default_optimizer must be a Keras Optimizer instance. Received: {default_optimizer}")
        if optimizer_map is not None and not isinstance(optimizer_map, dict):
            raise TypeError(f"optimizer_map must be a dictionary. Received: {optimizer_map}")
        self._default_optimizer = default_optimizer
        self._optimizer_map: dict[str, Optimizer] = optimizer_map or {}

    @property
    def default_optimizer(self) -> Optimizer:
        return self._default_optimizer

    def __getitem__(self, key: str) -> Optimizer:
        """The optimizer of ``key``: an exact key, else the one pattern that fully matches, else the default.

        Raises:
            ValueError: ``key`` matches more than one pattern.
        """
        if key in self._optimizer_map:
            return self._optimizer_map[key]
        matching = [pattern for pattern in self._optimizer_map if re.fullmatch(pattern, key)]
        if len(matching) > 1:
            raise ValueError(f"Multiple optimizers assigned to variable {key}: patterns {matching} all match.")
        return self._optimizer_map[matching[0]] if matching else self._default_optimizer

    def __setitem__(self, key: str, optimizer: Optimizer) -> None:
        """Map ``key`` (a path or a pattern) to ``optimizer``.

        Raises:
            ValueError: a key already mapped; a key that is not a string; an optimizer that is not
                a Keras ``Optimizer`` or is a ``LossScaleOptimizer``.
        """
        if key in self._optimizer_map:
            raise ValueError(
                f"'{key}' already exists in the OptimizerMap with value {self._optimizer_map[key]}. Please make "
                "sure to not use duplicated keys."
            )
        if not isinstance(key, str):
            raise ValueError(f"key must be a string. Received: {key}")
        if not isinstance(optimizer, Optimizer):
            raise ValueError(f"optimizer must be a Keras Optimizer instance. Received: {optimizer}")
        if hasattr(optimizer, "inner_optimizer"):  # LossScaleOptimizer (mixed_precision/, above this package)
            raise ValueError("optimizer cannot be LossScaleOptimizer.")
        self._optimizer_map[key] = optimizer

    def __delitem__(self, key: str) -> None:
        del self._optimizer_map[key]

    def __len__(self) -> int:
        return len(self._optimizer_map)

    def __iter__(self) -> Iterator[str]:
        return iter(self._optimizer_map)

    def __call__(self, variable: Any) -> Optimizer:
        """The optimizer of ``variable``, by its ``path`` (else its name)."""
        return self[str(getattr(variable, "path", None) or getattr(variable, "name", ""))]
