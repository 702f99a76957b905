"""What a Keras optimizer needs for custom training loops: ``apply_gradients``, ``minimize``,
``iterations`` and a learning rate that reads like Keras's variable.

Kept apart from :mod:`unison.keras.optimizers` (the hyper-parameters and the torch optimizer
they build) because this is the part that meets the strategy: inside ``strategy.run`` the
gradients given to ``apply_gradients`` are SUM-reduced across replicas by the strategy's
``DistributedOptimizer`` for the torch optimizer (``Strategy.gradient_synchronizer``), which
is also what synchronises ``optimizer.step()`` in a raw PyTorch loop inside ``strategy.run``.

Example:
    >>> import torch
    >>> from unison import keras
    >>> w = torch.nn.Parameter(torch.ones(2))
    >>> opt = keras.optimizers.SGD(learning_rate=0.5)
    >>> _ = opt.apply_gradients([(torch.tensor([1.0, 2.0]), w)])
    >>> w.tolist(), int(opt.iterations), opt.learning_rate.numpy()
    ([0.5, 0.0], 1, np.float32(0.5))
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from unison.core.contention import follow_load
from unison.distribute.strategy import get_replica_context, get_strategy
from unison.optim.fused_step import DirectAdam

if TYPE_CHECKING:
    from unison.keras.optimizers.optimizer import Optimizer

__all__ = ["LearningRate", "StepCounter", "apply_gradients", "minimize"]


class LearningRate(float):
    """A learning rate that is a float and, like Keras's variable, has ``.numpy()`` and ``.assign()``."""

    _optimizer: Optimizer | None = None

    @classmethod
    def of(cls, value: float, optimizer: Optimizer) -> LearningRate:
        rate = cls(value)
        rate._optimizer = optimizer
        return rate

    def numpy(self) -> np.float32:
        value: np.float32 = np.float32(float(self))  # numpy's stubs type this constructor's result Any
        return value

    def assign(self, value: float) -> LearningRate:
        """``optimizer.learning_rate.assign(v)``: the same as ``optimizer.learning_rate = v``."""
        if self._optimizer is None:
            raise ValueError(
                "This learning rate is not attached to an optimizer; set optimizer.learning_rate = value instead."
            )
        self._optimizer.learning_rate = value
        return self._optimizer.learning_rate


class StepCounter:
    """Counts an optimizer's steps and applies its schedule before each one.

    The step-takers call it: ``apply_gradients`` and ``fit``'s step. Not torch step hooks: a
    parameter server applies the plain torch update and would skip a hook silently (the
    parameter-server strategy refuses optimizers that have one).
    """

    def __init__(self, optimizer: Optimizer) -> None:
        self.optimizer = optimizer
        self.count = torch.zeros((), dtype=torch.int64)
        self.checked = False

    def before_step(self, synchronised: bool = True) -> None:
        """``synchronised=False``: the caller aggregates the gradients itself (skip_gradients_aggregation)."""
        if not self.checked:
            self.checked = True
            if synchronised:
                from unison.optim.first_step import check_synchronised

                check_synchronised(self.optimizer, self.optimizer.torch_optimizer)
        schedule = self.optimizer._schedule
        if schedule is not None:
            # Keras evaluates the schedule at the number of steps already taken.
            self.optimizer._set_rate(float(torch.as_tensor(schedule(self.count.clone()))))
        self.optimizer._before_step(int(self.count))

    def after_step(self) -> None:
        self.count += 1


def _variable_name(variable: torch.Tensor, index: int) -> str:
    name = getattr(variable, "name", None) or getattr(variable, "path", None)
    shape = tuple(variable.shape)
    return f"{name!r} (shape {shape})" if isinstance(name, str) else f"#{index} of the list (shape {shape})"


def _torch_optimizer_for(optimizer: Optimizer, variables: list[torch.Tensor]) -> torch.optim.Optimizer:
    ids = {id(v) for v in variables}
    built = optimizer.torch_optimizer
    if built is None or (optimizer._prebuilt and not built.state and not ids <= optimizer._param_ids):
        return optimizer.build(variables)
    # The torch optimizer's own parameters: on a parameter-server worker the optimizer arrived
    # pickled, and its parameters are the worker's copies, not the ids recorded at build time.
    owned = {id(p) for group in built.param_groups for p in group["params"]}
    unknown = [i for i, v in enumerate(variables) if id(v) not in owned]
    if unknown:
        raise ValueError(
            f"Optimizer {optimizer.name!r} was built for other variables than variable "
            f"{_variable_name(variables[unknown[0]], unknown[0])} given to apply_gradients. An optimizer "
            "updates the variables of its first apply_gradients (or of the model it was compiled with); "
            "create one optimizer per set of variables."
        )
    optimizer._prebuilt = False
    return built


