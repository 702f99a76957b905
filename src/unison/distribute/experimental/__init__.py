"""``tf.distribute.experimental``: options and strategies TF keeps under ``experimental``.

Example:
    >>> import unison as tf
    >>> opts = tf.distribute.experimental.CommunicationOptions(timeout_seconds=60)
    >>> opts.implementation is tf.distribute.experimental.CommunicationImplementation.AUTO
    True
"""

from unison.distribute.experimental import coordinator, partitioners
from unison.distribute.multi_worker import (
    CollectiveCommunication,
    CommunicationImplementation,
    CommunicationOptions,
)

from unison.distribute.parameter_server import ParameterServerStrategy

__all__ = ["CollectiveCommunication", "CommunicationImplementation", "CommunicationOptions",
           "ParameterServerStrategy", "coordinator", "partitioners"]
