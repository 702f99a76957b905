"""Keras preprocessing layers: ``StringLookup``, ``IntegerLookup``, ``Normalization``,
``Rescaling``, ``CategoryEncoding``, ``Hashing``, ``Discretization``, ``HashedCrossing``.

They take numpy arrays (of ``str``/``bytes`` for strings), lists, or tensors, and return torch
tensors (``int64`` ids, ``float32`` values), so they work on data before ``fit`` and inside a
model. Lookup index layout as Keras: ``[mask_token] + num_oov_indices OOV slots + vocabulary``
(the mask slot only when ``mask_token`` is set). ``adapt`` orders tokens by falling frequency,
ties by the token in descending order (TextVectorization's order).

Hashing and the choice among several OOV slots use TF's hash, so the bins equal TF's: FarmHash's
``Fingerprint64`` of the value's UTF-8 text (integers hashed as their decimal text in
``Hashing``) modulo the number of bins; ``IntegerLookup`` puts an OOV integer in slot
``value % num_oov_indices``, as TF's vocabulary table does. With ``salt`` (an integer ``s``, taken
as the key ``(s, s)``, or a pair of integers), ``Hashing`` uses SipHash-2-4 keyed by it, as TF's
``to_hash_bucket_strong`` does for Keras, so salted bins equal TF's too.

``HashedCrossing`` hashes as TF's ``tf.sparse.cross_hashed`` (what Keras's layer calls): starting
from the key ``0xDECAFCAFFE``, each feature's value is folded in with ``FingerprintCat64`` (an
integer as its 64-bit value, a string as its ``Fingerprint64``), and the result is taken modulo
``num_bins``. ``Discretization.adapt`` computes Keras 3's approximate quantiles (its ``summarize``,
``merge_summaries`` and ``compress_summary``, batch by batch), so the boundaries equal Keras's for
the same batches.

Example:
    >>> import numpy as np
    >>> lookup = StringLookup(vocabulary=["a", "b", "c"])
    >>> lookup(np.array([["a", "c"], ["d", "b"]])).tolist()
    [[1, 3], [0, 2]]
    >>> lookup.get_vocabulary()
    ['[UNK]', 'a', 'b', 'c']
"""

from __future__ import annotations

import collections
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import torch

from unison.keras import dtype_policies
from unison.keras.backend.keras_tensor import SYMBOLIC_STRING
from unison.keras.layers.base import Layer
from unison.keras.layers.preprocessing_layer import PreprocessingLayer
from unison.ops.farmhash import fingerprint64, siphash24
from unison.ops.ragged import RaggedTensor
from unison.ops.string_tensor import StringTensor

_EPSILON = 1e-7  # Keras's backend.epsilon()


def _numpy(data: Any) -> np.ndarray:
    if isinstance(data, torch.Tensor):
        return data.detach().cpu().numpy()
    if hasattr(data, "numpy") and not isinstance(data, np.ndarray):
        return np.asarray(data.numpy())
    return np.asarray(data)


def _batches(data: Any, steps: int | None = None) -> Iterable[np.ndarray]:
    """``adapt``'s data: an array/tensor/list, or an iterable of batches (a tf.data-like dataset),
    of which ``steps`` are read (all when None), as Keras's ``adapt(data, steps=)``."""
    if isinstance(data, (np.ndarray, torch.Tensor, list, tuple)):
        yield _numpy(data)
        return
    if not isinstance(data, Iterable):
        raise ValueError(
            f"adapt() takes an array, a tensor, a list, or an iterable of batches. Received: {type(data).__name__}"
        )
    for i, batch in enumerate(data):
        if steps is not None and i >= steps:
            return
        yield _numpy(batch[0] if isinstance(batch, tuple) else batch)


def stable_hash(value: Any, salt: Any = None) -> int:
    """The documented 64-bit hash of ``value`` (see the module docstring): TF's without ``salt``."""
    if isinstance(value, bytes):
        text = value
    else:
        text = str(value.item() if isinstance(value, np.generic) else value).encode("utf-8")
    if salt is None:
        return fingerprint64(text)
    k0, k1 = _salt_key(salt)
    return siphash24(k0, k1, text)


def _salt_key(salt: Any) -> tuple[int, int]:
    """Keras's ``salt``: an integer (used as both key halves) or a pair of integers."""
    if isinstance(salt, int) and not isinstance(salt, bool):
        return salt & ((1 << 64) - 1), salt & ((1 << 64) - 1)
    if isinstance(salt, (list, tuple)) and len(salt) == 2 and all(isinstance(k, int) for k in salt):
        return salt[0] & ((1 << 64) - 1), salt[1] & ((1 << 64) - 1)
    raise ValueError(
        f"`salt` must be an integer or a tuple/list of two integers (the SipHash key). Received: salt={salt!r}"
    )


