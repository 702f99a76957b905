"""ParameterServerStrategy: variables on parameter servers, workers compute, updates asynchronous.

The user's program is the coordinator (TF's model). Parameters created under ``scope()`` are
placed on the ``ps`` tasks the first time a scheduled function needs them (their values at that
moment are the initial values): each goes whole to the server holding the fewest bytes, or, with
a ``variable_partitioner``, in row shards spread over the servers. Embedding tables
(``keras.layers.Embedding``, ``torch.nn.Embedding``) are sparse: a step pulls and pushes only the
rows its batch touches. Optimizers used by a scheduled function are rebuilt on the servers, one
per shard, so their state lives with the variable and each worker's gradient is applied when it
arrives. The coordinator's own copies of the parameters are refreshed from the servers at every
``ClusterCoordinator.join()``; change them on the coordinator (``load_weights``, a restored
checkpoint) and the next ``schedule`` writes them to the servers.

Example::

    resolver = unison.distribute.cluster_resolver.TFConfigClusterResolver()
    strategy = unison.distribute.ParameterServerStrategy(
        resolver, variable_partitioner=unison.distribute.experimental.partitioners.MinSizePartitioner(
            min_shard_bytes=256 << 10, max_shards=2))
    coordinator = unison.distribute.experimental.coordinator.ClusterCoordinator(strategy)
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
import weakref
from collections.abc import Callable, Iterator, Mapping
from concurrent import futures
from typing import Any, TypeVar

import torch
from torch.nn.modules.module import register_module_parameter_registration_hook

from unison.cluster.spec import PS, WORKER, ClusterSpec
from unison.comm.auth import GOOD_TOKEN_HINT
from unison.comm.communicator import Communicator, LocalCommunicator
from unison.comm.rpc import RpcClient
from unison.distribute.parameter_server import protocol
from unison.distribute.parameter_server import worker as remote
from unison.distribute.parameter_server.client import ParameterServers, ShardCalls
from unison.distribute.parameter_server.store import OPTIMIZERS
from unison.distribute.parameter_server.variables import Placement, VariableSpec, describe
from unison.distribute.strategy import Strategy
from unison.errors import ParameterServerUnavailableError

DEFAULT_TIMEOUT_S = 60.0
EMBEDDING_TABLE_ATTR = "_unison_embedding_table"  # a layer naming its table parameter is sparse


def _is_additive_metric(obj: Any) -> bool:
    # keras.metrics.Metric (keras sits above distribute, so it is recognised by its protocol):
    # additive state read with state(), replaced with load_state(), zeroed with reset_state().
    return not isinstance(obj, type) and all(
        callable(getattr(obj, a, None)) for a in ("state", "load_state", "reset_state", "result_from_state")
    )


def _embedding_table(module: torch.nn.Module) -> tuple[str, int | None] | None:
    if isinstance(module, torch.nn.Embedding):
        if getattr(module, "max_norm", None) is not None:
            return None  # renormalising rows in place needs the whole table: kept dense
        return "weight", getattr(module, "padding_idx", None)
    attr = getattr(type(module), EMBEDDING_TABLE_ATTR, None)
    return (attr, None) if attr else None


# How a torch optimizer runs (fused kernel, foreach loops) is the server's choice, not a
# hyper-parameter: a server with another torch build may not have the fused kernel.
_IMPLEMENTATION_KEYS = ("params", "fused", "foreach")

# id(param) -> the strategy whose scope created it, for Keras's layer.weights, which lists a
# sharded variable's shards (TF's tutorial asserts and prints them outside the scope).
_OWNERS: weakref.WeakValueDictionary[int, ParameterServerStrategy] = weakref.WeakValueDictionary()


def variable_shards_of(param: torch.Tensor) -> list[dict[str, Any]] | None:
    """The shard table of ``param`` if a ``ParameterServerStrategy``'s scope created it, else None."""
    strategy = _OWNERS.get(id(param))
    if strategy is None:
        return None
    entry = strategy._created.get(id(param))
    if entry is None or entry() is not param:
        return None
    return strategy.variable_shards(param)


