"""What a parameter-server task holds and serves: variable shards, their optimizers, the updates.

Each shard is a named tensor with its own torch optimizer (built from the class name and the
hyper-parameters the coordinator registered), so the optimizer's state lives with the variable
and an update is applied here, when a worker's gradient arrives (asynchronous training). Dense
gradients replace the shard's ``.grad``; a sparse gradient (rows of an embedding table) is
applied as a sparse tensor where the optimizer supports one (SGD, Adagrad, SparseAdam: only the
touched rows change) and scattered into a dense gradient otherwise (Adam, RMSprop: every row's
moments decay, as in Keras). One lock per shard: concurrent pushes to one shard are serialised,
pushes to different shards run in parallel.

Example:
    >>> import torch
    >>> store = ParameterStore("ps:0")
    >>> _ = store.handlers()["ps.create"]({"names": ["w"], "if_absent": True}, [torch.ones(2)])
    >>> _ = store.handlers()["ps.set_optimizer"]({"names": ["w"], "cls": "SGD", "hyper": {"lr": 0.5}}, [])
    >>> _ = store.handlers()["ps.push"]({"names": ["w"]}, [torch.ones(2)])
    >>> store.handlers()["ps.pull"]({"names": ["w"]}, [])[1][0].tolist()
    [0.5, 0.5]
"""

from __future__ import annotations

import inspect
import threading
import uuid
from typing import Any

import torch

from unison.distribute.parameter_server import protocol
from unison.errors import format_choices

# The optimizers a parameter server builds, by name; nothing else is ever imported by name.
OPTIMIZERS: dict[str, type[torch.optim.Optimizer]] = {
    cls.__name__: cls
    for cls in (
        torch.optim.SGD,
        torch.optim.Adam,
        torch.optim.AdamW,
        torch.optim.RMSprop,
        torch.optim.Adagrad,
        torch.optim.Adadelta,
        torch.optim.Adamax,
        torch.optim.NAdam,
        torch.optim.RAdam,
        torch.optim.SparseAdam,
    )
}
_SPARSE_CAPABLE = {"SGD", "Adagrad", "SparseAdam"}


class _Shard:
    __slots__ = ("value", "lock", "optimizer", "sparse_ok", "updates")

    def __init__(self, value: torch.Tensor) -> None:
        self.value = torch.nn.Parameter(value.clone(), requires_grad=value.is_floating_point())
        self.lock = threading.Lock()
        self.optimizer: torch.optim.Optimizer | None = None
        self.sparse_ok = False
        self.updates = 0


