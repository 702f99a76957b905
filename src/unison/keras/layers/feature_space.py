"""``keras.utils.FeatureSpace``: preprocess and encode a dict of structured (tabular) features.

Keras 3's semantics: each feature gets a preprocessing layer (``Normalization``, ``Rescaling``,
``Discretization``, ``IntegerLookup``, ``StringLookup``, ``Hashing`` or the user's own),
``crosses`` hash value co-occurrences with ``HashedCrossing`` (of the *preprocessed* values, as
Keras does), features with ``output_mode="one_hot"`` are one-hot encoded with ``CategoryEncoding``,
and ``output_mode="concat"`` concatenates everything, in the order of the sorted feature names
then the sorted cross names, into one float32 vector per sample (``"dict"`` returns the encoded
features by name). ``adapt(dataset)`` learns every adaptable layer's state from a dataset of dicts
(or a dict of arrays). The space is then called on a dict of batched (or single) values, e.g. in
``dataset.map(lambda x, y: (feature_space(x), y))``.

``get_inputs()`` gives a dict of ``keras.Input`` (shape ``(1,)``, the feature's dtype) and
``get_encoded_features()`` the symbolic encoded tensor(s) computed from them, so that
``keras.Model(inputs=feature_space.get_inputs(), outputs=...)`` runs the preprocessing inside the
model on raw values. As in Keras 3, the encoded features can also be the *inputs* of a model
(``keras.Model(inputs=encoded_features, outputs=predictions)``, the training model of keras.io's
example): the tensor ``get_encoded_features()`` returns is both the space's output and usable as
a model input.

A model built from the space saves and loads (``model.save``/``keras.models.load_model``: the
space's config holds its layers' adapted state); ``FeatureSpace.save`` on its own and ``sparse``
outputs are not provided.

Example:
    >>> import numpy as np
    >>> space = FeatureSpace({"x": "float_normalized", "c": "string_categorical"}, crosses=[("c", "c")])
    >>> space.adapt({"x": np.array([1.0, 3.0]), "c": np.array(["a", "b"])})
    >>> tuple(space({"x": np.array([2.0]), "c": np.array(["a"])}).shape)
    (1, 36)
"""

from __future__ import annotations

import builtins
import collections
from collections.abc import Iterable
from typing import Any

import numpy as np
import torch
from torch import nn

from unison.keras.backend.keras_tensor import SYMBOLIC_STRING, Input, KerasTensor, Node
from unison.keras.layers.base import Layer
from unison.keras.layers.preprocessing import (
    CategoryEncoding,
    Discretization,
    HashedCrossing,
    Hashing,
    IntegerLookup,
    Normalization,
    Rescaling,
    StringLookup,
)
from unison.ops.string_tensor import StringTensor

FEATURE_TYPES = (
    "float",
    "float_rescaled",
    "float_normalized",
    "float_discretized",
    "integer_categorical",
    "string_categorical",
    "integer_hashed",
    "string_hashed",
)
_ADAPT_BATCH = 32  # Keras batches unbatched data by 32 for adapt()
_NAMES: collections.Counter[str] = collections.Counter()


def _auto_name(prefix: str) -> str:
    n = _NAMES[prefix]
    _NAMES[prefix] += 1
    return prefix if n == 0 else f"{prefix}_{n}"


class Cross:
    """A feature cross: ``feature_names`` hashed together into ``crossing_dim`` bins."""

    def __init__(self, feature_names: Any, crossing_dim: int, output_mode: str = "one_hot") -> None:
        if output_mode not in ("int", "one_hot"):
            raise ValueError(
                "Invalid value for argument `output_mode` of a cross. Expected one of {'int', 'one_hot'}. "
                f"Received: output_mode={output_mode!r}"
            )
        if isinstance(feature_names, str) or len(tuple(feature_names)) < 2:
            raise ValueError(
                "A cross needs at least two feature names, e.g. FeatureSpace.cross(('a', 'b'), crossing_dim=32). "
                f"Received: feature_names={feature_names!r}"
            )
        self.feature_names = tuple(feature_names)
        self.crossing_dim = crossing_dim
        self.output_mode = output_mode

    @property
    def name(self) -> str:
        return "_X_".join(self.feature_names)

    def get_config(self) -> dict[str, Any]:
        return {"feature_names": self.feature_names, "crossing_dim": self.crossing_dim, "output_mode": self.output_mode}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Cross:
        return cls(**config)

    def __repr__(self) -> str:
        return f"Cross(feature_names={self.feature_names}, crossing_dim={self.crossing_dim}, output_mode={self.output_mode!r})"


