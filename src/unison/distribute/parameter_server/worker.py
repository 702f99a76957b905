"""The worker side: run scheduled functions against variables that live on parameter servers.

A worker receives each function once (:meth:`WorkerRuntime.register`). While it is unpickled,
references to variables become local tensors bound to their PS shards (one local copy per
variable, shared by every function), optimizers become :class:`WorkerOptimizer` (``step()``
pushes gradients, the PS applies the update), embedding tables become :class:`RemoteEmbedding`
(a lookup pulls only the rows of its batch) and metrics become accumulators whose sums go back
to the coordinator with the function's result. Running a function pulls the current values of
its dense variables first (asynchronous training: whatever the PS holds at that moment).

Example (what a scheduled function sees on a worker)::

    def step(iterator):                  # pickled on the coordinator, run here
        x, y = next(iterator)            # this worker's own dataset
        loss = F.mse_loss(model(x), y)   # model's weights: pulled from the PS for this call
        loss.backward()
        optimizer.step()                 # gradients pushed; each PS applies them on arrival
        return loss                      # back to the coordinator's RemoteValue
"""

from __future__ import annotations

import contextlib
import threading
import uuid
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F

from unison.comm.communicator import LocalCommunicator
from unison.comm.rpc import RpcClient, TlsConfig
from unison.distribute.input import InputContext
from unison.distribute.parameter_server import codec, protocol
from unison.distribute.parameter_server.client import ParameterServers, ShardCalls
from unison.distribute.parameter_server.variables import VariableSpec
from unison.distribute.strategy import Strategy
from unison.errors import DatasetExhaustedError, ParameterServerUnavailableError, WorkerRestartedError
from unison.optim.distributed import DistributedOptimizer, Sum

_LOADING = threading.local()  # the runtime (and what it collects) while a function is unpickled


@dataclass
class _Loaded:
    fn: Any
    dense: list[str] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)
    specs: dict[str, VariableSpec] = field(default_factory=dict)


class WorkerStrategy(Strategy):
    """What ``strategy`` is inside a scheduled function: this worker, one replica.

    ``distribute_datasets_from_function(dataset_fn)`` calls ``dataset_fn`` with this worker's
    :class:`InputContext` (``input_pipeline_id`` = worker index), so each worker reads its shard.
    """

    def __init__(self, worker_index: int, num_workers: int) -> None:
        super().__init__(LocalCommunicator(), torch.device("cpu"))
        self.worker_index, self.num_workers = worker_index, num_workers
        self.runtime: WorkerRuntime | None = None

    def apply_gradients_remotely(self, optimizer: Any, pairs: list[tuple[Any, torch.Tensor]]) -> Any:
        """Keras's ``optimizer.apply_gradients`` inside a scheduled function: the parameter servers
        apply the update (TF's semantics: the variables live there), with the torch optimizer
        class and hyper-parameters the Keras optimizer builds; its state stays on the servers."""
        if self.runtime is None:
            raise RuntimeError("apply_gradients ran on a worker strategy that belongs to no worker task.")
        return self.runtime.apply_gradients(optimizer, pairs)

    def distribute_datasets_from_function(self, dataset_fn: Any, options: Any = None) -> Any:
        return dataset_fn(
            InputContext(
                num_input_pipelines=self.num_workers, input_pipeline_id=self.worker_index, num_replicas_in_sync=1
            )
        )

    def experimental_distribute_dataset(self, dataset: Any, options: Any = None) -> Any:
        return dataset


class RemoteEmbedding(torch.nn.Module):
    """An embedding table on the parameter servers: a lookup pulls only the rows it needs.

    The pulled rows are a leaf tensor; after ``backward()`` its gradient holds exactly the
    touched rows, which :meth:`WorkerOptimizer.step` pushes (ids and rows, never the table).
    """

    def __init__(
        self, runtime: WorkerRuntime, spec: VariableSpec, padding_idx: int | None, check_range: bool, name: str
    ) -> None:
        super().__init__()
        self._runtime, self.spec = runtime, spec
        self.padding_idx, self.check_range, self.layer_name = padding_idx, check_range, name
        self.num_embeddings, self.embedding_dim = spec.shape[0], spec.shape[1]

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        ids = ids.long()
        if self.check_range and ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= self.num_embeddings):
            bad = int(ids.max()) if int(ids.max()) >= self.num_embeddings else int(ids.min())
            raise ValueError(
                f"Layer '{self.layer_name}' received id {bad}, outside [0, input_dim="
                f"{self.num_embeddings}). Raise input_dim or fix the ids."
            )
        unique, inverse = torch.unique(ids.reshape(-1), return_inverse=True)
        rows = self._runtime.pull_rows(self.spec, unique)
        if torch.is_grad_enabled() and self.spec.trainable:
            rows = torch.nn.Parameter(rows)
            self._runtime.tape.append((self.spec, unique, rows))
            # listed in model.trainable_variables (as TF lists the table), so that a GradientTape
            # step can differentiate them and apply_gradients can push them as rows
            self.rows = rows
        pad = None
        if self.padding_idx is not None:
            hit = (unique == self.padding_idx).nonzero()
            pad = int(hit[0, 0]) if len(hit) else None
        return F.embedding(inverse.reshape(ids.shape), rows, padding_idx=pad)


