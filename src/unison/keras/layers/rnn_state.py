"""``stateful=True`` for the recurrent layers: the last states of one batch start the next.

Keras keeps the states of a stateful RNN in variables of shape ``(batch_size, ...)``: the i-th
sample of a batch continues the i-th sample of the previous batch, until ``reset_states()``
(Keras 2) or ``reset_state()`` (Keras 3) sets them back to zeros (or to given values). Here they
are held as detached tensors (no gradient flows into the previous batch, as in Keras) and are
not weights: ``save_weights`` and ``get_weights`` do not include them. Each replica of a
distributed strategy holds the states of its own share of the batch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

__all__ = ["HeldStates", "tree_map"]


def tree_map(fn: Callable[..., torch.Tensor], *trees: Any) -> Any:
    """``fn`` over the tensors of equally nested lists/tuples (states of stacked cells are nested)."""
    first = trees[0]
    if isinstance(first, (list, tuple)):
        return [tree_map(fn, *items) for items in zip(*trees)]
    return fn(*trees)


def _flatten(tree: Any) -> list[torch.Tensor]:
    if isinstance(tree, (list, tuple)):
        return [t for item in tree for t in _flatten(item)]
    return [tree]


class HeldStates:
    """The states a stateful layer carries from one call to the next."""

    def __init__(self, layer_name: str) -> None:
        self.layer_name = layer_name
        self.states: Any = None
        # zeros from reset_states(): Keras shows them in `layer.states`; a batch of another size
        # after a reset starts from fresh zeros (nothing is carried over, so nothing is lost)
        self.zeroed = False

    def initial(self, batch: int) -> Any:
        """The held states for a batch of ``batch`` samples, or ``None`` when none are held."""
        if self.states is None:
            return None
        held = _flatten(self.states)[0].shape[0]
        if held != batch and self.zeroed:
            return None
        if held != batch:
            raise ValueError(
                f"Layer '{self.layer_name}' is stateful: it holds the states of {held} sample(s), one per row "
                f"of the previous batch, but received a batch of {batch}. A stateful RNN needs the same batch "
                "size in every call: use a batch size that divides the data (or drop_remainder=True), or call "
                "reset_states() before a batch of another size."
            )
        return self.states

    def hold(self, states: Any) -> None:
        self.states = tree_map(lambda s: s.detach(), states)
        self.zeroed = False

    def reset(self, states: Any = None) -> None:
        """Zero the held states (as Keras does), or hold ``states`` (arrays or tensors) instead."""
        if states is None:
            if self.states is not None:
                self.states = tree_map(torch.zeros_like, self.states)
                self.zeroed = True
            return
        given = [states] if not isinstance(states, (list, tuple)) else list(states)
        zeroed, self.zeroed = self.zeroed, False
        if self.states is not None and not zeroed:  # states of a batch are held: the given ones must fit
            current = _flatten(self.states)
            values = [torch.as_tensor(v) for v in _flatten(given)]
            if len(values) != len(current) or any(tuple(v.shape) != tuple(c.shape) for v, c in zip(values, current)):
                raise ValueError(
                    f"reset_states() of layer '{self.layer_name}' expects {len(current)} state(s) of shapes "
                    f"{[tuple(c.shape) for c in current]}. Received shapes: {[tuple(v.shape) for v in values]}"
                )
            self.states = tree_map(lambda c, v: torch.as_tensor(v, dtype=c.dtype, device=c.device), self.states, given)
        else:
            self.states = tree_map(lambda v: torch.as_tensor(v).to(torch.get_default_dtype()), given)
