"""``keras.applications.resnet50``: Keras's older home of ResNet50 and its ``"caffe"`` preprocessing.

Example:
    >>> from unison.keras.applications import resnet
    >>> ResNet50 is resnet.ResNet50
    True
"""

from __future__ import annotations

from unison.keras.applications.resnet import ResNet50, decode_predictions, preprocess_input

__all__ = ["ResNet50", "decode_predictions", "preprocess_input"]
