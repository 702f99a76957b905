"""``keras.layers.TorchModuleWrapper``: a ``torch.nn.Module`` used as a Keras layer (Keras 3).

unison's layers are ``torch.nn.Module``\\ s, so the wrapped module is simply a child: its
parameters are the layer's weights (``weights``, ``trainable_weights``, ``get_weights``,
``save_weights``/``load_weights`` and the optimizer see them), ``trainable = False`` freezes
them, and ``model.save`` keeps the module itself in the layer's config (pickled by
``torch.save``, as Keras does, base64 text in the JSON). Loading such a config unpickles it, so,
as in Keras, ``from_config`` refuses unless given ``safe_mode=False`` (``load_model(path,
safe_mode=False)`` passes it on): load only files you trust.

Example:
    >>> import torch
    >>> layer = TorchModuleWrapper(torch.nn.Linear(3, 2))
    >>> tuple(layer(torch.zeros(4, 3)).shape), [tuple(w.shape) for w in layer.trainable_weights]
    ((4, 2), [(2, 3), (2,)])
"""

from __future__ import annotations

import base64
import io
from typing import Any

import torch
from torch import nn

from unison.keras.layers.base import Layer
from unison.keras.saving.safe_mode import current_safe_mode


class TorchModuleWrapper(Layer):
    """Wrap ``module`` (any ``torch.nn.Module``) as a Keras layer.

    Args:
        module: the module; its ``forward`` is the layer's call.
        output_shape: the output's shape (without batch), for ``compute_output_shape``; by
            default it is found by running the module.
    """

    def __init__(self, module: nn.Module, name: str | None = None, output_shape: Any = None, **kwargs: Any) -> None:
        if not isinstance(module, nn.Module):
            raise ValueError(
                f"TorchModuleWrapper takes a torch.nn.Module. Received: module={module!r:.80} of type "
                f"{type(module).__name__}."
            )
        super().__init__(name=name, **kwargs)
        self.module = module
        self.wrapped_output_shape = None if output_shape is None else tuple(output_shape)
        self.built = True

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.pop("training", None)  # the module follows the layer's train()/eval() mode
        return self.module(*args, **kwargs)

    def call(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    def compute_output_shape(self, input_shape: Any) -> Any:
        if self.wrapped_output_shape is not None:
            return (input_shape[0], *self.wrapped_output_shape)
        return super().compute_output_shape(input_shape)

    def get_config(self) -> dict[str, Any]:
        buffer = io.BytesIO()
        torch.save(self.module, buffer)
        return {
            "name": self.name,
            "trainable": self.trainable,
            "module": base64.b64encode(buffer.getvalue()).decode("ascii"),
            "output_shape": None if self.wrapped_output_shape is None else list(self.wrapped_output_shape),
        }

    @classmethod
    def from_config(cls, config: dict[str, Any], safe_mode: bool | None = None) -> TorchModuleWrapper:
        config = dict(config)
        module = config.pop("module")
        if isinstance(module, (str, bytes, bytearray)):
            allowed = safe_mode if safe_mode is not None else current_safe_mode()
            if allowed is not False:
                raise ValueError(
                    "Requested the deserialization of a `torch.nn.Module` object via `torch.load()`. This carries "
                    "a potential risk of arbitrary code execution and thus it is disallowed by default. If you "
                    "trust the source of the artifact, pass `safe_mode=False` to the loading function "
                    "(keras.models.load_model(path, safe_mode=False) or TorchModuleWrapper.from_config(config, "
                    "safe_mode=False))."
                )
            raw = base64.b64decode(module) if isinstance(module, str) else bytes(module)
            # a whole pickled module, as Keras stores it (weights_only=False unpickles code: trusted files only)
            module = torch.load(io.BytesIO(raw), weights_only=False)
        trainable = config.pop("trainable", True)
        layer = cls(module, **config)
        layer.trainable = trainable
        return layer


__all__ = ["TorchModuleWrapper"]
