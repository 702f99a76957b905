"""``TextVectorization``: strings to token ids (or multi-hot/count vectors), as Keras 3.

Each string is standardised (lower-cased, punctuation stripped), split (on whitespace),
optionally extended with n-grams, and looked up in the vocabulary. In ``"int"`` mode id 0 is
padding and id 1 the out-of-vocabulary token ``"[UNK]"``; in ``"multi_hot"``/``"count"``/``"tf_idf"``
mode there is no padding token and index 0 counts OOV tokens. ``"tf_idf"`` weighs each count by
the token's inverse document frequency, ``log(1 + documents / (1 + documents holding the token))``
over the strings ``adapt`` saw (the OOV column by the mean of the vocabulary's weights), as Keras. ``adapt`` learns the vocabulary:
tokens by falling frequency, ties broken by the token in descending order (Keras's order).

This is a preprocessing layer: it runs in Python on strings, has no weights, and returns
``torch.int64`` ids (``float32`` vectors in the multi-hot/count/tf-idf modes; Keras 3 under TF gives
``int64`` multi-hot/count vectors).

Example:
    >>> layer = TextVectorization(output_sequence_length=4)
    >>> layer.adapt(["foo bar", "bar baz", "baz bada boom"])
    >>> layer(["foo qux bar", "qux baz"]).tolist()
    [[4, 1, 3, 0], [1, 2, 0, 0]]
"""

from __future__ import annotations

import collections
import itertools
import os
import string
from collections.abc import Iterable
from typing import Any

import numpy as np
import torch

from unison.keras.layers.preprocessing_layer import PreprocessingLayer

DEFAULT_STRIP_REGEX = r'[!"#$%&()\*\+,-\./:;<=>?@\[\\\]^_`{|}~\']'
_STANDARDIZE = ("lower_and_strip_punctuation", "lower", "strip_punctuation")
_SPLIT = ("whitespace", "character")
_MODES = ("int", "multi_hot", "count", "tf_idf")
PAD, OOV = "", "[UNK]"


# DEFAULT_STRIP_REGEX's characters (ASCII punctuation) removed by str.translate: the same result as
# re.sub(DEFAULT_STRIP_REGEX, "", text) for every character, several times faster
_STRIP_TABLE = str.maketrans("", "", string.punctuation)
_SEPARATOR = "\x00"  # joins a batch's strings for one pass of the standardisation (never punctuation)
_BOUNDARY = " \x00 "  # joins a batch's strings for one whitespace split: a token of its own marks each end


def _standardize_text(text: str, mode: str) -> str:
    if mode in ("lower", "lower_and_strip_punctuation"):
        text = text.lower()
    if mode in ("strip_punctuation", "lower_and_strip_punctuation"):
        text = text.translate(_STRIP_TABLE)
    return text


def _check_choice(value: Any, name: str, choices: tuple[str, ...]) -> None:
    if value is None or callable(value) or value in choices:
        return
    raise ValueError(
        f"Received an invalid value for `{name}`: expected one of {list(choices)}, None or a "
        f"callable. Received: {name}={value!r}"
    )


