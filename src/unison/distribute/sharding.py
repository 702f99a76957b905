"""Full parameter sharding on PyTorch's own engine (FSDP2, ``torch.distributed.fsdp.fully_shard``).

Plain data parallelism keeps a whole copy of the parameters, gradients and optimizer state on
every replica; ZeRO-1 (``DistributedOptimizer(shard_optimizer_state=True)``) shards only the
optimizer state. :func:`shard_model` shards all three: each replica keeps 1/N of every
parameter (a ``DTensor`` ``Shard(0)`` over the replicas), all-gathers a block's parameters just
before the block runs and frees them after it; backward reduce-scatters the gradients so each
replica receives only the gradient of its own shard, and a plain ``torch.optim`` optimizer
built on the sharded parameters keeps (and updates) state for that shard only.

The engine is PyTorch's FSDP2; unison adds the parts a ``tf.distribute`` user expects: the job
is the one ``unison.init()`` or the strategy already joined (no second world), initial values
start equal on every replica, and gradients follow unison's reduction contract (``Average``
for Horovod-style loops, ``Sum`` for strategy-style loops whose loss is divided by the global
batch).

Example (one replica: nothing to shard, the module comes back as it was)::

    >>> import torch, unison
    >>> from unison.distribute.sharding import shard_model, replica_state_bytes
    >>> model = shard_model(torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 2)))
    >>> replica_state_bytes(model)["parameters"]
    120
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from typing import Any, cast

import torch

from unison.comm.communicator import Communicator, LocalCommunicator, joined
from unison.optim.distributed import Average, ReduceOp, Sum

__all__ = [
    "broadcast_module",
    "full_optimizer_state",
    "full_state",
    "is_sharded",
    "load_full_optimizer_state",
    "load_full_state",
    "replica_state_bytes",
    "shard_model",
    "sharding_communicator",
]

# Containers that hold blocks but have no forward of their own: FSDP2's hooks fire on forward,
# so a block unit must be a module that is called; descend into these instead.
_CONTAINERS = (torch.nn.ModuleList, torch.nn.ModuleDict)


def sharding_communicator(communicator: Communicator | None = None) -> Communicator:
    """The communicator whose job the shards live in: given, the current strategy's, or ``unison.init()``'s."""
    if communicator is not None:
        return communicator
    from unison.distribute.strategy import get_strategy, has_strategy

    if has_strategy():
        return get_strategy().extended.communicator
    return joined() or LocalCommunicator()


def _device_mesh(comm: Communicator) -> Any:
    """A one-axis mesh over the job's existing default process group (no new group, no new world)."""
    import torch.distributed as dist
    from torch.distributed.device_mesh import DeviceMesh

    world = dist.group.WORLD
    if world is None:  # a Communicator with more than one replica always has a default group
        raise RuntimeError("shard_model: no torch.distributed process group exists; call unison.init() first.")
    return DeviceMesh.from_group(world, comm.device.type, mesh_dim_names=("batch",))


def _block_candidates(module: torch.nn.Module, block_types: tuple[type, ...] | None) -> list[torch.nn.Module]:
    """The submodules that become their own FSDP unit (all-gathered and freed one at a time)."""
    if block_types:
        return [m for m in module.modules() if m is not module and isinstance(m, block_types)]
    out: list[torch.nn.Module] = []
    stack = list(module.children())
    while stack:
        child = stack.pop(0)
        if isinstance(child, _CONTAINERS):
            stack[:0] = list(child.children())
        elif any(True for _ in child.parameters()):
            out.append(child)
    return out


def _without_shared_parameters(blocks: list[torch.nn.Module]) -> list[torch.nn.Module]:
    """Drop blocks sharing a parameter with another block (tied weights): the root owns those."""
    owners: dict[int, int] = {}
    for b in blocks:
        for p in b.parameters():
            owners[id(p)] = owners.get(id(p), 0) + 1
    return [b for b in blocks if all(owners[id(p)] == 1 for p in b.parameters())]


