"""``keras.preprocessing``: the Keras 2 paths programs still import (``sequence.pad_sequences``,
``image.load_img`` / ``img_to_array`` / ``array_to_img``, ``text.Tokenizer``, and ``image_dataset_from_directory``,
``text_dataset_from_directory``, ``timeseries_dataset_from_array`` as TF 2's ``tf.keras.preprocessing``
exported them).

Example:
    >>> from unison.keras.preprocessing.sequence import pad_sequences
    >>> pad_sequences([[1, 2]], maxlen=3).tolist()
    [[0, 1, 2]]
"""

from unison.keras.preprocessing import image, sequence, text
from unison.keras.utils.image_dataset import image_dataset_from_directory
from unison.keras.utils.text_dataset import text_dataset_from_directory
from unison.keras.utils.timeseries import timeseries_dataset_from_array

__all__ = [
    "image",
    "image_dataset_from_directory",
    "sequence",
    "text",
    "text_dataset_from_directory",
    "timeseries_dataset_from_array",
]
