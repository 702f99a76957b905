"""``keras.applications``: the image-classification architectures Keras ships, built from unison's layers.

Each builder makes a functional ``keras.Model`` with Keras 3's architecture (RegNet and ResNetRS,
which only Keras 2 ships: Keras 2's), layer names,
parameter counts and arguments (``include_top``, ``weights``, ``input_tensor``, ``input_shape``,
``pooling``, ``classes``, ``classifier_activation``). ``weights=None`` initialises randomly;
``weights="imagenet"`` reads Keras's pretrained file from Keras's cache (``~/.keras/models/``,
``$KERAS_HOME``): unison downloads nothing, and says where to put the file when it is missing;
``weights="/path/file.h5"`` loads a file Keras wrote (``.h5``, ``.weights.h5`` or ``.keras``).
Each family's module has Keras's ``preprocess_input`` and ``decode_predictions``.

Example:
    >>> from unison.keras import applications
    >>> model = applications.MobileNetV2(weights=None, input_shape=(32, 32, 3), alpha=0.35, classes=10)
    >>> model.name, model.count_params()
    ('mobilenetv2_0.35_32', 423018)
"""

from unison.keras.applications import (
    convnext,
    densenet,
    efficientnet,
    efficientnet_v2,
    imagenet_utils,
    inception_resnet_v2,
    inception_v3,
    mobilenet,
    mobilenet_v2,
    mobilenet_v3,
    nasnet,
    regnet,
    resnet,
    resnet50,
    resnet_rs,
    resnet_v2,
    vgg16,
    vgg19,
    xception,
)
from unison.keras.applications.convnext import (
    ConvNeXtBase,
    ConvNeXtLarge,
    ConvNeXtSmall,
    ConvNeXtTiny,
    ConvNeXtXLarge,
)
from unison.keras.applications.densenet import DenseNet121, DenseNet169, DenseNet201
from unison.keras.applications.efficientnet import (
    EfficientNetB0,
    EfficientNetB1,
    EfficientNetB2,
    EfficientNetB3,
    EfficientNetB4,
    EfficientNetB5,
    EfficientNetB6,
    EfficientNetB7,
)
from unison.keras.applications.efficientnet_v2 import (
    EfficientNetV2B0,
    EfficientNetV2B1,
    EfficientNetV2B2,
    EfficientNetV2B3,
    EfficientNetV2L,
    EfficientNetV2M,
    EfficientNetV2S,
)
from unison.keras.applications.inception_resnet_v2 import InceptionResNetV2
from unison.keras.applications.inception_v3 import InceptionV3
from unison.keras.applications.mobilenet import MobileNet
from unison.keras.applications.mobilenet_v2 import MobileNetV2
from unison.keras.applications.mobilenet_v3 import MobileNetV3Large, MobileNetV3Small
from unison.keras.applications.nasnet import NASNetLarge, NASNetMobile
from unison.keras.applications.regnet import (
    RegNetX002,
    RegNetX004,
    RegNetX006,
    RegNetX008,
    RegNetX016,
    RegNetX032,
    RegNetX040,
    RegNetX064,
    RegNetX080,
    RegNetX120,
    RegNetX160,
    RegNetX320,
    RegNetY002,
    RegNetY004,
    RegNetY006,
    RegNetY008,
    RegNetY016,
    RegNetY032,
    RegNetY040,
    RegNetY064,
    RegNetY080,
    RegNetY120,
    RegNetY160,
    RegNetY320,
)
from unison.keras.applications.resnet import ResNet50, ResNet101, ResNet152
from unison.keras.applications.resnet_rs import (
    ResNetRS50,
    ResNetRS101,
    ResNetRS152,
    ResNetRS200,
    ResNetRS270,
    ResNetRS350,
    ResNetRS420,
)
from unison.keras.applications.resnet_v2 import ResNet50V2, ResNet101V2, ResNet152V2
from unison.keras.applications.vgg16 import VGG16
from unison.keras.applications.vgg19 import VGG19
from unison.keras.applications.xception import Xception

__all__ = [
    "ConvNeXtBase",
    "ConvNeXtLarge",
    "ConvNeXtSmall",
    "ConvNeXtTiny",
    "ConvNeXtXLarge",
    "DenseNet121",
    "DenseNet169",
    "DenseNet201",
    "EfficientNetB0",
    "EfficientNetB1",
    "EfficientNetB2",
    "EfficientNetB3",
    "EfficientNetB4",
    "EfficientNetB5",
    "EfficientNetB6",
    "EfficientNetB7",
    "EfficientNetV2B0",
    "EfficientNetV2B1",
    "EfficientNetV2B2",
    "EfficientNetV2B3",
    "EfficientNetV2L",
    "EfficientNetV2M",
    "EfficientNetV2S",
    "InceptionResNetV2",
    "InceptionV3",
    "MobileNet",
    "MobileNetV2",
    "MobileNetV3Large",
    "MobileNetV3Small",
    "NASNetLarge",
    "NASNetMobile",
    "RegNetX002",
    "RegNetX004",
    "RegNetX006",
    "RegNetX008",
    "RegNetX016",
    "RegNetX032",
    "RegNetX040",
    "RegNetX064",
    "RegNetX080",
    "RegNetX120",
    "RegNetX160",
    "RegNetX320",
    "RegNetY002",
    "RegNetY004",
    "RegNetY006",
    "RegNetY008",
    "RegNetY016",
    "RegNetY032",
    "RegNetY040",
    "RegNetY064",
    "RegNetY080",
    "RegNetY120",
    "RegNetY160",
    "RegNetY320",
    "ResNet101",
    "ResNet101V2",
    "ResNet152",
    "ResNet152V2",
    "ResNet50",
    "ResNet50V2",
    "ResNetRS101",
    "ResNetRS152",
    "ResNetRS200",
    "ResNetRS270",
    "ResNetRS350",
    "ResNetRS420",
    "ResNetRS50",
    "VGG16",
    "VGG19",
    "Xception",
    "convnext",
    "densenet",
    "efficientnet",
    "efficientnet_v2",
    "imagenet_utils",
    "inception_resnet_v2",
    "inception_v3",
    "mobilenet",
    "mobilenet_v2",
    "mobilenet_v3",
    "nasnet",
    "regnet",
    "resnet",
    "resnet50",
    "resnet_rs",
    "resnet_v2",
    "vgg16",
    "vgg19",
    "xception",
]
