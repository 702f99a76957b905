"""Keras-shaped optimizer configurations that build ``torch.optim`` optimizers.

An ``Optimizer`` holds Keras 3 hyper-parameters and defaults; ``build(params)`` creates the
closest ``torch.optim`` optimizer, which the trainer steps. Differences that remain:

- Keras puts ``epsilon`` inside the square root for RMSprop and Adagrad
  (``sqrt(v + eps)``); torch adds it after (``sqrt(v) + eps``). With the default ``1e-7`` this
  matters only for tiny second moments. Adam and AdamW do match Keras (its epsilon is added
  before the bias correction): they hand torch ``epsilon / sqrt(1 - beta_2**t)`` at step ``t``.
- ``weight_decay`` is Keras's decoupled decay (``w -= lr * wd * w`` before each update) for
  every optimizer: Adam uses ``torch.optim.AdamW``; SGD, RMSprop and Adagrad apply it in a
  step pre-hook, because their torch ``weight_decay`` is an L2 term added to the gradient.
- ``learning_rate`` is a float or a ``keras.optimizers.schedules`` schedule, applied before
  every step; reading it gives a float with ``.numpy()``, as Keras's variable has.
- ``apply_gradients(zip(grads, vars))`` and ``minimize`` serve custom training loops: inside
  ``strategy.run`` the gradients are SUM-reduced across replicas by the strategy's
  ``DistributedOptimizer`` for this optimizer (the same path ``fit`` uses), as TF does.
- Adam and AdamW use torch's fused kernel (``fused=True``) when every parameter is a dense
  floating-point tensor on one CPU or CUDA device: the same update, one kernel per tensor.

Gradient clipping (``clipnorm``, ``clipvalue``, ``global_clipnorm``) is not done by ``step()``:
the trainer calls ``clip_gradients`` after the cross-replica gradient reduction, so every
replica clips the same summed gradient.

Example:
    >>> import torch
    >>> from unison.keras import optimizers
    >>> opt = optimizers.get("adam")
    >>> torch_opt = opt.build(torch.nn.Linear(2, 1).parameters())
    >>> opt.learning_rate = 0.01
    >>> torch_opt.param_groups[0]["lr"]
    0.01
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, ClassVar, TypedDict, cast

import torch

from unison.keras.optimizers import schedules
from unison.keras.optimizers.after_step import after_step, finalize_variable_values
from unison.keras.optimizers.apply import LearningRate, StepCounter, apply_gradients, minimize

if TYPE_CHECKING:
    pass

__all__ = [
    "ClipOptions",
    "Optimizer",
    "OptimizerOptions",
    "TorchOptimizer",
]

Params = Iterable[torch.Tensor | dict[str, Any]]  # parameters, variables (tensors with requires_grad) or param groups
ParamList = list[torch.Tensor | dict[str, Any]]


def _for_torch(params: ParamList) -> list[torch.Tensor] | list[dict[str, Any]]:
    """``params`` as torch's constructors are typed: all tensors or all groups (torch checks which)."""
    return cast("list[torch.Tensor] | list[dict[str, Any]]", params)


class ClipOptions(TypedDict, total=False):
    """Keyword arguments every optimizer takes (besides ``weight_decay``)."""

    clipnorm: float | None
    clipvalue: float | None
    global_clipnorm: float | None
    name: str | None
    gradient_accumulation_steps: int | None
    lr: float | None
    decay: float | None
    use_ema: bool
    ema_momentum: float
    ema_overwrite_frequency: int | None


_FUSED_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def _fusable(params: ParamList) -> bool:
    """Whether torch's fused Adam kernel can update every tensor in ``params`` (dense floating
    point tensors on the CPU or on CUDA; anything else keeps the default implementation)."""
    tensors = _flatten(params)
    try:  # fused Adam on the CPU exists from torch 2.4 on; this lists where this build has it
        from torch.utils._foreach_utils import _get_fused_kernels_supported_devices

        devices = set(_get_fused_kernels_supported_devices())
    except (ImportError, AttributeError):  # private API: without it, keep the default
        return False
    return (
        bool(tensors)
        and all(
            t.device.type in devices
            and t.device.type in ("cpu", "cuda")
            and t.dtype in _FUSED_DTYPES
            and t.layout == torch.strided
            for t in tensors
        )
        and len({t.device for t in tensors}) == 1
    )


