"""Keras 3's ``Attention`` (Luong, dot-product) and ``AdditiveAttention`` (Bahdanau) layers.

Both take ``[query, value]`` or ``[query, value, key]`` (``key`` defaults to ``value``), shaped
``(batch, Tq, dim)`` and ``(batch, Tv, dim)``, and return ``(batch, Tq, dim)``:
``scores = f(query, key)`` (``(batch, Tq, Tv)``), ``weights = softmax(scores)`` over ``Tv``,
``output = weights @ value``. Masks follow Keras: ``mask=[query_mask, value_mask]`` (``True`` =
a real step; by default the inputs' Keras masks); a masked value step gets a score lowered by
1e9 (65504 in float16) before the softmax, a masked query step a zero output, and the output's
mask is the query's.

Example:
    >>> import torch
    >>> q, v = torch.ones(1, 2, 3), torch.ones(1, 4, 3)
    >>> out, scores = Attention()([q, v], return_attention_scores=True)
    >>> tuple(out.shape), scores[0, 0].tolist()
    ((1, 2, 3), [0.25, 0.25, 0.25, 0.25])
"""

from __future__ import annotations

from typing import Any

import torch

from unison.keras.layers.masking import MaskedLayer, get_mask, set_mask
from unison.ops.dropout_mask import dropout

_SCORE_MODES = ("dot", "concat")


class Attention(MaskedLayer):
    """Dot-product attention (Keras's ``Attention``, Luong-style).

    Args:
        use_scale: learn a scalar ``scale`` (initialised to 1) that multiplies the scores.
        score_mode: ``"dot"`` (``query @ key^T``) or ``"concat"``
            (``concat_score_weight * sum(tanh(scale * (query + key)))`` over features).
        dropout: rate of dropout on the attention weights (training only).
        seed: seed of that dropout.

    Call arguments:
        inputs: ``[query, value]`` or ``[query, value, key]``.
        mask: ``[query_mask, value_mask]`` (boolean ``(batch, Tq)`` / ``(batch, Tv)``).
        return_attention_scores: also return the attention weights ``(batch, Tq, Tv)``.
        use_causal_mask: query step ``i`` attends only to value steps ``<= i``.
        training: dropout on or off (default: the layer's mode).
    """

    def __init__(
        self,
        use_scale: bool = False,
        score_mode: str = "dot",
        dropout: float = 0.0,
        seed: int | None = None,
        **kwargs: Any,
    ) -> None:
        if score_mode not in _SCORE_MODES:
            raise ValueError(
                f"Invalid value for argument score_mode. Expected one of {list(_SCORE_MODES)}. "
                f"Received: score_mode={score_mode!r}"
            )
        if not 0.0 <= float(dropout) < 1.0:
            raise ValueError(f"`dropout` must be in [0, 1). Received: dropout={dropout!r}")
        super().__init__(**kwargs)
        self.use_scale, self.score_mode = bool(use_scale), score_mode
        self.dropout, self.seed = float(dropout), seed
        self.scale: torch.Tensor | None = None
        self.concat_score_weight: torch.Tensor | None = None
        self._generator: torch.Generator | None = None

    def _check_inputs(self, inputs: Any, mask: Any = None) -> None:
        if not isinstance(inputs, (list, tuple)) or not 2 <= len(inputs) <= 3:
            raise ValueError(
                f"{type(self).__name__} layer '{self.name}' must be called on a list of inputs, "
                f"namely [query, value] or [query, value, key]. Received: inputs={_describe(inputs)}"
            )
        if mask is not None and (not isinstance(mask, (list, tuple)) or not 2 <= len(mask) <= 3):
            raise ValueError(
                f"{type(self).__name__} layer '{self.name}' expects mask as a list "
                f"[query_mask, value_mask]. Received: mask={mask!r}"
            )

    def build(self, input_shape: Any) -> None:
        self._check_inputs(input_shape)
        for what, shape in zip(("query", "value", "key"), input_shape):
            # (batch, steps, features); tf.keras also attends over the next-to-last axis of
            # higher-rank inputs (Conv2D feature maps), the leading axes being batch axes.
            if len(shape) < 3:
                raise ValueError(
                    f"Layer '{self.name}' expects `{what}` of shape (batch, steps, features). "
                    f"Received: {what}.shape={tuple(shape)}; for one vector per example, add a steps "
                    "axis (e.g. layers.Reshape((1, features)))."
                )
        _clear(self, "scale", "concat_score_weight")
        if self.use_scale:
            self.scale = self.add_weight(name="scale", shape=(), initializer="ones")
        else:
            self.scale = None
        if self.score_mode == "concat":
            self.concat_score_weight = self.add_weight(name="concat_score_weight", shape=(), initializer="ones")
        else:
            self.concat_score_weight = None

    def _calculate_scores(self, query: torch.Tensor, key: torch.Tensor) -> torch.Tensor:
        if self.score_mode == "dot":
            if query.shape[-1] != key.shape[-1]:
                raise ValueError(
                    f"score_mode='dot' needs query and key with the same last dimension. "
                    f"Received: query.shape={tuple(query.shape)}, key.shape={tuple(key.shape)}"
                )
            scores = torch.matmul(query, key.transpose(-1, -2))
            return scores * self.scale if self.scale is not None else scores
        summed = query.unsqueeze(-2) + key.unsqueeze(-3)  # (B, Tq, Tv, dim)
        if self.scale is not None:
            summed = self.scale * summed
        assert self.concat_score_weight is not None
        return self.concat_score_weight * torch.tanh(summed).sum(-1)

    def forward(
        self,
        inputs: Any,
        mask: Any = None,
        training: bool | None = None,
        return_attention_scores: bool = False,
        use_causal_mask: bool = False,
    ) -> Any:
        self._check_inputs(inputs, mask)
        if mask is None:
            masks = [get_mask(x) for x in inputs]
            mask = masks if any(m is not None for m in masks) else None
        self.ensure_built([tuple(x.shape) for x in inputs])
        query, value = inputs[0], inputs[1]
        key = inputs[2] if len(inputs) > 2 else value
        q_mask = _as_mask(mask[0]) if mask else None
        v_mask = _as_mask(mask[1]) if mask else None
        scores = self._calculate_scores(query, key)
        allowed = None if v_mask is None else v_mask.unsqueeze(-2)  # (B, 1, Tv)
        if use_causal_mask:
            tq, tv = scores.shape[-2], scores.shape[-1]
            causal = torch.ones(tq, tv, dtype=torch.bool, device=scores.device).tril().unsqueeze(0)
            allowed = causal if allowed is None else allowed & causal
        if allowed is not None:
            big = 65504.0 if scores.dtype == torch.float16 else 1.0e9
            scores = scores - big * (~allowed).to(scores.dtype)
        weights = torch.softmax(scores, dim=-1)
        if self._training(training) and self.dropout > 0:
            weights = self._dropout(weights)
        result = torch.matmul(weights, value)
        if q_mask is not None:
            result = result * q_mask.unsqueeze(-1).to(result.dtype)
        set_mask(result, q_mask)
        return (result, weights) if return_attention_scores else result

    def _dropout(self, weights: torch.Tensor) -> torch.Tensor:
        if self.seed is not None and self._generator is None:  # a seeded layer: the same masks every run
            self._generator = torch.Generator(device=weights.device).manual_seed(int(self.seed))
        return dropout(weights, self.dropout, generator=self._generator)

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        return None if not mask else mask[0]