def shard_model(
    module: torch.nn.Module,
    *,
    op: ReduceOp = Average,
    block_types: Iterable[type] | None = None,
    reshard_after_forward: bool = True,
    sync_initial_values: bool = True,
    shard_dims: Mapping[str, int] | None = None,
    communicator: Communicator | None = None,
) -> torch.nn.Module:
    """Shard ``module``'s parameters, gradients and (through them) optimizer state over the replicas.

    Call it after the model exists and before building the optimizer (the optimizer must see
    the sharded parameters). Every replica calls it, with the same model structure.

    A model too large for one replica is built on the meta device (``with torch.device("meta"):
    model = GPT(...)``): nothing is allocated until each replica allocates its own shards here;
    they get fresh values from each module's ``reset_parameters`` (not equal to a one-process
    initialisation); load real values with :class:`ShardedCheckpoint` ``restore``.

    Args:
        module: the model; moved to this replica's device.
        op: ``unison.Average`` (Horovod-style: each replica's loss is the mean over its own
            batch; the gradient is the replicas' mean) or ``unison.Sum`` (strategy-style: the
            loss is divided by the global batch size; gradients are summed).
        block_types: module classes that form one unit each (a Transformer block); by default
            every child holding parameters (descending through ``ModuleList``/``ModuleDict``).
            A unit's parameters are gathered just before it runs and freed after, so peak
            memory holds one unit in full, not the whole model. Units that share a parameter
            with another unit (tied embeddings) stay with the root.
        reshard_after_forward: free gathered parameters after forward (less memory, one more
            all-gather in backward); ``False`` keeps them until backward.
        sync_initial_values: broadcast replica 0's parameters and buffers first, so replicas that
            initialised differently start equal (as ``strategy.scope()`` does).
        shard_dims: parameter name (as in ``module.named_parameters()``) -> the dimension split
            over the replicas; unnamed parameters split along dimension 0.
        communicator: the job to shard over; by default the current strategy's, else the one
            ``unison.init()`` joined. One replica: the module is returned unchanged.

    Returns:
        The same module object, now an FSDP2 module (its parameters are ``DTensor`` shards).

    Raises:
        TypeError: ``module`` is not a ``torch.nn.Module``, or a ``block_types`` entry is not a class.
        ValueError: ``op`` is not Average or Sum, the module is already sharded, or holds no parameters.
    """
    if not isinstance(module, torch.nn.Module):
        raise TypeError(f"shard_model expects a torch.nn.Module. Received: {type(module).__name__}")
    if op not in (Average, Sum):
        raise ValueError(f"shard_model supports op=unison.Average or unison.Sum. Received: op={op!r}")
    types = tuple(block_types or ())
    if not all(isinstance(t, type) for t in types):
        raise TypeError(f"block_types must be module classes. Received: block_types={list(types)!r}")
    if is_sharded(module):
        raise ValueError("This module is already sharded (shard_model was called on it before); call it once.")
    if not any(True for _ in module.parameters()):
        raise ValueError(f"shard_model: {type(module).__name__} has no parameters to shard.")
    if any(isinstance(p, torch.nn.parameter.UninitializedParameter) for p in module.parameters()):
        raise ValueError(
            f"shard_model: {type(module).__name__} has parameters whose shape is not known yet (lazy "
            "layers). Run one batch through it (or build it) before sharding."
        )
    dims = _shard_dims(module, shard_dims)
    comm = sharding_communicator(communicator)
    on_meta = any(p.is_meta for p in module.parameters())
    if not comm.is_distributed:
        return _materialize(module, comm) if on_meta else module.to(comm.device)
    if not on_meta:  # (on the meta device nothing exists yet: each replica allocates its shards below)
        module.to(comm.device)
        if sync_initial_values:
            broadcast_module(module, comm)
    from torch.distributed.fsdp import fully_shard
    from torch.distributed.tensor import Shard

    mesh = _device_mesh(comm)
    by_id = {id(p): dims.get(name, 0) for name, p in module.named_parameters()}

    def placement(param: torch.nn.Parameter) -> Shard:
        return Shard(by_id.get(id(param), 0))

    units = _without_shared_parameters(_block_candidates(module, types or None))
    for unit in [*units, module]:
        fully_shard(
            unit, mesh=mesh, reshard_after_forward=reshard_after_forward, shard_placement_fn=placement if dims else None
        )
    import torch.distributed as dist

    gloo = dist.get_backend() == "gloo"
    for unit in [*units, module]:
        if gloo:
            # gloo has no AVG/PREMUL_SUM reduce-scatter: reduce with SUM, then divide (if at all).
            unit.set_force_sum_reduction_for_comms(True)  # type: ignore[operator]
        if op is Sum:
            # FSDP2 divides by the number of replicas by default (a mean); unison's strategy-style
            # loss is already divided by the global batch, so the gradients must be summed.
            unit.set_gradient_divide_factor(1.0)  # type: ignore[operator]
    return _materialize(module, comm) if on_meta else module


def _materialize(module: torch.nn.Module, comm: Communicator) -> torch.nn.Module:
    """Allocate a meta-device module's (local) storage and give it fresh initial values."""
    module.to_empty(device=comm.device)
    with torch.no_grad():
        for sub in module.modules():
            reset = getattr(sub, "reset_parameters", None)
            if callable(reset):
                reset()
    return module