class WorkerOptimizer(torch.optim.Optimizer):
    """An optimizer whose ``step()`` sends the gradients to the variables' parameter servers.

    The update itself (and the optimizer's state) lives on the PS that owns each variable. It is
    a ``torch.optim.Optimizer`` (``fit``'s synchroniser wraps it, as it wraps any torch
    optimizer), without torch's constructor: its groups hold the worker's copies.
    """

    def __init__(self, runtime: WorkerRuntime, groups: list[dict]) -> None:
        self._optimizer_step_pre_hooks: OrderedDict[int, Any] = OrderedDict()
        self._optimizer_step_post_hooks: OrderedDict[int, Any] = OrderedDict()
        self._runtime = runtime
        self.param_groups: list[dict] = []
        self._dense: list[tuple[VariableSpec, torch.Tensor]] = []
        self._sparse: set[str] = set()
        for group in groups:
            specs = [VariableSpec.from_json(s) for s in group["vars"]]
            params = []
            for spec in specs:
                if spec.sparse:
                    self._sparse.add(spec.name)
                else:
                    param = runtime.variable(spec)
                    params.append(param)
                    self._dense.append((spec, param))
            self.param_groups.append({"params": params, **group["hyper"]})
        self.defaults: dict = {}
        self.state: Any = {}

    def zero_grad(self, set_to_none: bool = True) -> None:
        for _, p in self._dense:
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad.zero_()

    def step(self, closure: Any = None) -> Any:
        loss = closure() if closure is not None else None
        dense = [(spec, p.grad) for spec, p in self._dense if p.grad is not None]
        sparse = [
            (spec, ids, rows.grad) for spec, ids, rows in self._runtime.take_tape(self._sparse) if rows.grad is not None
        ]
        self._runtime.push(dense, sparse)
        return loss