def _hyper(group: dict) -> dict:
    out = {}
    for k, v in group.items():
        if k in _IMPLEMENTATION_KEYS:
            continue
        if isinstance(v, torch.Tensor):
            v = v.item()
        out[k] = list(v) if isinstance(v, tuple) else v
    return out


_Executor = TypeVar("_Executor")


class ParameterServerStrategy(Strategy):
    """Asynchronous training with variables on parameter servers (TF's ``ParameterServerStrategy``).

    Args:
        cluster_resolver: the cluster: ``ps`` tasks hold variables, ``worker`` tasks run the
            scheduled functions, this process (the ``chief``) coordinates.
        variable_partitioner: e.g. ``MinSizePartitioner``; ``None`` keeps every variable whole.
        timeout_seconds: how long a call to a task may go unanswered before the coordinator
            reports it by name (a unison extension).

    Raises:
        ValueError: the cluster has no ``ps`` or no ``worker`` task.
    """

    def step_executor(self, model: Any, executors: Mapping[str, Callable[[Any], _Executor]]) -> _Executor:
        """Keras's ``fit`` schedules its steps onto the workers through a ``ClusterCoordinator``."""
        return executors["coordinated"](model)

    def __init__(
        self,
        cluster_resolver: Any,
        variable_partitioner: Callable[..., Any] | None = None,
        timeout_seconds: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        spec = ClusterSpec(cluster_resolver.cluster_spec())
        for job, role in ((PS, "hold the variables"), (WORKER, "run the scheduled functions")):
            if job not in spec or spec.num_tasks(job) == 0:
                raise ValueError(
                    f"ParameterServerStrategy needs '{job}' tasks to {role}, but the cluster has none "
                    f'(jobs: {sorted(spec.jobs)}). Add a "{job}" list of addresses to the cluster spec '
                    '(TF_CONFIG\'s "cluster"), e.g. "ps": ["10.0.0.3:2222"].'
                )
        if timeout_seconds <= 0:
            raise ValueError(f"timeout_seconds must be > 0. Received: timeout_seconds={timeout_seconds}")
        if variable_partitioner is not None and not callable(variable_partitioner):
            raise TypeError(
                "variable_partitioner must be a partitioner such as "
                f"MinSizePartitioner(...). Received: {variable_partitioner!r}"
            )
        super().__init__(LocalCommunicator(), torch.device("cpu"))
        self.cluster_resolver = cluster_resolver
        self.cluster_spec = spec
        self.variable_partitioner = variable_partitioner
        self.timeout_s = float(timeout_seconds)
        self.session = uuid.uuid4().hex[:12]
        self.ps_tasks = [f"ps:{i}" for i in spec.task_indices(PS)]
        self.worker_addresses = [spec.task_address(WORKER, i) for i in spec.task_indices(WORKER)]
        # the token and TLS settings come from the environment, read by the transport (comm)
        self.task_name = (
            f"{getattr(cluster_resolver, 'task_type', None) or 'chief'}:"
            f"{getattr(cluster_resolver, 'task_id', None) or 0}"
        )
        self._servers = ParameterServers(
            [
                RpcClient(spec.task_address(PS, i), f"ps:{i}", timeout_s=self.timeout_s, sender=self.task_name)
                for i in spec.task_indices(PS)
            ],
            consequence="The coordinator cannot reach the variables it holds; restart it, then restart the "
            "coordinator from its last checkpoint.",
        )
        self._placement = Placement(len(self._servers), variable_partitioner)
        self._vars: dict[int, tuple[torch.Tensor, VariableSpec, int]] = {}  # id(param) -> (param, spec, version)
        self._tables: dict[int, tuple[weakref.ref, str]] = {}  # id(param) -> (param, layer class): sparse
        self._created: dict[int, weakref.ref] = {}  # id(param) -> param, every parameter made in scope()
        self._optimizers: dict[int, tuple[torch.optim.Optimizer, list[dict] | None]] = {}
        self._metrics: dict[str, Any] = {}
        self._lock = threading.RLock()
        self._connected = False
        self._coordinator: Any = None  # the one ClusterCoordinator of this strategy
        self._count = 0

    @property
    def num_replicas_in_sync(self) -> int:
        """Each worker steps on its own: one replica per worker, none in lockstep."""
        return 1

    @property
    def num_workers(self) -> int:
        return len(self.worker_addresses)

    def distribute_datasets_from_function(self, dataset_fn: Callable[..., Any], options: Any = None) -> Any:
        """On the coordinator: a recipe ``ClusterCoordinator.create_per_worker_dataset`` builds on each worker."""
        if not callable(dataset_fn):
            raise TypeError(f"dataset_fn must be a function of an InputContext. Received: {dataset_fn!r}")
        return DatasetFromFunction(self, dataset_fn)

    def experimental_distribute_dataset(self, dataset: Any, options: Any = None) -> Any:
        raise NotImplementedError(
            "Under ParameterServerStrategy each worker builds its own dataset: use "
            "coordinator.create_per_worker_dataset(dataset_fn) with strategy.distribute_datasets_from_function."
        )

    def run(self, fn: Callable[..., Any], args: tuple = (), kwargs: dict | None = None, options: Any = None) -> Any:
        """Outside a scheduled function there is no worker to run on (TF raises too)."""
        raise RuntimeError(
            "Under ParameterServerStrategy, strategy.run only works inside a function given to "
            "ClusterCoordinator.schedule (it then runs on a worker)."
        )

    # --- scope: recording embedding tables and names ------------------------------------------
    @contextlib.contextmanager
    def scope(self) -> Iterator[ParameterServerStrategy]:
        """Make this the current strategy; parameters created inside go to the parameter servers."""

        def record(module: torch.nn.Module, name: str, param: Any) -> None:
            if param is not None:
                self._created[id(param)] = weakref.ref(param)
                _OWNERS[id(param)] = self
            table = _embedding_table(module)
            if param is not None and table is not None and table[0] == name:
                self._tables[id(param)] = (weakref.ref(param), type(module).__name__)

        handle = register_module_parameter_registration_hook(record)
        try:
            with super().scope():
                yield self
        finally:
            handle.remove()

    # --- parameter servers -----------------------------------------------------------------------
    def _connect(self) -> None:
        if self._connected:
            return
        clients = self._servers.clients
        if any(not c.authenticated for c in clients):
            # without the token the coordinator could not tell its tasks from an impostor, whose
            # replies it would decode (results are unpickled): refuse before any connection
            raise ValueError(
                "ParameterServerStrategy needs the cluster token to talk to its tasks: set "
                "UNISON_CLUSTER_TOKEN in the coordinator's environment to the value every `unison "
                f"server` of the cluster has. {GOOD_TOKEN_HINT}"
            )
        # one deadline for all parameter servers, waited on together: "within N s" means N s
        deadline = time.monotonic() + self.timeout_s
        with futures.ThreadPoolExecutor(max_workers=len(clients)) as pool:
            up = list(pool.map(lambda c: c.wait_ready(max(0.0, deadline - time.monotonic())), clients))
            down = [c for c, ok in zip(clients, up) if not ok]
            reasons = dict(zip([c.task for c in down], pool.map(lambda c: c.unreachable_reason(0.5), down)))
        if down:
            mismatched = [c for c in down if c.tls_mismatch(reasons[c.task])]
            first = (mismatched or down)[0]
            if mismatched:
                what = "TLS is set up differently on the two sides"
            else:
                what = f"did not come up within {self.timeout_s:g} s"
            listed = "; ".join(f"{c.task} ({c.address}): {reasons[c.task]}" for c in down)
            raise ParameterServerUnavailableError(
                f"{first.task} ({first.address}) {what}. {listed}. Start each (`unison server` with its "
                "TF_CONFIG), fix its address in the cluster spec, or make the TLS settings agree.",
                first.task,
                "connect",
            )
        for ps in range(len(clients)):
            self._servers.call(ps, protocol.PS_RESET, {"session": self.session})
        self._connected = True

    def variable_spec(self, param: torch.Tensor) -> VariableSpec:
        """Where ``param`` lives, placing it on the parameter servers the first time."""
        with self._lock:
            entry = self._vars.get(id(param))
            if entry is not None and entry[0] is param:
                return entry[1]
            if isinstance(param, torch.nn.parameter.UninitializedParameter):
                raise ValueError(
                    "A scheduled function uses a parameter whose shape is not known yet (a layer that has "
                    "not seen data). Give the model's first layer input_shape= (or keras.Input), or call "
                    "model.build(input_shape) on the coordinator before scheduling."
                )
            self._connect()
            self._count += 1
            label = self._table_label(param)
            name = f"{self.session}/v{self._count}{'.' + label if label else ''}"
            spec = self._placement.place(
                name, param.shape, param.dtype, sparse=label is not None, trainable=param.requires_grad
            )
            self._write(spec, param.detach(), protocol.PS_CREATE, {"if_absent": True})
            self._vars[id(param)] = (param, spec, param._version)
            return spec

    def _table_label(self, param: torch.Tensor) -> str | None:
        entry = self._tables.get(id(param))
        return entry[1] if entry is not None and entry[0]() is param else None

    def _write(self, spec: VariableSpec, value: torch.Tensor, op: str, extra: dict | None = None) -> None:
        calls = ShardCalls()
        for shard, part in zip(spec.shards, spec.split(value)):
            calls.add(shard.ps, op, shard.name, [part])
        self._servers.send(calls, extra)

    def read_variable(self, param: torch.Tensor) -> torch.Tensor:
        """The value the parameter servers hold for ``param`` now (its shards gathered back)."""
        spec = self.variable_spec(param)
        value = torch.empty(spec.shape, dtype=spec.torch_dtype)
        calls = ShardCalls()
        for shard, part in zip(spec.shards, spec.split(value)):
            calls.add(shard.ps, protocol.PS_PULL, shard.name, into=[part])
        self._servers.send(calls)
        return value

    def variable_shards(self, param: torch.Tensor) -> list[dict[str, Any]]:
        """``param``'s shards: ``{"shard", "task", "rows": (start, stop)}`` each, in order."""
        return describe(self.variable_spec(param), self.ps_tasks)

    def sync_to_coordinator(self) -> None:
        """Copy every placed variable's current value from the servers into the local parameters."""
        with self._lock:
            entries = list(self._vars.values())
            for param, spec, _ in entries:
                value = self.read_variable(param)
                with torch.no_grad():
                    param.copy_(value)
                self._vars[id(param)] = (param, spec, param._version)

    def push_local_changes(self) -> None:
        """Write parameters changed on the coordinator since the last sync (a restore) to the servers."""
        with self._lock:
            for key, (param, spec, version) in list(self._vars.items()):
                if param._version != version:
                    self._write(spec, param.detach(), protocol.PS_ASSIGN)
                    self._vars[key] = (param, spec, param._version)

    # --- optimizers on the servers -------------------------------------------------------------------
    def _optimizer_groups(self, optimizer: torch.optim.Optimizer) -> list[dict]:
        name = type(optimizer).__name__
        if OPTIMIZERS.get(name) is not type(optimizer):
            raise TypeError(
                f"Under ParameterServerStrategy the parameter servers apply the updates, with one of "
                f"{sorted(OPTIMIZERS)} (or the Keras optimizers built on them). Received: {type(optimizer).__qualname__}."
            )
        if optimizer._optimizer_step_pre_hooks or optimizer._optimizer_step_post_hooks:
            # e.g. Keras's decoupled weight_decay for SGD/RMSprop/Adagrad: the servers would not run it
            raise ValueError(
                f"This {name} has step hooks (a Keras optimizer's weight_decay adds one); the parameter servers "
                "apply the plain torch update and would skip them silently. Use AdamW for decoupled weight "
                "decay, or a kernel_regularizer, under ParameterServerStrategy."
            )
        groups = [
            {"vars": [self.variable_spec(p).to_json() for p in g["params"]], "hyper": _hyper(g)}
            for g in optimizer.param_groups
        ]
        with self._lock:
            self._optimizers.setdefault(id(optimizer), (optimizer, None))
        self.sync_optimizers()
        return groups

    def sync_optimizers(self) -> None:
        """Send each optimizer's current hyper-parameters (a changed learning rate) to the servers."""
        with self._lock:
            for key, (opt, sent) in list(self._optimizers.items()):
                hyper = [_hyper(g) for g in opt.param_groups]
                if hyper == sent:
                    continue
                for group, h in zip(opt.param_groups, hyper):
                    calls = ShardCalls()
                    for p in group["params"]:
                        for shard in self.variable_spec(p).shards:
                            calls.add(shard.ps, protocol.PS_SET_OPTIMIZER, shard.name)
                    self._servers.send(calls, {"cls": type(opt).__name__, "hyper": h})
                self._optimizers[key] = (opt, hyper)

    def optimizer_state(self, optimizer: torch.optim.Optimizer) -> list[dict[str, torch.Tensor]]:
        """The server-side state of ``optimizer``, one dict per parameter (whole, shards joined)."""
        out = []
        for group in optimizer.param_groups:
            for p in group["params"]:
                spec = self.variable_spec(p)
                parts: list[dict[str, torch.Tensor]] = []
                for shard in spec.shards:
                    header, tensors = self._servers.call(shard.ps, protocol.PS_OPTIMIZER_STATE, {"names": [shard.name]})
                    parts.append(dict(zip(header["keys"][0], tensors)))
                out.append(_join_shard_states(spec, parts))
        return out

    def load_optimizer_state(self, optimizer: torch.optim.Optimizer, states: list[dict[str, torch.Tensor]]) -> None:
        """Restore what :meth:`optimizer_state` returned (e.g. from a checkpoint) on the servers."""
        params = [p for g in optimizer.param_groups for p in g["params"]]
        if len(params) != len(states):
            raise ValueError(f"The optimizer has {len(params)} parameters but the saved state has {len(states)}.")
        self._optimizer_groups(optimizer)
        for p, state in zip(params, states):
            spec = self.variable_spec(p)
            for shard in spec.shards:
                keys = sorted(state)
                tensors = [
                    state[k].narrow(0, shard.offset, shard.rows)
                    if state[k].dim() and len(spec.shards) > 1
                    else state[k]
                    for k in keys
                ]
                self._servers.call(
                    shard.ps, protocol.PS_LOAD_OPTIMIZER_STATE, {"names": [shard.name], "keys": [keys]}, tensors
                )

    # --- pickling functions for the workers --------------------------------------------------
    def reduce_for_worker(self, obj: Any, resource_ref: Callable[[Any], str | None]) -> Any:
        """How ``obj`` travels to a worker inside a scheduled function (see ``codec.dumps``)."""
        if isinstance(obj, torch.nn.Parameter):
            spec = self.variable_spec(obj)
            if spec.sparse:
                raise TypeError(
                    f"A scheduled function uses the embedding table {spec.name!r} directly. Tables on "
                    "parameter servers are read through their layer (layer(ids)), which pulls only the rows needed."
                )
            return remote.rebuild_variable, (spec.to_json(),)
        if isinstance(obj, torch.nn.Module):
            table = _embedding_table(obj)
            if table is not None:
                param = getattr(obj, table[0])
                if self._table_label(param) is not None:
                    spec = self.variable_spec(param)
                    return remote.rebuild_embedding, (spec.to_json(), table[1], True, getattr(obj, "name", "embedding"))
            return NotImplemented
        if isinstance(obj, torch.optim.Optimizer):
            return remote.rebuild_optimizer, (self._optimizer_groups(obj),)
        if _is_additive_metric(obj) and not getattr(obj, "_unison_worker_copy", False):
            key = f"m{id(obj)}"
            with self._lock:
                self._metrics[key] = obj
            copy = object.__new__(type(obj))
            copy.__dict__.update(obj.__dict__)
            copy._unison_worker_copy = True
            return remote.rebuild_metric, (key, copy)
        if obj is self:
            return remote.rebuild_strategy, ()
        if isinstance(obj, Communicator):
            return LocalCommunicator, ()  # a worker steps alone: its collectives are local
        if resource_ref(obj) is not None:
            raise TypeError(
                "A scheduled function refers to a per-worker dataset or iterator from its closure. "
                "Pass it as an argument instead: coordinator.schedule(step_fn, args=(iterator,))."
            )
        if getattr(obj, "_unison_coordinator", False):
            raise TypeError(
                "A scheduled function cannot use the ClusterCoordinator: it runs on a worker. "
                "Schedule from the coordinator, pass per-worker iterators as arguments."
            )
        return NotImplemented

    def reduce_argument(self, obj: Any) -> Any:
        """How a ``schedule`` argument travels: plain objects by value; model parts are refused."""
        if isinstance(obj, (torch.nn.Parameter, torch.nn.Module, torch.optim.Optimizer)) or _is_additive_metric(obj):
            raise TypeError(
                f"A {type(obj).__name__} was passed to schedule() as an argument. Models, parameters, optimizers "
                "and metrics reach the workers through the scheduled function's closure (they are sent once and "
                "bound to the parameter servers); arguments are for per-step data: tensors, numbers, iterators."
            )
        return NotImplemented

    def merge_metric_state(self, key: str, state: torch.Tensor) -> None:
        """Add a worker's metric sums into the coordinator's metric (exactly once per function run)."""
        metric = self._metrics.get(key)
        if metric is not None:
            with self._lock:
                metric.load_state(metric.state() + state.to(metric.state().device))

    def __repr__(self) -> str:
        return f"ParameterServerStrategy(ps={len(self._servers)}, workers={self.num_workers})"


def _join_shard_states(spec: VariableSpec, parts: list[dict[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    """One parameter's optimizer state from its shards' states.

    A shard no gradient reached yet has no state (torch builds it at the first step): its rows
    count as zeros, as a fresh state would have them; scalar entries (Adam's ``step``) take the
    largest value among the shards.
    """
    keys = sorted({k for part in parts for k in part})
    joined = {}
    for k in keys:
        values = [part.get(k) for part in parts]
        ref = next(v for v in values if v is not None)
        if ref.dim() and len(parts) > 1:
            joined[k] = torch.cat(
                [
                    v if v is not None else torch.zeros((shard.rows, *ref.shape[1:]), dtype=ref.dtype)
                    for v, shard in zip(values, spec.shards)
                ]
            )
        else:
            joined[k] = max((v for v in values if v is not None), key=lambda t: float(t.max()) if t.numel() else 0.0)
    return joined


class DatasetFromFunction:
    """``distribute_datasets_from_function(fn)`` called on the coordinator: built on each worker."""

    def __init__(self, strategy: ParameterServerStrategy, dataset_fn: Callable[..., Any]) -> None:
        self.strategy, self.dataset_fn = strategy, dataset_fn

    def __call__(self) -> Any:
        return self.strategy.distribute_datasets_from_function(self.dataset_fn)  # a WorkerStrategy there


__all__ = ["DatasetFromFunction", "ParameterServerStrategy"]