class OptimizerOptions(ClipOptions, total=False):
    """Keyword arguments every optimizer takes; see ``Optimizer``."""

    weight_decay: float | None


def _number(
    value: Any,
    arg: str,
    low: float = 0.0,
    high: float = math.inf,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """Validate a numeric hyper-parameter against ``low``/``high`` and return it as a float."""
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        value = value.item()  # e.g. a schedule that returns a 0-d tensor
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
    if ok:
        above = value > low if low_open else value >= low
        below = value < high if high_open else value <= high
        ok = above and below
    if not ok:
        if high == math.inf:
            expected = "a positive number" if low_open else f"a number >= {low}"
        else:
            lo, hi = "(" if low_open else "[", ")" if high_open else "]"
            expected = f"a number in {lo}{low}, {high}{hi}"
        raise ValueError(f"Argument `{arg}` must be {expected}. Received: {arg}={value!r}")
    return float(value)


def _legacy_rate(cls_name: str, learning_rate: Any, lr: Any, decay: Any) -> Any:
    """Keras 2's ``lr=`` (an alias of ``learning_rate``) and ``decay=`` (``lr / (1 + decay * iterations)``).

    TF <= 2.10's optimizers (and ``keras.optimizers.legacy`` after that) honour both; Keras 3
    dropped them. Old programs (``Adam(lr=1e-3)``, ``SGD(lr=0.01, decay=1e-6)``) keep their meaning.
    """
    if lr is not None:
        warnings.warn(
            f"`lr` is deprecated in Keras optimizers, use `learning_rate` instead: {cls_name}(learning_rate={lr!r}).",
            DeprecationWarning,
            stacklevel=4,
        )
        learning_rate = lr
    if decay:
        rate = _number(decay, "decay")
        if isinstance(learning_rate, schedules.LearningRateSchedule):
            raise ValueError(
                "Keras 2's `decay` argument cannot be combined with a learning-rate schedule; put the "
                "decay in the schedule (e.g. keras.optimizers.schedules.InverseTimeDecay) instead."
            )
        # Keras 2's legacy decay is exactly an inverse-time decay evaluated at every step.
        learning_rate = schedules.InverseTimeDecay(_number(learning_rate, "learning_rate"), 1, rate)
    return learning_rate


def _optional_positive(value: Any, arg: str) -> float | None:
    return None if value is None else _number(value, arg, low_open=True)


class Optimizer:
    """Base class: Keras hyper-parameters plus one hook, ``_make(params)``, per subclass.

    Args:
        learning_rate: a float >= 0 (0 freezes the weights, as in Keras; a negative rate is refused, which Keras does not check).
        weight_decay: decoupled weight decay (``None`` for none).
        clipnorm: clip each gradient tensor to this L2 norm.
        clipvalue: clip each gradient element to ``[-clipvalue, clipvalue]``.
        global_clipnorm: clip all gradients together to this global L2 norm.
        name: a name for logs; defaults to the lower-case class name.
        gradient_accumulation_steps: ``k`` (Keras 3): in ``fit``, the gradients of ``k``
            batches are averaged and applied every ``k``-th batch (replicas synchronise only on
            those batches); ``iterations`` still counts batches. ``None``: every batch.
        use_ema: keep an exponential moving average of the weights (Keras 3): after each
            update ``average = ema_momentum * average + (1 - ema_momentum) * weight`` (the first
            update copies the weights); ``fit`` ends with the weights set to their averages
            (:meth:`finalize_variable_values`); ``callbacks.SwapEMAWeights`` evaluates with them.
        ema_momentum: the average's momentum, in ``[0, 1]``.
        ema_overwrite_frequency: every this many updates the weights take their averages'
            values (``None``: only at the end of ``fit``).
    """

    _CONFIG: ClassVar[tuple[str, ...]] = ()  # subclass hyper-parameters for get_config
    _OWN_DECAY: ClassVar[bool] = False  # the rule applies weight_decay itself (Muon: a rate per kind of weight)

    def __init__(
        self,
        learning_rate: float,
        weight_decay: float | None = None,
        clipnorm: float | None = None,
        clipvalue: float | None = None,
        global_clipnorm: float | None = None,
        name: str | None = None,
        gradient_accumulation_steps: int | None = None,
        lr: float | None = None,
        decay: float | None = None,
        use_ema: bool = False,
        ema_momentum: float = 0.99,
        ema_overwrite_frequency: int | None = None,
    ) -> None:
        learning_rate = _legacy_rate(type(self).__name__, learning_rate, lr, decay)
        self.use_ema = bool(use_ema)
        self.ema_momentum = _number(ema_momentum, "ema_momentum", high=1.0)
        if ema_overwrite_frequency is not None and (
            isinstance(ema_overwrite_frequency, bool)
            or not isinstance(ema_overwrite_frequency, int)
            or ema_overwrite_frequency < 1
        ):
            raise ValueError(
                "`ema_overwrite_frequency` must be an integer >= 1 (or None). Received: "
                f"ema_overwrite_frequency={ema_overwrite_frequency!r}"
            )
        self.ema_overwrite_frequency = ema_overwrite_frequency
        self._ema_state: Any = None
        if gradient_accumulation_steps is not None and (
            isinstance(gradient_accumulation_steps, bool)
            or not isinstance(gradient_accumulation_steps, int)
            or gradient_accumulation_steps < 1
        ):
            raise ValueError(
                "`gradient_accumulation_steps` must be an integer >= 1 (or None). Received: "
                f"gradient_accumulation_steps={gradient_accumulation_steps!r}"
            )
        self.gradient_accumulation_steps = gradient_accumulation_steps
        self._schedule: schedules.LearningRateSchedule | None = None
        if isinstance(learning_rate, schedules.LearningRateSchedule):
            self._schedule = learning_rate
            learning_rate = float(torch.as_tensor(learning_rate(0)))
        self._learning_rate = _number(learning_rate, "learning_rate")
        self._counter = StepCounter(self)
        self.weight_decay = None if weight_decay is None else _number(weight_decay, "weight_decay")
        self.clipnorm = _optional_positive(clipnorm, "clipnorm")
        self.clipvalue = _optional_positive(clipvalue, "clipvalue")
        self.global_clipnorm = _optional_positive(global_clipnorm, "global_clipnorm")
        if sum(v is not None for v in (clipnorm, clipvalue, global_clipnorm)) > 1:
            raise ValueError(
                "Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be set. "
                f"Received: clipnorm={clipnorm}, clipvalue={clipvalue}, "
                f"global_clipnorm={global_clipnorm}"
            )
        self.name = name or type(self).__name__.lower()
        self._torch_optimizer: torch.optim.Optimizer | None = None
        self._param_ids: frozenset[int] = frozenset()
        self._prebuilt = False  # built by compile(), not yet claimed by a training loop
        from unison.distribute.strategy import get_strategy, has_strategy

        # The replicas of the strategy whose scope made this optimizer (None: no scope). An
        # optimizer of an explicit one-replica strategy trains locally by design; any other that
        # nothing synchronises in a multi-replica job is refused at its first step.
        self._created_under: int | None = get_strategy().num_replicas_in_sync if has_strategy() else None

    def _make(self, params: ParamList) -> torch.optim.Optimizer:
        """Create the torch optimizer for ``params`` (the one hook subclasses implement)."""
        raise NotImplementedError

    def _before_step(self, iterations: int) -> None:
        """Adjust the torch optimizer before the step that follows ``iterations`` steps (Adam's epsilon)."""

    def build(self, params: Params) -> torch.optim.Optimizer:
        """Create (once) and return the torch optimizer over ``params``.

        Building again with the same parameters returns the same torch optimizer.

        Raises:
            ValueError: if ``params`` is empty, or differs from the parameters of an earlier
                ``build``.
        """
        # Materialise generators (including those inside param-group dicts) exactly once.
        params = [dict(p, params=list(p["params"])) if isinstance(p, dict) else p for p in params]
        ids = frozenset(id(p) for p in _flatten(params))
        if (
            self._torch_optimizer is not None
            and self._prebuilt
            and ids != self._param_ids
            and not self._torch_optimizer.state
        ):
            # Built early by compile(); the trainable set changed before the first step
            # (a layer frozen or added after compile): start over on the new set.
            self._torch_optimizer = None
        self._prebuilt = False
        if self._torch_optimizer is not None:
            if ids != self._param_ids:
                raise ValueError(
                    f"Optimizer {self.name!r} was already built for a different set of "
                    "parameters. This optimizer can only be used with the parameters it was "
                    "first built with; create a new optimizer instance for a new model."
                )
            return self._torch_optimizer
        if not ids:
            raise ValueError(f"Optimizer {self.name!r} received no parameters to optimize. Received: params=[]")
        self._torch_optimizer = self._make(params)
        self._param_ids = ids
        if self.weight_decay and not self._OWN_DECAY and not isinstance(self._torch_optimizer, torch.optim.AdamW):
            self._torch_optimizer.register_step_pre_hook(_decoupled_weight_decay(self.weight_decay))
        after_step(self, self._torch_optimizer, params)
        from unison.optim.agreement import note
        from unison.train.optimizer_state import apply_deferred

        apply_deferred(self)  # slots a tf.train.Checkpoint restored before this first build
        note(f"optimizer ({self.name})", self)  # replicas compare class and hyper-parameters
        return self._torch_optimizer

    def prebuild(self, params: Params) -> None:
        """Build now, as ``compile()`` does for a model whose weights exist.

        Creating the first torch optimizer of a process costs seconds (torch imports its
        compiler stack); Keras users expect set-up in ``compile()``, not in the first epoch.
        A later :meth:`build` over a different parameter set, before any step, starts over.
        """
        if self._torch_optimizer is None:
            self.build(params)
            self._prebuilt = True

    @property
    def torch_optimizer(self) -> torch.optim.Optimizer | None:
        """The torch optimizer created by ``build``, or ``None`` before it."""
        return self._torch_optimizer

    def _lr_holder(self) -> torch.optim.Optimizer | None:
        """The torch optimizer whose param groups hold the learning rate, if any yet."""
        return self._torch_optimizer

    @property
    def learning_rate(self) -> LearningRate:
        """The learning rate (a float with ``.numpy()``); setting it updates every param group.

        Setting a number replaces a schedule given to the constructor.
        """
        holder = self._lr_holder()
        if holder is not None and holder.param_groups:
            return LearningRate.of(float(holder.param_groups[0]["lr"]), self)
        return LearningRate.of(self._learning_rate, self)

    @learning_rate.setter
    def learning_rate(self, value: float) -> None:
        if isinstance(value, schedules.LearningRateSchedule):
            self._schedule = value
            value = float(torch.as_tensor(value(int(self.iterations))))
        else:
            self._schedule = None
        self._set_rate(_number(value, "learning_rate"))

    def _set_rate(self, value: float) -> None:
        self._learning_rate = value
        holder = self._lr_holder()
        if holder is not None:
            for group in holder.param_groups:
                if isinstance(group["lr"], torch.Tensor):
                    group["lr"].fill_(self._learning_rate)
                else:
                    group["lr"] = self._learning_rate

    @property
    def lr(self) -> LearningRate:
        """Keras 2's name for :attr:`learning_rate` (readable, assignable, ``.assign()``, ``.numpy()``)."""
        return self.learning_rate

    @lr.setter
    def lr(self, value: float) -> None:
        self.learning_rate = value

    @property
    def variables(self) -> OptimizerVariables:
        """``iterations``, then the slot tensors (e.g. Adam's momenta, then its velocities).

        A list (Keras 3's property) that can also be called, ``opt.variables()`` (Keras 2's method).
        Before the optimizer is built (its first step) it holds ``iterations`` only.

        Example:
            >>> import torch
            >>> w = torch.nn.Parameter(torch.zeros(2))
            >>> from unison.keras.optimizers import Adam
            >>> opt = Adam()
            >>> _ = opt.apply_gradients([(torch.ones(2), w)])
            >>> [tuple(v.shape) for v in opt.variables()]
            [(), (2,), (2,)]
        """
        found: list[torch.Tensor] = [self.iterations]
        built = self._torch_optimizer
        if built is not None:
            slots: dict[str, list[torch.Tensor]] = {}
            for group in built.param_groups:
                for param in group["params"]:
                    for key, value in built.state.get(param, {}).items():
                        # torch keeps its step count per parameter; Keras has `iterations` only.
                        if key != "step" and isinstance(value, torch.Tensor):
                            slots.setdefault(str(key), []).append(value)
            for tensors in slots.values():
                found.extend(tensors)
        return OptimizerVariables(found)

    @property
    def iterations(self) -> torch.Tensor:
        """How many steps this optimizer has taken (a 0-d int64 tensor, Keras's ``iterations``)."""
        return self._counter.count

    def apply_gradients(
        self,
        grads_and_vars: Iterable[tuple[Any, torch.Tensor]],
        name: str | None = None,
        skip_gradients_aggregation: bool = False,
        **kwargs: Any,
    ) -> torch.Tensor:
        """Apply one step of ``(gradient, variable)`` pairs; returns ``iterations``.

        Inside ``strategy.run`` of a multi-replica strategy the gradients are first summed
        across replicas (scale the loss by the global batch, e.g. ``tf.nn.compute_average_loss``),
        through the strategy's ``DistributedOptimizer`` for this optimizer. Variables whose
        gradient is ``None`` are left unchanged.

        Raises:
            ValueError: no pairs; a gradient whose shape differs from its variable's (named);
                a variable this optimizer was not built for.
        """
        return apply_gradients(self, grads_and_vars, skip_aggregation=skip_gradients_aggregation)

    def apply(self, grads: Iterable[Any], trainable_variables: Iterable[torch.Tensor] | None = None) -> torch.Tensor:
        """Keras 3's ``optimizer.apply(grads, trainable_variables)``: ``apply_gradients`` of the pairs.

        Raises:
            ValueError: without ``trainable_variables`` (unison's optimizers hold no variable list
                of their own before they are built), or as ``apply_gradients``.
        """
        if trainable_variables is None:
            raise ValueError(
                "optimizer.apply(grads) needs trainable_variables= as well, e.g. "
                "optimizer.apply(grads, model.trainable_weights)."
            )
        grads, variables = list(grads), list(trainable_variables)
        if len(grads) != len(variables):
            raise ValueError(
                f"optimizer.apply() received {len(grads)} gradients for {len(variables)} variables; "
                "pass one gradient per variable, in the same order."
            )
        return apply_gradients(self, zip(grads, variables))

    def minimize(self, loss: Any, var_list: Any, tape: Any = None) -> torch.Tensor:
        """Compute the gradients of ``loss`` for ``var_list`` and apply them (Keras's ``minimize``).

        ``loss`` is a scalar tensor (with ``tape`` a ``GradientTape`` that recorded it, or
        computed with autograd) or a zero-argument callable returning one; ``var_list`` is a
        list of variables or a callable returning it.
        """
        return minimize(self, loss, var_list, tape)

    def finalize_variable_values(self, var_list: Iterable[torch.Tensor]) -> None:
        """Set the weights to their moving averages when ``use_ema`` (``fit`` calls this at its end).

        Without ``use_ema`` nothing changes, as in Keras.
        """
        finalize_variable_values(self, list(var_list))

    def clip_gradients(self, params: Params) -> None:
        """Clip the ``.grad`` of ``params`` in place as configured (no-op when not configured).

        ``clipnorm`` scales each gradient tensor to norm at most ``clipnorm``; ``clipvalue``
        clamps elements; ``global_clipnorm`` scales all gradients by
        ``global_clipnorm / max(global_norm, global_clipnorm)``. Runs without host syncs.
        """
        if self.clipnorm is None and self.clipvalue is None and self.global_clipnorm is None:
            return
        grads = [p.grad for p in _flatten(list(params)) if p.grad is not None]
        if not grads:
            return
        with torch.no_grad():
            if self.clipvalue is not None:
                for g in grads:
                    g.clamp_(-self.clipvalue, self.clipvalue)
            elif self.clipnorm is not None:
                for g in grads:
                    norm = torch.linalg.vector_norm(g.float())
                    g.mul_((self.clipnorm / norm.clamp(min=self.clipnorm)).to(g.dtype))
            else:
                device = grads[0].device
                norms = [torch.linalg.vector_norm(g.float()).to(device) for g in grads]
                total = torch.linalg.vector_norm(torch.stack(norms))
                scale = self.global_clipnorm / total.clamp(min=self.global_clipnorm)
                for g in grads:
                    g.mul_(scale.to(device=g.device, dtype=g.dtype))

    def get_config(self) -> dict[str, Any]:
        """Return the constructor arguments (Keras's ``get_config``)."""
        base = (
            "name",
            "learning_rate",
            "weight_decay",
            "clipnorm",
            "clipvalue",
            "global_clipnorm",
            "gradient_accumulation_steps",
            "use_ema",
            "ema_momentum",
            "ema_overwrite_frequency",
        )
        keys = base + self._CONFIG
        return {key: getattr(self, key) for key in keys}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Optimizer:
        """Create an optimizer from ``get_config()``'s output."""
        return cls(**config)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(learning_rate={self.learning_rate!r})"


class OptimizerVariables(list[torch.Tensor]):
    """The list ``Optimizer.variables`` returns; calling it returns itself, so Keras 2's
    ``opt.variables()`` and Keras 3's ``opt.variables`` both work."""

    def __call__(self) -> OptimizerVariables:
        return self


def _flatten(params: ParamList) -> list[torch.Tensor]:
    out: list[torch.Tensor] = []
    for p in params:
        out.extend(p["params"] if isinstance(p, dict) else [p])
    return out


def _decoupled_weight_decay(
    weight_decay: float,
) -> Callable[[torch.optim.Optimizer, tuple[Any, ...], dict[str, Any]], None]:
    """A step pre-hook applying Keras's ``w -= lr * wd * w`` to parameters with a gradient."""

    def hook(optimizer: torch.optim.Optimizer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        with torch.no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        p.mul_(1.0 - group["lr"] * weight_decay)

    return hook


class TorchOptimizer(Optimizer):
    """Wraps an already-built ``torch.optim.Optimizer`` given to ``compile``.

    ``build(params)`` returns it after checking it holds every parameter of the model.
    Clipping is off; the torch optimizer's own hyper-parameters apply.

    Example:
        >>> import torch
        >>> layer = torch.nn.Linear(2, 1)
        >>> opt = TorchOptimizer(torch.optim.SGD(layer.parameters(), lr=0.5))
        >>> opt.build(layer.parameters()) is opt.torch_optimizer
        True
    """

    def __init__(self, optimizer: torch.optim.Optimizer) -> None:
        # The torch optimizer owns its learning rate; 1.0 only satisfies the base validation.
        super().__init__(1.0, name=type(optimizer).__name__.lower())
        self._wrapped = optimizer

    def _lr_holder(self) -> torch.optim.Optimizer | None:
        return self._wrapped

    def build(self, params: Params) -> torch.optim.Optimizer:
        held = {id(p) for group in self._wrapped.param_groups for p in group["params"]}
        missing = [p for p in _flatten(list(params)) if id(p) not in held]
        if missing:
            raise ValueError(
                f"The torch optimizer {type(self._wrapped).__name__} passed to compile() does "
                f"not hold {len(missing)} of the model's parameters (the first has shape "
                f"{tuple(missing[0].shape)}). Create it from this model's parameters, e.g. "
                "torch.optim.Adam(model.parameters()), or pass optimizer='adam'."
            )
        self._torch_optimizer = self._wrapped
        return self._wrapped

    def get_config(self) -> dict[str, Any]:
        return {"name": self.name, "learning_rate": self.learning_rate}