class WorkerRuntime:
    """The state of one worker task and the RPC handlers the coordinator calls.

    Args:
        task_index: this worker's index in the ``worker`` job.
        num_workers: workers in the cluster.
        ps_addresses: the parameter servers' ``host:port``.
        token: the cluster token (for calls to the parameter servers).
        tls: TLS settings for those calls.
        timeout_s: deadline of one call to a parameter server.
    """

    def __init__(
        self,
        task_index: int,
        num_workers: int,
        ps_addresses: list[str],
        token: str | None,
        tls: TlsConfig | None,
        timeout_s: float = 60.0,
    ) -> None:
        self.task = f"worker:{task_index}"
        self.incarnation = uuid.uuid4().hex
        self.strategy = WorkerStrategy(task_index, num_workers)
        self.strategy.runtime = self
        self._specs: dict[str, VariableSpec] = {}
        self._configured: dict[str, tuple[str, dict]] = {}  # shard -> optimizer sent to its server
        self.ps = ParameterServers(
            [
                RpcClient(a, f"ps:{i}", token, tls, timeout_s, sender=f"worker:{task_index}")
                for i, a in enumerate(ps_addresses)
            ],
            consequence=f"{self.task} cannot read or update its variables without it.",
        )
        self.session: str | None = None
        self._variables: dict[str, torch.Tensor] = {}
        self._functions: dict[str, _Loaded] = {}
        self._resources: dict[str, Any] = {}
        self.tape: list[tuple[VariableSpec, torch.Tensor, torch.Tensor]] = []
        self._run_lock = threading.Lock()

    def handlers(self) -> dict[str, Any]:
        return {
            protocol.WORKER_RESET: self._reset,
            protocol.WORKER_REGISTER: self._register,
            protocol.WORKER_RESOURCE: self._resource,
            protocol.WORKER_RUN: self._run,
            protocol.WORKER_STATS: self._stats,
        }

    # --- variables --------------------------------------------------------------------------
    def variable(self, spec: VariableSpec) -> torch.Tensor:
        """This worker's local copy of a dense variable (one per variable, shared by functions)."""
        param = self._variables.get(spec.name)
        if param is None:
            param = torch.nn.Parameter(torch.zeros(spec.shape, dtype=spec.torch_dtype), requires_grad=spec.trainable)
            self._variables[spec.name] = param
            self._specs[spec.name] = spec
        return param

    def apply_gradients(self, optimizer: Any, pairs: list[tuple[Any, torch.Tensor]]) -> Any:
        """See :meth:`WorkerStrategy.apply_gradients_remotely`: push ``pairs`` to the servers."""
        cls, hyper = _update_rule(optimizer)
        by_id = {id(p): name for name, p in self._variables.items()}
        looked_up = {id(rows): (spec, ids) for spec, ids, rows in self.tape}
        dense, sparse = [], []
        for i, (grad, var) in enumerate(pairs):
            if grad is None:
                continue
            grad = torch.as_tensor(grad).detach()
            if tuple(grad.shape) != tuple(var.shape):
                raise ValueError(
                    f"apply_gradients(): the gradient #{i} has shape {tuple(grad.shape)}, its variable "
                    f"{tuple(var.shape)}. Zip the gradients and variables in the same order."
                )
            if id(var) in by_id:
                dense.append((self._specs[by_id[id(var)]], grad))
            elif id(var) in looked_up:
                spec, ids = looked_up[id(var)]
                sparse.append((spec, ids, grad))
            else:
                raise ValueError(
                    f"apply_gradients() on {self.task} received variable #{i} (shape {tuple(var.shape)}), which is "
                    "not a variable of the parameter servers. Under ParameterServerStrategy create the model and "
                    "optimizer inside strategy.scope() and pass model.trainable_variables."
                )
        specs = [spec for spec, _ in dense] + [spec for spec, _, _ in sparse]
        per_ps: dict[int, list[str]] = {}
        for spec in specs:
            for shard in spec.shards:
                if self._configured.get(shard.name) != (cls, hyper):
                    per_ps.setdefault(shard.ps, []).append(shard.name)
        pending = [
            self.ps.submit(ps, protocol.PS_SET_OPTIMIZER, {"names": names, "cls": cls, "hyper": hyper})
            for ps, names in per_ps.items()
        ]
        for future in pending:
            self.ps.result(future)
        for names in per_ps.values():
            for name in names:
                self._configured[name] = (cls, hyper)
        self.push(dense, sparse)
        counter = getattr(optimizer, "_counter", None)
        if counter is not None:
            counter.after_step()
        return getattr(optimizer, "iterations", None)

    def refresh(self, names: list[str], specs: dict[str, VariableSpec]) -> None:
        """Pull the current value of dense variables from their parameter servers (one call per PS)."""
        calls = ShardCalls()
        for name in names:
            spec, param = specs[name], self._variables[name]
            for shard, view in zip(spec.shards, spec.split(param.data)):
                # the reply is written straight into the local copy (no buffer, no second copy)
                calls.add(shard.ps, protocol.PS_PULL, shard.name, into=[view])
        self.ps.send(calls)

    def pull_rows(self, spec: VariableSpec, ids: torch.Tensor) -> torch.Tensor:
        """Rows ``ids`` of an embedding table (one call per shard touched)."""
        routes = spec.route(ids)
        pending = [
            self.ps.submit(shard.ps, protocol.PS_PULL_ROWS, {"names": [shard.name]}, [local])
            for shard, _, local in routes
        ]
        out = torch.empty((len(ids), *spec.shape[1:]), dtype=spec.torch_dtype)
        for (_, pos, _), future in zip(routes, pending):
            out.index_copy_(0, pos, self.ps.result(future)[1][0])
        return out

    def take_tape(self, names: set[str]) -> list[tuple[VariableSpec, torch.Tensor, torch.Tensor]]:
        mine = [entry for entry in self.tape if entry[0].name in names]
        self.tape = [entry for entry in self.tape if entry[0].name not in names]
        return mine

    def push(
        self,
        dense: list[tuple[VariableSpec, torch.Tensor]],
        sparse: list[tuple[VariableSpec, torch.Tensor, torch.Tensor]],
    ) -> None:
        """Send gradients to the parameter servers: dense ones whole, embedding ones as rows."""
        calls = ShardCalls()
        for spec, grad in dense:
            for shard, g in zip(spec.shards, spec.split(grad)):
                calls.add(shard.ps, protocol.PS_PUSH, shard.name, [g])
        for spec, ids, rows in _merge_rows(sparse):
            for shard, pos, local in spec.route(ids):
                calls.add(shard.ps, protocol.PS_PUSH_ROWS, shard.name, [local, rows.index_select(0, pos)])
        self.ps.send(calls)

    # --- handlers -------------------------------------------------------------------------------
    def _reset(self, header: dict, tensors: list[torch.Tensor]) -> tuple[dict, list[torch.Tensor]]:
        """A new coordinator session: forget the functions, datasets and variables of the last one."""
        with self._run_lock:
            if header["session"] != self.session:
                self.session = header["session"]
                self._functions.clear()
                self._resources.clear()
                self._variables.clear()
                self._specs.clear()
                self._configured.clear()
        return {"incarnation": self.incarnation}, []

    def _check_incarnation(self, header: dict) -> None:
        expected = header.get("incarnation")
        if expected is not None and expected != self.incarnation:
            raise WorkerRestartedError(f"{self.task} restarted since the coordinator last synchronised it.")

    def _register(self, header: dict, tensors: list[torch.Tensor]) -> tuple[dict, list[torch.Tensor]]:
        self._check_incarnation(header)
        loaded = _Loaded(None)
        with self._loading(loaded):
            loaded.fn = codec.loads(codec.bytes_of(tensors[0]))
        self._functions[header["fid"]] = loaded
        return {}, []

    @contextlib.contextmanager
    def _loading(self, loaded: _Loaded) -> Iterator[None]:
        _LOADING.runtime, _LOADING.loaded = self, loaded
        try:
            yield
        finally:
            _LOADING.runtime = _LOADING.loaded = None

    def _resource(self, header: dict, tensors: list[torch.Tensor]) -> tuple[dict, list[torch.Tensor]]:
        self._check_incarnation(header)
        rid = header["rid"]
        if header["kind"] == "dataset":
            with self._run_lock, self.strategy.as_current():
                self._resources[rid] = self._functions[header["fid"]].fn()
        else:
            self._resources[rid] = iter(self._resources[header["source"]])
        return {}, []

    def _run(self, header: dict, tensors: list[torch.Tensor]) -> tuple[dict, list[torch.Tensor]]:
        self._check_incarnation(header)
        with self._run_lock:
            loaded = self._functions.get(header["fid"])
            if loaded is None:
                raise KeyError(f"{self.task} has no function {header['fid']!r} (restarted since it was sent?)")
            args, kwargs = codec.decode_tree(header["args"], tensors, self._resources.__getitem__)
            if loaded.dense:
                self.refresh(loaded.dense, loaded.specs)
            self.tape = []
            for metric in loaded.metrics.values():  # sums of a run that failed are not reported later
                metric.load_state(torch.zeros_like(metric.state()))
            try:
                with self.strategy.as_current():
                    result = loaded.fn(*args, **kwargs)
            except StopIteration:
                raise DatasetExhaustedError(
                    f"The dataset of {self.task} ran out inside a scheduled function. Make the per-worker "
                    "dataset endless (repeat it) and bound training with the number of scheduled steps."
                ) from None
            finally:
                self.tape = []
            tree, out = codec.encode_tree(result)
            states = {}
            for key, metric in loaded.metrics.items():
                states[key] = len(out)
                out.append(metric.state())
        return {"result": tree, "metrics": states}, out

    def close(self) -> None:
        for client in self.ps.clients:
            client.close()

    def _stats(self, header: dict, tensors: list[torch.Tensor]) -> tuple[dict, list[torch.Tensor]]:
        return {"bytes_sent": self.ps.bytes_sent, "bytes_received": self.ps.bytes_received}, []


