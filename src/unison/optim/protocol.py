"""A ``torch.optim.Optimizer`` that wraps another: the base of :class:`DistributedOptimizer`.

Horovod's DistributedOptimizer is a torch optimizer; so is unison's, by composition: the wrapped
optimizer owns ``param_groups``, ``state`` and ``defaults`` (this class's are views of them), so
torch's LR schedulers, ``torch.amp.GradScaler`` and ``isinstance`` checks see one optimizer.
``torch.optim.Optimizer.__init__`` is not called (it would build a second set of groups); the
step hook tables it would create are created here, and a subclass's ``step`` runs them.

Example:
    >>> import torch
    >>> inner = torch.optim.SGD(torch.nn.Linear(2, 1).parameters(), lr=0.1)
    >>> class Wrapper(WrappingOptimizer):
    ...     def __init__(self, optimizer):
    ...         self._wrap(optimizer)
    >>> wrapper = Wrapper(inner)
    >>> isinstance(wrapper, torch.optim.Optimizer), wrapper.param_groups is inner.param_groups
    (True, True)
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import torch


class WrappingOptimizer(torch.optim.Optimizer):
    """Delegates the ``torch.optim.Optimizer`` API to ``self.optimizer``."""

    optimizer: torch.optim.Optimizer

    def _wrap(self, optimizer: torch.optim.Optimizer) -> None:
        self._optimizer_step_pre_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()
        self._optimizer_step_post_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()
        self.optimizer = optimizer

    @property
    def param_groups(self) -> list[dict[str, Any]]:
        return self.optimizer.param_groups

    @param_groups.setter
    def param_groups(self, groups: list[dict[str, Any]]) -> None:
        self.optimizer.param_groups = groups

    @property
    def state(self) -> Any:
        return self.optimizer.state

    @state.setter
    def state(self, state: Any) -> None:
        self.optimizer.state = state

    @property
    def defaults(self) -> dict[str, Any]:
        return self.optimizer.defaults

    @defaults.setter
    def defaults(self, defaults: dict[str, Any]) -> None:
        self.optimizer.defaults = defaults

    def state_dict(self) -> dict[str, Any]:
        return self.optimizer.state_dict()

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.optimizer.load_state_dict(state_dict)

    def register_state_dict_pre_hook(self, hook: Any, prepend: bool = False) -> Any:
        return self.optimizer.register_state_dict_pre_hook(hook, prepend)

    def register_state_dict_post_hook(self, hook: Any, prepend: bool = False) -> Any:
        return self.optimizer.register_state_dict_post_hook(hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Any, prepend: bool = False) -> Any:
        return self.optimizer.register_load_state_dict_pre_hook(hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Any, prepend: bool = False) -> Any:
        return self.optimizer.register_load_state_dict_post_hook(hook, prepend)

    def _run_step_hooks(self, hooks: OrderedDict[int, Callable[..., Any]], closure: Any) -> None:
        for hook in list(hooks.values()):
            hook(self, (closure,), {})
