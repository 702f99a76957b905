"""``keras.metrics.experimental`` (Keras 2, ``tf_keras``): ``PyMetric``.

Example:
    >>> from unison.keras.metrics import experimental
    >>> experimental.PyMetric.__name__
    'PyMetric'
"""

from unison.keras.metrics.host_metrics import PyMetric

__all__ = ["PyMetric"]
