"""``keras.mixed_precision``: dtype policies (``keras/dtype_policies.py``) and loss scaling (``loss_scale.py``).

The policies sit low, in their own module: layers import them to compute under their policy.
``loss_scale.py`` builds ``LossScaleOptimizer`` on ``keras.optimizers``, so this folder is one tier
above the layers. Neither imports layers, models or trainers.

Example:
    >>> from unison.keras import mixed_precision
    >>> mixed_precision.Policy("mixed_float16").compute_dtype
    'float16'
"""

from unison.keras.dtype_policies import (
    DTypePolicy,
    DTypePolicyMixin,
    Policy,
    get,
    global_policy,
    policy_scope,
    set_global_policy,
)
from unison.keras.mixed_precision.loss_scale import LossScaleOptimizer

# Keras 3's newer spellings of global_policy / set_global_policy
dtype_policy = global_policy
set_dtype_policy = set_global_policy

__all__ = [
    "DTypePolicy",
    "DTypePolicyMixin",
    "LossScaleOptimizer",
    "Policy",
    "get",
    "global_policy",
    "dtype_policy",
    "policy_scope",
    "set_dtype_policy",
    "set_global_policy",
]
