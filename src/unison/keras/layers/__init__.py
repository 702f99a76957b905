"""``keras.layers``: thin constructors over ``torch.nn`` that infer their input sizes.

Example:
    >>> from unison.keras import layers
    >>> layers.Dense(10, activation="softmax").units
    10
"""

from unison.keras.layers.attention import MultiHeadAttention
from unison.keras.layers.base import Layer
from unison.keras.layers.conv import AveragePooling2D, Conv2D, GlobalAveragePooling2D, MaxPooling2D
from unison.keras.layers.core import Activation, Dense, Dropout, Embedding, Flatten, Input, InputLayer, Reshape
from unison.keras.layers.merging import (
    Add,
    Average,
    Concatenate,
    Lambda,
    Maximum,
    Minimum,
    Multiply,
    Subtract,
    add,
    average,
    concatenate,
    maximum,
    minimum,
    multiply,
    subtract,
)
from unison.keras.layers.normalization import BatchNormalization, LayerNormalization
from unison.keras.layers.pooling1d import GlobalAveragePooling1D, GlobalAvgPool1D, GlobalMaxPool1D, GlobalMaxPooling1D
from unison.keras.layers.preprocessing import (
    CategoryEncoding,
    Hashing,
    IntegerLookup,
    Normalization,
    Rescaling,
    StringLookup,
)
from unison.keras.layers.text_vectorization import TextVectorization

MaxPool2D = MaxPooling2D
AvgPool2D = AveragePooling2D

__all__ = [
    "Activation",
    "AvgPool2D",
    "AveragePooling2D",
    "BatchNormalization",
    "Conv2D",
    "Dense",
    "Dropout",
    "Embedding",
    "Flatten",
    "GlobalAveragePooling2D",
    "Input",
    "InputLayer",
    "Layer",
    "MaxPool2D",
    "MaxPooling2D",
    "Reshape",
    # language models (issue 16)
    "Add",
    "Average",
    "Concatenate",
    "GlobalAveragePooling1D",
    "GlobalAvgPool1D",
    "GlobalMaxPool1D",
    "GlobalMaxPooling1D",
    "Lambda",
    "LayerNormalization",
    "Maximum",
    "Minimum",
    "MultiHeadAttention",
    "Multiply",
    "Subtract",
    "TextVectorization",
    "add",
    "average",
    "concatenate",
    "maximum",
    "minimum",
    "multiply",
    "subtract",
    # preprocessing
    "CategoryEncoding",
    "Hashing",
    "IntegerLookup",
    "Normalization",
    "Rescaling",
    "StringLookup",
]
