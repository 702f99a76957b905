"""``keras.layers``: thin constructors over ``torch.nn`` that infer their input sizes.

Example:
    >>> from unison.keras import layers
    >>> layers.Dense(10, activation="softmax").units
    10
"""

from unison.keras.layers.base import Layer
from unison.keras.layers.conv import AveragePooling2D, Conv2D, GlobalAveragePooling2D, MaxPooling2D
from unison.keras.layers.core import Activation, Dense, Dropout, Embedding, Flatten, Input, InputLayer, Reshape
from unison.keras.layers.normalization import BatchNormalization

MaxPool2D = MaxPooling2D
AvgPool2D = AveragePooling2D

__all__ = [
    "Activation", "AvgPool2D", "AveragePooling2D", "BatchNormalization", "Conv2D", "Dense", "Dropout",
    "Embedding", "Flatten", "GlobalAveragePooling2D", "Input", "InputLayer", "Layer", "MaxPool2D",
    "MaxPooling2D", "Reshape",
]
