"""``tf.saved_model`` serving signatures: ``loaded.signatures["serving_default"](x)``.

Shared by the Keras export (:mod:`unison.saved_model.save`) and the module export
(:mod:`unison.saved_model.modules`, whose loaded objects have an empty map), so neither imports
the other for it.

Example:
    >>> import torch
    >>> double = SignatureFunction(lambda x, training: 2 * x, {"inputs": [{"name": "x"}], "outputs": ["y"]})
    >>> _SignatureMap({"serving_default": double})["serving_default"](torch.ones(2))["y"].tolist()
    [2.0, 2.0]
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import torch


class SignatureFunction:
    """A serving signature: call it with the input tensors, get ``{output_name: tensor}``.

    Inputs are given positionally (in the signature's order) or by name, as TF's signature
    functions accept them; the model runs in inference mode without recording gradients.
    """

    def __init__(self, model: Any, spec: dict[str, Any]) -> None:
        self._model = model
        self._spec = spec
        self.input_names: list[str] = [i["name"] for i in spec["inputs"]]
        self.output_names: list[str] = list(spec["outputs"])

    @property
    def structured_outputs(self) -> dict[str, Any]:
        """The outputs' names (TF gives their specs; here the names, each mapped to None)."""
        return dict.fromkeys(self.output_names)

    def __call__(self, *args: Any, **kwargs: Any) -> dict[str, torch.Tensor]:
        inputs = self._inputs(args, kwargs)
        with torch.no_grad():
            out = self._model(inputs[0] if len(inputs) == 1 else inputs, training=False)
        flat = list(out) if isinstance(out, (list, tuple)) else list(out.values()) if isinstance(out, dict) else [out]
        return dict(zip(self.output_names, flat))

    def _inputs(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        names = self.input_names
        if args and kwargs:
            raise TypeError(f"Pass the signature's inputs {names} either all positionally or all by name, not both.")
        if kwargs:
            unknown = sorted(set(kwargs) - set(names))
            if len(names) == 1 and len(kwargs) == 1:
                return list(kwargs.values())  # one input: TF's name for it varies between versions
            if unknown or len(kwargs) != len(names):
                raise TypeError(f"The signature takes inputs named {names}. Received: {sorted(kwargs)}")
            return [kwargs[n] for n in names]
        if len(args) != len(names):
            raise TypeError(f"The signature takes {len(names)} input(s) {names}. Received {len(args)} positional.")
        return [torch.as_tensor(a) if not isinstance(a, torch.Tensor) else a for a in args]

    def __repr__(self) -> str:
        return f"<SignatureFunction inputs={self.input_names} outputs={self.output_names}>"


class _SignatureMap(Mapping[str, SignatureFunction]):
    """``loaded.signatures``: a read-only map of name -> :class:`SignatureFunction`."""

    def __init__(self, signatures: dict[str, SignatureFunction]) -> None:
        self._signatures = signatures

    def __getitem__(self, key: str) -> SignatureFunction:
        if key not in self._signatures:
            raise KeyError(f"No signature {key!r}. The exported signatures are {sorted(self._signatures)}.")
        return self._signatures[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._signatures)

    def __len__(self) -> int:
        return len(self._signatures)

    def __repr__(self) -> str:
        return f"_SignatureMap({self._signatures!r})"