def _update_rule(optimizer: Any) -> tuple[str, dict]:
    """The torch optimizer class and hyper-parameters a Keras optimizer builds (cached on it)."""
    rule = getattr(optimizer, "_unison_ps_rule", None)
    if rule is None:
        from unison.distribute.parameter_server.store import OPTIMIZERS

        if not (hasattr(optimizer, "build") and hasattr(optimizer, "get_config")):
            raise TypeError(f"apply_gradients() needs a Keras optimizer. Received: {type(optimizer).__name__}")
        # a fresh optimizer from the config: a deep copy would drag the built one's state along
        # (on a worker running fit's step it holds the RPC clients and the process group)
        fresh = type(optimizer).from_config(optimizer.get_config())
        probe = fresh.build([torch.nn.Parameter(torch.zeros(1))])
        name = type(probe).__name__
        if name == "_RMSpropRule":
            # Keras's RMSprop rule (lr * g / sqrt(v + eps)) runs on workers; the parameter servers
            # apply torch's RMSprop (lr * g / (sqrt(v) + eps)): the same step but for eps's place,
            # a relative difference of about eps / sqrt(v) (eps is 1e-7 by default)
            group = probe.param_groups[0]
            hyper = {"lr": float(group["lr"]), "alpha": float(group["rho"]), "eps": float(group["eps"])}
            hyper |= {"momentum": float(group["momentum"]), "centered": bool(group["centered"])}
            optimizer._unison_ps_rule = ("RMSprop", hyper)
            return ("RMSprop", hyper)
        if OPTIMIZERS.get(name) is not type(probe) or probe._optimizer_step_pre_hooks:
            raise ValueError(
                f"The parameter servers apply updates with one of {sorted(OPTIMIZERS)}; this Keras optimizer "
                f"builds {type(probe).__qualname__}{' with step hooks (weight_decay)' if probe._optimizer_step_pre_hooks else ''}. "
                "Use SGD, Adam, AdamW, RMSprop or Adagrad without weight_decay under ParameterServerStrategy."
            )
        group = {k: v for k, v in probe.param_groups[0].items() if k not in ("params", "fused", "foreach")}
        rule = (
            name,
            {
                k: (v.item() if isinstance(v, torch.Tensor) else list(v) if isinstance(v, tuple) else v)
                for k, v in group.items()
            },
        )
        optimizer._unison_ps_rule = rule
    return rule