def apply_gradients(
    optimizer: Optimizer, grads_and_vars: Iterable[tuple[Any, torch.Tensor]], skip_aggregation: bool = False
) -> torch.Tensor:
    """See :meth:`unison.keras.optimizers.Optimizer.apply_gradients`."""
    if (getattr(optimizer, "gradient_accumulation_steps", None) or 1) > 1:
        raise NotImplementedError(
            f"Optimizer {optimizer.name!r} has gradient_accumulation_steps={optimizer.gradient_accumulation_steps}, "
            "which unison applies in fit()'s built-in step only. In a custom train_step or loop, add the gradients "
            "up yourself and call apply_gradients every k-th step, or use fit() without overriding train_step."
        )
    follow_load()  # a step boundary: idle threads spin only while the host is quiet (core/contention.py)
    pairs = list(grads_and_vars)
    if not pairs:
        raise ValueError(
            "apply_gradients() received no (gradient, variable) pairs. Pass e.g. zip(grads, model.trainable_variables)."
        )
    variables = []
    for i, pair in enumerate(pairs):
        if not (isinstance(pair, tuple | list) and len(pair) == 2 and isinstance(pair[1], torch.Tensor)):
            raise TypeError(
                "apply_gradients() expects (gradient, variable) pairs, e.g. "
                f"zip(grads, model.trainable_variables). Received at position {i}: {pair!r:.80}"
            )
        variables.append(pair[1])
    remote = getattr(get_strategy(), "apply_gradients_remotely", None)
    if remote is not None:  # a ParameterServerStrategy worker: the servers hold the variables
        iterations: torch.Tensor = remote(optimizer, pairs)
        return iterations
    torch_opt = _torch_optimizer_for(optimizer, variables)
    with torch.no_grad():
        for i, (grad, var) in enumerate(pairs):
            if grad is None:
                var.grad = None  # torch optimizers leave a variable without a gradient unchanged
                continue
            grad = torch.as_tensor(grad)
            if tuple(grad.shape) != tuple(var.shape):
                raise ValueError(
                    f"apply_gradients(): the gradient for variable {_variable_name(var, i)} has shape "
                    f"{tuple(grad.shape)}; a gradient must have its variable's shape. Check that the "
                    "gradients and variables are zipped in the same order."
                )
            grad = grad.detach().to(device=var.device, dtype=var.dtype)
            if grad.stride() != var.stride():
                # A gradient from tape.gradient is contiguous while a variable may be a permuted
                # view (Conv kernels keep Keras's layout over torch's storage); torch's fused and
                # foreach kernels pair elements by memory order, so give the gradient the variable's.
                grad = torch.empty_like(var).copy_(grad)
            var.grad = grad
    context = get_replica_context()
    strategy = context.strategy if context is not None else None
    sync = None
    if strategy is not None and (strategy.num_replicas_in_sync > 1 or strategy.has_synchronizer(torch_opt)):
        # the strategy's one synchroniser for this optimizer (fit's, on one replica too): its
        # step() SUM-reduces across replicas, then Keras clips the aggregate, then the update
        sync = strategy.gradient_synchronizer(torch_opt)
    optimizer._counter.before_step(synchronised=not skip_aggregation)
    try:
        if sync is None:
            optimizer.clip_gradients(variables)
            if not _direct_step(torch_opt):
                torch_opt.step()
        elif skip_aggregation:
            with sync.skip_synchronize():
                sync.step(gradient_transform=optimizer.clip_gradients)
        else:
            sync.step(gradient_transform=optimizer.clip_gradients)
        optimizer._counter.after_step()
    finally:
        for var in variables:
            var.grad = None  # Keras does not accumulate between apply_gradients calls
    return optimizer.iterations


def _direct_step(torch_opt: torch.optim.Optimizer) -> bool:
    """Step a fused Adam/AdamW through :class:`DirectAdam` where it does exactly ``step()``'s update.

    Besides skipping ``step()``'s Python, it hands conv kernels stored in Keras's permuted layout
    to the kernel as contiguous views: ``step()`` copies each of their gradients every step.
    """
    direct = torch_opt.__dict__.get("_unison_direct", False)
    if direct is False:
        direct = torch_opt.__dict__["_unison_direct"] = DirectAdam.of(torch_opt)
    return direct is not None and direct.step()


def minimize(optimizer: Optimizer, loss: Any, var_list: Any, tape: Any = None) -> torch.Tensor:
    """See :meth:`unison.keras.optimizers.Optimizer.minimize`."""
    variables = list(var_list() if callable(var_list) else var_list)
    if callable(loss):
        loss = loss()
    if tape is not None:
        grads = tape.gradient(loss, variables)
    else:
        if not isinstance(loss, torch.Tensor) or not loss.requires_grad:
            raise ValueError(
                "minimize() needs a loss computed from the variables (a tensor that requires "
                "grad), a zero-argument callable returning one, or tape= a GradientTape that "
                f"recorded it. Received: loss={loss!r:.80}"
            )
        grads = torch.autograd.grad(loss, variables, allow_unused=True)
    return apply_gradients(optimizer, zip(grads, variables))