def _shard_dims(module: torch.nn.Module, shard_dims: Mapping[str, int] | None) -> dict[str, int]:
    if not shard_dims:
        return {}
    shapes = {name: tuple(p.shape) for name, p in module.named_parameters()}
    unknown = sorted(set(shard_dims) - set(shapes))
    if unknown:
        raise ValueError(
            f"shard_dims names parameters the module does not have: {unknown}. Its parameters: {sorted(shapes)}"
        )
    for name, dim in shard_dims.items():
        if isinstance(dim, bool) or not isinstance(dim, int) or not 0 <= dim < max(1, len(shapes[name])):
            raise ValueError(
                f"shard_dims[{name!r}] must be a dimension of its shape {list(shapes[name])}. Received: {dim!r}"
            )
    return dict(shard_dims)


def broadcast_module(module: torch.nn.Module, comm: Communicator) -> None:
    """Overwrite ``module``'s parameters and buffers on every replica with replica 0's (one collective per dtype)."""
    comm.broadcast_coalesced([*module.parameters(), *module.buffers()], src=0, name="shard_model.broadcast")


def is_sharded(module: torch.nn.Module) -> bool:
    """True when ``module`` (or its root) was sharded by :func:`shard_model`."""
    if "torch.distributed.fsdp" not in sys.modules:
        return False  # nothing can be sharded before FSDP is loaded (and this stays cheap)
    from torch.distributed.fsdp import FSDPModule

    return isinstance(module, FSDPModule)


def full_state(module: torch.nn.Module) -> dict[str, torch.Tensor]:
    """``module.state_dict()`` with whole tensors; a sharded module's shards are all-gathered.

    A collective when ``module`` is sharded: every replica calls it (each gets the whole state).
    """
    if not is_sharded(module):
        return module.state_dict()
    from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict

    state = get_model_state_dict(module, options=StateDictOptions(full_state_dict=True))
    return cast(dict[str, torch.Tensor], state)  # full_state_dict: every value is a whole tensor


def full_optimizer_state(module: torch.nn.Module, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
    """``optimizer.state_dict()`` with whole tensors (a collective when ``module`` is sharded)."""
    if not is_sharded(module):
        return optimizer.state_dict()
    from torch.distributed.checkpoint.state_dict import StateDictOptions, get_optimizer_state_dict

    return get_optimizer_state_dict(module, optimizer, options=StateDictOptions(full_state_dict=True))


def load_full_state(module: torch.nn.Module, state: Mapping[str, torch.Tensor]) -> None:
    """Load whole tensors (``full_state``'s output, every replica holding them) into ``module``.

    A sharded module keeps only its shard of each; a plain one loads them as they are.
    """
    if not is_sharded(module):
        module.load_state_dict(dict(state), strict=True)
        return
    from torch.distributed.checkpoint.state_dict import StateDictOptions, set_model_state_dict

    set_model_state_dict(module, dict(state), options=StateDictOptions(full_state_dict=True, strict=True))


def load_full_optimizer_state(module: torch.nn.Module, optimizer: torch.optim.Optimizer, state: dict[str, Any]) -> None:
    """Load ``full_optimizer_state``'s output into ``optimizer`` (each replica keeps its shard)."""
    if not is_sharded(module):
        optimizer.load_state_dict(state)
        return
    from torch.distributed.checkpoint.state_dict import StateDictOptions, set_optimizer_state_dict

    set_optimizer_state_dict(module, optimizer, state, options=StateDictOptions(full_state_dict=True))


def _local_bytes(t: torch.Tensor) -> int:
    local = t.to_local() if hasattr(t, "to_local") else t  # a DTensor holds only its shard here
    return local.numel() * local.element_size()


def replica_state_bytes(module: torch.nn.Module, optimizer: Any = None) -> dict[str, int]:
    """Bytes of parameters, gradients and optimizer state that THIS replica holds.

    Sharded parameters count their local shard only. ``optimizer`` may be a ``torch.optim``
    optimizer or a :class:`unison.DistributedOptimizer` (whose ZeRO-1 state counts its shard).

    Returns:
        ``{"parameters": int, "gradients": int, "optimizer": int, "total": int}``.
    """
    params = list(module.parameters())
    out = {
        "parameters": sum(_local_bytes(p) for p in params),
        "gradients": sum(_local_bytes(p.grad) for p in params if p.grad is not None),
        "optimizer": 0,
    }
    if optimizer is not None:
        counter = getattr(optimizer, "optimizer_state_bytes", None)
        if callable(counter):
            out["optimizer"] = int(counter())
        else:
            out["optimizer"] = sum(
                _local_bytes(v) for s in optimizer.state.values() for v in s.values() if isinstance(v, torch.Tensor)
            )
    out["total"] = out["parameters"] + out["gradients"] + out["optimizer"]
    return out
