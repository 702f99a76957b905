"""``keras.mixed_precision``: dtype policies (``policy.py``) and loss scaling (``loss_scale.py``).

``policy.py`` sits low: layers import it to compute under their policy. ``loss_scale.py`` builds
``LossScaleOptimizer`` on ``keras.optimizers``. Neither imports layers, models or trainers.

Example:
    >>> from unison.keras import mixed_precision
    >>> mixed_precision.Policy("mixed_float16").compute_dtype
    'float16'
"""

from unison.keras.mixed_precision.loss_scale import LossScaleOptimizer
from unison.keras.mixed_precision.policy import (
    DTypePolicy,
    DTypePolicyMixin,
    Policy,
    get,
    global_policy,
    policy_scope,
    set_global_policy,
)

__all__ = [
    "DTypePolicy",
    "DTypePolicyMixin",
    "LossScaleOptimizer",
    "Policy",
    "get",
    "global_policy",
    "policy_scope",
    "set_global_policy",
]
