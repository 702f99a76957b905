"""``keras.preprocessing.text`` (Keras 2): ``Tokenizer``, ``text_to_word_sequence``, ``one_hot``,
``hashing_trick``, ``tokenizer_from_json``.

The word-level text tools tf_keras keeps for older programs (Keras 3 replaced them with the
``TextVectorization`` layer). Same rules as tf_keras: text is lower-cased, every character of
``filters`` becomes ``split``, empty pieces are dropped; a ``Tokenizer`` numbers words from 1 by
falling count (ties: first seen first), the ``oov_token`` (if any) taking index 1, and
``num_words`` keeps the indices below it.

Example:
    >>> tok = Tokenizer(num_words=3)
    >>> tok.fit_on_texts(["the cat", "the dog"])
    >>> tok.word_index, tok.texts_to_sequences(["the dog"])
    ({'the': 1, 'cat': 2, 'dog': 3}, [[1]])
    >>> text_to_word_sequence("Hello, World!")
    ['hello', 'world']
"""

from __future__ import annotations

import collections
import hashlib
import json
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

FILTERS = '!"#$%&()*+,-./:;<=>?@[\\]^_`{|}~\t\n'
_MODES = ("binary", "count", "tfidf", "freq")


def text_to_word_sequence(input_text: str, filters: str = FILTERS, lower: bool = True, split: str = " ") -> list[str]:
    """Split ``input_text`` into words: lower-cased, each ``filters`` character read as ``split``.

    Example:
        >>> text_to_word_sequence("A b.c", split=" ")
        ['a', 'b', 'c']
    """
    if not isinstance(input_text, str):
        raise TypeError(
            f"text_to_word_sequence() takes a string. Received: input_text of type {type(input_text).__name__}"
        )
    if lower:
        input_text = input_text.lower()
    input_text = input_text.translate(
        str.maketrans(filters, split * len(filters))
        if len(split) == 1
        else input_text.maketrans(
            {c: split for c in filters}  # type: ignore[arg-type]  # str.maketrans takes str keys too
        )
    )
    return [word for word in input_text.split(split) if word]


def _md5(word: str) -> int:
    return int(hashlib.md5(word.encode()).hexdigest(), 16)


