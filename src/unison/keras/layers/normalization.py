"""BatchNormalization (synchronised across replicas by default), LayerNormalization,
UnitNormalization and GroupNormalization (Keras 3).

Batch statistics are computed over the *global* batch: each replica contributes its sums,
sums of squares and row count through one differentiable all-reduce, so N replicas normalise
exactly as one device would on the global batch (N replicas end with one device's parameters),
and a replica with zero rows still takes part. Keras's own default is per-replica statistics
(``synchronized=False``); pass that to get it. On one replica (or with ``synchronized=False``)
the layer runs torch's fused batch-norm kernels (one pass forward, one backward) and updates the
moving statistics as Keras does, from the biased batch variance.

Example:
    >>> import torch
    >>> bn = BatchNormalization()
    >>> y = bn(torch.randn(8, 3), training=True)  # batch statistics (a call without training= uses the moving ones)
    >>> bool(torch.allclose(y.mean(0), torch.zeros(3), atol=1e-5))
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from unison.comm.reduce_op import ReduceOp
from unison.distribute.strategy import ReplicaContext, get_replica_context, get_strategy
from unison.keras import initializers, regularizers
from unison.keras.dtype_policies import DTypePolicyMixin
from unison.keras.layers.base import Layer
from unison.keras.layers.masking import MaskedLayer
from unison.keras.layers.misc import check_axes


class BatchNormalization(DTypePolicyMixin, Layer):
    """Normalise over every axis but ``axis`` with batch statistics (moving ones at inference).

    Args:
        axis: the feature axis (default -1, channels-last).
        momentum: moving-average factor, Keras's convention (``0.99`` keeps 99% of the old value).
        epsilon: added to the variance.
        center, scale: learn ``beta``/``gamma``.
        beta_regularizer, gamma_regularizer: penalties on ``beta``/``gamma`` (added to ``losses``).
        synchronized: statistics over the global batch (all replicas) instead of the local one.
        renorm, renorm_clipping, renorm_momentum: Keras's batch renormalization; only its off
            setting (the default) is accepted.
    """

    # buffers registered in build(); declared so that type checkers see tensors, not Modules
    moving_mean: torch.Tensor
    moving_variance: torch.Tensor

    def __init__(
        self,
        axis: int = -1,
        momentum: float = 0.99,
        epsilon: float = 1e-3,
        center: bool = True,
        scale: bool = True,
        beta_initializer: Any = "zeros",
        gamma_initializer: Any = "ones",
        moving_mean_initializer: Any = "zeros",
        moving_variance_initializer: Any = "ones",
        beta_regularizer: Any = None,
        gamma_regularizer: Any = None,
        synchronized: bool = True,
        renorm: bool = False,
        renorm_clipping: Any = None,
        renorm_momentum: float = 0.99,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if renorm or renorm_clipping is not None:
            raise ValueError(
                "BatchNormalization(renorm=True) (batch renormalization) is not supported by unison. "
                f"Received: renorm={renorm!r}, renorm_clipping={renorm_clipping!r}; leave both out."
            )
        self.renorm, self.renorm_clipping, self.renorm_momentum = False, None, float(renorm_momentum)
        if not 0.0 <= momentum <= 1.0:
            raise ValueError(f"momentum must be in [0, 1]. Received: momentum={momentum}")
        if epsilon <= 0:
            raise ValueError(f"epsilon must be > 0. Received: epsilon={epsilon}")
        self.axis, self.momentum, self.epsilon = axis, float(momentum), float(epsilon)
        self.center, self.scale, self.synchronized = center, scale, synchronized
        self._inits = (beta_initializer, gamma_initializer, moving_mean_initializer, moving_variance_initializer)
        self._regularizers = (regularizers.get(beta_regularizer), regularizers.get(gamma_regularizer))

    def build(self, input_shape: torch.Size) -> None:
        rank = len(input_shape)
        if not isinstance(self.axis, int) or not -rank < self.axis < rank or self.axis % rank == 0:
            raise ValueError(
                f"Invalid axis {self.axis!r} for layer '{self.name}': an input of shape {tuple(input_shape)} has "
                f"feature axes 1..{rank - 1} (or -1..-{rank - 1}; axis 0 is the batch). Received: axis={self.axis!r}"
            )
        self.features = int(input_shape[self.axis])
        beta, gamma, mm, mv = self._inits
        shape = (self.features,)
        beta_reg, gamma_reg = self._regularizers
        self.gamma = (
            self.add_weight(name="gamma", shape=shape, initializer=gamma, regularizer=gamma_reg) if self.scale else None
        )
        self.beta = (
            self.add_weight(name="beta", shape=shape, initializer=beta, regularizer=beta_reg) if self.center else None
        )
        for name, init in (("moving_mean", mm), ("moving_variance", mv)):
            buf = torch.empty(shape)
            initializers.get(init)(buf)
            self.register_buffer(name, buf)

    def _broadcast_shape(self, x: torch.Tensor) -> list[int]:
        shape = [1] * x.dim()
        shape[self.axis] = self.features
        return shape

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        # Keras: a frozen BatchNormalization (trainable=False) runs in inference mode, training or not
        training = self.training and self.trainable
        if training and self.synchronized:
            # the public, differentiable all-reduce of the replica this step runs on
            context = get_replica_context() or ReplicaContext(get_strategy())
            if context.num_replicas_in_sync > 1:
                return self._synchronized_call(inputs, context)
        return self._fused_call(inputs, training)

    def _channels_at_1(self, inputs: torch.Tensor) -> torch.Tensor:
        """``inputs`` as torch's batch norm wants them, channels at dim 1, without a copy when possible.

        Channels last (Keras's default), any rank: the view ``(1, C, 1, rows)`` of the contiguous
        rows, which is channels_last memory, the layout torch's CPU kernel walks in one pass
        (the plain ``(rows, C)`` matrix takes a per-channel strided path, measured 2x slower).
        Otherwise the feature axis moved to 1 (a view; torch copies only a layout it cannot walk).
        """
        axis = self.axis % inputs.dim()
        if axis == inputs.dim() - 1:
            return inputs.reshape(1, 1, -1, self.features).permute(0, 3, 1, 2)
        return inputs if axis == 1 else inputs.movedim(axis, 1)

    def _fused_call(self, inputs: torch.Tensor, training: bool) -> torch.Tensor:
        """torch's batch norm kernels (one pass forward, one backward), with Keras's moving statistics.

        Keras's update is ``moving = moving * momentum + batch * (1 - momentum)`` with the *biased*
        batch variance; torch's running variance is the unbiased one. So the kernel updates two
        scratch buffers with momentum 1 (they become the batch mean and unbiased variance), and
        the moving variance gets ``unbiased * (n - 1) / n``. A batch of fewer than two rows per
        feature takes the reference formulas (torch's unbiased variance is undefined there).
        """
        x = self._channels_at_1(inputs)
        weight = self.gamma if self.gamma is not None else None
        bias = self.beta if self.beta is not None else None
        low = inputs.dtype in (torch.float16, torch.bfloat16)
        if low and weight is not None and weight.dtype != inputs.dtype and x.device.type != "cpu":
            # Keras normalises half-precision inputs in float32 (its BatchNormalization casts up and back)
            x = x.float()
        # On CPU torch's mixed-dtype kernels take the half-precision input with float32 weights and
        # statistics and compute in float32 inside (statistics, normalisation, gradients), writing
        # the half-precision result Keras's cast back gives: no float32 copies of the activations.
        # ResNet-50 under mixed_bfloat16: batch norm forward + backward 2-4x faster (BENCHMARKS.md).
        if not training:
            y = torch.nn.functional.batch_norm(
                x, self.moving_mean, self.moving_variance, weight, bias, False, 0.0, self.epsilon
            )
        else:
            n = x.numel() // max(self.features, 1)
            if n < 2:
                return self._synchronized_call(inputs, None)
            batch_mean = torch.zeros_like(self.moving_mean)
            batch_var = torch.zeros_like(self.moving_variance)
            y = torch.batch_norm(x, weight, bias, batch_mean, batch_var, True, 1.0, self.epsilon, False)
            with torch.no_grad():
                m = self.momentum
                self.moving_mean.mul_(m).add_(batch_mean, alpha=1 - m)
                self.moving_variance.mul_(m).add_(batch_var, alpha=(1 - m) * (n - 1) / n)
        y = y.to(inputs.dtype)
        axis = self.axis % inputs.dim()
        if axis == inputs.dim() - 1:
            return y.permute(0, 2, 3, 1).reshape(inputs.shape)
        return y if axis == 1 else y.movedim(1, axis)

    def _synchronized_call(self, inputs: torch.Tensor, context: ReplicaContext | None) -> torch.Tensor:
        """Statistics from sums and sums of squares (one all-reduce when ``context`` is given)."""
        shape = self._broadcast_shape(inputs)
        dims = [d for d in range(inputs.dim()) if d != self.axis % inputs.dim()]
        count = inputs.new_tensor([inputs.numel() / self.features])
        stats = torch.cat([inputs.sum(dims), inputs.square().sum(dims), count])
        if context is not None:
            stats = context.all_reduce(ReduceOp.SUM, stats)
        n = stats[-1].clamp_min(1.0)
        mean = stats[: self.features] / n
        var = (stats[self.features : 2 * self.features] / n - mean.square()).clamp_min(0.0)
        with torch.no_grad():
            m = self.momentum
            self.moving_mean.mul_(m).add_(mean.detach(), alpha=1 - m)
            self.moving_variance.mul_(m).add_(var.detach(), alpha=1 - m)
        y = (inputs - mean.view(shape)) * torch.rsqrt(var.view(shape) + self.epsilon)
        if self.gamma is not None:
            y = y * self.gamma.view(shape)
        if self.beta is not None:
            y = y + self.beta.view(shape)
        return y


class LayerNormalization(MaskedLayer):
    """Normalise each example over ``axis`` (Keras 3's ``LayerNormalization``); masks pass through.

    Args:
        axis: the axis or axes to normalise over (default -1, the features).
        epsilon: added to the variance (Keras's default ``1e-3``).
        center, scale: learn ``beta``/``gamma`` (shaped like the normalised axes).
        rms_scaling: Keras 3's deprecated option: ``x * rsqrt(variance + epsilon) * gamma`` (the
            variance about the mean, and no centering of ``x``), as TensorFlow's Keras computes it.

    Example:
        >>> import torch
        >>> y = LayerNormalization()(torch.tensor([[1.0, 2.0, 3.0]]))
        >>> [round(v, 3) for v in y[0].tolist()]
        [-1.224, 0.0, 1.224]
    """

    def __init__(
        self,
        axis: int | list[int] | tuple[int, ...] = -1,
        epsilon: float = 1e-3,
        center: bool = True,
        scale: bool = True,
        rms_scaling: bool = False,
        beta_initializer: Any = "zeros",
        gamma_initializer: Any = "ones",
        beta_regularizer: Any = None,
        gamma_regularizer: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        axes = [axis] if isinstance(axis, int) else list(axis) if isinstance(axis, (list, tuple)) else None
        if not axes or not all(isinstance(a, int) and not isinstance(a, bool) for a in axes):
            raise TypeError(f"Expected an int or a list/tuple of ints for the argument 'axis'. Received: axis={axis!r}")
        if epsilon <= 0:
            raise ValueError(f"epsilon must be > 0. Received: epsilon={epsilon}")
        self.axis, self.epsilon = axis, float(epsilon)
        self.center, self.scale, self.rms_scaling = center, scale, rms_scaling
        self._inits = (beta_initializer, gamma_initializer, beta_regularizer, gamma_regularizer)
        self._axes = axes

    def build(self, input_shape: torch.Size) -> None:
        rank = len(input_shape)
        axes = sorted({a % rank if -rank <= a < rank else a for a in self._axes})
        if any(not 0 < a < rank for a in axes):
            raise ValueError(
                f"Invalid axis {self.axis!r} for layer '{self.name}': an input of shape "
                f"{tuple(input_shape)} has axes 1..{rank - 1} (axis 0 is the batch)."
            )
        self.norm_axes = axes
        shape = tuple(int(input_shape[a]) for a in axes)
        beta, gamma, beta_reg, gamma_reg = self._inits
        self.gamma = (
            self.add_weight(name="gamma", shape=shape, initializer=gamma, regularizer=gamma_reg)
            if self.scale or self.rms_scaling
            else None
        )
        self.beta = (
            self.add_weight(name="beta", shape=shape, initializer=beta, regularizer=beta_reg)
            if self.center and not self.rms_scaling
            else None
        )
        # torch's fused kernel normalises trailing axes; anything else is computed by hand.
        self._trailing = axes == list(range(rank - len(axes), rank))

    def _param_view(self, p: torch.Tensor, rank: int) -> torch.Tensor:
        shape = [1] * rank
        for a, n in zip(self.norm_axes, p.shape):
            shape[a] = n
        return p.reshape(shape)

    def call(self, inputs: torch.Tensor, mask: Any = None, training: bool = False) -> torch.Tensor:
        if self.rms_scaling and self.gamma is not None:
            # Keras 3's (deprecated) rms_scaling divides by the root of the *variance*, not of the
            # mean square (its warning says so); TF is the reference, so unison does the same.
            x = inputs.float() if inputs.dtype in (torch.float16, torch.bfloat16) else inputs
            var = torch.var(x, dim=self.norm_axes, keepdim=True, correction=0)
            y = x * torch.rsqrt(var + self.epsilon) * self._param_view(self.gamma, inputs.dim())
            return y.to(inputs.dtype)
        if self._trailing:
            shape = tuple(inputs.shape[len(inputs.shape) - len(self.norm_axes) :])
            return torch.nn.functional.layer_norm(
                inputs,
                shape,
                self.gamma.reshape(shape) if self.gamma is not None else None,
                self.beta.reshape(shape) if self.beta is not None else None,
                self.epsilon,
            )
        x = inputs.float() if inputs.dtype in (torch.float16, torch.bfloat16) else inputs
        var, mean = torch.var_mean(x, dim=self.norm_axes, keepdim=True, correction=0)
        y = (x - mean) * torch.rsqrt(var + self.epsilon)
        if self.gamma is not None:
            y = y * self._param_view(self.gamma, x.dim())
        if self.beta is not None:
            y = y + self._param_view(self.beta, x.dim())
        return y


class UnitNormalization(MaskedLayer):
    """Scale each example to unit L2 norm along ``axis``: ``x / sqrt(max(sum(x**2), 1e-12))``."""

    def __init__(self, axis: int | Sequence[int] = -1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.axis = axis if isinstance(axis, int) else list(axis)

    def build(self, input_shape: Any) -> None:
        pass

    def call(self, inputs: torch.Tensor, mask: Any = None, training: bool = False) -> torch.Tensor:
        axes = check_axes(self.axis, inputs.dim(), self)
        square_sum = inputs.square().sum(dim=axes, keepdim=True)
        return inputs * torch.rsqrt(torch.clamp(square_sum, min=1e-12))


class GroupNormalization(MaskedLayer):
    """Normalise groups of channels of each example (Keras's ``GroupNormalization``, Wu & He 2018).

    The ``axis`` channels split into ``groups`` groups; each group is normalised over its channels
    and every other non-batch axis, then scaled by ``gamma`` and shifted by ``beta`` (per channel).
    ``groups=-1`` gives instance normalisation (one channel per group).
    """

    def __init__(
        self,
        groups: int = 32,
        axis: int = -1,
        epsilon: float = 1e-3,
        center: bool = True,
        scale: bool = True,
        beta_initializer: Any = "zeros",
        gamma_initializer: Any = "ones",
        beta_regularizer: Any = None,
        gamma_regularizer: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if isinstance(groups, bool) or not isinstance(groups, int) or groups == 0 or groups < -1:
            raise ValueError(f"`groups` must be a positive integer or -1. Received: groups={groups!r}")
        self.groups, self.axis, self.epsilon = groups, axis, float(epsilon)
        self.center, self.scale = center, scale
        self._inits = (beta_initializer, gamma_initializer, beta_regularizer, gamma_regularizer)

    def build(self, input_shape: Any) -> None:
        rank = len(input_shape)
        self._axis = check_axes(self.axis, rank, self)[0]
        channels = int(input_shape[self._axis])
        groups = channels if self.groups == -1 else self.groups
        if groups > channels or channels % groups:
            raise ValueError(
                f"Layer '{self.name}': the number of channels ({channels}) must be a multiple of, and at least, "
                f"the number of groups ({groups}). Received: input_shape={tuple(input_shape)}; change `groups`."
            )
        self._groups = groups
        beta, gamma, beta_reg, gamma_reg = self._inits
        self.gamma = (
            self.add_weight(name="gamma", shape=(channels,), initializer=gamma, regularizer=gamma_reg)
            if self.scale
            else None
        )
        self.beta = (
            self.add_weight(name="beta", shape=(channels,), initializer=beta, regularizer=beta_reg)
            if self.center
            else None
        )

    def call(self, inputs: torch.Tensor, mask: Any = None, training: bool = False) -> torch.Tensor:
        # torch's group norm wants channels at dim 1 and groups of consecutive channels, as Keras
        # splits them; a channels-last 4-D/5-D input moved there is channels_last memory, which
        # torch's CPU kernel walks in place.
        x = inputs if self._axis == 1 else inputs.movedim(self._axis, 1)
        low = x.dtype in (torch.float16, torch.bfloat16)
        y = torch.nn.functional.group_norm(x.float() if low else x, self._groups, self.gamma, self.beta, self.epsilon)
        y = y.to(inputs.dtype) if low else y
        return y if self._axis == 1 else y.movedim(1, self._axis)


class SyncBatchNormalization(BatchNormalization):
    """tf_keras's ``layers.experimental.SyncBatchNormalization``: ``BatchNormalization`` whose batch
    statistics are always taken over the global batch (all replicas), which is unison's
    ``BatchNormalization(synchronized=True)``.

    Example:
        >>> import torch
        >>> SyncBatchNormalization()(torch.randn(4, 3)).shape
        torch.Size([4, 3])
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs = dict(kwargs)
        if kwargs.pop("synchronized", True) is not True:
            raise ValueError(
                "SyncBatchNormalization always synchronises its statistics across replicas; for per-replica "
                "statistics use BatchNormalization(synchronized=False)."
            )
        kwargs["synchronized"] = True
        super().__init__(*args, **kwargs)
