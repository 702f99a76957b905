"""How functions, their arguments and their results travel between coordinator and workers.

Functions go once, with cloudpickle (code defined in the user's ``__main__`` travels by value).
The pickler takes a ``reduce`` hook: the strategy uses it to turn parameters into references to
their parameter-server variables, embedding tables into remote lookups, optimizers into
gradient pushers and metrics into accumulators, so a function's payload carries no weights.
Per step, arguments and results are a JSON tree plus raw tensors (:func:`encode_tree`); only an
object that is neither a tensor, a number, a string nor a container of those falls back to
pickle. Workers unpickle only after the server checked the cluster token.

Example:
    >>> import torch
    >>> tree, tensors = encode_tree({"x": torch.ones(2), "n": (3, "a")})
    >>> tree["__dict"]["n"], len(tensors)
    ({'__tuple': [3, 'a']}, 1)
    >>> decode_tree(tree, tensors)["x"].tolist()
    [1.0, 1.0]
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import cloudpickle
import torch

Reduce = Callable[[Any], Any]  # obj -> a pickle reduce tuple, or NotImplemented


class _Pickler(cloudpickle.CloudPickler):
    def __init__(self, file: io.BytesIO, reduce: Reduce | None) -> None:
        super().__init__(file, protocol=5)
        self._reduce_hook = reduce

    def reducer_override(self, obj: Any) -> Any:
        if self._reduce_hook is not None:
            reduced = self._reduce_hook(obj)
            if reduced is not NotImplemented:
                return reduced
        return super().reducer_override(obj)


def dumps(obj: Any, reduce: Reduce | None = None) -> bytes:
    """cloudpickle ``obj``; ``reduce`` may replace any object inside it by a reduce tuple."""
    buffer = io.BytesIO()
    _Pickler(buffer, reduce).dump(obj)
    return buffer.getvalue()


def loads(data: bytes) -> Any:
    """Unpickle bytes from :func:`dumps` (only ever after the cluster token was checked)."""
    return cloudpickle.loads(data)


def as_bytes_tensor(data: bytes) -> torch.Tensor:
    return torch.frombuffer(bytearray(data), dtype=torch.uint8) if data else torch.empty(0, dtype=torch.uint8)


def bytes_of(t: torch.Tensor) -> bytes:
    return t.numpy().tobytes()


def encode_tree(
    obj: Any, ref: Callable[[Any], str | None] = lambda o: None, reduce: Reduce | None = None
) -> tuple[Any, list[torch.Tensor]]:
    """``obj`` as a JSON-able tree plus its tensors; ``ref(o)`` names per-worker resources."""
    tensors: list[torch.Tensor] = []

    def enc(o: Any) -> Any:
        if isinstance(o, torch.Tensor) and not isinstance(o, torch.nn.Parameter):
            tensors.append(o.detach())
            return {"__t": len(tensors) - 1}
        if o is None or isinstance(o, (bool, int, float, str)):
            return o
        if isinstance(o, list):
            return [enc(x) for x in o]
        if isinstance(o, tuple) and type(o) is tuple:
            return {"__tuple": [enc(x) for x in o]}
        if type(o) is dict and all(isinstance(k, str) for k in o):
            return {"__dict": {k: enc(v) for k, v in o.items()}}
        name = ref(o)
        if name is not None:
            return {"__r": name}
        tensors.append(as_bytes_tensor(dumps(o, reduce)))
        return {"__p": len(tensors) - 1}

    return enc(obj), tensors


def decode_tree(tree: Any, tensors: list[torch.Tensor], resolve: Callable[[str], Any] = lambda n: None) -> Any:
    """The inverse of :func:`encode_tree`; ``resolve(name)`` returns a named resource."""

    def dec(o: Any) -> Any:
        if isinstance(o, list):
            return [dec(x) for x in o]
        if not isinstance(o, dict):
            return o
        if "__t" in o:
            return tensors[o["__t"]]
        if "__tuple" in o:
            return tuple(dec(x) for x in o["__tuple"])
        if "__dict" in o:
            return {k: dec(v) for k, v in o["__dict"].items()}
        if "__r" in o:
            return resolve(o["__r"])
        return loads(bytes_of(tensors[o["__p"]]))

    return dec(tree)


__all__ = ["as_bytes_tensor", "bytes_of", "decode_tree", "dumps", "encode_tree", "loads"]
