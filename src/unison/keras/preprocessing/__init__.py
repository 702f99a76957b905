"""``keras.preprocessing``: the Keras 2 paths programs still import (``sequence.pad_sequences``,
``image.load_img`` / ``img_to_array`` / ``array_to_img``).

Example:
    >>> from unison.keras.preprocessing.sequence import pad_sequences
    >>> pad_sequences([[1, 2]], maxlen=3).tolist()
    [[0, 1, 2]]
"""

from unison.keras.preprocessing import image, sequence

__all__ = ["image", "sequence"]
