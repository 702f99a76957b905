"""TF's tensor functions over torch: one module per TF namespace.

``math`` is ``tf.math``, ``random`` is ``tf.random``, ``config`` is ``tf.config``, ``nn`` holds
``tf.nn``'s pure functions (``unison.nn`` re-exports them beside the strategy-aware ones),
``array`` the top-level array functions, ``dtypes`` the dtypes and conversion rules.
"""
