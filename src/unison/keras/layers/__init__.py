"""``keras.layers``: thin constructors over ``torch.nn`` that infer their input sizes.

Layers may import the backend, ops, activations, initializers, regularizers, the dtype policy
(``dtype_policies.py``) and ``saving/serialization.py``; never models, trainers, saving's
file code or callbacks (``keras_submodules`` recognises a model by a class flag, not by import).

Example:
    >>> from unison.keras import layers
    >>> layers.Dense(10, activation="softmax").units
    10
"""

import sys

from torch import nn

from unison.keras.layers import experimental  # tf_keras's layers.experimental
from unison.keras.layers.abstract_rnn_cell import AbstractRNNCell
from unison.keras.layers.activation_layers import ELU, LeakyReLU, PReLU, ReLU, Softmax
from unison.keras.layers.attention import MultiHeadAttention
from unison.keras.layers.augmentation import (
    RandomBrightness,
    RandomContrast,
    RandomCrop,
    RandomFlip,
    RandomHeight,
    RandomRotation,
    RandomTranslation,
    RandomWidth,
    RandomZoom,
)
from unison.keras.layers.augmentation_color import (
    AutoContrast,
    Equalization,
    RandomColorDegeneration,
    RandomGaussianBlur,
    RandomGrayscale,
    RandomInvert,
    RandomPosterization,
    RandomSharpness,
    Solarization,
)
from unison.keras.layers.augmentation_hsv import RandomColorJitter, RandomHue, RandomSaturation
from unison.keras.layers.augmentation_mix import CutMix, MixUp, Pipeline, RandomErasing
from unison.keras.layers.augmentation_policy import AugMix, RandAugment
from unison.keras.layers.augmentation_shear import RandomShear
from unison.keras.layers.augmentation_warp import RandomElasticTransform, RandomPerspective
from unison.keras.layers.base import Layer
from unison.keras.layers.clahe import ContrastLimitedAdaptiveHistogramEqualization
from unison.keras.layers.conv import AveragePooling2D, Conv2D, GlobalAveragePooling2D, MaxPooling2D
from unison.keras.layers.conv1d import Conv1D
from unison.keras.layers.conv_lstm import ConvLSTM1D, ConvLSTM2D, ConvLSTM3D
from unison.keras.layers.conv_nd import Conv3D
from unison.keras.layers.conv_transpose import Conv1DTranspose, Conv2DTranspose, Conv3DTranspose
from unison.keras.layers.core import Activation, Dense, Dropout, Embedding, Flatten, Input, InputLayer, Reshape
from unison.keras.layers.dot_attention import AdditiveAttention, Attention
from unison.keras.layers.einsum_dense import EinsumDense
from unison.keras.layers.group_query_attention import GroupedQueryAttention, GroupQueryAttention
from unison.keras.layers.image_preprocessing import MaxNumBoundingBoxes
from unison.keras.layers.image_resizing import CenterCrop, Resizing
from unison.keras.layers.input_spec import InputSpec
from unison.keras.layers.keras2_layers import LocallyConnected1D, LocallyConnected2D, ThresholdedReLU
from unison.keras.layers.layer_serialization import deserialize, serialize
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
from unison.keras.layers.misc import (
    ActivityRegularization,
    AlphaDropout,
    Dot,
    GaussianDropout,
    GaussianNoise,
    Identity,
    Masking,
    Permute,
    RepeatVector,
    SpatialDropout1D,
    SpatialDropout2D,
    dot,
)
from unison.keras.layers.normalization import (
    BatchNormalization,
    GroupNormalization,
    LayerNormalization,
    UnitNormalization,
)
from unison.keras.layers.pooling1d import GlobalAveragePooling1D, GlobalAvgPool1D, GlobalMaxPool1D, GlobalMaxPooling1D
from unison.keras.layers.pooling_nd import (
    AdaptiveAveragePooling1D,
    AdaptiveAveragePooling2D,
    AdaptiveAveragePooling3D,
    AdaptiveMaxPooling1D,
    AdaptiveMaxPooling2D,
    AdaptiveMaxPooling3D,
    AveragePooling3D,
    AvgPool3D,
    GlobalAveragePooling3D,
    GlobalAvgPool3D,
    GlobalMaxPool3D,
    GlobalMaxPooling3D,
    MaxPool3D,
    MaxPooling3D,
)
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
from unison.keras.layers.recurrent import GRU, LSTM, SimpleRNN
from unison.keras.layers.resampling import (
    AveragePooling1D,
    AvgPool1D,
    Cropping2D,
    GlobalMaxPool2D,
    GlobalMaxPooling2D,
    MaxPool1D,
    MaxPooling1D,
    UpSampling2D,
    ZeroPadding2D,
)
from unison.keras.layers.reshaping1d import Cropping1D, UpSampling1D, ZeroPadding1D
from unison.keras.layers.reshaping3d import Cropping3D, SpatialDropout3D, UpSampling3D, ZeroPadding3D
from unison.keras.layers.reversible_embedding import ReversibleEmbedding
from unison.keras.layers.rms_norm import RMSNormalization
from unison.keras.layers.rnn import RNN
from unison.keras.layers.rnn_cell import GRUCell, LSTMCell, SimpleRNNCell, StackedRNNCells
from unison.keras.layers.separable_conv import DepthwiseConv1D, DepthwiseConv2D, SeparableConv1D, SeparableConv2D
from unison.keras.layers.spectral_norm import SpectralNormalization
from unison.keras.layers.spectrogram import MelSpectrogram
from unison.keras.layers.stft_spectrogram import STFTSpectrogram
from unison.keras.layers.text_vectorization import TextVectorization
from unison.keras.layers.torch_wrapper import TorchModuleWrapper
from unison.keras.layers.wrappers import Bidirectional, TimeDistributed, Wrapper
from unison.keras.saving.serialization import register_namespace

