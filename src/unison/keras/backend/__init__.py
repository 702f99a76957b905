"""``keras.backend``: Keras 3's backend functions and settings, plus the Keras 2 ``K.*`` tensor functions.

Settings (:mod:`.config`): ``epsilon``, ``floatx`` (torch's default dtype), ``image_data_format``
and their setters. Keras 3 (:mod:`.common`): ``backend()`` (``"torch"``), ``clear_session``,
``is_keras_tensor``, ``standardize_dtype``, ``int_shape``, ``get_value``/``set_value``,
``count_params``, ``variable``... Keras 2 (:mod:`.legacy`): ``mean``, ``sum``, ``square``, ``sqrt``,
``concatenate``, ``batch_dot``, ``random_normal``..., delegating to :mod:`unison.keras.ops`.

Example:
    >>> from unison.keras import backend as K
    >>> K.backend(), K.floatx(), K.epsilon()
    ('torch', 'float32', 1e-07)
    >>> K.mean(K.square(K.constant([1.0, 3.0]))).item()
    5.0
"""

from unison.keras.backend import common, config, legacy, legacy_ctc, legacy_nn
from unison.keras.backend import experimental as experimental
from unison.keras.backend.common import *  # noqa: F403
from unison.keras.backend.config import *  # noqa: F403
from unison.keras.backend.legacy import *  # noqa: F403
from unison.keras.backend.legacy_ctc import *  # noqa: F403
from unison.keras.backend.legacy_nn import *  # noqa: F403

__all__ = sorted(
    {*common.__all__, *config.__all__, *legacy.__all__, *legacy_ctc.__all__, *legacy_nn.__all__, "experimental"}
)


def __getattr__(name: str) -> object:
    from unison.ops._unsupported import unsupported

    raise unsupported("keras.backend", name)
