"""torch's fused Adam/AdamW kernel called straight, for loops that own the whole training step.

``torch.optim.Adam(fused=True).step()`` spends more time in Python than in its kernel on a small
model: the profiler's ``record_function``, the step hooks, ``_use_grad``, ``_init_group`` walking
every parameter and its state dict, grouping the tensors by device and dtype, every step. On the
seed MLP (4 tensors, 100k values, one thread) ``step()`` takes ~140 us where ``_foreach_add_`` on the
step counts plus the fused kernel take ~80 us (``benchmarks/seed_mlp_breakdown.py``).

:class:`DirectAdam` keeps the lists the kernel takes and calls it itself. It does exactly the
update ``step()`` does (the same kernel, the same arguments, bit-identical results) and takes
the ordinary ``step()`` whenever its shortcut could differ: the first step (the state does not
exist yet), any step hook (a Keras ``use_ema``/constraint hook, a global hook), a patched
``step`` (an LR scheduler's counter), a state or parameter list replaced (``load_state_dict``,
``add_param_group``), a missing or sparse gradient, a tensor learning rate or beta, amsgrad,
capturable, differentiable, several parameter groups, or parameters on several devices/dtypes.

Example:
    >>> import torch
    >>> w = torch.nn.Parameter(torch.ones(3))
    >>> opt = torch.optim.Adam([w], lr=0.1, fused=True)
    >>> direct = DirectAdam.of(opt)
    >>> w.grad = torch.ones(3)
    >>> direct.step()  # the first step builds the state: the ordinary step() does it
    False
    >>> opt.step(); direct.step()
    True
"""

from __future__ import annotations

from typing import Any

import torch
from torch.optim import optimizer as _torch_optimizer

__all__ = ["DirectAdam"]


class DirectAdam:
    """Calls torch's fused Adam/AdamW kernel for ``opt`` when that is what ``opt.step()`` would do."""

    def __init__(self, opt: torch.optim.Optimizer) -> None:
        self.opt = opt
        self._state: Any = None  # the optimizer's state mapping the lists below were read from
        self._plist: Any = None  # the param group's list of parameters when they were read
        self.params: list[torch.Tensor] = []
        self.exp_avgs: list[torch.Tensor] = []
        self.exp_avg_sqs: list[torch.Tensor] = []
        self.steps: list[torch.Tensor] = []
        self.direct_steps = 0  # steps this object did itself (tests and benchmarks read it)

    @staticmethod
    def of(opt: Any) -> DirectAdam | None:
        """A ``DirectAdam`` for a fused ``torch.optim.Adam``/``AdamW`` (exactly those classes), else None."""
        if type(opt) not in (torch.optim.Adam, torch.optim.AdamW):
            return None
        groups = opt.param_groups
        if len(groups) != 1 or not groups[0].get("fused"):
            return None
        return DirectAdam(opt)

    def _read_state(self, group: dict[str, Any]) -> bool:
        """Read the kernel's lists from the optimizer's state; False if it is not all there yet."""
        opt = self.opt
        params = list(group["params"])
        if not params:
            return False
        first = params[0]
        state = opt.state
        exp_avgs, exp_avg_sqs, steps = [], [], []
        for p in params:
            if p.device != first.device or p.dtype != first.dtype or p not in state:
                return False
            s = state[p]
            if "exp_avg" not in s or "exp_avg_sq" not in s or "step" not in s:
                return False
            exp_avgs.append(s["exp_avg"])
            exp_avg_sqs.append(s["exp_avg_sq"])
            steps.append(s["step"])
        self.params, self.exp_avgs, self.exp_avg_sqs, self.steps = params, exp_avgs, exp_avg_sqs, steps
        self._state, self._plist = state, group["params"]
        return True

    def step(self) -> bool:
        """Update the parameters as ``opt.step()`` would and return True, or do nothing and return False."""
        opt = self.opt
        groups = opt.param_groups
        if len(groups) != 1 or "step" in opt.__dict__:  # several groups, or step() patched (LR scheduler)
            return False
        if (
            opt._optimizer_step_pre_hooks
            or opt._optimizer_step_post_hooks
            or _torch_optimizer._global_optimizer_pre_hooks
            or _torch_optimizer._global_optimizer_post_hooks
        ):
            return False
        group = groups[0]
        if not group["fused"] or group["amsgrad"] or group["capturable"] or group["differentiable"]:
            return False
        lr, (beta1, beta2) = group["lr"], group["betas"]
        if isinstance(lr, torch.Tensor) or isinstance(beta1, torch.Tensor) or isinstance(beta2, torch.Tensor):
            return False
        if (
            opt.state is not self._state or group["params"] is not self._plist or len(self._plist) != len(self.params)
        ) and not self._read_state(group):
            return False
        grads: list[torch.Tensor] = []
        for p in self.params:
            g = p.grad
            if g is None or g.is_sparse:
                return False
            grads.append(g)
        decoupled = group.get("decoupled_weight_decay", type(opt) is torch.optim.AdamW)
        kernel = torch._fused_adamw_ if decoupled else torch._fused_adam_
        with torch.no_grad():
            torch._foreach_add_(self.steps, 1)
            kernel(
                self.params,
                grads,
                self.exp_avgs,
                self.exp_avg_sqs,
                [],
                self.steps,
                amsgrad=False,
                lr=lr,
                beta1=beta1,
                beta2=beta2,
                weight_decay=group["weight_decay"],
                eps=group["eps"],
                maximize=group["maximize"],
                grad_scale=None,
                found_inf=None,
            )
        self.direct_steps += 1
        return True