def hashing_trick(
    text: str,
    n: int,
    hash_function: Callable[[str], int] | str | None = None,
    filters: str = FILTERS,
    lower: bool = True,
    split: str = " ",
    analyzer: Callable[[str], list[str]] | None = None,
) -> list[int]:
    """Each word of ``text`` as ``hash_function(word) % (n - 1) + 1`` (index 0 stays free for padding).

    ``hash_function``: Python's ``hash`` by default (which varies between processes unless
    ``PYTHONHASHSEED`` is set), ``"md5"`` for a stable one, or any callable.

    Example:
        >>> hashing_trick("a b a", 10, hash_function="md5")
        [2, 5, 2]
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 2:
        raise ValueError(f"`n` (the hash space) must be an integer >= 2. Received: n={n!r}")
    if hash_function is None:
        hash_function = hash
    elif hash_function == "md5":
        hash_function = _md5
    elif not callable(hash_function):
        raise ValueError(
            f"`hash_function` must be None, 'md5' or a callable. Received: hash_function={hash_function!r}"
        )
    words = analyzer(text) if analyzer is not None else text_to_word_sequence(text, filters, lower, split)
    return [hash_function(word) % (n - 1) + 1 for word in words]


def one_hot(
    input_text: str,
    n: int,
    filters: str = FILTERS,
    lower: bool = True,
    split: str = " ",
    analyzer: Callable[[str], list[str]] | None = None,
) -> list[int]:
    """``hashing_trick`` with Python's ``hash``: a word index in ``[1, n)`` per word (not unique).

    Example:
        >>> words = one_hot("b a b", 50)
        >>> words[0] == words[2] and all(1 <= i < 50 for i in words)
        True
    """
    return hashing_trick(input_text, n, hash, filters, lower, split, analyzer)


class Tokenizer:
    """Turn texts into sequences of word indices or into count/binary/tf-idf matrices (tf_keras's).

    Args:
        num_words: keep only the words of index below it in the outputs (None: all).
        filters, lower, split: how texts become words (see ``text_to_word_sequence``).
        char_level: every character is a token.
        oov_token: the token (index 1) that replaces unknown words in ``texts_to_sequences``.
        analyzer: a callable text -> words, used instead of the filters.
        document_count: the number of texts seen so far (restored by ``tokenizer_from_json``).
    """

    def __init__(
        self,
        num_words: int | None = None,
        filters: str = FILTERS,
        lower: bool = True,
        split: str = " ",
        char_level: bool = False,
        oov_token: str | None = None,
        analyzer: Callable[[str], list[str]] | None = None,
        document_count: int = 0,
        **kwargs: Any,
    ) -> None:
        if "nb_words" in kwargs:  # Keras 1's name, still accepted by tf_keras
            num_words = kwargs.pop("nb_words")
        if kwargs:
            raise TypeError(f"Unrecognized keyword arguments: {kwargs}. Tokenizer takes num_words, filters, lower, ...")
        if num_words is not None and (isinstance(num_words, bool) or not isinstance(num_words, int) or num_words < 0):
            raise ValueError(f"`num_words` must be None or a non-negative integer. Received: num_words={num_words!r}")
        self.word_counts: collections.OrderedDict[str, int] = collections.OrderedDict()
        self.word_docs: collections.defaultdict[str, int] = collections.defaultdict(int)
        self.filters, self.split, self.lower = filters, split, lower
        self.num_words, self.document_count = num_words, document_count
        self.char_level, self.oov_token, self.analyzer = char_level, oov_token, analyzer
        self.index_docs: collections.defaultdict[int, int] = collections.defaultdict(int)
        self.word_index: dict[str, int] = {}
        self.index_word: dict[int, str] = {}

    def _words(self, text: Any) -> list[str]:
        if self.char_level or isinstance(text, list):
            if self.lower:
                text = [t.lower() for t in text] if isinstance(text, list) else text.lower()
            return list(text)
        if self.analyzer is not None:
            return list(self.analyzer(text))
        return text_to_word_sequence(text, self.filters, self.lower, self.split)

    def fit_on_texts(self, texts: Iterable[Any]) -> None:
        """Count the words of ``texts`` (strings, or lists of words) and number them."""
        for text in texts:
            self.document_count += 1
            words = self._words(text)
            for word in words:
                self.word_counts[word] = self.word_counts.get(word, 0) + 1
            for word in set(words):
                self.word_docs[word] += 1
        ranked = sorted(self.word_counts.items(), key=lambda item: item[1], reverse=True)  # stable: ties keep order
        vocabulary = ([self.oov_token] if self.oov_token is not None else []) + [word for word, _ in ranked]
        self.word_index = {word: i for i, word in enumerate(vocabulary, start=1)}
        self.index_word = {i: word for word, i in self.word_index.items()}
        for word, count in list(self.word_docs.items()):
            self.index_docs[self.word_index[word]] = count

    def fit_on_sequences(self, sequences: Iterable[Iterable[int]]) -> None:
        """Count in how many sequences each index occurs (for ``tfidf`` of ``sequences_to_matrix``)."""
        sequences = list(sequences)
        self.document_count += len(sequences)
        for seq in sequences:
            for i in set(seq):
                self.index_docs[i] += 1

    def _kept(self, index: int | None, known: bool) -> int | None:
        """An index as the outputs show it: dropped (None), itself, or the OOV index."""
        oov = self.word_index.get(self.oov_token) if self.oov_token is not None else None
        if known and index is not None and not (self.num_words and index >= self.num_words):
            return index
        return oov

    def texts_to_sequences_generator(self, texts: Iterable[Any]) -> Iterator[list[int]]:
        """One list of word indices per text (unknown words: the OOV index, or left out)."""
        for text in texts:
            seq = [self._kept(self.word_index.get(w), w in self.word_index) for w in self._words(text)]
            yield [i for i in seq if i is not None]

    def texts_to_sequences(self, texts: Iterable[Any]) -> list[list[int]]:
        """``texts_to_sequences_generator`` as a list."""
        return list(self.texts_to_sequences_generator(texts))

    def sequences_to_texts_generator(self, sequences: Iterable[Iterable[int]]) -> Iterator[str]:
        """One space-joined text per sequence of indices (the inverse of ``texts_to_sequences``)."""
        for seq in sequences:
            kept = [self._kept(int(i), int(i) in self.index_word) for i in seq]
            yield " ".join(self.index_word[i] for i in kept if i is not None)

    def sequences_to_texts(self, sequences: Iterable[Iterable[int]]) -> list[str]:
        """``sequences_to_texts_generator`` as a list."""
        return list(self.sequences_to_texts_generator(sequences))

    def texts_to_matrix(self, texts: Iterable[Any], mode: str = "binary") -> np.ndarray:
        """``sequences_to_matrix`` of ``texts_to_sequences(texts)``."""
        return self.sequences_to_matrix(self.texts_to_sequences(texts), mode=mode)

    def sequences_to_matrix(self, sequences: Iterable[Iterable[int]], mode: str = "binary") -> np.ndarray:
        """A ``(len(sequences), num_words)`` float64 matrix: ``binary``, ``count``, ``freq`` or ``tfidf``."""
        if mode not in _MODES:
            raise ValueError(f"Unknown vectorization mode: {mode!r}. Expected one of {list(_MODES)}.")
        if self.num_words:
            num_words = self.num_words
        elif self.word_index:
            num_words = len(self.word_index) + 1
        else:
            raise ValueError("Specify a dimension (`num_words` argument), or fit on some text data first.")
        if mode == "tfidf" and not self.document_count:
            raise ValueError("Fit the Tokenizer on some data before using tfidf mode.")
        rows = [list(seq) for seq in sequences]
        x = np.zeros((len(rows), num_words))
        for row, seq in enumerate(rows):
            counts = collections.Counter(j for j in seq if j < num_words)
            if not counts:
                continue
            columns = np.fromiter(counts.keys(), dtype=np.int64)
            c = np.fromiter(counts.values(), dtype=np.float64)
            if mode == "count":
                x[row, columns] = c
            elif mode == "freq":
                x[row, columns] = c / len(seq)
            elif mode == "binary":
                x[row, columns] = 1.0
            else:
                docs = np.array([self.index_docs.get(int(j), 0) for j in columns], np.float64)
                x[row, columns] = (1.0 + np.log(c)) * np.log(1.0 + self.document_count / (1.0 + docs))
        return x

    def get_config(self) -> dict[str, Any]:
        """The tokenizer's settings and learned tables (the tables as JSON strings, as tf_keras)."""
        return {
            "num_words": self.num_words,
            "filters": self.filters,
            "lower": self.lower,
            "split": self.split,
            "char_level": self.char_level,
            "oov_token": self.oov_token,
            "document_count": self.document_count,
            "word_counts": json.dumps(self.word_counts),
            "word_docs": json.dumps(self.word_docs),
            "index_docs": json.dumps(self.index_docs),
            "index_word": json.dumps(self.index_word),
            "word_index": json.dumps(self.word_index),
        }

    def to_json(self, **kwargs: Any) -> str:
        """``{"class_name": "Tokenizer", "config": get_config()}`` as JSON (``json.dumps`` kwargs)."""
        return json.dumps({"class_name": type(self).__name__, "config": self.get_config()}, **kwargs)


def tokenizer_from_json(json_string: str) -> Tokenizer:
    """The ``Tokenizer`` that ``Tokenizer.to_json`` wrote.

    Example:
        >>> tok = Tokenizer(oov_token="?")
        >>> tok.fit_on_texts(["a b b"])
        >>> tokenizer_from_json(tok.to_json()).texts_to_sequences(["b c"])
        [[2, 1]]
    """
    config = dict(json.loads(json_string).get("config") or {})
    try:
        tables = {
            k: json.loads(config.pop(k)) for k in ("word_counts", "word_docs", "index_docs", "index_word", "word_index")
        }
    except KeyError as error:  # tf_keras raises KeyError too
        raise KeyError(
            f"tokenizer_from_json() takes the JSON string Tokenizer.to_json() writes; its config has no {error}. "
            'Expected {"class_name": "Tokenizer", "config": {"word_counts": ..., "word_index": ..., ...}}.'
        ) from None
    tokenizer = Tokenizer(**config)
    tokenizer.word_counts = collections.OrderedDict(tables["word_counts"])
    tokenizer.word_docs = collections.defaultdict(int, tables["word_docs"])
    tokenizer.index_docs = collections.defaultdict(int, {int(k): v for k, v in tables["index_docs"].items()})
    tokenizer.index_word = {int(k): v for k, v in tables["index_word"].items()}
    tokenizer.word_index = tables["word_index"]
    return tokenizer


__all__ = ["Tokenizer", "hashing_trick", "one_hot", "text_to_word_sequence", "tokenizer_from_json"]
