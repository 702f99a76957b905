"""TF's shuffle buffer on blocks of items: row indices (vectorised) or elements (a list loop).

``shuffle(buffer_size)`` fills a buffer of ``buffer_size`` items, emits a random one and puts
the next input item in its slot; when the input ends it emits the rest in random order. Both the
index fast path and the element path run :func:`shuffle_blocks`, and its draws depend neither on
the block sizes nor on the kind of block, so both give the same order.

Example:
    >>> import numpy as np
    >>> out = np.concatenate(list(shuffle_blocks(iter([np.arange(10)]), 3, seed=1)))
    >>> sorted(out.tolist()) == list(range(10)), bool(out[0] <= 2)
    (True, True)
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import numpy as np

CHUNK = 4096  # items per block of the drain (and of the element path's input blocks)


def _blocks(items: Iterator[Any]) -> Iterator[list[Any]]:
    """Items in lists of up to ``CHUNK`` (the element path's input to :func:`shuffle_blocks`)."""
    while True:
        block = list(itertools.islice(items, CHUNK))
        if not block:
            return
        yield block


class _Draws:
    """Uniform draws in [0, 1) from one PCG64 stream; any block sizes give the same sequence."""

    def __init__(self, seed: int) -> None:
        self._rng = np.random.Generator(np.random.PCG64(seed))

    def indices(self, count: int, size: int) -> np.ndarray:
        """``count`` indices in ``[0, size)``, from the next ``count`` draws."""
        u = self._rng.random(count)
        return np.minimum((u * size).astype(np.int64), size - 1)

    def permutation(self, size: int) -> np.ndarray:
        """A uniformly random order of ``range(size)`` (the last use of the stream)."""
        return self._rng.permutation(size)


def _replace_list(buf: list[Any], slots: list[int], incoming: Any) -> list[Any]:
    """Emit ``buf[j]`` and put the incoming item in slot ``j``, one item after the other."""
    out = []
    for j, item in zip(slots, incoming):
        out.append(buf[j])
        buf[j] = item
    return out


def _replace_array(buf: np.ndarray, slots: np.ndarray, incoming: np.ndarray) -> np.ndarray:
    """:func:`_replace_list` on index arrays, vectorised, with the same result.

    An incoming item whose slot was already refilled earlier in the block emits that earlier
    item; otherwise it emits what the buffer held. The last item drawn for a slot stays in it.
    """
    order = np.argsort(slots * len(slots) + np.arange(len(slots)))  # by slot, then by arrival (unique keys)
    sorted_slots = slots[order]
    repeat = np.zeros(len(order), dtype=bool)
    repeat[1:] = sorted_slots[1:] == sorted_slots[:-1]
    emitted = buf[sorted_slots]
    emitted[repeat] = incoming[order[:-1][repeat[1:]]]
    out = np.empty_like(incoming)
    out[order] = emitted
    last = np.ones(len(order), dtype=bool)
    last[:-1] = ~repeat[1:]
    buf[sorted_slots[last]] = incoming[order[last]]
    return out


def shuffle_blocks(blocks: Iterator[Any], buffer_size: int, seed: int) -> Iterator[Any]:
    """TF's shuffle buffer: fill ``buffer_size`` items, emit a random one, refill its slot; at the
    end, emit the rest in random order.

    Items come and go in blocks: numpy arrays of row indices (the fast path, vectorised: an
    epoch of MNIST costs ~2 ms) or lists of elements (a loop over the list). The draws depend
    neither on the block sizes nor on the kind of block, so the fast path and the element path
    give the same order.
    """
    draws = _Draws(seed)
    blocks = iter(blocks)
    parts: list[Any] = []
    have, carry = 0, None
    for block in blocks:
        need = buffer_size - have
        if len(block) <= need:
            parts.append(block)
            have += len(block)
            continue
        parts.append(block[:need])
        carry, have = block[need:], buffer_size
        break
    if not parts:
        return
    vector = isinstance(parts[0], np.ndarray)
    array_buf = np.concatenate(parts) if vector else np.empty(0)
    list_buf: list[Any] = [] if vector else [item for part in parts for item in part]
    size = len(array_buf) if vector else len(list_buf)
    for incoming in itertools.chain(() if carry is None else (carry,), blocks):  # one draw per item
        if len(incoming):
            slots = draws.indices(len(incoming), size)
            yield (
                _replace_array(array_buf, slots, incoming)
                if vector
                else _replace_list(list_buf, slots.tolist(), incoming)
            )
    order = draws.permutation(size)  # the input is exhausted: the rest of the buffer, in random order
    for start in range(0, size, CHUNK):
        part = order[start : start + CHUNK]
        yield array_buf[part] if vector else [list_buf[i] for i in part.tolist()]


def buffer_shuffle(items: Iterator[Any], buffer_size: int, seed: int) -> Iterator[Any]:
    """:func:`shuffle_blocks` on a stream of single items."""
    for block in shuffle_blocks(_blocks(items), buffer_size, seed):
        yield from block


__all__ = ["CHUNK", "buffer_shuffle", "shuffle_blocks"]
