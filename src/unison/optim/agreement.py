"""Replicas agree on what they train with before the first gradient leaves.

Replicas that hold the same parameters but step with different learning rates, optimizers,
losses or global batches finish with different weights and the same logged loss, and nothing
says so. The parameter check that exists (:func:`unison.optim.safety.check_consistency`: names,
shapes, dtypes and values, before the first reduction) compares these *facts* too, in its
one all-gather of a digest (no collective of its own):

* the objects that take part in training note themselves when they first serve a
  multi-replica job (:func:`note`): a Keras optimizer at its build (class and hyper-parameters,
  the learning rate or its schedule), a Keras loss at its first call inside a replica context,
  ``tf.nn.compute_average_loss``'s ``global_batch_size``;
* :func:`digest` folds them into the parameter check's digest; when digests differ,
  :func:`difference` names the fact, the rank and both values, and every replica raises
  :class:`~unison.errors.ReplicaMismatchError`.

A fact that only some replicas noted (a loss the chief alone computed for a log) is not
compared. A model or optimizer that steps unsynchronised in a job of a multi-replica strategy
(made outside ``strategy.scope()``, so ``fit`` never synchronises it) is refused at its first
step by :func:`unison.optim.first_step.check_synchronised`.

Example:
    >>> from unison.optim.agreement import describe
    >>> from unison import keras
    >>> describe(keras.optimizers.SGD(0.5))["learning_rate"]
    0.5
"""

from __future__ import annotations

import hashlib
import json
import weakref
from typing import Any

from unison.errors import UnsynchronizedTrainingError

__all__ = [
    "UnsynchronizedTrainingError",
    "describe",
    "difference",
    "digest",
    "mark_multi_replica",
    "note",
    "noted",
]

_FACTS = "_agreement_facts"  # attribute of a Communicator: name -> value or weak provider
_MULTI = "_agreement_multi_replica"  # set on the communicator of a Mirrored/MultiWorker strategy


def _holder(comm: Any) -> Any:
    """Where the facts live: the job's joined communicator (a strategy may wrap it, e.g.
    MultiWorkerMirroredStrategy's task-aware one, and notes come without a strategy at hand)."""
    from unison.comm.communicator import joined

    root = joined()
    return root if root is not None else comm


def mark_multi_replica(comm: Any) -> None:
    """Record that ``comm`` serves a MirroredStrategy/MultiWorkerMirroredStrategy job."""
    if getattr(comm, "is_distributed", False):
        setattr(_holder(comm), _MULTI, True)


def _comm() -> Any:
    from unison.comm.communicator import joined

    comm = joined()
    return comm if comm is not None and comm.is_distributed else None


def note(name: str, value: Any, comm: Any = None) -> None:
    """Note a fact replicas must agree on (a value, or an object described when checked).

    Objects (optimizers, losses) are held weakly and described at check time, so a learning
    rate changed between the note and the check is the one compared.
    """
    if comm is not None and not getattr(comm, "is_distributed", False):
        return  # one replica: nothing to agree on
    comm = _holder(comm) if comm is not None else _comm()
    if comm is None:
        return
    facts = comm.__dict__.setdefault(_FACTS, {})
    if isinstance(value, (str, int, float, bool, type(None), tuple)):
        facts[name] = value
    else:
        try:
            facts[name] = weakref.ref(value)
        except TypeError:
            facts[name] = value


def noted(comm: Any) -> dict[str, Any]:
    """The facts noted on ``comm``, described now (objects gone since are left out)."""
    out: dict[str, Any] = {}
    for name, value in dict(_holder(comm).__dict__.get(_FACTS, {})).items():
        if isinstance(value, weakref.ref):
            obj = value()
            if obj is None:
                continue
            value = describe(obj)
        out[name] = value
    return out


def _plain(value: Any) -> Any:
    """A JSON-able, comparable form of a config value (numbers, strings, nested configs)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (str, int, bool)) or value is None:
        return value
    try:
        return float(value)
    except (TypeError, ValueError):
        pass
    config = getattr(value, "get_config", None)
    if callable(config):
        return {"class": type(value).__name__, **_plain(config())}
    return type(value).__name__ if callable(value) else repr(value)


def describe(obj: Any) -> Any:
    """What replicas compare of an optimizer or a loss: its class and configuration.

    The name is left out (``adam`` and ``adam_1`` are the same optimizer).
    """
    import torch

    if isinstance(obj, torch.optim.Optimizer):
        groups = [{k: _plain(v) for k, v in g.items() if k != "params"} for g in obj.param_groups]
        return {"class": type(obj).__name__, "param_groups": groups}
    config = getattr(obj, "get_config", None)
    if callable(config):
        described = {"class": type(obj).__name__, **_plain(config())}
        described.pop("name", None)
        schedule = getattr(obj, "_schedule", None)
        if schedule is not None:
            described["learning_rate"] = _plain(schedule)
        return described
    return _plain(obj)


def digest(comm: Any) -> str:
    """A short digest of the facts noted on ``comm`` (folded into the parameter check's digest)."""
    facts = noted(comm)
    if not facts:
        return ""
    return hashlib.sha1(json.dumps(facts, sort_keys=True, default=repr).encode()).hexdigest()


def _show(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, default=repr) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 300 else text[:297] + "..."


def _first_difference(a: Any, b: Any, path: str = "") -> tuple[str, Any, Any] | None:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            found = _first_difference(a.get(key), b.get(key), f"{path}.{key}" if path else str(key))
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            found = _first_difference(x, y, f"{path}[{i}]")
            if found:
                return found
        return None
    return None if a == b else (path, a, b)


def difference(all_facts: list[dict[str, Any]]) -> str | None:
    """The message naming the first fact on which a rank differs from rank 0 (None: they agree).

    Only facts every rank noted are compared.
    """
    common = set(all_facts[0])
    for facts in all_facts[1:]:
        common &= set(facts)
    for name in sorted(common):
        want = all_facts[0][name]
        for rank, facts in enumerate(all_facts[1:], start=1):
            if facts[name] == want:
                continue
            where = _first_difference(want, facts[name])
            if where and where[0]:
                what = f"{where[0]} is {_show(where[2])} on rank {rank} but {_show(where[1])} on rank 0"
            else:
                what = f"rank {rank} has {_show(facts[name])} where rank 0 has {_show(want)}"
            return (
                f"Replicas train with different {name}: {what}. Expected the same on every replica (rank 0: "
                f"{_show(want)}; rank {rank}: {_show(facts[name])}). Fix: run the same program with the same "
                "arguments on every replica (a per-worker flag, environment variable or file read differently "
                "causes this); otherwise they finish with different results and report the same loss."
            )
    return None
