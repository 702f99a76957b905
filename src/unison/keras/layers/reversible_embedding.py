"""``ReversibleEmbedding`` (Keras 3): an ``Embedding`` that also maps vectors back to logits over
its ids (``reverse=True``), with the table itself (``tie_weights=True``) or a second one.

Example:
    >>> import torch
    >>> layer = ReversibleEmbedding(10, 4)
    >>> h = layer(torch.tensor([[1, 2, 3]]))
    >>> tuple(h.shape), tuple(layer(h, reverse=True).shape)
    ((1, 3, 4), (1, 3, 10))
"""

from __future__ import annotations

from typing import Any

import torch

from unison.keras.layers.core import Embedding
from unison.ops.dtypes import as_dtype


class ReversibleEmbedding(Embedding):
    """Embedding with a reverse projection to ``input_dim`` logits.

    Args:
        input_dim, output_dim, embeddings_initializer, embeddings_regularizer, mask_zero: as ``Embedding``'s.
        tie_weights: reverse with the transposed table (default); ``False`` adds a trained
            ``reverse_embeddings`` of shape ``(output_dim, input_dim)``.
        reverse_dtype: dtype the reverse product runs in (default: the inputs').
        logit_soft_cap: ``tanh(logits / cap) * cap`` on the reverse logits.
    """

    def __init__(
        self,
        input_dim: int,
        output_dim: int,
        tie_weights: bool = True,
        embeddings_initializer: Any = "uniform",
        embeddings_regularizer: Any = None,
        embeddings_constraint: Any = None,
        mask_zero: bool = False,
        reverse_dtype: Any = None,
        logit_soft_cap: float | None = None,
        **kwargs: Any,
    ) -> None:
        if embeddings_constraint is not None:
            kwargs["embeddings_constraint"] = embeddings_constraint
        super().__init__(
            input_dim,
            output_dim,
            embeddings_initializer=embeddings_initializer,
            embeddings_regularizer=embeddings_regularizer,
            mask_zero=mask_zero,
            **kwargs,
        )
        self.tie_weights = bool(tie_weights)
        self.reverse_dtype = reverse_dtype
        self.logit_soft_cap = logit_soft_cap
        if not self.tie_weights:
            init = "random_uniform" if embeddings_initializer == "uniform" else embeddings_initializer
            self.reverse_embeddings = self.add_weight(
                name="reverse_embeddings", shape=(self.output_dim, self.input_dim), initializer=init
            )

    def call(self, inputs: torch.Tensor, reverse: bool = False) -> torch.Tensor:
        if not reverse:
            return super().call(inputs)
        kernel = self.embeddings.t() if self.tie_weights else self.reverse_embeddings
        if not inputs.is_floating_point():
            inputs = inputs.to(kernel.dtype)
        if self.reverse_dtype is not None:
            dtype = as_dtype(self.reverse_dtype)
            inputs, kernel = inputs.to(dtype), kernel.to(dtype)
        logits = inputs @ kernel.to(inputs.dtype)
        if self.logit_soft_cap is not None:
            cap = float(self.logit_soft_cap)
            logits = torch.tanh(logits / cap) * cap
        return logits

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        return None

    def compute_output_shape(self, input_shape: Any, reverse: bool = False) -> Any:
        shape = list(input_shape)
        if reverse:
            shape[-1] = self.input_dim
        else:
            shape.append(self.output_dim)
        return tuple(shape)


__all__ = ["ReversibleEmbedding"]