class TextVectorization(PreprocessingLayer):
    """Map strings to token ids (Keras 3's ``TextVectorization``).

    Args:
        max_tokens: vocabulary size including the special tokens (``""`` and ``"[UNK]"`` in
            ``"int"`` mode, ``"[UNK]"`` otherwise); ``None`` for no limit.
        standardize: ``"lower_and_strip_punctuation"`` (default), ``"lower"``,
            ``"strip_punctuation"``, ``None``, or a callable on a numpy array of strings.
        split: ``"whitespace"`` (default), ``"character"``, ``None`` (one token per string), or
            a callable mapping a list of strings to a list of token lists.
        ngrams: ``None``, an int ``n`` (1..n-grams) or a tuple of n-gram sizes.
        output_mode: ``"int"`` (default), ``"multi_hot"``, ``"count"`` or ``"tf_idf"``.
        output_sequence_length: ``"int"`` mode: pad with 0 or truncate to this length
            (default: pad to the longest string of the batch).
        pad_to_max_tokens: multi-hot/count: output ``max_tokens`` columns.
        vocabulary: a list of tokens, or the path of a file with one token per line.
        idf_weights: ``"tf_idf"`` mode with a given ``vocabulary``: one weight per token (required
            there, as in Keras); ``adapt`` computes them otherwise.
        encoding: how ``bytes`` inputs are decoded.
    """

    def __init__(
        self,
        max_tokens: int | None = None,
        standardize: Any = "lower_and_strip_punctuation",
        split: Any = "whitespace",
        ngrams: int | tuple[int, ...] | None = None,
        output_mode: str = "int",
        output_sequence_length: int | None = None,
        pad_to_max_tokens: bool = False,
        vocabulary: Any = None,
        idf_weights: Any = None,
        encoding: str = "utf-8",
        name: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(name=name, **kwargs)
        _check_choice(standardize, "standardize", _STANDARDIZE)
        _check_choice(split, "split", _SPLIT)
        if output_mode == "binary":
            output_mode = "multi_hot"
        if output_mode not in _MODES:
            raise ValueError(
                f"Received an invalid value for `output_mode`: expected one of {list(_MODES)}. "
                f"Received: output_mode={output_mode!r}"
            )
        if max_tokens is not None and (
            isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens <= 1
        ):
            raise ValueError(
                f"If set, `max_tokens` must be an integer greater than 1. Received: max_tokens={max_tokens!r}"
            )
        if output_sequence_length is not None and output_mode != "int":
            raise ValueError(
                "`output_sequence_length` must not be set if `output_mode` is not 'int'. "
                f"Received: output_sequence_length={output_sequence_length!r}"
            )
        if output_sequence_length is not None and (
            isinstance(output_sequence_length, bool)
            or not isinstance(output_sequence_length, int)
            or output_sequence_length < 1
        ):
            raise ValueError(
                "`output_sequence_length` must be None or a positive integer. "
                f"Received: output_sequence_length={output_sequence_length!r}"
            )
        if isinstance(ngrams, int) and not isinstance(ngrams, bool):
            ngrams = tuple(range(1, ngrams + 1))
        if ngrams is not None and not (isinstance(ngrams, tuple) and all(isinstance(n, int) and n > 0 for n in ngrams)):
            raise ValueError(f"`ngrams` must be None, an integer, or a tuple of integers. Received: ngrams={ngrams!r}")
        if output_mode == "tf_idf" and vocabulary is not None and idf_weights is None:
            raise ValueError(
                "When specifying the `vocabulary` argument, in TF-IDF output mode, the `idf_weights` argument "
                "must also be provided (one weight per token), or call adapt() instead."
            )
        if idf_weights is not None and output_mode != "tf_idf":
            raise ValueError(
                f"`idf_weights` should only be set if `output_mode` is 'tf_idf'. Received: output_mode={output_mode!r}"
            )
        if pad_to_max_tokens and max_tokens is None:
            raise ValueError("`pad_to_max_tokens=True` needs `max_tokens`. Received: max_tokens=None")
        self.max_tokens, self.standardize, self.split = max_tokens, standardize, split
        self.ngrams, self.output_mode = ngrams, output_mode
        self.output_sequence_length, self.pad_to_max_tokens = output_sequence_length, pad_to_max_tokens
        self.encoding = encoding
        self._specials = [PAD, OOV] if output_mode == "int" else [OOV]
        self._vocab: list[str] = []
        self._index: dict[str, int] = {}
        self._lookup: dict[str, int] = {}
        self._idf: torch.Tensor | None = None  # tf_idf: one weight per vocabulary index (OOV's first)
        self.built = True
        if vocabulary is not None:
            self.set_vocabulary(vocabulary, idf_weights)

    # --- vocabulary --------------------------------------------------------------------------
    def set_vocabulary(self, vocabulary: Any, idf_weights: Any = None) -> None:
        """Use ``vocabulary`` (tokens, most useful first; a file path reads one token per line).

        In ``"tf_idf"`` mode ``idf_weights`` gives each token's weight (the OOV column gets their mean).
        """
        if isinstance(vocabulary, (str, os.PathLike)):
            if not os.path.isfile(vocabulary):
                raise ValueError(
                    f"Vocabulary file {os.fspath(vocabulary)!r} does not exist. Pass a list of "
                    "tokens or the path of a file with one token per line."
                )
            with open(vocabulary, encoding=self.encoding) as fh:
                vocabulary = [line.rstrip("\n") for line in fh]
        tokens = [self._decode(t) for t in (vocabulary.tolist() if isinstance(vocabulary, np.ndarray) else vocabulary)]
        n = len(self._specials)
        if tokens[:n] == self._specials:
            tokens = tokens[n:]  # Keras accepts a vocabulary that already starts with the specials
        misplaced = [t for t in self._specials if t in tokens]
        if misplaced:
            raise ValueError(
                f"The vocabulary holds the reserved token(s) {misplaced} in a place other than the "
                f"start (they are {self._specials} at indices 0..{n - 1}). Remove them."
            )
        counts = collections.Counter(tokens)
        repeated = sorted(t for t, c in counts.items() if c > 1)
        if repeated:
            raise ValueError(
                f"The passed vocabulary has at least one repeated term. Please uniquify your dataset. "
                f"The repeated terms are: {repeated[:10]}"
            )
        if self.max_tokens is not None and len(tokens) + n > self.max_tokens:
            raise ValueError(
                f"Attempted to set a vocabulary larger than the maximum vocab size. Received vocabulary "
                f"size is {len(tokens) + n}; `max_tokens` is {self.max_tokens}."
            )
        idf = None
        if self.output_mode == "tf_idf":
            if idf_weights is None:
                raise ValueError(
                    "In TF-IDF output mode, set_vocabulary() needs `idf_weights` (one per token) beside the vocabulary."
                )
            idf = np.asarray(idf_weights.numpy() if hasattr(idf_weights, "numpy") else idf_weights, np.float64)
            if idf.shape == (len(tokens) + n,):
                idf = idf[n:]  # weights given for the specials too (Keras accepts the OOV weight first)
            if idf.shape != (len(tokens),):
                raise ValueError(
                    f"`idf_weights` must hold one weight per vocabulary token ({len(tokens)}). "
                    f"Received shape {idf.shape}."
                )
        self._set(tokens, idf)

    def _set(self, tokens: list[str], idf: np.ndarray | None = None) -> None:
        self._vocab = self._specials + tokens
        self._index = {t: i for i, t in enumerate(self._vocab)}
        self._lookup = {**self._index, _BOUNDARY.strip(): -1}  # _flat_ids's: the boundary marker is -1
        if idf is not None:
            oov = float(idf.mean()) if len(idf) else 0.0
            self._idf = torch.tensor([oov, *idf.tolist()], dtype=torch.float32)

    def get_vocabulary(self, include_special_tokens: bool = True) -> list[str]:
        """The vocabulary by index (``["", "[UNK]", ...]`` in ``"int"`` mode)."""
        return list(self._vocab) if include_special_tokens else self._vocab[len(self._specials) :]

    def vocabulary_size(self) -> int:
        """Number of ids the layer produces (special tokens included)."""
        return len(self._vocab)

    # --- text to tokens ------------------------------------------------------------------------
    def _decode(self, value: Any) -> str:
        if isinstance(value, bytes):
            return value.decode(self.encoding)
        if isinstance(value, np.str_):
            return str(value)
        if not isinstance(value, str):
            raise TypeError(f"TextVectorization takes strings. Received: {value!r} of type {type(value).__name__}")
        return value

    def _strings(self, inputs: Any) -> tuple[list[str], bool]:
        """Flatten ``inputs`` (a string, a list, an (N,) or (N, 1) array) to a list of strings."""
        if isinstance(inputs, (str, bytes)):
            return [self._decode(inputs)], True
        if isinstance(inputs, torch.Tensor):
            raise TypeError("TextVectorization takes strings (a list or a numpy array of str), not a tensor.")
        array = np.asarray(inputs, dtype=object)
        if array.ndim == 2 and array.shape[1] == 1:
            array = array[:, 0]
        if array.ndim != 1:
            raise ValueError(
                "TextVectorization expects a batch of strings of shape (batch,) or (batch, 1). "
                f"Received: shape={array.shape}"
            )
        return [self._decode(v) for v in array.tolist()], False

    def _standardize(self, texts: list[str]) -> list[str]:
        mode = self.standardize
        if mode is None:
            return texts
        if callable(mode):
            out = mode(np.asarray(texts, dtype=str))
            return [self._decode(v) for v in np.asarray(out, dtype=object).reshape(-1).tolist()]
        joined = _SEPARATOR.join(texts)  # one C-level pass over the batch instead of one call per string
        if joined.count(_SEPARATOR) != max(0, len(texts) - 1):
            joined = ""  # a string holds the separator itself: string by string below
        if joined or not texts:
            return _standardize_text(joined, mode).split(_SEPARATOR) if texts else []
        return [_standardize_text(t, mode) for t in texts]

    def _split(self, texts: list[str]) -> list[list[str]]:
        mode = self.split
        if mode is None:
            return [[t] for t in texts]
        if mode == "whitespace":
            return [t.split() for t in texts]
        if mode == "character":
            return [list(t) for t in texts]
        out = mode(texts)
        return [[self._decode(tok) for tok in row] for row in out]

    def _ngrams(self, tokens: list[str]) -> list[str]:
        if not self.ngrams:
            return tokens
        return [" ".join(tokens[i : i + n]) for n in self.ngrams for i in range(len(tokens) - n + 1)]

    def tokenize(self, inputs: Any) -> list[list[str]]:
        """The tokens of each string after standardising, splitting and n-grams."""
        texts, _ = self._strings(inputs)
        return [self._ngrams(row) for row in self._split(self._standardize(texts))]

    # --- adapt ------------------------------------------------------------------------------------
    def adapt(self, data: Any, batch_size: int | None = None, steps: int | None = None) -> None:
        """Learn the vocabulary from ``data``.

        Args:
            data: strings (a list or numpy array), or any iterable of batches of strings (a
                ``tf.data``-style dataset, a generator); a batch may also be ``(strings, labels)``.
            batch_size: accepted for Keras compatibility (the data is read in one pass).
            steps: read at most this many batches of an iterable.
        """
        counts: collections.Counter[str] = collections.Counter()
        documents: collections.Counter[str] = collections.Counter()  # strings holding each token (tf_idf)
        num_documents = 0
        for batch in self._batches(data, steps):
            if self._whole_batch_split() and self.output_mode != "tf_idf":
                # counting needs no row boundaries: one split of the standardised batch, one C-level count
                texts, _ = self._strings(batch)
                counts.update(" ".join(self._standardize(texts)).split())
                continue
            for row in self.tokenize(batch):
                counts.update(row)
                documents.update(set(row))
                num_documents += 1
        for special in self._specials:
            counts.pop(special, None)
        ranked = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
        limit = None if self.max_tokens is None else self.max_tokens - len(self._specials)
        tokens = [token for token, _ in ranked[:limit]]
        idf = None
        if self.output_mode == "tf_idf":
            df = np.asarray([documents[t] for t in tokens], np.float64)
            idf = np.log(1.0 + num_documents / (1.0 + df))
        self._set(tokens, idf)
        self._is_adapted = True

    @staticmethod
    def _batches(data: Any, steps: int | None) -> Iterable[Any]:
        if isinstance(data, (str, bytes)):
            raise TypeError(
                "adapt() takes a batch of strings (a list or array) or a dataset of batches, not one "
                f"string. Received: data={data!r:.60}; wrap it: adapt([text])."
            )
        if isinstance(data, np.ndarray) or (
            isinstance(data, (list, tuple)) and all(isinstance(v, (str, bytes, np.str_)) for v in data)
        ):
            yield data
            return
        for i, batch in enumerate(data):
            if steps is not None and i >= steps:
                return
            if isinstance(batch, tuple) and batch and not isinstance(batch[0], (str, bytes, np.str_)):
                batch = batch[0]  # (features, labels) from a labelled dataset
            if isinstance(batch, (str, bytes, np.str_)):
                yield [batch]
            elif not isinstance(batch, (list, tuple)) and np.ndim(batch) == 0:
                yield [np.asarray(batch, dtype=object).item()]  # an unbatched dataset: one string per element
            else:
                yield batch

    # --- call -------------------------------------------------------------------------------------
    def forward(self, inputs: Any) -> torch.Tensor:
        if not self._vocab:
            raise ValueError(
                f"Layer '{self.name}' has no vocabulary yet: call adapt(data) or pass vocabulary=... before calling it."
            )
        texts, scalar = self._strings(inputs)
        if self._whole_batch_split():
            flat = self._flat_ids(self._standardize(texts))
            if flat is not None:
                out = self._vectors(flat, len(texts))
                return out[0] if scalar else out
        rows = [self._ngrams(r) for r in self._split(self._standardize(texts))]
        oov = self._index[OOV]
        ids = [[self._index.get(tok, oov) for tok in row] for row in rows]
        if self.output_mode == "int":
            length: int = self.output_sequence_length or max((len(r) for r in ids), default=0)
            out = torch.zeros((len(ids), length), dtype=torch.int64)
            for i, row in enumerate(ids):
                row = row[:length]
                out[i, : len(row)] = torch.tensor(row, dtype=torch.int64)
        else:
            width = self.max_tokens if self.pad_to_max_tokens and self.max_tokens else len(self._vocab)
            out = torch.zeros((len(ids), width), dtype=torch.float32)
            for i, row in enumerate(ids):
                if row:
                    out[i].index_add_(0, torch.tensor(row), torch.ones(len(row)))
            if self.output_mode == "multi_hot":
                out = (out > 0).float()
            elif self.output_mode == "tf_idf":
                if self._idf is None:
                    raise ValueError(f"Layer '{self.name}' in TF-IDF mode has no idf weights: call adapt(data).")
                out[:, : len(self._idf)] *= self._idf
        return out[0] if scalar else out

    def _whole_batch_split(self) -> bool:
        """Whether a batch can be split and looked up as one string (the built-in whitespace split,
        no n-grams): then no Python loop runs per string or per token."""
        return self.split == "whitespace" and not self.ngrams

    def _flat_ids(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(ids, row of each id, position in its row) of every token of the batch, or None when a
        string holds the boundary marker (the caller then goes string by string)."""
        tokens = _BOUNDARY.join(texts).split()
        marker = _BOUNDARY.strip()
        if len(texts) > 1 and tokens.count(marker) != len(texts) - 1:
            return None
        ids = np.fromiter(map(self._lookup.get, tokens, itertools.repeat(self._index[OOV])), np.int64, len(tokens))
        ends = ids == -1
        rows = np.cumsum(ends)
        starts = np.concatenate(([0], np.flatnonzero(ends) + 1))
        positions = np.arange(len(ids)) - starts[rows]
        keep = ~ends
        return ids[keep], rows[keep], positions[keep]

    def _vectors(self, flat: tuple[np.ndarray, np.ndarray, np.ndarray], n: int) -> torch.Tensor:
        ids, rows, positions = flat
        if self.output_mode == "int":
            lengths = np.bincount(rows, minlength=n)
            length = self.output_sequence_length or int(lengths.max(initial=0))
            padded = np.zeros((n, length), np.int64)
            inside = positions < length
            padded[rows[inside], positions[inside]] = ids[inside]
            return torch.from_numpy(padded)
        width = self.max_tokens if self.pad_to_max_tokens and self.max_tokens else len(self._vocab)
        out = torch.zeros((n, width), dtype=torch.float32)
        where = (torch.from_numpy(rows), torch.from_numpy(ids))
        if self.output_mode == "multi_hot":
            out.index_put_(where, torch.ones(()).expand(len(ids)))  # a repeated token writes 1 again
        else:
            out.index_put_(where, torch.ones(()).expand(len(ids)), accumulate=True)
        if self.output_mode == "tf_idf":
            if self._idf is None:
                raise ValueError(f"Layer '{self.name}' in TF-IDF mode has no idf weights: call adapt(data).")
            out[:, : len(self._idf)] *= self._idf
        return out

    def call(self, inputs: Any) -> torch.Tensor:
        return self.forward(inputs)

    def get_config(self) -> dict[str, Any]:
        return {
            **super().get_config(),
            "max_tokens": self.max_tokens,
            "standardize": self.standardize,
            "split": self.split,
            "ngrams": self.ngrams,
            "output_mode": self.output_mode,
            "output_sequence_length": self.output_sequence_length,
            "pad_to_max_tokens": self.pad_to_max_tokens,
            "encoding": self.encoding,
            # the adapted vocabulary travels with the config, so a saved model keeps it (as Keras)
            "vocabulary": self.get_vocabulary() if self._vocab else None,
            "idf_weights": self._idf[1:].tolist() if self._idf is not None else None,
        }


__all__ = ["TextVectorization"]