class Feature:
    """A feature: its input ``dtype``, its ``preprocessor`` layer and its ``output_mode``."""

    def __init__(self, dtype: str, preprocessor: Any, output_mode: str) -> None:
        if output_mode not in ("int", "one_hot", "float"):
            raise ValueError(
                "Invalid value for argument `output_mode` of a feature. Expected one of {'int', 'one_hot', "
                f"'float'}}. Received: output_mode={output_mode!r}"
            )
        if not callable(preprocessor):
            raise ValueError(
                f"A feature's preprocessor must be a layer (callable). Received: preprocessor={preprocessor!r}"
            )
        self.dtype = dtype
        self.preprocessor = preprocessor
        self.output_mode = output_mode

    def get_config(self) -> dict[str, Any]:
        config = self.preprocessor.get_config() if hasattr(self.preprocessor, "get_config") else {}
        return {
            "dtype": self.dtype,
            "preprocessor": {"class_name": type(self.preprocessor).__name__, "config": config},
            "output_mode": self.output_mode,
        }

    def __repr__(self) -> str:
        return f"Feature(dtype={self.dtype!r}, preprocessor={type(self.preprocessor).__name__}, output_mode={self.output_mode!r})"


class _Identity(Layer):
    """``FeatureSpace.float``'s preprocessor: the values as float32."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.pop("dtype", None)
        super().__init__(**kwargs)
        self.built = True

    def forward(self, inputs: Any) -> Any:
        return self.call(inputs)

    def call(self, inputs: Any) -> torch.Tensor:
        return _tensor(inputs, torch.float32)


class FeatureSpace(Layer):
    """One-stop preprocessing and encoding of structured data (Keras's ``keras.utils.FeatureSpace``).

    Args:
        features: ``{name: type}``, the type a name (``"float"``, ``"float_rescaled"``,
            ``"float_normalized"``, ``"float_discretized"``, ``"integer_categorical"``,
            ``"string_categorical"``, ``"integer_hashed"``, ``"string_hashed"``, with the default
            arguments) or what ``FeatureSpace.<type>(...)`` / ``FeatureSpace.feature(...)`` returns.
        output_mode: ``"concat"`` (one float32 vector per sample) or ``"dict"``.
        crosses: tuples of feature names, or ``FeatureSpace.cross(...)``, to hash together.
        crossing_dim: bins of a cross given as a tuple (default 32).
        hashing_dim: bins of ``"integer_hashed"``/``"string_hashed"`` given by name (default 32).
        num_discretization_bins: bins of ``"float_discretized"`` given by name (default 32).
    """

    # ---- the feature constructors (Keras's classmethods) ----------------------------------
    @classmethod
    def cross(cls, feature_names: Any, crossing_dim: int, output_mode: str = "one_hot") -> Cross:
        return Cross(feature_names, crossing_dim, output_mode=output_mode)

    @classmethod
    def feature(cls, dtype: str, preprocessor: Any, output_mode: str) -> Feature:
        return Feature(dtype, preprocessor, output_mode)

    @classmethod
    def float(cls, name: str | None = None) -> Feature:  # type: ignore[override]  # Keras's name; hides Module.float()
        name = name or _auto_name("float")
        return Feature("float32", _Identity(name=f"{name}_preprocessor"), "float")

    @classmethod
    def float_rescaled(
        cls, scale: builtins.float = 1.0, offset: builtins.float = 0.0, name: str | None = None
    ) -> Feature:
        name = name or _auto_name("float_rescaled")
        return Feature("float32", Rescaling(scale=scale, offset=offset, name=f"{name}_preprocessor"), "float")

    @classmethod
    def float_normalized(cls, name: str | None = None) -> Feature:
        name = name or _auto_name("float_normalized")
        return Feature("float32", Normalization(axis=-1, name=f"{name}_preprocessor"), "float")

    @classmethod
    def float_discretized(
        cls,
        num_bins: int | None = None,
        bin_boundaries: Any = None,
        output_mode: str = "one_hot",
        name: str | None = None,
    ) -> Feature:
        """Keras's ``float_discretized``; with ``bin_boundaries`` the bins are fixed (``num_bins`` unused),
        where Keras passes both to ``Discretization`` and fails."""
        name = name or _auto_name("float_discretized")
        if bin_boundaries is not None:
            layer = Discretization(bin_boundaries=bin_boundaries, name=f"{name}_preprocessor")
        else:
            if num_bins is None:
                raise ValueError("FeatureSpace.float_discretized() needs num_bins= (or bin_boundaries=).")
            layer = Discretization(num_bins=num_bins, name=f"{name}_preprocessor")
        return Feature("float32", layer, output_mode)

    @classmethod
    def integer_categorical(
        cls,
        max_tokens: int | None = None,
        num_oov_indices: int = 1,
        output_mode: str = "one_hot",
        name: str | None = None,
    ) -> Feature:
        name = name or _auto_name("integer_categorical")
        layer = IntegerLookup(name=f"{name}_preprocessor", max_tokens=max_tokens, num_oov_indices=num_oov_indices)
        return Feature("int32", layer, output_mode)

    @classmethod
    def string_categorical(
        cls,
        max_tokens: int | None = None,
        num_oov_indices: int = 1,
        output_mode: str = "one_hot",
        name: str | None = None,
    ) -> Feature:
        name = name or _auto_name("string_categorical")
        layer = StringLookup(name=f"{name}_preprocessor", max_tokens=max_tokens, num_oov_indices=num_oov_indices)
        return Feature("string", layer, output_mode)

    @classmethod
    def string_hashed(cls, num_bins: int, output_mode: str = "one_hot", name: str | None = None) -> Feature:
        name = name or _auto_name("string_hashed")
        return Feature("string", Hashing(name=f"{name}_preprocessor", num_bins=num_bins), output_mode)

    @classmethod
    def integer_hashed(cls, num_bins: int, output_mode: str = "one_hot", name: str | None = None) -> Feature:
        name = name or _auto_name("integer_hashed")
        return Feature("int32", Hashing(name=f"{name}_preprocessor", num_bins=num_bins), output_mode)

    # ---- construction ----------------------------------------------------------------------
    def __init__(
        self,
        features: dict[str, Any],
        output_mode: str = "concat",
        crosses: Any = None,
        crossing_dim: int = 32,
        hashing_dim: int = 32,
        num_discretization_bins: int = 32,
        name: str | None = None,
    ) -> None:
        super().__init__(name=name)
        if not features or not isinstance(features, dict):
            raise ValueError(
                "The `features` argument must be a non-empty dict mapping feature names to their types, "
                f"e.g. {{'age': 'float_normalized'}}. Received: features={features!r:.200}"
            )
        if output_mode not in ("dict", "concat"):
            raise ValueError(
                f"Invalid value for argument `output_mode`. Expected one of {{'dict', 'concat'}}. "
                f"Received: output_mode={output_mode!r}"
            )
        self.crossing_dim, self.hashing_dim = crossing_dim, hashing_dim
        self.num_discretization_bins = num_discretization_bins
        self.output_mode = output_mode
        self.features = {name: self._standardize_feature(name, value) for name, value in features.items()}
        self.crosses: list[Cross] = []
        for cross in crosses or []:
            if not isinstance(cross, Cross):
                if not crossing_dim:
                    raise ValueError(
                        "When specifying `crosses`, the argument `crossing_dim` (dimensionality of the "
                        "crossing space) should be specified as well."
                    )
                cross = Cross(cross, crossing_dim=crossing_dim)
            self._check_cross(cross)
            self.crosses.append(cross)
        self.crosses_by_name = {cross.name: cross for cross in self.crosses}
        self.inputs = {
            name: Input(shape=(1,), dtype=feature.dtype, name=name) for name, feature in self.features.items()
        }
        self.preprocessors = {name: feature.preprocessor for name, feature in self.features.items()}
        self.crossers = {cross.name: HashedCrossing(cross.crossing_dim, name=cross.name) for cross in self.crosses}
        self.one_hot_encoders: dict[str, CategoryEncoding] = {}
        # The layers as torch submodules too, so that a model holding the space moves their state.
        self._preprocessor_layers = nn.ModuleList(p for p in self.preprocessors.values() if isinstance(p, nn.Module))
        self._crosser_layers = nn.ModuleList(self.crossers.values())
        self.encoded_features: Any = None
        self._is_adapted = False
        self._sublayers_built = False
        self.built = True

    def _standardize_feature(self, name: str, feature: Any) -> Feature:
        if isinstance(feature, Feature):
            return feature
        constructors = {
            "float": lambda: self.float(name=name),
            "float_normalized": lambda: self.float_normalized(name=name),
            "float_rescaled": lambda: self.float_rescaled(name=name),
            "float_discretized": lambda: self.float_discretized(name=name, num_bins=self.num_discretization_bins),
            "integer_categorical": lambda: self.integer_categorical(name=name),
            "string_categorical": lambda: self.string_categorical(name=name),
            "integer_hashed": lambda: self.integer_hashed(self.hashing_dim, name=name),
            "string_hashed": lambda: self.string_hashed(self.hashing_dim, name=name),
        }
        if isinstance(feature, str) and feature in constructors:
            return constructors[feature]()
        raise ValueError(
            f"Invalid feature type for feature {name!r}: {feature!r}. Use one of {list(FEATURE_TYPES)}, "
            "or what FeatureSpace.<type>(...) returns (e.g. FeatureSpace.float_normalized()), or "
            "FeatureSpace.feature(dtype=..., preprocessor=<a layer>, output_mode=...)."
        )

    def _check_cross(self, cross: Cross) -> None:
        missing = [n for n in cross.feature_names if n not in self.features]
        if missing:
            raise ValueError(
                "All features referenced in the `crosses` argument should be present in the `features` dict. "
                f"The cross {cross.feature_names} names {missing}, which `features` lacks (it has "
                f"{sorted(self.features)}). Add them to `features`, or cross only features listed there."
            )
        floats = [
            n
            for n in cross.feature_names
            if isinstance(self.features[n].preprocessor, (_Identity, Normalization, Rescaling))
        ]
        if floats:
            raise ValueError(
                f"The cross {cross.feature_names} includes the float feature(s) {floats}, whose preprocessed "
                "values are not categories. Cross categorical, hashed or discretized features (e.g. make "
                "the feature 'float_discretized')."
            )

    # ---- adapt -----------------------------------------------------------------------------
    def _list_adaptable_preprocessors(self) -> list[str]:
        names = []
        for name in self.features:
            preprocessor = self.preprocessors[name]
            if isinstance(preprocessor, Normalization) and "mean" in preprocessor._buffers:
                continue  # preset mean and variance
            if isinstance(preprocessor, Discretization) and preprocessor.num_bins is None:
                continue  # preset bin boundaries
            if hasattr(preprocessor, "adapt"):
                names.append(name)
        return names

    def adapt(self, dataset: Any) -> None:
        """Learn each adaptable layer's state (vocabularies, mean and variance, bin boundaries)
        from ``dataset``: a ``tf.data.Dataset`` of dicts of features (no labels) or a dict of arrays."""
        batches = self._feature_batches(dataset)
        for name in self._list_adaptable_preprocessors():
            self.preprocessors[name].adapt(iter(batches[name]))
        self._is_adapted = True
        self.get_encoded_features()  # finish building the layer
        self._sublayers_built = True

    def _feature_batches(self, dataset: Any) -> dict[str, list[Any]]:
        """Every feature's values, batch by batch as ``dataset`` yields them, each batch of shape (n, ...)."""
        if isinstance(dataset, dict):
            columns = {name: _values(value) for name, value in dataset.items()}
            self._check_keys(columns, "adapt()'s dict")
            size = len(next(iter(columns.values())))
            elements: Iterable[Any] = (
                {name: columns[name][i : i + _ADAPT_BATCH] for name in self.features}
                for i in range(0, size, _ADAPT_BATCH)
            )
        elif isinstance(dataset, Iterable) and not isinstance(dataset, (str, bytes, np.ndarray, torch.Tensor)):
            elements = dataset
        else:
            raise ValueError(
                "`adapt()` can only be called on a tf.data.Dataset (of dicts of features) or a dict of "
                f"arrays/lists. Received instead: {dataset!r:.200} (of type {type(dataset).__name__})"
            )
        batches: dict[str, list[Any]] = {name: [] for name in self.features}
        pending: dict[str, list[Any]] = {name: [] for name in self.features}  # unbatched elements
        for element in elements:
            if not isinstance(element, dict):
                hint = (
                    " It yields (features, labels) pairs: pass dataset.map(lambda x, y: x)."
                    if isinstance(element, tuple)
                    else ""
                )
                raise ValueError(
                    "FeatureSpace.adapt() needs a dataset whose elements are dicts of features. Received an "
                    f"element of type {type(element).__name__}.{hint}"
                )
            self._check_keys(element, "the dataset's elements")
            for name in self.features:
                value = _values(element[name])
                if value.ndim == 0:  # unbatched: Keras batches by 32
                    pending[name].append(value)
                    if len(pending[name]) == _ADAPT_BATCH:
                        batches[name].append(np.stack(pending[name])[:, None])
                        pending[name] = []
                else:
                    batches[name].append(value[:, None] if value.ndim == 1 else value)
        for name, rest in pending.items():
            if rest:
                batches[name].append(np.stack(rest)[:, None])
        empty = [name for name, b in batches.items() if not b]
        if empty:
            raise ValueError(f"FeatureSpace.adapt() got no data for the feature(s) {empty}: the dataset is empty.")
        return batches

    def _check_keys(self, data: dict[str, Any], what: str) -> None:
        missing = [name for name in self.features if name not in data]
        if missing:
            raise ValueError(
                f"The FeatureSpace's features {missing} are missing from {what} (its keys: {sorted(data)}). "
                "Pass a dict with a value for every feature named in FeatureSpace(features=...)."
            )

    # ---- the Keras functional API ------------------------------------------------------------
    def get_inputs(self) -> dict[str, KerasTensor]:
        """The dict of ``keras.Input`` (one per feature, shape ``(1,)``) the encoded features come from."""
        self._check_if_built()
        return self.inputs

    def get_encoded_features(self) -> Any:
        """The symbolic encoded features (one tensor in ``"concat"`` mode, a dict in ``"dict"`` mode)."""
        self._check_if_adapted()
        if self.encoded_features is None:
            self.encoded_features = self._symbolic(self.inputs)
        return self.encoded_features

    def _symbolic(self, inputs: dict[str, KerasTensor]) -> Any:
        """One graph node, the space itself, from the ``keras.Input`` tensors ``inputs`` (one per feature)."""
        inputs = {name: inputs[name] for name in self.features}
        example = {name: self._example(name, kt) for name, kt in inputs.items()}
        out = self._encode(example)
        node = Node(self, (inputs,), {})
        structure = out if isinstance(out, dict) else {"": out}
        tensors = {}
        for key, value in structure.items():
            kt = KerasTensor(value, node, f"{self.name}_{key}" if key else self.name)
            node.outputs.append(kt)
            tensors[key] = kt
        encoded = tensors if isinstance(out, dict) else tensors[""]
        node.structured_outputs = encoded
        self.__dict__.setdefault("_inbound_nodes", []).append(node)
        return encoded

    def _example(self, name: str, kt: KerasTensor) -> Any:
        """The symbolic input's example, with a known token for lookups that reject unknown ones."""
        value = kt._example
        preprocessor = self.preprocessors[name]
        if isinstance(preprocessor, (IntegerLookup, StringLookup)) and preprocessor.num_oov_indices == 0:
            vocab = preprocessor.get_vocabulary(include_special_tokens=False)
            if vocab and not (isinstance(value, np.ndarray) and value.flat[0] == SYMBOLIC_STRING):
                return torch.full(tuple(value.shape), int(vocab[0]), dtype=value.dtype, device=value.device)
        return value

    def _check_if_adapted(self) -> None:
        if not self._is_adapted:
            if self._list_adaptable_preprocessors():
                raise ValueError(
                    f"FeatureSpace {self.name!r} has not been adapted: its features "
                    f"{self._list_adaptable_preprocessors()} learn their state from data. Call "
                    "`feature_space.adapt(dataset)` on a dataset of dicts of training features (no labels, "
                    "e.g. train_ds.map(lambda x, y: x)) before calling it or building a model from it."
                )
            self._is_adapted = True

    def _check_if_built(self) -> None:
        if not self._sublayers_built:
            self._check_if_adapted()
            self.get_encoded_features()
            self._sublayers_built = True

    # ---- calling -------------------------------------------------------------------------------
    def __call__(self, data: Any, *args: Any, **kwargs: Any) -> Any:
        self._check_if_built()
        if not isinstance(data, dict):
            raise ValueError(
                f"A FeatureSpace can only be called with a dict of features. Received: data={data!r:.200} "
                f"(of type {type(data).__name__})"
            )
        self._check_keys(data, "the dict passed")
        if all(isinstance(data[name], KerasTensor) for name in self.features):
            return self._symbolic(data)  # a model being rebuilt from its saved config
        if any(isinstance(v, KerasTensor) for v in data.values()):
            raise ValueError(
                "FeatureSpace got a dict mixing symbolic (keras.Input) tensors and values. For a model use "
                "feature_space.get_inputs() and feature_space.get_encoded_features()."
            )
        values, rebatched = {}, False
        for name in self.features:
            value = _values(data[name])
            if value.ndim == 0:
                value, rebatched = value.reshape(1, 1), True
            elif value.ndim == 1:
                value = value[:, None]
            values[name] = value
        merged = self._encode(values)
        if rebatched:
            if isinstance(merged, dict):
                merged = {k: v.squeeze(0) if v.ndim == 2 and v.shape[0] == 1 else v for k, v in merged.items()}
            else:
                merged = merged.squeeze(0)
        return merged

    def forward(self, data: Any) -> Any:
        return self(data)

    def _encode(self, values: dict[str, Any]) -> Any:
        device = next((v.device for v in values.values() if isinstance(v, torch.Tensor)), torch.device("cpu"))
        values = {name: _typed(values[name], self.features[name].dtype) for name in self.features}
        preprocessed = {name: self.preprocessors[name](values[name]) for name in self.features}
        crossed = {
            cross.name: self.crossers[cross.name]([preprocessed[n] for n in cross.feature_names])
            for cross in self.crosses
        }
        names = sorted(preprocessed) + sorted(crossed)
        specs: dict[str, Any] = {**self.features, **self.crosses_by_name}
        outputs: dict[str, Any] = {}
        for name in names:
            feature = preprocessed[name] if name in preprocessed else crossed[name]
            if specs[name].output_mode == "one_hot":
                feature = self._one_hot(name, feature)
            if isinstance(feature, torch.Tensor):
                feature = feature.to(device)
            if self.output_mode == "concat" and not (isinstance(feature, torch.Tensor) and feature.is_floating_point()):
                raise ValueError(
                    f"Cannot concatenate features because feature {name!r} has not been encoded (it has "
                    f"dtype {getattr(feature, 'dtype', type(feature).__name__)}). Give it output_mode='one_hot' "
                    "or 'float', or use FeatureSpace(output_mode='dict')."
                )
            outputs[name] = feature
        if self.output_mode == "dict":
            return outputs
        return torch.cat([outputs[n].to(torch.float32) for n in names], dim=-1)

    def _one_hot(self, name: str, feature: Any) -> torch.Tensor:
        encoder = self.one_hot_encoders.get(name)
        if encoder is None:
            if not (isinstance(feature, torch.Tensor) and not feature.is_floating_point()):
                raise ValueError(
                    f"Feature {name!r} has `output_mode='one_hot'`. Thus its preprocessor should return an "
                    f"integer dtype. Instead it returns {getattr(feature, 'dtype', type(feature).__name__)}."
                )
            preprocessor = self.preprocessors.get(name) or self.crossers.get(name)
            if isinstance(preprocessor, (IntegerLookup, StringLookup)):
                cardinality = preprocessor.vocabulary_size()
            elif isinstance(preprocessor, CategoryEncoding):
                cardinality = preprocessor.num_tokens
            elif isinstance(preprocessor, Discretization):
                cardinality = (
                    preprocessor.num_bins
                    if preprocessor.num_bins is not None
                    else len(preprocessor.bin_boundaries or []) + 1
                )
            elif isinstance(preprocessor, (HashedCrossing, Hashing)):
                cardinality = preprocessor.num_bins
            else:
                raise ValueError(
                    f"Feature {name!r} has `output_mode='one_hot'`. However it isn't a standard feature and "
                    "the dimensionality of its output space is not known, thus it cannot be one-hot encoded. "
                    "Try using `output_mode='int'`."
                )
            encoder = CategoryEncoding(num_tokens=cardinality, output_mode="multi_hot")
            self.one_hot_encoders[name] = encoder
        return encoder(feature)

    def get_config(self) -> dict[str, Any]:
        """The space's arguments with each layer's config (adapted state included: vocabularies,
        mean and variance, bin boundaries), so ``load_model`` rebuilds an adapted space."""
        return {
            "name": self.name,
            "features": {name: feature.get_config() for name, feature in self.features.items()},
            "output_mode": self.output_mode,
            "crosses": [cross.get_config() for cross in self.crosses],
            "crossing_dim": self.crossing_dim,
            "hashing_dim": self.hashing_dim,
            "num_discretization_bins": self.num_discretization_bins,
            "adapted": self._is_adapted,
        }

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> FeatureSpace:
        config = dict(config)
        adapted = bool(config.pop("adapted", False))
        features = {}
        for name, feature in config.pop("features").items():
            if isinstance(feature, dict) and "preprocessor" in feature:
                feature = Feature(feature["dtype"], _layer_from_config(feature["preprocessor"]), feature["output_mode"])
            features[name] = feature
        crosses = [Cross(**c) if isinstance(c, dict) else c for c in config.pop("crosses", None) or []]
        space = cls(features=features, crosses=crosses, **config)
        space._is_adapted = adapted
        return space

    def save(self, filepath: Any) -> None:
        raise NotImplementedError(
            "FeatureSpace.save() is not provided by unison. Save a model built from the space "
            "(keras.Model(feature_space.get_inputs(), ...).save(...)): load_model rebuilds the adapted space in it."
        )


_PREPROCESSORS = {
    cls.__name__: cls
    for cls in (
        _Identity,
        CategoryEncoding,
        Discretization,
        HashedCrossing,
        Hashing,
        IntegerLookup,
        Normalization,
        Rescaling,
        StringLookup,
    )
}


def _layer_from_config(entry: dict[str, Any]) -> Any:
    cls = _PREPROCESSORS.get(entry.get("class_name", ""))
    if cls is None:
        raise ValueError(
            f"FeatureSpace.from_config() rebuilds unison's preprocessing layers {sorted(_PREPROCESSORS)}; the "
            f"config names {entry.get('class_name')!r}. Rebuild a space with that preprocessor in code."
        )
    return cls.from_config(dict(entry.get("config", {})))


def _values(value: Any) -> Any:
    """A feature's values: a torch tensor for numbers, a numpy array for strings."""
    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, StringTensor) or (hasattr(value, "numpy") and not isinstance(value, np.ndarray)):
        value = value.numpy()
    array = np.asarray(value)
    if array.dtype.kind in "OSU":
        return array.astype(object) if array.dtype.kind != "O" else array
    return torch.as_tensor(array)


def _typed(value: Any, dtype: str) -> Any:
    if dtype == "string" or not isinstance(value, torch.Tensor):
        return value
    if dtype.startswith("float"):
        return value.to(torch.float32)
    if dtype.startswith("int") and value.is_floating_point():
        return value.to(torch.int64)
    return value


def _tensor(value: Any, dtype: torch.dtype) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        return value.to(dtype)
    return torch.as_tensor(np.asarray(value), dtype=dtype)


__all__ = ["Cross", "Feature", "FeatureSpace"]
