"""``GroupQueryAttention`` (Keras 3's ``GroupedQueryAttention``): attention whose key and value
heads are shared by groups of query heads.

The four projections are :class:`~unison.keras.layers.einsum_dense.EinsumDense` layers with
Keras's equations and names (``query_dense`` ``"bqm,muh->bquh"``, ``key_dense`` and
``value_dense`` ``"bkm,mvh->bkvh"``, ``output_dense`` ``"bquh,uhm->bqm"``), so weights copy
across in Keras's shapes and order. Each key/value head is repeated for its
``num_query_heads // num_key_value_heads`` query heads, as Keras's ``ops.repeat`` does; attention
runs in ``scaled_dot_product_attention`` unless the weights are asked for or a mask is given
(then the masked softmax is explicit: a query step that may attend to nothing gets zero weights).

Example:
    >>> import torch
    >>> gqa = GroupQueryAttention(head_dim=4, num_query_heads=4, num_key_value_heads=2)
    >>> x = torch.randn(2, 5, 8)
    >>> out, scores = gqa(x, x, return_attention_scores=True)
    >>> tuple(out.shape), tuple(scores.shape)
    ((2, 5, 8), (2, 4, 5, 5))
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch

from unison.keras.layers.attention import _positive_int, fused_attention
from unison.keras.layers.einsum_dense import EinsumDense
from unison.keras.layers.masking import MaskedLayer, get_mask, set_mask
from unison.ops.dropout_mask import dropout


class GroupedQueryAttention(MaskedLayer):
    """Grouped-query attention (Keras's ``layers.GroupQueryAttention``).

    Args:
        head_dim: size of each head.
        num_query_heads: number of query heads.
        num_key_value_heads: number of key and value heads (divides ``num_query_heads``).
        dropout: dropout rate on the attention weights (training only).
        use_bias: whether the projections have biases.
        sliding_window: attend only to keys less than this many steps away (``None``: all).
        use_gate: a sigmoid gate (another query-shaped projection) on the attended values.
        kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer: for the projections.

    Call arguments: as ``MultiHeadAttention``'s (``query``, ``value``, ``key``, masks,
    ``return_attention_scores``, ``training``, ``use_causal_mask``).
    """

    def __init__(
        self,
        head_dim: int,
        num_query_heads: int,
        num_key_value_heads: int,
        dropout: float = 0.0,
        use_bias: bool = True,
        sliding_window: int | None = None,
        flash_attention: bool | None = None,
        kernel_initializer: Any = "glorot_uniform",
        bias_initializer: Any = "zeros",
        kernel_regularizer: Any = None,
        bias_regularizer: Any = None,
        use_gate: bool = False,
        seed: int | None = None,
        **kwargs: Any,
    ) -> None:
        for value, name in ((head_dim, "head_dim"), (num_query_heads, "num_query_heads")):
            _positive_int(value, name)
        _positive_int(num_key_value_heads, "num_key_value_heads")
        if num_query_heads % num_key_value_heads != 0:
            raise ValueError(
                "`num_query_heads` must be divisible by `num_key_value_heads`. Received: "
                f"num_query_heads={num_query_heads}, num_key_value_heads={num_key_value_heads}"
            )
        if sliding_window is not None and (
            isinstance(sliding_window, bool) or not isinstance(sliding_window, int) or sliding_window <= 0
        ):
            raise ValueError(
                f"`sliding_window` must be `None` or a positive integer. Received: sliding_window={sliding_window}"
            )
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"`dropout` must be in [0, 1). Received: dropout={dropout!r}")
        if flash_attention and dropout > 0.0:
            raise ValueError(
                "Dropout is not supported when flash attention is enabled. Please set dropout to 0.0 to use "
                "flash attention."
            )
        super().__init__(**kwargs)
        self.head_dim, self.num_query_heads, self.num_key_value_heads = head_dim, num_query_heads, num_key_value_heads
        self.num_repeats = num_query_heads // num_key_value_heads
        self.dropout, self.use_bias, self.use_gate = float(dropout), use_bias, use_gate
        self.sliding_window = sliding_window
        self._dense_args = {
            "kernel_initializer": kernel_initializer,
            "bias_initializer": bias_initializer,
            "kernel_regularizer": kernel_regularizer,
            "bias_regularizer": bias_regularizer,
        }

    def _einsum(self, equation: str, output_shape: Sequence[int | None], bias: str, name: str, **extra: Any) -> Any:
        return EinsumDense(
            equation,
            output_shape=output_shape,
            bias_axes=bias if self.use_bias else None,
            name=f"{self.name}/{name}",
            dtype=self.dtype_policy if self._explicit_policy else None,
            **self._dense_args,
            **extra,
        )

    def build(  # type: ignore[override]
        self, query_shape: Sequence[int], value_shape: Sequence[int], key_shape: Sequence[int] | None = None
    ) -> None:
        key_shape = value_shape if key_shape is None else key_shape
        for what, shape in (("query", query_shape), ("value", value_shape), ("key", key_shape)):
            if len(shape) != 3:
                raise ValueError(
                    f"Layer '{self.name}' expects `{what}` of shape (batch, seq, features). "
                    f"Received: {what}.shape={tuple(shape)}"
                )
        if tuple(value_shape[1:-1]) != tuple(key_shape[1:-1]):
            raise ValueError(
                "All dimensions of `value` and `key`, except the last one, must be equal. "
                f"Received: value_shape={tuple(value_shape)} and key_shape={tuple(key_shape)}"
            )
        self.feature_dim = int(query_shape[-1])
        q_heads, kv_heads, d = self.num_query_heads, self.num_key_value_heads, self.head_dim
        self.query_dense = self._einsum("bqm,muh->bquh", (None, q_heads, d), "uh", "query")
        self.query_dense.ensure_built(tuple(query_shape))
        self.key_dense = self._einsum("bkm,mvh->bkvh", (None, kv_heads, d), "vh", "key")
        self.key_dense.ensure_built(tuple(key_shape))
        if self.use_gate:
            self.gate_dense = self._einsum("bqm,muh->bquh", (None, q_heads, d), "uh", "gate", activation="sigmoid")
            self.gate_dense.ensure_built(tuple(query_shape))
        self.value_dense = self._einsum("bkm,mvh->bkvh", (None, kv_heads, d), "vh", "value")
        self.value_dense.ensure_built(tuple(value_shape))
        self.output_dense = self._einsum("bquh,uhm->bqm", (None, self.feature_dim), "m", "attention_output")
        self.output_dense.ensure_built((1, 1, q_heads, d))

    def _mask(
        self,
        query: torch.Tensor,
        value: torch.Tensor,
        query_mask: Any,
        value_mask: Any,
        key_mask: Any,
        attention_mask: Any,
        use_causal_mask: bool,
    ) -> torch.Tensor | None:
        """Keras's combined mask ``(B or 1, T, S)``: ``True`` = may attend."""
        t, s, device = query.shape[1], value.shape[1], query.device
        auto: torch.Tensor | None = None

        def both(a: torch.Tensor | None, b: torch.Tensor) -> torch.Tensor:
            return b if a is None else a & b

        if query_mask is not None:
            auto = torch.as_tensor(query_mask, device=device).bool().unsqueeze(-1)
        for m in (value_mask, key_mask):
            if m is not None:
                auto = both(auto, torch.as_tensor(m, device=device).bool().unsqueeze(-2))
        if use_causal_mask:
            auto = both(auto, torch.ones(1, t, s, dtype=torch.bool, device=device).tril())
        if self.sliding_window is not None:
            rows = torch.arange(t, device=device).reshape(1, t, 1)
            cols = torch.arange(s, device=device).reshape(1, 1, s)
            auto = both(auto, (rows - cols).abs() < self.sliding_window)
        if attention_mask is not None:
            given = torch.as_tensor(attention_mask, device=device).bool()
            return given if auto is None else given & auto
        return auto

    def forward(  # type: ignore[override]
        self,
        query: torch.Tensor,
        value: torch.Tensor | None = None,
        key: torch.Tensor | None = None,
        query_mask: Any = None,
        value_mask: Any = None,
        key_mask: Any = None,
        attention_mask: Any = None,
        return_attention_scores: bool = False,
        training: bool | None = None,
        use_causal_mask: bool = False,
    ) -> Any:
        value = query if value is None else value
        if query_mask is None:
            query_mask = get_mask(query)
        if value_mask is None:
            value_mask = get_mask(value)
        if key_mask is None and key is not None and key is not value:
            key_mask = get_mask(key)
        key = value if key is None else key
        self.ensure_built(tuple(query.shape), tuple(value.shape), tuple(key.shape))
        mask = self._mask(query, value, query_mask, value_mask, key_mask, attention_mask, use_causal_mask)
        gate = self.gate_dense(query) if self.use_gate else None
        q = self.query_dense(query).transpose(1, 2)  # (B, H, T, D)
        k = self.key_dense(key).repeat_interleave(self.num_repeats, dim=2).transpose(1, 2)
        v = self.value_dense(value).repeat_interleave(self.num_repeats, dim=2).transpose(1, 2)
        rate = self.dropout if self._training(training) else 0.0
        scale = 1.0 / math.sqrt(float(self.head_dim))
        scores = None
        if return_attention_scores or mask is not None:
            logits = (q * scale) @ k.transpose(-1, -2)
            if mask is None:
                weights = torch.softmax(logits, dim=-1)
            else:
                m = mask.unsqueeze(-3) if mask.dim() == 3 else mask
                logits = logits.masked_fill(~m, torch.finfo(logits.dtype).min)
                weights = torch.softmax(logits, dim=-1).masked_fill(~m, 0.0)
            scores = weights
            attended = (dropout(weights, rate) if rate else weights) @ v.to(weights.dtype)
        else:
            # float32 heads on CPU under a half-precision policy (torch's CPU kernels are slow there)
            attended = fused_attention(q, k, v, None, rate, False, scale)
        out = attended.transpose(1, 2)  # (B, T, H, D)
        if gate is not None:
            out = out * gate
        out = self.output_dense(out)
        set_mask(out, None if query_mask is None else torch.as_tensor(query_mask, device=out.device).bool())
        return (out, scores) if return_attention_scores else out

    def compute_output_shape(self, query_shape: Any, value_shape: Any = None, key_shape: Any = None) -> Any:
        value_shape = query_shape if value_shape is None else value_shape
        key_shape = value_shape if key_shape is None else key_shape
        if query_shape[-1] != value_shape[-1]:
            raise ValueError(
                "The last dimension of `query_shape` and `value_shape` must be equal, but are "
                f"{query_shape[-1]}, {value_shape[-1]}. Received: query_shape={query_shape}, value_shape={value_shape}"
            )
        if tuple(value_shape[1:-1]) != tuple(key_shape[1:-1]):
            raise ValueError(
                "All dimensions of `value` and `key`, except the last one, must be equal. "
                f"Received: value_shape={value_shape} and key_shape={key_shape}"
            )
        return tuple(query_shape)

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        return mask


GroupQueryAttention = GroupedQueryAttention

__all__ = ["GroupQueryAttention", "GroupedQueryAttention"]
