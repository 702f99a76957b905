"""``keras.preprocessing.sequence``: ``pad_sequences`` (the same function as ``keras.utils.pad_sequences``)
and Keras 2's ``TimeseriesGenerator``, ``make_sampling_table``, ``skipgrams`` (``sequence_tools.py``)."""

from unison.keras.preprocessing.sequence_tools import TimeseriesGenerator, make_sampling_table, skipgrams
from unison.keras.utils.sequence_utils import pad_sequences

__all__ = ["TimeseriesGenerator", "make_sampling_table", "pad_sequences", "skipgrams"]