MaxPool2D = MaxPooling2D
# Keras 3's other spellings of the same layers
Convolution1D = Conv1D
Convolution2D = Conv2D
Convolution2DTranspose = Conv2DTranspose
SeparableConvolution2D = SeparableConv2D
GlobalAvgPool2D = GlobalAveragePooling2D
AvgPool2D = AveragePooling2D
# the rest of Keras's convolution, pooling and reshaping layers (issue 35)
Convolution1DTranspose = Conv1DTranspose
Convolution3D = Conv3D
Convolution3DTranspose = Conv3DTranspose
SeparableConvolution1D = SeparableConv1D

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
    "Attention",
    "AdditiveAttention",
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
    "Discretization",
    "HashedCrossing",
    "Hashing",
    "IntegerLookup",
    "Normalization",
    "Rescaling",
    "StringLookup",
    # recurrent layers and wrappers
    "GRU",
    "LSTM",
    "LSTMCell",
    "GRUCell",
    "RNN",
    "SimpleRNNCell",
    "StackedRNNCells",
    "SimpleRNN",
    "Bidirectional",
    "TimeDistributed",
    # convolution, resampling and pooling
    "AveragePooling1D",
    "AvgPool1D",
    "Conv1D",
    "Conv2DTranspose",
    "Cropping2D",
    "DepthwiseConv2D",
    "GlobalMaxPool2D",
    "GlobalMaxPooling2D",
    "MaxPool1D",
    "MaxPooling1D",
    "SeparableConv2D",
    "UpSampling2D",
    "ZeroPadding2D",
    # activations, noise, shapes and other small layers
    "ELU",
    "LeakyReLU",
    "PReLU",
    "ReLU",
    "Softmax",
    "ActivityRegularization",
    "Dot",
    "GaussianDropout",
    "GaussianNoise",
    "GroupNormalization",
    "Identity",
    "Masking",
    "Permute",
    "RepeatVector",
    "SpatialDropout1D",
    "SpatialDropout2D",
    "AlphaDropout",
    "dot",
    "Cropping1D",
    "UpSampling1D",
    "ZeroPadding1D",
    "Convolution1D",
    "Convolution2D",
    "Convolution2DTranspose",
    "SeparableConvolution2D",
    "GlobalAvgPool2D",
    "UnitNormalization",
    # image augmentation and resizing
    "CenterCrop",
    "RandomBrightness",
    "RandomContrast",
    "RandomCrop",
    "RandomFlip",
    "RandomHeight",
    "RandomRotation",
    "RandomTranslation",
    "RandomWidth",
    "RandomZoom",
    "Resizing",
    # Keras 2's layers.experimental.preprocessing path
    "experimental",
    # Keras 3's colour augmentation
    "AutoContrast",
    "Equalization",
    "RandomColorDegeneration",
    "RandomGrayscale",
    "RandomInvert",
    "RandomPosterization",
    "RandomSharpness",
    "Solarization",
    "RandomGaussianBlur",
    "CutMix",
    "MixUp",
    "Pipeline",
    "AugMix",
    "RandAugment",
    "RandomElasticTransform",
    "RandomPerspective",
    "ContrastLimitedAdaptiveHistogramEqualization",
    "MaxNumBoundingBoxes",
    "STFTSpectrogram",
    # issue 35: the rest of Keras's layers
    "AbstractRNNCell",
    "EinsumDense",
    "GroupQueryAttention",
    "GroupedQueryAttention",
    "InputSpec",
    "RMSNormalization",
    "ReversibleEmbedding",
    "SpectralNormalization",
    "TorchModuleWrapper",
    "Wrapper",
    "deserialize",
    "serialize",
    # 3-D, transposed 1-D/3-D, separable 1-D, adaptive pooling, ConvLSTM, Keras 2 layers (issue 35)
    "Conv1DTranspose",
    "Convolution1DTranspose",
    "Conv3D",
    "Convolution3D",
    "Conv3DTranspose",
    "Convolution3DTranspose",
    "SeparableConv1D",
    "SeparableConvolution1D",
    "DepthwiseConv1D",
    "AveragePooling3D",
    "AvgPool3D",
    "MaxPooling3D",
    "MaxPool3D",
    "GlobalAveragePooling3D",
    "GlobalAvgPool3D",
    "GlobalMaxPooling3D",
    "GlobalMaxPool3D",
    "AdaptiveAveragePooling1D",
    "AdaptiveAveragePooling2D",
    "AdaptiveAveragePooling3D",
    "AdaptiveMaxPooling1D",
    "AdaptiveMaxPooling2D",
    "AdaptiveMaxPooling3D",
    "Cropping3D",
    "ZeroPadding3D",
    "UpSampling3D",
    "SpatialDropout3D",
    "ConvLSTM1D",
    "ConvLSTM2D",
    "ConvLSTM3D",
    "LocallyConnected1D",
    "LocallyConnected2D",
    "ThresholdedReLU",
    "MelSpectrogram",
    "RandomHue",
    "RandomSaturation",
    "RandomShear",
    "RandomColorJitter",
    "RandomErasing",
]

# load_model finds this package's classes by name through the registry (saving/serialization.py).
register_namespace("layers", sys.modules[__name__], nn.Module, nn.Module)

# Keras layers unison leaves out on purpose, with what to use instead (issue 35)
_NOT_IMPLEMENTED = {
    "DenseFeatures": "tf_keras's DenseFeatures reads tf.feature_column columns, which unison does not have: use "
    "keras.utils.FeatureSpace or the preprocessing layers (Normalization, StringLookup, CategoryEncoding, ...)",
}


def __getattr__(name: str) -> object:
    if name in _NOT_IMPLEMENTED:
        raise AttributeError(f"unison does not implement keras.layers.{name}. {_NOT_IMPLEMENTED[name]}.")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
