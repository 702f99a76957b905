"""``MultiHeadAttention`` with Keras 3's arguments and masks, on ``scaled_dot_product_attention``.

Masks follow Keras: ``True`` = may attend. The attention mask of one call is the logical AND
of ``attention_mask`` (``(B, T, S)``, broadcastable), the query's padding mask (``(B, T, 1)``),
the value's and key's padding masks (``(B, 1, S)``) and, with ``use_causal_mask=True``, the
lower-triangular causal mask. A query step that may attend to nothing gets zero attention
weights (Keras's masked softmax), so its output is the output projection's bias.

The projections are :class:`~unison.keras.layers.Dense` layers (``query_dense``, ``key_dense``,
``value_dense``, ``output_dense``), built from the first call's shapes. Attention itself runs in
``torch.nn.functional.scaled_dot_product_attention`` (fused kernels, dropout on the attention
weights in training; on CPU in float32 under a low-precision policy, see :func:`fused_attention`);
``return_attention_scores=True`` computes the weights explicitly.

Example:
    >>> import torch
    >>> mha = MultiHeadAttention(num_heads=2, key_dim=4)
    >>> x = torch.randn(3, 5, 8)
    >>> out, scores = mha(x, x, return_attention_scores=True)
    >>> tuple(out.shape), tuple(scores.shape)
    ((3, 5, 8), (3, 2, 5, 5))
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F

from unison.keras.layers.core import Dense
from unison.keras.layers.masking import MaskedLayer, get_mask, set_mask
from unison.ops.dropout_mask import dropout


def _positive_int(value: Any, name: str, allow_none: bool = False) -> None:
    if allow_none and value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        expected = "a positive integer or `None`" if allow_none else "a positive integer"
        raise ValueError(
            f"Received an invalid value for argument `{name}`, expected {expected}. Received: {name}={value!r}"
        )


def fused_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    attn_mask: torch.Tensor | None,
    dropout_p: float,
    is_causal: bool,
    scale: float,
) -> torch.Tensor:
    """``scaled_dot_product_attention``; on CPU, half-precision heads are attended in float32.

    torch's CPU attention kernels are slow in low precision: forward + backward of the Transformer
    benchmark's attention (32 x 2 heads x 200 steps x 32) take 33 ms of CPU time in bfloat16 and
    118 ms in float16 against 22 ms with the heads cast to float32 and the output cast back (one
    thread, ``BENCHMARKS.md``). The casts cost little (the heads are ``T x key_dim`` per head, the
    ``T x S`` weights never leave the kernel), and the result differs from the low-precision
    kernel's by its output rounding only: Keras also takes the softmax in float32 under a mixed
    policy. The output has the heads' dtype, as before.

    Example:
        >>> q = torch.randn(1, 2, 3, 4, dtype=torch.bfloat16)
        >>> fused_attention(q, q, q, None, 0.0, False, 0.5).dtype
        torch.bfloat16
    """
    if q.device.type != "cpu" or q.dtype not in (torch.bfloat16, torch.float16):
        return F.scaled_dot_product_attention(
            q, k, v, attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal, scale=scale
        )
    with torch.autocast("cpu", enabled=False):  # autocast would cast the float32 heads back down
        out = F.scaled_dot_product_attention(
            q.float(), k.float(), v.float(), attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal, scale=scale
        )
    return out.to(q.dtype)


class MultiHeadAttention(MaskedLayer):
    """Multi-head scaled dot-product attention (Keras 3's ``MultiHeadAttention``).

    Args:
        num_heads: number of attention heads.
        key_dim: size of each head for query and key.
        value_dim: size of each head for value (default ``key_dim``).
        dropout: dropout rate on the attention weights (training only).
        use_bias: whether the projections have biases.
        output_shape: the last dimension(s) of the output (default: the query's features).
        attention_axes: only ``None`` (attend over the sequence axis of ``(B, T, dim)``
            inputs) is supported.
        kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer: for the
            four projections.

    Call arguments:
        query: ``(B, T, dim)``. value: ``(B, S, dim)``; ``None`` means self-attention
            (``value = query``; a unison convenience so the layer also fits a ``Sequential``).
        key: ``(B, S, dim)``, default ``value``.
        attention_mask: boolean ``(B, T, S)`` (or broadcastable), ``True`` = may attend.
        return_attention_scores: also return the weights, ``(B, num_heads, T, S)``.
        training: dropout on or off (default: the layer's ``training`` mode).
        use_causal_mask: forbid attending to later steps (decoders).
        query_mask, value_mask, key_mask: padding masks ``(B, T)``/``(B, S)``; by default the
            inputs' Keras masks (e.g. from ``Embedding(mask_zero=True)``).
    """

    _config_extras = ("activity_regularizer",)  # Keras lists it

    def __init__(
        self,
        num_heads: int,
        key_dim: int,
        value_dim: int | None = None,
        dropout: float = 0.0,
        use_bias: bool = True,
        output_shape: int | Sequence[int] | None = None,
        attention_axes: Any = None,
        kernel_initializer: Any = "glorot_uniform",
        bias_initializer: Any = "zeros",
        kernel_regularizer: Any = None,
        bias_regularizer: Any = None,
        seed: int | None = None,
        **kwargs: Any,
    ) -> None:
        _positive_int(num_heads, "num_heads")
        _positive_int(key_dim, "key_dim")
        _positive_int(value_dim, "value_dim", allow_none=True)
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"`dropout` must be in [0, 1). Received: dropout={dropout!r}")
        if attention_axes is not None:
            raise ValueError(
                "Only attention over the sequence axis of (batch, seq, features) inputs is "
                f"supported. Received: attention_axes={attention_axes!r}; pass None."
            )
        if isinstance(output_shape, int):
            output_shape = (output_shape,)
        if output_shape is not None and not (
            isinstance(output_shape, (tuple, list))
            and output_shape
            and all(isinstance(d, int) and d > 0 for d in output_shape)
        ):
            raise ValueError(
                "`output_shape` must be a positive int or a tuple of positive ints. "
                f"Received: output_shape={output_shape!r}"
            )
        super().__init__(**kwargs)
        self.num_heads, self.key_dim = num_heads, key_dim
        self.value_dim = value_dim or key_dim
        self.dropout, self.use_bias = float(dropout), use_bias
        self.attention_output_shape = tuple(output_shape) if output_shape else None
        self._dense_args = {
            "use_bias": use_bias,
            "kernel_initializer": kernel_initializer,
            "bias_initializer": bias_initializer,
            "kernel_regularizer": kernel_regularizer,
            "bias_regularizer": bias_regularizer,
        }

    def _dense(self, units: int, name: str) -> Dense:
        return Dense(
            units,
            name=f"{self.name}/{name}",
            dtype=self.dtype_policy if self._explicit_policy else None,
            **self._dense_args,
        )

    def build(  # type: ignore[override]
        self,
        query_shape: Sequence[int],
        value_shape: Sequence[int],
        key_shape: Sequence[int] | None = None,
    ) -> None:
        key_shape = value_shape if key_shape is None else key_shape
        for what, shape in (("query", query_shape), ("value", value_shape), ("key", key_shape)):
            if len(shape) != 3:
                raise ValueError(
                    f"Layer '{self.name}' expects `{what}` of shape (batch, seq, features). "
                    f"Received: {what}.shape={tuple(shape)}"
                )
        if tuple(value_shape[:-1])[1:] != tuple(key_shape[:-1])[1:]:
            raise ValueError(
                "All dimensions of `value` and `key`, except the last one, must be equal. "
                f"Received: value_shape={tuple(value_shape)} and key_shape={tuple(key_shape)}"
            )
        h = self.num_heads
        self.query_dense = self._dense(h * self.key_dim, "query")
        self.key_dense = self._dense(h * self.key_dim, "key")
        self.value_dense = self._dense(h * self.value_dim, "value")
        out = self.attention_output_shape or (int(query_shape[-1]),)
        self.output_dense = self._dense(math.prod(out), "attention_output")
        for layer, shape in (
            (self.query_dense, query_shape),
            (self.key_dense, key_shape),
            (self.value_dense, value_shape),
            (self.output_dense, (1, 1, h * self.value_dim)),
        ):
            layer.build(torch.Size(shape))
            layer.built = True

    # --- masks ------------------------------------------------------------------------------------
    def _combined_mask(
        self,
        query: torch.Tensor,
        value: torch.Tensor,
        query_mask: Any,
        value_mask: Any,
        key_mask: Any,
        attention_mask: Any,
        use_causal_mask: bool,
    ) -> torch.Tensor | None:
        b, t, s = query.shape[0], query.shape[1], value.shape[1]
        mask: torch.Tensor | None = None

        def both(m: torch.Tensor) -> torch.Tensor:
            return m if mask is None else mask & m

        if attention_mask is not None:
            attention_mask = torch.as_tensor(attention_mask, device=query.device)
            dims = tuple(attention_mask.shape)
            fits = len(dims) in (2, 3) and all(d in (1, want) for d, want in zip(dims[::-1], (s, t, b)))
            if not fits:
                raise ValueError(
                    f"Layer '{self.name}' received an attention_mask of shape {dims}, but the query "
                    f"(B, T) = {(b, t)} and the value (B, S) = {(b, s)} need a mask of shape (B, T, S) = "
                    f"{(b, t, s)} (or broadcastable to it, e.g. {(1, t, s)}). Build the mask from the "
                    "query and value lengths, or pass padding masks as query_mask/value_mask."
                )
            mask = attention_mask.bool()
        for m, axis, length, what in (
            (query_mask, -1, t, "query_mask"),
            (value_mask, -2, s, "value_mask"),
            (key_mask, -2, s, "key_mask"),
        ):
            if m is None:
                continue
            m = torch.as_tensor(m, device=query.device).bool()
            if tuple(m.shape) != (b, length):
                raise ValueError(
                    f"Layer '{self.name}' received {what} of shape {tuple(m.shape)}; expected "
                    f"{(b, length)} (batch, steps)."
                )
            mask = both(m.unsqueeze(axis))
        if use_causal_mask:
            mask = both(torch.ones(t, s, dtype=torch.bool, device=query.device).tril().unsqueeze(0))
        return mask

    # --- computation ----------------------------------------------------------------------------
    def _heads(self, x: torch.Tensor, size: int) -> torch.Tensor:
        b, n = x.shape[0], x.shape[1]
        return x.reshape(b, n, self.num_heads, size).transpose(1, 2)  # (B, H, N, size)

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
        self.ensure_built(query.shape, value.shape, key.shape)
        mask = self._combined_mask(query, value, query_mask, value_mask, key_mask, attention_mask, use_causal_mask)
        q = self._heads(self.query_dense(query), self.key_dim)
        k = self._heads(self.key_dense(key), self.key_dim)
        v = self._heads(self.value_dense(value), self.value_dim)
        rate = self.dropout if self._training(training) else 0.0
        scores = None
        if return_attention_scores:
            weights = self._attention_weights(q, k, mask)
            scores = weights
            if rate:
                weights = dropout(weights, rate)
            attended = weights @ v.to(weights.dtype)
        else:
            # Causal only: torch's fused causal kernel (its mask is top-left aligned, as Keras's).
            causal_only = (
                use_causal_mask
                and attention_mask is None
                and query_mask is None
                and value_mask is None
                and key_mask is None
            )
            attended = fused_attention(
                q,
                k,
                v,
                attn_mask=None if causal_only or mask is None else mask.unsqueeze(1),
                dropout_p=rate,
                is_causal=causal_only,
                scale=1.0 / math.sqrt(self.key_dim),
            )
        b, t = query.shape[0], query.shape[1]
        merged = attended.transpose(1, 2).reshape(b, t, self.num_heads * self.value_dim)
        out = self.output_dense(merged)
        if self.attention_output_shape is not None and len(self.attention_output_shape) > 1:
            out = out.reshape(b, t, *self.attention_output_shape)
        set_mask(out, None if query_mask is None else torch.as_tensor(query_mask, device=out.device).bool())
        return (out, scores) if return_attention_scores else out

    def _attention_weights(self, q: torch.Tensor, k: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        """Softmax of the scaled scores, as Keras's masked softmax: masked weights are exactly 0."""
        logits = (q * (1.0 / math.sqrt(self.key_dim))) @ k.transpose(-1, -2)
        if mask is None:
            return torch.softmax(logits, dim=-1)
        m = mask.unsqueeze(1)
        logits = logits.masked_fill(~m, torch.finfo(logits.dtype).min)
        return torch.softmax(logits, dim=-1).masked_fill(~m, 0.0)

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        return mask


__all__ = ["MultiHeadAttention"]