class _Preprocessing(Layer):
    """Built at construction; ``call`` takes arrays, lists or tensors."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.built = True

    def forward(self, inputs: Any, **kwargs: Any) -> Any:
        return self.call(inputs, **kwargs)  # keyword arguments of call (CategoryEncoding's count_weights)


class _Lookup(_Preprocessing, PreprocessingLayer):
    _default_mask: Any = None
    _default_oov: Any = None

    def __init__(
        self,
        max_tokens: int | None = None,
        num_oov_indices: int = 1,
        mask_token: Any = None,
        oov_token: Any = None,
        vocabulary: Any = None,
        invert: bool = False,
        output_mode: str = "int",
        encoding: str = "utf-8",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if isinstance(num_oov_indices, bool) or not isinstance(num_oov_indices, int) or num_oov_indices < 0:
            raise ValueError(
                f"`num_oov_indices` must be an integer >= 0. Received: num_oov_indices={num_oov_indices!r}"
            )
        if output_mode == "binary":  # Keras's deprecated name, still accepted (tf.keras 2.5's programs)
            output_mode = "multi_hot"
        if output_mode not in ("int", "one_hot", "multi_hot", "count"):
            raise ValueError(
                "`output_mode` must be one of 'int', 'one_hot', 'multi_hot', 'count'. "
                f"Received: output_mode={output_mode!r}"
            )
        if invert and output_mode != "int":
            raise ValueError(f"`invert=True` needs output_mode='int'. Received: output_mode={output_mode!r}")
        if max_tokens is not None and (not isinstance(max_tokens, int) or max_tokens <= 1):
            raise ValueError(
                f"If set, `max_tokens` must be an integer greater than 1. Received: max_tokens={max_tokens!r}"
            )
        self.max_tokens, self.num_oov_indices, self.invert = max_tokens, num_oov_indices, invert
        self.mask_token = self._convert(mask_token) if mask_token is not None else None
        self.oov_token = self._convert(oov_token if oov_token is not None else self._default_oov)
        self.output_mode, self.encoding = output_mode, encoding
        self._vocab: list[Any] = []
        self._index: dict[Any, int] = {}
        if vocabulary is not None:
            self.set_vocabulary(vocabulary)

    def _convert(self, token: Any) -> Any:
        raise NotImplementedError

    @property
    def _first(self) -> int:
        return (1 if self.mask_token is not None else 0) + self.num_oov_indices

    def set_vocabulary(self, vocabulary: Any) -> None:
        """Use ``vocabulary`` (most useful first; reserved tokens at its start are skipped)."""
        tokens = [self._convert(t) for t in _numpy(vocabulary).reshape(-1).tolist()]
        specials = ([self.mask_token] if self.mask_token is not None else []) + [self.oov_token] * self.num_oov_indices
        if tokens[: len(specials)] == specials and specials:
            tokens = tokens[len(specials) :]
        dup = [t for t, c in collections.Counter(tokens).items() if c > 1]
        reserved = [t for t in tokens if t == self.mask_token or (t == self.oov_token and self.num_oov_indices)]
        if dup or reserved:
            raise ValueError(
                f"The vocabulary must hold distinct tokens and none of the reserved tokens "
                f"(mask_token={self.mask_token!r}, oov_token={self.oov_token!r}). "
                f"Received repeated {dup[:5]} and reserved {reserved[:5]}."
            )
        self._vocab = tokens
        self._index = {t: i + self._first for i, t in enumerate(tokens)}

    def get_vocabulary(self, include_special_tokens: bool = True) -> list[Any]:
        """The tokens in index order (Keras's ``get_vocabulary``)."""
        if not include_special_tokens:
            return list(self._vocab)
        mask = [self.mask_token] if self.mask_token is not None else []
        return mask + [self.oov_token] * self.num_oov_indices + list(self._vocab)

    def vocabulary_size(self) -> int:
        return len(self.get_vocabulary())

    def adapt(self, data: Any, batch_size: int | None = None, steps: int | None = None) -> None:
        """Learn the vocabulary from ``data``: tokens by falling frequency (ties: token descending)."""
        counts: collections.Counter[Any] = collections.Counter()
        for batch in _batches(data, steps):
            counts.update(self._convert(t) for t in batch.reshape(-1).tolist())
        counts.pop(self.mask_token, None)
        if self.num_oov_indices:
            counts.pop(self.oov_token, None)
        ordered = sorted(counts, key=lambda t: (-counts[t], _desc_key(t)))
        if self.max_tokens is not None:
            ordered = ordered[: max(0, self.max_tokens - self._first)]
        self.set_vocabulary(ordered)
        self._is_adapted = True

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        # adapted vocabularies save with the model; none yet is None, as in Keras
        config["vocabulary"] = list(self._vocab) if self._vocab else None
        return config

    def _lookup(self, token: Any) -> int:
        index = self._index.get(token)
        if index is not None:
            return index
        if self.mask_token is not None and token == self.mask_token:
            return 0
        if token == SYMBOLIC_STRING:
            return 0  # a functional model being built: any valid id gives the output's shape and dtype
        if not self.num_oov_indices:
            raise ValueError(
                f"Layer '{self.name}' received {token!r}, which is not in its vocabulary, and it has "
                "num_oov_indices=0. Add the token, or set num_oov_indices >= 1."
            )
        start = 1 if self.mask_token is not None else 0
        if self.num_oov_indices == 1:
            return start
        if isinstance(token, (int, np.integer)) and not isinstance(token, bool):
            return start + int(token) % self.num_oov_indices  # TF's integer vocabulary table: value mod slots
        return start + stable_hash(token) % self.num_oov_indices

    def call(self, inputs: Any) -> Any:
        if isinstance(inputs, RaggedTensor):
            # TF's tokens-then-ids pattern (tf.strings.unicode_split, then StringLookup): the values
            # are looked up, the rows kept; ids back to tokens likewise
            if self.output_mode != "int":
                raise ValueError(
                    f"Layer '{self.name}' got a RaggedTensor with output_mode={self.output_mode!r}; unison "
                    "looks up ragged rows in 'int' mode only. Call .to_tensor() on the rows first."
                )
            return RaggedTensor(self.call(inputs.values), inputs.row_splits)
        device = inputs.device if isinstance(inputs, torch.Tensor) else None
        arr = _numpy(inputs)
        if self.invert:
            vocab = self.get_vocabulary()
            flat = [
                vocab[i] if 0 <= i < len(vocab) else self.oov_token for i in arr.astype("int64").reshape(-1).tolist()
            ]
            if not isinstance(self.oov_token, str):
                return np.array(flat, dtype="int64").reshape(arr.shape)
            # TF's string outputs are bytes (``.numpy().decode("utf-8")`` in TF's text-generation tutorial)
            tokens = np.empty(len(flat), dtype=object)
            tokens[:] = [t.encode(self.encoding) for t in flat]
            return StringTensor(tokens.reshape(arr.shape))
        ids = np.array([self._lookup(self._convert(t)) for t in arr.reshape(-1).tolist()], dtype="int64").reshape(
            arr.shape
        )
        out = torch.as_tensor(ids, device=device)
        if self.output_mode == "int":
            return out
        return CategoryEncoding(self.vocabulary_size(), self.output_mode)(out)


def _desc_key(token: Any) -> Any:
    # Sort key that puts larger tokens first among equal counts.
    if isinstance(token, str):
        return tuple(-ord(c) for c in token) + (1,)
    return -token


class StringLookup(_Lookup):
    """Strings to integer ids over a vocabulary (Keras's ``StringLookup``), or back with ``invert=True``.

    Args:
        max_tokens: vocabulary size including the mask and OOV slots (for ``adapt``).
        num_oov_indices: OOV slots (default 1); several are chosen by hash.
        mask_token: token mapped to 0 (default ``None``: no mask slot).
        oov_token: the token ``get_vocabulary``/``invert`` show for OOV slots (``"[UNK]"``).
        vocabulary: list/array of tokens; or call ``adapt``.
        invert: map ids back to tokens.
        output_mode: ``"int"``, ``"one_hot"``, ``"multi_hot"`` or ``"count"``.
    """

    _default_oov = "[UNK]"

    def _convert(self, token: Any) -> Any:
        return (
            token.decode(self.encoding if hasattr(self, "encoding") else "utf-8")
            if isinstance(token, bytes)
            else str(token)
        )


class IntegerLookup(_Lookup):
    """Integers to contiguous ids over a vocabulary (Keras's ``IntegerLookup``); OOV token -1."""

    _config_omitted = frozenset({"encoding"})  # a StringLookup argument: not listed for integers

    _default_oov = -1

    def _convert(self, token: Any) -> Any:
        if isinstance(token, (bytes, str)) or float(token) != int(token):
            raise ValueError(f"IntegerLookup takes integers. Received: {token!r}")
        return int(token)


def _policy_name(dtype: Any) -> str | None:
    """The dtype policy's name ``dtype`` gives (a name, ``torch.dtype``, policy or its config), else None."""
    if dtype is None:
        return None
    try:
        return dtype_policies.get(dtype).name
    except (TypeError, ValueError):
        return None  # a non-float dtype: the layer computes in float32 as before


class Normalization(_Preprocessing, PreprocessingLayer):
    """``(x - mean) / max(sqrt(variance), 1e-7)`` per feature on ``axis`` (Keras's ``Normalization``).

    Args:
        axis: axis (or axes) with separate statistics; ``None``: one mean/variance for all values.
        mean, variance: the statistics (broadcast to the feature shape); or call ``adapt``.
        invert: apply the inverse, ``x * sqrt(variance) + mean``.
    """

    def __init__(
        self, axis: Any = -1, mean: Any = None, variance: Any = None, invert: bool = False, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        # Keras's dtype="float64" keeps the statistics and computes in float64; float32 otherwise
        self._float = torch.float64 if _policy_name(kwargs.get("dtype")) == "float64" else torch.float32
        if (mean is None) != (variance is None):
            raise ValueError(
                "Pass both mean and variance, or neither (then call adapt()). "
                f"Received: mean={mean!r}, variance={variance!r}"
            )
        self.axis = () if axis is None else ((axis,) if isinstance(axis, int) else tuple(axis))
        self.invert = invert
        if mean is not None:
            self._set(np.asarray(mean, dtype="float32"), np.asarray(variance, dtype="float32"))
            self._set_count(0.0)  # the same state as an adapted layer, so a saved model loads back

    @property
    def mean(self) -> torch.Tensor:
        """The mean in the inputs' broadcast shape, as Keras's ``layer.mean``: ``(1, 9)`` for (n, 9) data."""
        return self._broadcast("mean")

    @property
    def variance(self) -> torch.Tensor:
        """The variance in the inputs' broadcast shape (see :attr:`mean`)."""
        return self._broadcast("variance")

    def _broadcast(self, name: str) -> torch.Tensor:
        # The buffer keeps Keras's weight shape (the kept axes' sizes: what files hold); the
        # attribute is that reshaped to the rank of the inputs (1 on the reduced axes), as Keras
        # reshapes adapt_mean once the input shape is known. AttributeError while there is none,
        # so that nn.Module's register_buffer sees no attribute in the way.
        value = self._buffers.get(name)
        if value is None:
            raise AttributeError(f"Normalization layer '{self.name}' has no {name} yet.")
        shape = self.__dict__.get("_broadcast_shape")
        if shape is None:
            return value
        if value.numel() == int(np.prod(shape)):
            return value.reshape(shape)
        return value.reshape(()).expand(shape) if value.numel() == 1 else value

    def _note_input_rank(self, shape: Sequence[int]) -> None:
        keep = {a % len(shape) for a in self.axis} if shape else set()
        self.__dict__["_broadcast_shape"] = tuple(int(shape[a]) if a in keep else 1 for a in range(len(shape)))

    @property
    def compute_dtype(self) -> str:
        """``"float64"`` for ``dtype="float64"`` (its inputs stay float64), else ``"float32"``."""
        return "float64" if self._float == torch.float64 else "float32"

    def _set(self, mean: np.ndarray, variance: np.ndarray) -> None:
        for name, value in (("mean", mean), ("variance", variance)):
            tensor = torch.as_tensor(value, dtype=self._float)
            old = self._buffers.get(name)
            if old is not None:
                self._buffers[name] = tensor.to(old.device)
            else:
                self.register_buffer(name, tensor)

    def _stat(self, name: str) -> torch.Tensor:
        value = self._buffers.get(name)
        if value is None:
            raise ValueError(
                f"Normalization layer '{self.name}' has no {name} yet. Pass mean= and variance=, "
                "or call layer.adapt(data) before using it."
            )
        return value

    def adapt(self, data: Any, batch_size: int | None = None, steps: int | None = None) -> None:
        """Compute mean and variance of ``data`` over every axis but ``axis``."""
        arr = np.concatenate(
            [b.astype("float64").reshape((-1, *b.shape[1:])) if b.ndim else b.reshape(1) for b in _batches(data, steps)]
        )
        keep = tuple(a % arr.ndim for a in self.axis)
        reduce = tuple(a for a in range(arr.ndim) if a not in keep)
        mean = arr.mean(axis=reduce, keepdims=True)
        var = arr.var(axis=reduce, keepdims=True)
        shape = [arr.shape[a] for a in sorted(keep)]  # Keras's shape: the kept axes' sizes, e.g. (3,)
        self._set(mean.reshape(shape), var.reshape(shape))  # float64 sums, stored in the layer's dtype
        self._note_input_rank(arr.shape)
        self._set_count(float(np.prod([arr.shape[a] for a in reduce])))
        self._is_adapted = True

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        if "mean" in self._buffers:
            config["mean"], config["variance"] = self._stat("mean").tolist(), self._stat("variance").tolist()
        return config

    def _initial_state(self, shape: tuple[int, ...]) -> None:
        """Keras 3's state of a layer neither given statistics nor adapted: mean 0, variance 1, count 0.

        Such a layer passes its inputs through unchanged (as Keras's does) until ``adapt`` or loaded
        weights set the statistics; EfficientNet's input normalisation starts this way.
        """
        # Keras's weight shape: the sizes of the kept axes only ((3,) for images' channels, axis=-1)
        dims = [shape[a] for a in sorted({a % len(shape) for a in self.axis})]
        self._set(np.zeros(dims, dtype="float32"), np.ones(dims, dtype="float32"))
        self._set_count(0.0)

    def _set_count(self, count: float) -> None:
        # Keras keeps the number of adapted samples as a weight (an int64 scalar); a float64 buffer
        # here, so that it is one of the layer's weights as in Keras (unison lists float states only).
        self.register_buffer("count", torch.tensor(count, dtype=torch.float64))

    def call(self, inputs: Any) -> torch.Tensor:
        x = torch.as_tensor(inputs, dtype=self._float)
        if "mean" not in self._buffers:
            self._initial_state(tuple(x.shape))
        mean, var = self._stat("mean").to(x.device), self._stat("variance").to(x.device)
        if "_broadcast_shape" not in self.__dict__:
            self._note_input_rank(tuple(x.shape))
        keep = tuple(a % x.dim() for a in self.axis)
        if keep:  # as Keras: statistics given per feature of `axis` broadcast along that axis, not the last
            shape = [x.shape[a] if a in keep else 1 for a in range(x.dim())]
            if mean.numel() == int(np.prod(shape)):
                mean, var = mean.reshape(shape), var.reshape(shape)
        if self.invert:
            return x * torch.sqrt(var) + mean
        return (x - mean) / torch.clamp(torch.sqrt(var), min=_EPSILON)


class Rescaling(_Preprocessing):
    """``inputs * scale + offset`` as float32 (Keras's ``Rescaling``, e.g. ``scale=1/255``)."""

    def __init__(self, scale: Any, offset: Any = 0.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        # A number, or (as in Keras 3) one value per channel, broadcast over the last axis.
        self.scale, self.offset = _scalar_or_list(scale, "scale"), _scalar_or_list(offset, "offset")

    def call(self, inputs: Any) -> torch.Tensor:
        x = torch.as_tensor(inputs).to(torch.float32)
        scale, offset = self.scale, self.offset
        if isinstance(scale, list):
            return x * x.new_tensor(scale) + (x.new_tensor(offset) if isinstance(offset, list) else offset)
        return x * scale + (x.new_tensor(offset) if isinstance(offset, list) else offset)


def _scalar_or_list(value: Any, what: str) -> float | list[float]:
    if isinstance(value, (list, tuple, np.ndarray, torch.Tensor)):
        values = np.asarray(value.tolist() if isinstance(value, torch.Tensor) else value, dtype="float64")
        return [float(v) for v in values.reshape(-1)] if values.ndim else float(values)
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(
            f"Rescaling's {what} must be a number or a list of numbers. Received: {what}={value!r}"
        ) from None


class CategoryEncoding(_Preprocessing):
    """Integer ids in ``[0, num_tokens)`` to one-hot, multi-hot or count vectors (float32).

    ``one_hot`` adds a last axis (replacing a last axis of size 1); ``multi_hot``/``count`` reduce
    the last axis (a 1-D input is one sample).
    """

    _config_omitted = frozenset({"sparse"})  # Keras takes sparse= but does not list it

    def __init__(self, num_tokens: int, output_mode: str = "multi_hot", sparse: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if isinstance(num_tokens, bool) or not isinstance(num_tokens, int) or num_tokens < 1:
            raise ValueError(f"num_tokens must be a positive integer. Received: num_tokens={num_tokens!r}")
        if output_mode == "binary":  # Keras's deprecated name for "multi_hot"
            output_mode = "multi_hot"
        if output_mode not in ("one_hot", "multi_hot", "count"):
            raise ValueError(
                f"output_mode must be 'one_hot', 'multi_hot' or 'count'. Received: output_mode={output_mode!r}"
            )
        if sparse:
            raise NotImplementedError("sparse=True is not supported: unison returns dense tensors.")
        self.num_tokens, self.output_mode = num_tokens, output_mode

    def call(self, inputs: Any, count_weights: Any = None) -> torch.Tensor:
        if count_weights is None:
            return _category_encode(inputs, self.num_tokens, self.output_mode, self.name)
        if self.output_mode != "count":
            raise ValueError(
                f"Layer '{self.name}': `count_weights` is only used with output_mode='count'. "
                f"Received: output_mode={self.output_mode!r}; pass output_mode='count' or drop count_weights."
            )
        # Keras: each id adds its weight (instead of 1) to its count
        ids = torch.as_tensor(_numpy(inputs) if not isinstance(inputs, torch.Tensor) else inputs).long()
        _category_encode(ids, self.num_tokens, "count", self.name)  # checks the range of the ids
        weights = torch.as_tensor(
            _numpy(count_weights) if not isinstance(count_weights, torch.Tensor) else count_weights
        )
        counts = torch.zeros((*ids.shape[:-1], self.num_tokens), dtype=torch.float32, device=ids.device)
        return counts.scatter_add_(-1, ids, weights.to(torch.float32).to(ids.device).expand(ids.shape))


def _category_encode(inputs: Any, num_tokens: int, output_mode: str, name: str) -> torch.Tensor:
    """``CategoryEncoding``'s computation (also Discretization's and HashedCrossing's encoded outputs)."""
    ids = torch.as_tensor(_numpy(inputs) if not isinstance(inputs, torch.Tensor) else inputs).long()
    if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= num_tokens):
        raise ValueError(
            f"Layer '{name}': input values must be in the range 0 <= values < num_tokens="
            f"{num_tokens}. Received values from {int(ids.min())} to {int(ids.max())}."
        )
    if output_mode == "one_hot":
        if ids.dim() > 1 and ids.shape[-1] == 1:
            ids = ids.squeeze(-1)
        return torch.nn.functional.one_hot(ids, num_tokens).to(torch.float32)
    counts = torch.zeros((*ids.shape[:-1], num_tokens), dtype=torch.float32, device=ids.device)
    counts.scatter_add_(-1, ids, torch.ones_like(ids, dtype=torch.float32))
    return counts if output_mode == "count" else (counts > 0).to(torch.float32)


def _hash_output_dtype(dtype: Any, output_mode: str, layer: str) -> tuple[str, torch.dtype]:
    """Keras's output dtype of Hashing/HashedCrossing: ``dtype`` if given, else int64 ids (``"int"``)
    or float32 vectors; its name (what ``get_config`` saves) and the torch dtype outputs take."""
    from unison.ops.dtypes import as_dtype

    if isinstance(dtype, dict):  # a serialised DTypePolicy
        dtype = (dtype.get("config") or {}).get("name")
    if dtype is None:
        dtype = "int64" if output_mode == "int" else "float32"
    name = str(dtype).removeprefix("torch.") if isinstance(dtype, torch.dtype) else dtype
    resolved = as_dtype(name) if isinstance(name, str) else None
    if not isinstance(resolved, torch.dtype) or resolved == torch.bool:
        raise ValueError(
            f"{layer}'s dtype must name a numeric dtype, such as 'int64' or 'float32'. Received: dtype={dtype!r}"
        )
    return name, resolved


class Hashing(_Preprocessing):
    """Values (strings or integers) to ``num_bins`` bins by a deterministic hash (see the module doc).

    With ``mask_value`` set, that value maps to bin 0 and the others to ``1..num_bins-1``.
    """

    def __init__(
        self,
        num_bins: int,
        mask_value: Any = None,
        salt: Any = None,
        output_mode: str = "int",
        sparse: bool = False,
        **kwargs: Any,
    ) -> None:
        dtype = kwargs.pop("dtype", None)
        super().__init__(**kwargs)
        # Keras's Hashing outputs (and saves as its dtype policy) int64 ids, else this dtype
        self._output_dtype = _hash_output_dtype(dtype, output_mode, "Hashing")
        if sparse:
            raise ValueError(
                "Hashing(sparse=True) is not supported by unison: its outputs are dense tensors. Leave sparse out."
            )
        self.sparse = False
        least = 2 if mask_value is not None else 1
        if isinstance(num_bins, bool) or not isinstance(num_bins, int) or num_bins < least:
            raise ValueError(
                f"num_bins must be a positive integer (>= 2 with mask_value). Received: num_bins={num_bins!r}"
            )
        if output_mode not in ("int", "one_hot", "multi_hot", "count"):
            raise ValueError(
                "`output_mode` must be one of 'int', 'one_hot', 'multi_hot', 'count'. "
                f"Received: output_mode={output_mode!r}"
            )
        if salt is not None:
            _salt_key(salt)  # a bad salt fails here, not at the first call
        self.num_bins, self.mask_value, self.salt, self.output_mode = num_bins, mask_value, salt, output_mode

    def _bin(self, value: Any) -> int:
        if isinstance(value, bytes):
            value = value.decode("utf-8")
        if self.mask_value is not None and value == self.mask_value:
            return 0
        if self.mask_value is not None:
            return 1 + stable_hash(value, self.salt) % (self.num_bins - 1)
        return stable_hash(value, self.salt) % self.num_bins

    def call(self, inputs: Any) -> torch.Tensor:
        device = inputs.device if isinstance(inputs, torch.Tensor) else None
        arr = _numpy(inputs)
        bins = np.array([self._bin(v) for v in arr.reshape(-1).tolist()], dtype="int64").reshape(arr.shape)
        out = _encode(torch.as_tensor(bins, device=device), self.num_bins, self.output_mode, "Hashing")
        return out.to(self._output_dtype[1])

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        name = self._output_dtype[0]
        config["dtype"] = {
            "module": "keras",
            "class_name": "DTypePolicy",
            "config": {"name": name},
            "registered_name": None,
        }
        return config


_CROSS_KEY = 0xDECAFCAFFE  # tf.sparse.cross_hashed's default hash_key
_CAT_MUL = 0xC6A4A7935BD1E995
_M64 = (1 << 64) - 1


def _shift_mix(v: int) -> int:
    return v ^ (v >> 47)


def fingerprint_cat64(fp1: int, fp2: int) -> int:
    """TF's ``FingerprintCat64``: combines two 64-bit fingerprints (order matters)."""
    result = fp1 ^ _CAT_MUL
    result ^= (_shift_mix((fp2 * _CAT_MUL) & _M64) * _CAT_MUL) & _M64
    result = (result * _CAT_MUL) & _M64
    result = (_shift_mix(result) * _CAT_MUL) & _M64
    return _shift_mix(result)


def _encode(ids: torch.Tensor, depth: int, output_mode: str, name: str) -> torch.Tensor:
    """Keras's ``encode_categorical_inputs``: ids as they are (``int``) or one/multi-hot/count vectors."""
    if output_mode == "int":
        return ids
    return _category_encode(ids, depth, output_mode, name)


class Discretization(_Preprocessing, PreprocessingLayer):
    """Buckets continuous values by ranges (Keras's ``Discretization``).

    ``bin_boundaries=[0., 1., 2.]`` gives the bins ``(-inf, 0)``, ``[0, 1)``, ``[1, 2)``,
    ``[2, inf)``; or ``num_bins=`` and ``adapt(data)`` learn boundaries from Keras's approximate
    quantiles (within ``epsilon``). ``output_mode``: ``"int"`` (bin ids, int32), ``"one_hot"``,
    ``"multi_hot"`` or ``"count"`` (float32 vectors of ``len(bin_boundaries) + 1``).

    Example:
        >>> import numpy as np
        >>> layer = Discretization(bin_boundaries=[0.0, 1.0, 2.0])
        >>> layer(np.array([[-1.5, 1.0, 3.4, 0.5]])).tolist()
        [[0, 2, 3, 1]]
    """

    def __init__(
        self,
        bin_boundaries: Any = None,
        num_bins: int | None = None,
        epsilon: float = 0.01,
        output_mode: str = "int",
        sparse: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if sparse:
            raise NotImplementedError("sparse=True is not supported: unison returns dense tensors.")
        if output_mode not in ("int", "one_hot", "multi_hot", "count"):
            raise ValueError(
                "`output_mode` must be one of 'int', 'one_hot', 'multi_hot', 'count'. "
                f"Received: output_mode={output_mode!r}"
            )
        if num_bins is not None and num_bins < 0:
            raise ValueError(f"`num_bins` must be greater than or equal to 0. Received: `num_bins={num_bins}`")
        if num_bins is not None and bin_boundaries is not None:
            raise ValueError(
                "Both `num_bins` and `bin_boundaries` should not be set. "
                f"Received: `num_bins={num_bins}` and `bin_boundaries={bin_boundaries}`"
            )
        if num_bins is None and bin_boundaries is None:
            raise ValueError("You need to set either `num_bins` or `bin_boundaries`.")
        self.bin_boundaries = None if bin_boundaries is None else [float(b) for b in bin_boundaries]
        self.num_bins, self.epsilon, self.output_mode, self.sparse = num_bins, epsilon, output_mode, sparse
        self.summary: np.ndarray | None = None if self.bin_boundaries else np.array([[], []], dtype="float32")

    def adapt(self, data: Any, batch_size: int | None = None, steps: int | None = None) -> None:
        """Learn ``num_bins - 1`` boundaries from ``data``'s quantiles (an array, or batches of a dataset)."""
        if self.num_bins is None:
            raise ValueError(
                "Cannot adapt a Discretization layer that has been initialized with `bin_boundaries`, "
                "use `num_bins` instead."
            )
        self.reset_state()
        batches: Iterable[Any] = data  # a dataset, a list or a generator of batches (Keras iterates a list too)
        if isinstance(data, (np.ndarray, torch.Tensor, StringTensor)) or not isinstance(data, Iterable):
            batches = [data]
        for i, batch in enumerate(batches):
            if steps is not None and i >= steps:
                break
            self.update_state(batch[0] if isinstance(batch, tuple) else batch)
        self.finalize_state()
        self._is_adapted = True

    def update_state(self, data: Any) -> None:
        summary = _summarize(_numpy(data).astype("float32"), self.epsilon)
        self.summary = _merge_summaries(summary, self.summary, self.epsilon)

    def finalize_state(self) -> None:
        if self.num_bins is not None and self.summary is not None:
            self.bin_boundaries = _compress_summary(self.summary, 1.0 / self.num_bins)[0, :-1].tolist()

    def reset_state(self) -> None:
        if self.num_bins is not None:
            self.summary = np.array([[], []], dtype="float32")

    def call(self, inputs: Any) -> torch.Tensor:
        if self.bin_boundaries is None:
            raise ValueError(
                f"Discretization layer '{self.name}' has no bin boundaries yet: pass "
                "`bin_boundaries=` at construction, or call `layer.adapt(data)` (with `num_bins=`) "
                "before using it."
            )
        x = inputs if isinstance(inputs, torch.Tensor) else torch.as_tensor(_numpy(inputs))
        x = x.to(torch.float32)
        boundaries = torch.tensor(self.bin_boundaries, dtype=torch.float32, device=x.device)
        # numpy.digitize: b[i-1] <= x < b[i]; int32 ids, as Keras's (TF's Bucketize gives int32)
        ids = torch.bucketize(x, boundaries, right=True, out_int32=True)
        return _encode(ids, len(self.bin_boundaries) + 1, self.output_mode, self.name)

    def get_config(self) -> dict[str, Any]:
        return {
            **super().get_config(),
            "bin_boundaries": self.bin_boundaries,
            "num_bins": self.num_bins,
            "epsilon": self.epsilon,
            "output_mode": self.output_mode,
            "sparse": self.sparse,
        }

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Discretization:
        config = dict(config)
        config.pop("dtype", None)
        boundaries = config.get("bin_boundaries")
        if boundaries is not None and config.get("num_bins") is not None:
            config.pop("bin_boundaries")  # an adapted layer: both are set, __init__ takes one
            layer = cls(**config)
            layer.bin_boundaries = list(boundaries)
            return layer
        return cls(**config)


def _summarize(values: np.ndarray, epsilon: float) -> np.ndarray:
    # Keras 3's discretization.summarize: every ``step``-th sorted value, weight ``step``.
    values = np.sort(np.reshape(values, [-1]))
    step = max(np.size(values) / (1.0 / epsilon), 1)
    boundaries = values[int(step - 1) :: int(step)]
    return np.stack([boundaries, np.ones_like(boundaries) * step])


def _merge_summaries(prev: np.ndarray, nxt: np.ndarray | None, epsilon: float) -> np.ndarray:
    merged = prev if nxt is None else np.concatenate((prev, nxt), axis=1)
    merged = np.take(merged, np.argsort(merged[0]), axis=1)
    return _compress_summary(merged, epsilon)


def _compress_summary(summary: np.ndarray, epsilon: float) -> np.ndarray:
    # Keras 3's compress_summary: interpolate values at evenly spaced cumulative-weight fractions.
    if summary.shape[1] * epsilon < 1:
        return summary
    percents = epsilon + np.arange(0.0, 1.0, epsilon)
    cum_weights = summary[1].cumsum()
    cum_weight_percents = cum_weights / cum_weights[-1]
    new_bins = np.interp(percents, cum_weight_percents, summary[0])
    cum_weights = np.interp(percents, cum_weight_percents, cum_weights)
    new_weights = cum_weights - np.concatenate((np.array([0]), cum_weights[:-1]))
    return np.stack((new_bins, new_weights)).astype("float32")


class HashedCrossing(_Preprocessing):
    """Crosses categorical features by hashing (Keras's ``HashedCrossing``), with TF's bins.

    Called on a list/tuple of at least two integer or string features of equal shape ``()``,
    ``(batch,)`` or ``(batch, 1)``; returns ``hash(values) % num_bins`` (int64, that shape), or
    with ``output_mode="one_hot"`` float32 one-hot vectors of ``num_bins``.

    Example:
        >>> import numpy as np
        >>> layer = HashedCrossing(num_bins=5)
        >>> layer((np.array(["A", "B", "A", "B", "A"]), np.array([101, 101, 101, 102, 102]))).tolist()
        [1, 4, 1, 1, 3]
    """

    def __init__(self, num_bins: int, output_mode: str = "int", sparse: bool = False, **kwargs: Any) -> None:
        dtype = kwargs.pop("dtype", None)
        super().__init__(**kwargs)
        self._output_dtype = _hash_output_dtype(dtype, output_mode, "HashedCrossing")
        if isinstance(num_bins, bool) or not isinstance(num_bins, int) or num_bins < 1:
            raise ValueError(f"`num_bins` must be a positive integer. Received: num_bins={num_bins!r}")
        if output_mode not in ("int", "one_hot"):
            raise ValueError(f"`output_mode` must be one of 'int', 'one_hot'. Received: output_mode={output_mode!r}")
        if sparse:
            raise NotImplementedError("sparse=True is not supported: unison returns dense tensors.")
        self.num_bins, self.output_mode, self.sparse = num_bins, output_mode, sparse

    def call(self, inputs: Any) -> torch.Tensor:
        if not isinstance(inputs, (list, tuple)) or len(inputs) < 2:
            raise ValueError(
                "`HashedCrossing` should be called on a list or tuple of at least two inputs. "
                f"Received: inputs={inputs!r:.200}"
            )
        device = next((x.device for x in inputs if isinstance(x, torch.Tensor)), None)
        arrays = [_numpy(x) for x in inputs]
        shape = arrays[0].shape
        if len(shape) > 2 or (len(shape) == 2 and shape[-1] != 1):
            raise ValueError(
                "All `HashedCrossing` inputs should have shape `()`, `(batch_size)` or `(batch_size, 1)`. "
                f"Received shapes: {[a.shape for a in arrays]}"
            )
        if any(a.shape != shape for a in arrays[1:]):
            raise ValueError(
                f"All `HashedCrossing` inputs should have equal shape. Received: {[a.shape for a in arrays]}"
            )
        columns = []
        for a in arrays:
            if a.dtype.kind in "iu":
                columns.append([int(v) & _M64 for v in a.reshape(-1).tolist()])
            elif a.dtype.kind in "OSU":
                columns.append([_string_fingerprint(v) for v in a.reshape(-1).tolist()])
            else:
                raise ValueError(
                    f"All `HashedCrossing` inputs should have an integer or string dtype. Received: {a.dtype}"
                )
        out = []
        for row in zip(*columns):
            hashed = _CROSS_KEY
            for value in row:
                hashed = fingerprint_cat64(hashed, value)
            out.append(hashed % self.num_bins)
        ids = torch.as_tensor(np.array(out, dtype="int64").reshape(shape), device=device)
        return _encode(ids, self.num_bins, self.output_mode, self.name).to(self._output_dtype[1])

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        config.update(num_bins=self.num_bins, output_mode=self.output_mode, sparse=self.sparse)
        config["dtype"] = self._output_dtype[0]  # Keras's HashedCrossing saves the dtype's name, not a policy
        del config["trainable"]  # Keras's HashedCrossing config has no trainable flag (it has no weights)
        return config


def _string_fingerprint(value: Any) -> int:
    if isinstance(value, bytes):
        return fingerprint64(value)
    if isinstance(value, str):
        return fingerprint64(value.encode("utf-8"))
    raise ValueError(
        f"All `HashedCrossing` inputs should have an integer or string dtype. Received the value {value!r}"
    )


__all__ = [
    "CategoryEncoding",
    "Discretization",
    "HashedCrossing",
    "Hashing",
    "IntegerLookup",
    "Normalization",
    "Rescaling",
    "StringLookup",
    "fingerprint_cat64",
    "stable_hash",
]