def _merge_rows(
    sparse: list[tuple[VariableSpec, torch.Tensor, torch.Tensor]],
) -> list[tuple[VariableSpec, torch.Tensor, torch.Tensor]]:
    """One (ids, rows) per table: several lookups of one table in a step are concatenated."""
    by_name: dict[str, tuple[VariableSpec, list[torch.Tensor], list[torch.Tensor]]] = {}
    for spec, ids, rows in sparse:
        entry = by_name.setdefault(spec.name, (spec, [], []))
        entry[1].append(ids)
        entry[2].append(rows)
    return [(spec, torch.cat(ids), torch.cat(rows)) for spec, ids, rows in by_name.values()]


# --- rebuilt on the worker while a function is unpickled (see ParameterServerStrategy._reduce) ---
def _context() -> tuple[WorkerRuntime, _Loaded, dict[str, VariableSpec]]:
    runtime = getattr(_LOADING, "runtime", None)
    if runtime is None:
        raise RuntimeError("A ParameterServerStrategy function can only be loaded by a worker task.")
    return runtime, _LOADING.loaded, _LOADING.loaded.specs


def rebuild_variable(spec_json: dict) -> torch.Tensor:
    runtime, loaded, specs = _context()
    spec = VariableSpec.from_json(spec_json)
    if spec.name not in specs:
        specs[spec.name] = spec
        loaded.dense.append(spec.name)
    return runtime.variable(spec)


def rebuild_embedding(spec_json: dict, padding_idx: int | None, check_range: bool, name: str) -> RemoteEmbedding:
    runtime, _, _ = _context()
    return RemoteEmbedding(runtime, VariableSpec.from_json(spec_json), padding_idx, check_range, name)


def rebuild_optimizer(groups: list[dict]) -> WorkerOptimizer:
    runtime, loaded, specs = _context()
    for group in groups:
        for s in group["vars"]:
            spec = VariableSpec.from_json(s)
            if not spec.sparse and spec.name not in specs:
                specs[spec.name] = spec
                loaded.dense.append(spec.name)
    return WorkerOptimizer(runtime, groups)


def rebuild_synchronizer(optimizer: Any, transform: Any, nonfinite: str, passes: int) -> DistributedOptimizer:
    """fit's synchroniser on a worker: one replica's (a local communicator, no gradient hooks)."""
    return DistributedOptimizer(
        optimizer,
        op=Sum,
        communicator=LocalCommunicator(),
        gradient_transform=transform,
        nonfinite=nonfinite,
        backward_passes_per_step=passes,
        hooks=False,
        check_consistency=False,
    )


def rebuild_metric(key: str, metric: Any) -> Any:
    _, loaded, _ = _context()
    metric.load_state(torch.zeros_like(metric.state()))  # fresh sums (and views into them)
    loaded.metrics[key] = metric
    return metric


def rebuild_strategy() -> WorkerStrategy:
    return _context()[0].strategy


__all__ = [
    "DatasetExhaustedError",
    "ParameterServerUnavailableError",
    "RemoteEmbedding",
    "WorkerOptimizer",
    "WorkerRestartedError",
    "WorkerRuntime",
    "WorkerStrategy",
]