class AdditiveAttention(Attention):
    """Additive attention (Keras's ``AdditiveAttention``, Bahdanau-style).

    ``scores = sum(scale * tanh(query + key))`` over features, with a learned per-feature
    ``scale`` (glorot-uniform initialised) when ``use_scale=True`` (the default).

    Example:
        >>> import torch
        >>> out = AdditiveAttention()([torch.ones(2, 3, 4), torch.ones(2, 5, 4)])
        >>> tuple(out.shape)
        (2, 3, 4)
    """

    _config_omitted = frozenset({"score_mode"})  # fixed for additive attention: not an argument in Keras

    def __init__(self, use_scale: bool = True, dropout: float = 0.0, **kwargs: Any) -> None:
        super().__init__(use_scale=use_scale, dropout=dropout, **kwargs)

    def build(self, input_shape: Any) -> None:
        self._check_inputs(input_shape)
        dim = int(input_shape[0][-1])
        _clear(self, "scale")
        if self.use_scale:
            self.scale = self.add_weight(name="scale", shape=(dim,), initializer="glorot_uniform")
        else:
            self.scale = None

    def _calculate_scores(self, query: torch.Tensor, key: torch.Tensor) -> torch.Tensor:
        if query.shape[-1] != key.shape[-1]:
            raise ValueError(
                "AdditiveAttention needs query and key with the same last dimension. "
                f"Received: query.shape={tuple(query.shape)}, key.shape={tuple(key.shape)}"
            )
        summed = torch.tanh(query.unsqueeze(-2) + key.unsqueeze(-3))  # (B, Tq, Tv, dim)
        if self.scale is not None:
            summed = self.scale * summed
        return summed.sum(-1)


def _clear(layer: Attention, *names: str) -> None:
    # `scale = None` (set in __init__, as Keras has the attribute before build) must go before
    # add_weight registers a parameter of that name.
    for name in names:
        layer.__dict__.pop(name, None)


def _as_mask(mask: Any) -> torch.Tensor | None:
    return None if mask is None else torch.as_tensor(mask).to(torch.bool)


def _describe(inputs: Any) -> str:
    if isinstance(inputs, torch.Tensor):
        return f"a single tensor of shape {tuple(inputs.shape)}"
    return repr(inputs)


__all__ = ["AdditiveAttention", "Attention"]
