"""``keras.layers.experimental.preprocessing``: Keras 2's path to the preprocessing layers.

tf_keras 2.x still exports the preprocessing layers here (where TF 2.3-2.5 introduced them);
the classes are the same objects as ``keras.layers``'s, plus the ``PreprocessingLayer`` base.

Example:
    >>> from unison.keras import layers
    >>> layers.experimental.preprocessing.Rescaling is layers.Rescaling
    True
"""

from unison.keras.layers.augmentation import (
    RandomContrast,
    RandomCrop,
    RandomFlip,
    RandomHeight,
    RandomRotation,
    RandomTranslation,
    RandomWidth,
    RandomZoom,
)
from unison.keras.layers.image_resizing import CenterCrop, Resizing
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
from unison.keras.layers.preprocessing_layer import PreprocessingLayer
from unison.keras.layers.text_vectorization import TextVectorization

__all__ = [
    "CategoryEncoding",
    "CenterCrop",
    "Discretization",
    "HashedCrossing",
    "Hashing",
    "IntegerLookup",
    "Normalization",
    "PreprocessingLayer",
    "RandomContrast",
    "RandomCrop",
    "RandomFlip",
    "RandomHeight",
    "RandomRotation",
    "RandomTranslation",
    "RandomWidth",
    "RandomZoom",
    "Rescaling",
    "Resizing",
    "StringLookup",
    "TextVectorization",
]
