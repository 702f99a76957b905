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

A parameter stored in another memory order than its shape's (Keras's conv kernels, see
``keras/layers/conv_base.keep_channels_last_storage``) is handed to the kernel as a contiguous
permuted view, with its gradient and moments viewed the same way: torch's kernel otherwise copies
each such gradient into a contiguous clone every step (1.4 ms a step for the DCGAN generator's
first kernel), and the update is elementwise, so the order of the axes does not matter.

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

__all__ = ["DirectAdam", "dense_order"]


def dense_order(t: torch.Tensor) -> tuple[int, ...] | None:
    """The axis order in which ``t`` is contiguous, or None if it already is or is not dense.

    Example:
        >>> dense_order(torch.zeros(2, 3, 4).permute(2, 0, 1))
        (1, 2, 0)
        >>> dense_order(torch.zeros(2, 3)) is None
        True
    """
    if t.is_contiguous():
        return None
    strides = t.stride()
    order = tuple(sorted(range(t.dim()), key=lambda d: (-strides[d], d)))
    return order if t.permute(order).is_contiguous() else None


class DirectAdam:
    """Calls torch's fused Adam/AdamW kernel for ``opt`` when that is what ``opt.step()`` would do."""

    def __init__(self, opt: torch.optim.Optimizer) -> None:
        self.opt = opt
        self._state: Any = None  # the optimizer's state mapping the lists below were read from
        self._originals: list[torch.Tensor] = []  # the parameters themselves (``params`` may hold views)
        self._plist: Any = None  # the param group's list of parameters when they were read
        self.params: list[torch.Tensor] = []
        self.exp_avgs: list[torch.Tensor] = []
        self.exp_avg_sqs: list[torch.Tensor] = []
        self.steps: list[torch.Tensor] = []
        self._orders: list[tuple[int, ...] | None] = []  # per parameter: the view that makes it contiguous
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
        views, exp_avgs, exp_avg_sqs, steps, orders = [], [], [], [], []
        for p in params:
            if p.device != first.device or p.dtype != first.dtype or p not in state:
                return False
            s = state[p]
            if "exp_avg" not in s or "exp_avg_sq" not in s or "step" not in s:
                return False
            m, v = s["exp_avg"], s["exp_avg_sq"]
            order = dense_order(p)
            if order is not None and m.stride() == p.stride() and v.stride() == p.stride():
                p, m, v = p.permute(order), m.permute(order), v.permute(order)
            else:
                order = None  # torch's kernel takes it as it is
            views.append(p)
            exp_avgs.append(m)
            exp_avg_sqs.append(v)
            steps.append(s["step"])
            orders.append(order)
        self.params, self.exp_avgs, self.exp_avg_sqs, self.steps = views, exp_avgs, exp_avg_sqs, steps
        self._orders, self._originals = orders, params
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
        for p, order in zip(self._originals, self._orders):
            g = p.grad
            if g is None or g.is_sparse:
                return False
            if g.stride() != p.stride():
                # torch's kernel pairs parameter and gradient elements by memory order
                g = torch.empty_like(p).copy_(g)
            grads.append(g if order is None else g.permute(order))
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
