"""``keras.preprocessing.image``: ``load_img``, ``img_to_array``, ``array_to_img``, ``save_img``,
``smart_resize``, and Keras 2's ``ImageDataGenerator``, its iterators and image transforms.

Keras 2's path to the image functions Keras 3 keeps in ``keras.utils`` (``utils/image_utils.py``
holds them; this package only re-exports, so it imports ``utils/`` and never the other way);
``image_generator.py``, ``image_iterators.py`` and ``image_transforms.py`` hold the rest.

Example:
    >>> import numpy as np
    >>> img = array_to_img(np.zeros((2, 3, 3)), scale=False)
    >>> img.size, img_to_array(img).shape
    ((3, 2), (2, 3, 3))
"""

from unison.keras.preprocessing.image_generator import ImageDataGenerator
from unison.keras.preprocessing.image_iterators import DirectoryIterator, Iterator, NumpyArrayIterator
from unison.keras.preprocessing.image_transforms import (
    apply_affine_transform,
    apply_brightness_shift,
    apply_channel_shift,
    random_brightness,
    random_channel_shift,
    random_rotation,
    random_shear,
    random_shift,
    random_zoom,
    smart_resize,
)
from unison.keras.utils.image_utils import array_to_img, img_to_array, load_img, save_img

__all__ = [
    "DirectoryIterator",
    "ImageDataGenerator",
    "Iterator",
    "NumpyArrayIterator",
    "apply_affine_transform",
    "apply_brightness_shift",
    "apply_channel_shift",
    "array_to_img",
    "img_to_array",
    "load_img",
    "random_brightness",
    "random_channel_shift",
    "random_rotation",
    "random_shear",
    "random_shift",
    "random_zoom",
    "save_img",
    "smart_resize",
]
