"""``tf.GradientTape`` on torch autograd.

torch records every operation on tensors that require gradients, so the tape does not record
anything itself: it decides *what may be differentiated* and calls ``torch.autograd.grad``.

* Trainable variables (:class:`unison.Variable`, any ``torch.nn.Parameter``, any leaf tensor
  with ``requires_grad``) are watched automatically (``watch_accessed_variables=True``); the
  result of an operation is a source only if ``watch()``ed, as in TF.
* ``tape.watch(t)`` on a tensor that does not require gradients sets ``requires_grad`` on it,
  in place: operations on it from then on are recorded, inside the tape *and after it* (TF's
  watch has no effect outside the tape). Use a fresh tensor per tape if that matters.
* With ``watch_accessed_variables=False`` only explicitly watched sources get gradients.
* Nested tapes: ``gradient()`` called while another tape (or this persistent tape) is recording
  builds the gradient's own graph (``create_graph``), so the outer tape can differentiate it.
* A computed tensor is a source when this tape recorded it (made inside the ``with`` block, e.g.
  ``tape.gradient(z, y)`` for an intermediate ``y``), as in TF; one made before the tape opened is
  not (``None``). The tape knows by the autograd sequence numbers of its recording windows.
* Independent tapes: several tapes may record the same operations (the GAN step's
  ``with tf.GradientTape() as g, tf.GradientTape() as d:``). torch frees a graph's saved tensors at
  the first backward pass, so a tape keeps the graph (``retain_graph``) while another live tape
  whose recording overlapped its own may still differentiate it, and the last one frees it. A
  tape is live until it computed its one set of gradients (non-persistent) or is dropped
  (persistent, or never used), as TF keeps a tape's records.
* Unlike TF, computations done *before* the tape opened are differentiated through when the
  target depends on them (torch's graph has no notion of "inside the tape"); compute the loss
  inside the ``with`` block, as TF requires.

Example:
    >>> import unison as tf
    >>> x = tf.Variable(3.0)
    >>> with tf.GradientTape() as tape:
    ...     y = x * x
    >>> tape.gradient(y, x).item()
    6.0
"""

from __future__ import annotations

import contextlib
import enum
import threading
import weakref
from collections.abc import Iterator
from typing import Any

import torch

from unison.ops.dtypes import to_tensor


class UnconnectedGradients(enum.Enum):
    """What ``gradient()`` returns for a source the target does not depend on."""

    NONE = "none"
    ZERO = "zero"


class _Recording(threading.local):
    # The tapes open in this thread, innermost last (TF keeps the same per-thread stack).
    def __init__(self) -> None:
        self.tapes: list[GradientTape] = []


_RECORDING = _Recording()

# Tapes that may still compute gradients: entered, and not yet spent (a non-persistent tape after
# its gradient() call) nor dropped. Weak, so a tape nobody holds any more stops keeping graphs.
_LIVE: weakref.WeakSet[GradientTape] = weakref.WeakSet()

_ONCE = "A non-persistent GradientTape can only be used to compute one set of gradients (or jacobians)."


def _flatten(structure: Any) -> list[Any]:
    if isinstance(structure, dict):
        return [leaf for key in sorted(structure, key=str) for leaf in _flatten(structure[key])]
    if isinstance(structure, (list, tuple)):
        return [leaf for item in structure for leaf in _flatten(item)]
    return [structure]


def _pack(structure: Any, leaves: Iterator[Any]) -> Any:
    if isinstance(structure, dict):
        # Leaves come in sorted-key order (TF's nest order); the result keeps the caller's order.
        packed = {key: _pack(structure[key], leaves) for key in sorted(structure, key=str)}
        return {key: packed[key] for key in structure}
    if isinstance(structure, tuple) and hasattr(structure, "_fields"):
        return type(structure)(*[_pack(item, leaves) for item in structure])
    if isinstance(structure, (list, tuple)):
        return type(structure)(_pack(item, leaves) for item in structure)
    return next(leaves)


