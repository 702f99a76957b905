"""ZeRO-1/2 optimizer state in a sharded checkpoint (``torch.distributed.checkpoint``), any replica count.

Under ``DistributedOptimizer(shard_optimizer_state=True)`` (ZeRO-1) or ``shard_gradients=True``
(ZeRO-2) each replica holds the optimizer state of the parameters it owns. Saved through DCP,
each replica writes exactly those entries, keyed by parameter name
(``optimizer.state.<parameter>.<slot>``, the names ``torch.distributed.checkpoint.state_dict``
uses); nothing is gathered on one process. A restore on M replicas reads, on each replica, the
entries of the parameters it owns under the new partition (all of them for an unsharded
optimizer), from whichever file holds them: N -> M for any N and M. Hyperparameters of the
parameter groups (learning rate, betas...) are saved as tensors (``optimizer.hyper.<group>.<name>``)
so the checkpoint holds tensors only.

Example:
    >>> import torch
    >>> model = torch.nn.Linear(2, 1)
    >>> opt = torch.optim.Adam(model.parameters(), lr=0.5, betas=(0.8, 0.9))
    >>> hyper = hyperparameters(opt)
    >>> float(hyper["0.lr"]), hyper["0.betas"].tolist()
    (0.5, [0.8, 0.9])
"""

from __future__ import annotations

from typing import Any

import torch

FORMAT_KEY = "optimizer.zero_format"  # present in checkpoints written from a ZeRO optimizer
_STATE = "optimizer.state."
_HYPER = "optimizer.hyper."


def hyperparameters(optimizer: torch.optim.Optimizer) -> dict[str, torch.Tensor]:
    """The numeric hyperparameters of every parameter group, as float64 tensors."""
    out: dict[str, torch.Tensor] = {}
    for i, group in enumerate(optimizer.param_groups):
        for name, value in group.items():
            if name == "params" or isinstance(value, torch.Tensor):
                continue
            if isinstance(value, (bool, int, float)) and value is not None:
                out[f"{i}.{name}"] = torch.tensor(float(value), dtype=torch.float64)
            elif isinstance(value, tuple) and value and all(isinstance(v, (int, float)) for v in value):
                out[f"{i}.{name}"] = torch.tensor([float(v) for v in value], dtype=torch.float64)
    return out


def _set_hyperparameters(optimizer: torch.optim.Optimizer, saved: dict[str, torch.Tensor]) -> None:
    for key, value in saved.items():
        index, name = key.split(".", 1)
        group = optimizer.param_groups[int(index)]
        current = group.get(name)
        if isinstance(current, bool):
            group[name] = bool(value.item())
        elif isinstance(current, int):
            group[name] = int(value.item())
        elif isinstance(current, tuple):
            group[name] = tuple(float(v) for v in value.tolist())
        elif isinstance(current, float):
            group[name] = float(value.item())


def parameter_names(model: torch.nn.Module) -> dict[int, str]:
    """id(parameter) -> its name in ``model`` (the checkpoint's keys)."""
    return {id(p): name for name, p in model.named_parameters()}


def owned_state(model: torch.nn.Module, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
    """This replica's entries: the state of the parameters it holds state for, and the hyperparameters."""
    names = parameter_names(model)
    state: dict[str, dict[str, torch.Tensor]] = {}
    for param, slots in optimizer.state.items():
        name = names.get(id(param))
        if name is None:
            raise ValueError(
                "ShardedCheckpoint: the optimizer holds state for a parameter that is not in the model. "
                "Build the optimizer on model.parameters()."
            )
        state[name] = {k: v for k, v in slots.items() if isinstance(v, torch.Tensor)}
    return {
        "state": state,
        "hyper": hyperparameters(optimizer),
        "zero_format": torch.tensor(1, dtype=torch.int64),
    }


def template(
    saved: dict[str, tuple[tuple[int, ...], torch.dtype] | None], wanted: list[str]
) -> tuple[dict[str, Any], list[str]]:
    """A DCP load target for the state of the parameters named in ``wanted``, from the metadata.

    Returns the nested target and the hyperparameter keys found.
    """
    state: dict[str, dict[str, torch.Tensor]] = {}
    for name in wanted:
        prefix = f"{_STATE}{name}."
        for key, spec in saved.items():
            if spec is not None and key.startswith(prefix) and "." not in key[len(prefix) :]:
                shape, dtype = spec
                state.setdefault(name, {})[key[len(prefix) :]] = torch.empty(shape, dtype=dtype)
    hyper = {
        key[len(_HYPER) :]: torch.empty(spec[0], dtype=spec[1])
        for key, spec in saved.items()
        if key.startswith(_HYPER) and spec is not None
    }
    return {"state": state, "hyper": hyper}, sorted(hyper)


def install(
    model: torch.nn.Module, optimizer: torch.optim.Optimizer, loaded: dict[str, Any], owned: set[int] | None
) -> None:
    """Put the loaded entries into ``optimizer`` (only the ``owned`` parameters' state; None: all)."""
    by_name = dict(model.named_parameters())
    for param in list(optimizer.state):
        if owned is not None and id(param) not in owned:
            del optimizer.state[param]  # a ZeRO replica keeps its shard only
    for name, slots in loaded["state"].items():
        param = by_name[name]
        optimizer.state[param] = {
            k: v.to(param.device) if k != "step" else v for k, v in slots.items()
        }  # Adam's step stays where torch keeps it (on the CPU)
    _set_hyperparameters(optimizer, loaded["hyper"])


__all__ = ["FORMAT_KEY", "hyperparameters", "install", "owned_state", "parameter_names", "template"]