class ParameterStore:
    """The variables of one PS task and the RPC handlers that serve them.

    Args:
        task: this task's name (``"ps:0"``), used in error messages.
    """

    def __init__(self, task: str) -> None:
        self.task = task
        self.incarnation = uuid.uuid4().hex  # a restarted PS is a new incarnation: its variables are gone
        self._shards: dict[str, _Shard] = {}
        self._lock = threading.Lock()
        self.session: str | None = None  # the coordinator session whose variables this task holds
        self.bytes_in = 0
        self.bytes_out = 0

    def handlers(self) -> dict[str, Any]:
        return {
            protocol.PS_CREATE: self._create,
            protocol.PS_PULL: self._pull,
            protocol.PS_PULL_ROWS: self._pull_rows,
            protocol.PS_PUSH: self._push,
            protocol.PS_PUSH_ROWS: self._push_rows,
            protocol.PS_ASSIGN: self._assign,
            protocol.PS_SET_OPTIMIZER: self._set_optimizer,
            protocol.PS_RESET: self._reset,
            protocol.PS_STATS: self._stats,
            protocol.PS_OPTIMIZER_STATE: self._optimizer_state,
            protocol.PS_LOAD_OPTIMIZER_STATE: self._load_optimizer_state,
        }

    # --- lookup --------------------------------------------------------------------------------
    def _shard(self, name: str) -> _Shard:
        shard = self._shards.get(name)
        if shard is None and self.session is not None and not name.startswith(self.session + "/"):
            raise KeyError(
                f"{self.task} holds no variable {name!r}: it belonged to an earlier coordinator session, "
                "which a newer ParameterServerStrategy on this cluster replaced (one coordinator per "
                "cluster at a time). Stop using the older strategy."
            )
        if shard is None:
            raise KeyError(
                f"{self.task} holds no variable {name!r}: it was never created here, or this PS "
                "restarted and lost its variables (restart the coordinator from a checkpoint)."
            )
        return shard

    # --- handlers ------------------------------------------------------------------------------
    def _create(self, header: dict, tensors: list[torch.Tensor]) -> tuple[dict, list[torch.Tensor]]:
        """Create shards; with ``if_absent`` an existing shard keeps its value (first creator wins)."""
        created = 0
        with self._lock:
            for name, value in zip(header["names"], tensors):
                if name in self._shards and header.get("if_absent", True):
                    continue
                self._shards[name] = _Shard(value)
                created += 1
        self.bytes_in += sum(t.nbytes for t in tensors)
        return {"created": created, "incarnation": self.incarnation}, []

    def _pull(self, header: dict, tensors: list[torch.Tensor]) -> tuple[Any, ...]:
        """The shards' current values, sent without a copy: their locks are held until packed."""
        shards = {name: self._shard(name) for name in header["names"]}
        locked = [shards[name] for name in sorted(shards)]  # one global order: no deadlock between pulls
        for shard in locked:
            shard.lock.acquire()

        def release() -> None:
            for shard in locked:
                shard.lock.release()

        out = [shards[name].value.detach() for name in header["names"]]
        self.bytes_out += sum(t.nbytes for t in out)
        return {}, out, release

    def _pull_rows(self, header: dict, tensors: list[torch.Tensor]) -> tuple[dict, list[torch.Tensor]]:
        out = []
        for name, ids in zip(header["names"], tensors):
            shard = self._shard(name)
            with shard.lock:
                out.append(shard.value.detach().index_select(0, ids))
        self.bytes_in += sum(t.nbytes for t in tensors)
        self.bytes_out += sum(t.nbytes for t in out)
        return {}, out

    def _push(self, header: dict, tensors: list[torch.Tensor]) -> tuple[dict, list[torch.Tensor]]:
        for name, grad in zip(header["names"], tensors):
            self._apply(name, self._shard(name), lambda shard, g=grad: g.to(shard.value.dtype))
        self.bytes_in += sum(t.nbytes for t in tensors)
        return {"applied": len(tensors)}, []

    def _push_rows(self, header: dict, tensors: list[torch.Tensor]) -> tuple[dict, list[torch.Tensor]]:
        names = header["names"]
        for i, name in enumerate(names):
            ids, rows = tensors[2 * i], tensors[2 * i + 1]
            self._apply(name, self._shard(name), lambda shard, ids=ids, rows=rows: _row_gradient(shard, ids, rows))
        self.bytes_in += sum(t.nbytes for t in tensors)
        return {"applied": len(names)}, []

    def _apply(self, name: str, shard: _Shard, make_grad: Any) -> None:
        if shard.optimizer is None:
            raise RuntimeError(
                f"Variable {name!r} on {self.task} received a gradient but has no optimizer: create the "
                "optimizer under strategy.scope() and use it in the scheduled function (optimizer.step())."
            )
        with shard.lock, torch.sparse.check_sparse_tensor_invariants(enable=False):
            shard.value.grad = make_grad(shard)
            shard.optimizer.step()
            shard.value.grad = None
            shard.updates += 1

    def _assign(self, header: dict, tensors: list[torch.Tensor]) -> tuple[dict, list[torch.Tensor]]:
        for name, value in zip(header["names"], tensors):
            shard = self._shard(name)
            with shard.lock, torch.no_grad():
                shard.value.copy_(value)
        self.bytes_in += sum(t.nbytes for t in tensors)
        return {}, []

    def _set_optimizer(self, header: dict, tensors: list[torch.Tensor]) -> tuple[dict, list[torch.Tensor]]:
        """Build (or re-tune, keeping its state) the optimizer of each named shard."""
        name = header["cls"]
        cls = OPTIMIZERS.get(name)
        if cls is None:
            raise ValueError(
                f"A parameter server applies updates with one of {format_choices(OPTIMIZERS)}. "
                f"Received: optimizer {name!r}. Use one of those (or a Keras optimizer) under "
                "ParameterServerStrategy."
            )
        # only what the constructor takes: schedulers add keys such as 'initial_lr' to param groups
        accepted = inspect.signature(cls).parameters
        hyper: dict[str, Any] = {
            k: tuple(v) if isinstance(v, list) else v for k, v in header["hyper"].items() if k in accepted
        }
        for var in header["names"]:
            shard = self._shard(var)
            with shard.lock:
                if shard.optimizer is not None and type(shard.optimizer) is cls:
                    shard.optimizer.param_groups[0].update(hyper)  # a new learning rate keeps the moments
                else:
                    shard.optimizer = cls([shard.value], **hyper)
                shard.sparse_ok = name in _SPARSE_CAPABLE and not hyper.get("weight_decay")
        return {}, []

    def _optimizer_state(self, header: dict, tensors: list[torch.Tensor]) -> tuple[dict, list[torch.Tensor]]:
        """The optimizer state of each named shard, flattened: ``keys`` per shard and their tensors."""
        keys: list[list[str]] = []
        out: list[torch.Tensor] = []
        for name in header["names"]:
            shard = self._shard(name)
            with shard.lock:
                state = shard.optimizer.state.get(shard.value, {}) if shard.optimizer is not None else {}
                keys.append(sorted(state))
                # SGD keeps a sparse momentum buffer for sparse gradients: sent dense
                out.extend(_dense(torch.as_tensor(state[k])) for k in sorted(state))
        return {"keys": keys}, out

    def _load_optimizer_state(self, header: dict, tensors: list[torch.Tensor]) -> tuple[dict, list[torch.Tensor]]:
        it = iter(tensors)
        for name, keys in zip(header["names"], header["keys"]):
            shard = self._shard(name)
            with shard.lock:
                if shard.optimizer is None:
                    raise RuntimeError(f"Variable {name!r} on {self.task} has no optimizer to restore state into.")
                shard.optimizer.state[shard.value] = {k: next(it).clone() for k in keys}
        return {}, []

    def _reset(self, header: dict, tensors: list[torch.Tensor]) -> tuple[dict, list[torch.Tensor]]:
        """A new coordinator session: drop every variable of earlier sessions."""
        self.session = header["session"]
        prefix = header["session"] + "/"
        with self._lock:
            for name in [n for n in self._shards if not n.startswith(prefix)]:
                del self._shards[name]
        return {"incarnation": self.incarnation}, []

    def _stats(self, header: dict, tensors: list[torch.Tensor]) -> tuple[dict, list[torch.Tensor]]:
        return {
            "bytes_in": self.bytes_in,
            "bytes_out": self.bytes_out,
            "incarnation": self.incarnation,
            "updates": {n: s.updates for n, s in self._shards.items()},
        }, []


def _dense(t: torch.Tensor) -> torch.Tensor:
    return (t.to_dense() if t.is_sparse else t).detach().clone()


def _row_gradient(shard: _Shard, ids: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    rows = rows.to(shard.value.dtype)
    if shard.sparse_ok:
        return torch.sparse_coo_tensor(ids.reshape(1, -1), rows, shard.value.shape, check_invariants=False).coalesce()
    dense = torch.zeros_like(shard.value)
    return dense.index_add_(0, ids, rows)


__all__ = ["OPTIMIZERS", "ParameterStore"]