class GradientTape:
    """Record operations for automatic differentiation (TF's ``tf.GradientTape``).

    Args:
        persistent: allow several ``gradient()`` calls (the graph is kept until the tape is
            dropped).
        watch_accessed_variables: watch every trainable variable automatically (default), or
            only what ``watch()`` names.
    """

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True) -> None:
        self._persistent = bool(persistent)
        self._watch_accessed = bool(watch_accessed_variables)
        self._watched: dict[int, torch.Tensor] = {}
        self._entered = False
        self._recording = False
        self._used = False
        self._grad_mode: contextlib.ExitStack | None = None
        # The autograd sequence numbers of the operations recorded while this tape was
        # recording, as [start, end) windows: a computed tensor is a source only if made in one.
        self._windows: list[tuple[int, int | None]] = []

    # --- recording ------------------------------------------------------------------------------
    def __enter__(self) -> GradientTape:
        if self._recording:
            raise ValueError("Tape is still recording, This can happen if you try to re-enter an already-active tape.")
        self._entered = True
        _LIVE.add(self)
        self._start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop()

    def _start(self) -> None:
        self._recording = True
        self._grad_mode = contextlib.ExitStack()
        self._grad_mode.enter_context(torch.enable_grad())  # a tape records even inside no_grad
        _RECORDING.tapes.append(self)
        self._windows.append((_sequence_now(), None))

    def _stop(self) -> None:
        if self._windows and self._windows[-1][1] is None:
            self._windows[-1] = (self._windows[-1][0], _sequence_now())
        if self in _RECORDING.tapes:
            _RECORDING.tapes.remove(self)
        if self._grad_mode is not None:
            self._grad_mode.close()
            self._grad_mode = None
        self._recording = False

    @contextlib.contextmanager
    def stop_recording(self) -> Iterator[None]:
        """Temporarily stop recording (operations inside are not differentiable)."""
        if not self._recording:
            raise RuntimeError("Trying to stop recording a tape which is not recording.")
        self._stop()
        try:
            with torch.no_grad():
                yield
        finally:
            self._start()

    def reset(self) -> None:
        """Forget what was watched (recording continues when inside ``with``)."""
        self._watched.clear()
        self._used = False

    def watch(self, tensor: Any) -> None:
        """Make ``tensor`` (or a nested structure of them) a source this tape differentiates.

        A tensor without ``requires_grad`` gets it, in place (see the module notes).
        """
        if not self._recording:
            raise ValueError(
                "GradientTape.watch() was called on a tape that is not recording. "
                "Call it inside `with tf.GradientTape() as tape:`."
            )
        for t in _flatten(tensor):
            if not isinstance(t, torch.Tensor):
                raise ValueError(f"GradientTape.watch() takes tensors or variables. Received: {t!r:.80}")
            if not (t.is_floating_point() or t.is_complex()):
                continue  # TF ignores integer tensors: they have no gradient
            if not t.requires_grad:
                t.requires_grad_(True)
            self._watched[id(t)] = t

    def watched_variables(self) -> tuple[torch.Tensor, ...]:
        """The tensors passed to ``watch()`` (automatically watched variables are not listed)."""
        return tuple(self._watched.values())

    # --- differentiation ------------------------------------------------------------------------
    def _differentiable(self, source: Any) -> bool:
        # As in TF: variables (leaf tensors that require grad: Variables, Parameters) are watched
        # automatically; a computed tensor is a source when watch()ed or when this tape recorded
        # the operation that made it (TF differentiates with respect to any recorded tensor, e.g.
        # an intermediate `y = x * x` inside the `with` block; one made before the tape is not).
        if not isinstance(source, torch.Tensor) or not source.requires_grad:
            return False
        if id(source) in self._watched:
            return True
        if source.is_leaf:
            return self._watch_accessed
        made = source.grad_fn._sequence_nr() if source.grad_fn is not None else -1
        return any(start < made and (end is None or made < end) for start, end in self._windows)

    def gradient(
        self,
        target: Any,
        sources: Any,
        output_gradients: Any = None,
        unconnected_gradients: UnconnectedGradients | str = UnconnectedGradients.NONE,
    ) -> Any:
        """d(sum of ``target``)/d(each source), in the structure of ``sources``.

        Args:
            target: a tensor or a (nested) list of tensors (their gradients are added).
            sources: a tensor/variable or a nested list/tuple/dict of them.
            output_gradients: gradients of ``target`` (same structure), default ones.
            unconnected_gradients: ``tf.UnconnectedGradients.NONE`` (``None`` for a source the
                target does not depend on) or ``ZERO`` (zeros of its shape).

        Raises:
            RuntimeError: a non-persistent tape used a second time, or a tape never entered.
        """
        mode = _unconnected(unconnected_gradients)
        if not self._entered or (self._used and not self._persistent):
            raise RuntimeError(
                _ONCE
                + (
                    " This tape was never entered: compute the target inside `with tf.GradientTape() as tape:`."
                    if not self._entered
                    else " Pass persistent=True to call gradient() several times."
                )
            )
        self._used = True
        if not self._persistent and self._recording:
            self._stop()  # TF stops a non-persistent tape at its first gradient() call
        if not self._persistent:
            _LIVE.discard(self)  # spent: it no longer needs the graph
        flat_sources = _flatten(sources)
        for s in flat_sources:
            if not isinstance(s, torch.Tensor):
                raise ValueError(
                    f"GradientTape.gradient: sources must be tensors or variables. "
                    f"Received a source of type {type(s).__name__}: {s!r:.80}"
                )
        targets = [to_tensor(t) for t in _flatten(target)]
        grads_out = None if output_gradients is None else [to_tensor(g) for g in _flatten(output_gradients)]
        results = self._grads(targets, grads_out, flat_sources)
        if not self._persistent and not any(t is not self for t in _RECORDING.tapes) and not self._shares_graph():
            _release(targets)
        if mode is UnconnectedGradients.ZERO:
            results = [torch.zeros_like(s) if g is None else g for g, s in zip(results, flat_sources)]
        return _pack(sources, iter(results))

    def jacobian(
        self,
        target: Any,
        sources: Any,
        unconnected_gradients: UnconnectedGradients | str = UnconnectedGradients.NONE,
        parallel_iterations: int | None = None,
        experimental_use_pfor: bool = True,
    ) -> Any:
        """d(each element of ``target``)/d(each source): shape ``target.shape + source.shape``."""
        t = to_tensor(target)
        rows = [(i,) for i in range(t.numel())]
        return self._stacked(
            t.reshape(-1),
            sources,
            unconnected_gradients,
            rows,
            t.shape,
            lambda g, s: g.reshape(tuple(t.shape) + tuple(s.shape)),
        )

    def batch_jacobian(
        self,
        target: Any,
        source: Any,
        unconnected_gradients: UnconnectedGradients | str = UnconnectedGradients.NONE,
        parallel_iterations: int | None = None,
        experimental_use_pfor: bool = True,
    ) -> Any:
        """Per-example jacobian: ``target[b]`` depends on ``source[b]`` only; shape
        ``(batch,) + target.shape[1:] + source.shape[1:]``."""
        t = to_tensor(target)
        inner = t.shape[1:]
        count = 1
        for d in inner:
            count *= d
        rows = [(slice(None), i) for i in range(count)]

        def arrange(g: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
            # g: (count, batch, *source[1:]) -> (batch, *target[1:], *source[1:])
            return g.movedim(0, 1).reshape((s.shape[0],) + tuple(inner) + tuple(s.shape[1:]))

        return self._stacked(t.reshape(t.shape[0], -1), source, unconnected_gradients, rows, t.shape, arrange)

    def _stacked(
        self,
        target: torch.Tensor,
        sources: Any,
        unconnected: UnconnectedGradients | str,
        rows: list[tuple[Any, ...]],
        shape: Any,
        arrange: Any,
    ) -> Any:
        # One backward pass per row of the jacobian (TF's pfor has no torch counterpart that
        # works on a recorded graph for every op).
        mode = _unconnected(unconnected)
        if not self._entered or (self._used and not self._persistent):
            raise RuntimeError(_ONCE)
        self._used = True
        if not self._persistent:
            _LIVE.discard(self)
        flat_sources = _flatten(sources)
        per_row: list[list[torch.Tensor | None]] = []
        for index in rows:
            seed = torch.zeros_like(target)
            seed[index] = 1.0
            per_row.append(self._grads([target], [seed], flat_sources, keep=True))
        results: list[torch.Tensor | None] = []
        for k, s in enumerate(flat_sources):
            column = [row[k] for row in per_row]
            if all(g is None for g in column) and mode is UnconnectedGradients.NONE:
                results.append(None)
                continue
            stacked = torch.stack([torch.zeros_like(s) if g is None else g for g in column])
            results.append(arrange(stacked, s))
        if not self._persistent and self._recording:
            self._stop()
        return _pack(sources, iter(results))

    def _grads(
        self,
        targets: list[torch.Tensor],
        grads_out: list[torch.Tensor] | None,
        sources: list[torch.Tensor],
        keep: bool = False,
    ) -> list[torch.Tensor | None]:
        wanted = [i for i, s in enumerate(sources) if self._differentiable(s)]
        live = [i for i, t in enumerate(targets) if t.requires_grad]
        results: list[torch.Tensor | None] = [None] * len(sources)
        if not wanted or not live:
            return results
        outer = [t for t in _RECORDING.tapes if t is not self]
        create_graph = bool(outer) or (self._persistent and self._recording)
        unique: dict[int, int] = {}
        for i in wanted:
            unique.setdefault(id(sources[i]), i)
        inputs = [sources[i] for i in unique.values()]
        outputs = [targets[i] for i in live]
        if grads_out is None:
            seeds = [torch.ones_like(t) for t in outputs]
        else:
            if len(grads_out) != len(targets):
                raise ValueError(
                    f"output_gradients must match target: {len(targets)} tensors expected, received {len(grads_out)}."
                )
            seeds = [grads_out[i].to(targets[i].dtype).expand_as(targets[i]) for i in live]
        with torch.enable_grad() if create_graph else contextlib.nullcontext():
            grads = torch.autograd.grad(
                outputs,
                inputs,
                grad_outputs=seeds,
                allow_unused=True,
                retain_graph=self._persistent or create_graph or keep or self._shares_graph(),
                create_graph=create_graph,
            )
        by_id = {id(s): g for s, g in zip(inputs, grads)}
        for i in wanted:
            results[i] = by_id[id(sources[i])]
        return results

    def _overlaps(self, other: GradientTape) -> bool:
        # Two tapes may hold the same operations when one recorded while the other did.
        for start, end in self._windows:
            for o_start, o_end in other._windows:
                if (end is None or o_start < end) and (o_end is None or start < o_end):
                    return True
        return False

    def _shares_graph(self) -> bool:
        """Whether another live tape recorded alongside this one (so the graph must survive)."""
        return any(other is not self and self._overlaps(other) for other in list(_LIVE))


def _release(targets: list[torch.Tensor]) -> None:
    """Detach a spent tape's targets in place: their graph is freed, as TF's eager tensors have none.

    Without this ``float(loss)`` after ``tape.gradient(loss, ...)`` (TF's tutorials print losses so)
    raises torch's "Converting a tensor with requires_grad=True to a scalar" warning. Only called
    when no other tape can still differentiate through them (the graph was not retained).
    """
    for t in targets:
        if t.grad_fn is not None and not t._is_view():
            t.detach_()


def _sequence_now() -> int:
    """The autograd sequence number of an operation made now (operations made later get larger ones)."""
    with torch.enable_grad():
        probe = torch.zeros((), requires_grad=True) * 1.0
    node = probe.grad_fn  # a float op on a tensor that requires grad always has one
    return int(node._sequence_nr()) if node is not None else 0


def _unconnected(value: UnconnectedGradients | str) -> UnconnectedGradients:
    if isinstance(value, UnconnectedGradients):
        return value
    if isinstance(value, str) and value.lower() in ("none", "zero"):
        return UnconnectedGradients(value.lower())
    raise ValueError(
        f"Unknown unconnected_gradients {value!r}. Expected tf.UnconnectedGradients.NONE "
        "or tf.UnconnectedGradients.ZERO."
    )
