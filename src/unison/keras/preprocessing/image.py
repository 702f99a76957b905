"""``keras.preprocessing.image``: ``load_img``, ``img_to_array``, ``array_to_img``, ``save_img``.

Keras 2's path to the image functions Keras 3 keeps in ``keras.utils`` (``utils/image_utils.py``
holds them; this package only re-exports, so it imports ``utils/`` and never the other way).

Example:
    >>> import numpy as np
    >>> img = array_to_img(np.zeros((2, 3, 3)), scale=False)
    >>> img.size, img_to_array(img).shape
    ((3, 2), (2, 3, 3))
"""

from unison.keras.utils.image_utils import array_to_img, img_to_array, load_img, save_img

__all__ = ["array_to_img", "img_to_array", "load_img", "save_img"]
