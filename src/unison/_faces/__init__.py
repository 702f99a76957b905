"""TF namespaces composed from the rooms below them, under TF's names: ``tf.nn``, ``tf.io``.

Owns the glue that no single room can hold: :mod:`~unison._faces.nn` (``tf.nn``: ``ops.nn``'s
functions with the strategy-aware ``compute_average_loss``), :mod:`~unison._faces.io` (``tf.io``:
``gfile`` and parsing from ``ops``, TFRecord files from ``data``) and
:mod:`~unison._faces.keras_saving` (hands Keras's save/load to ``tf.saved_model``). It may import
every room below it (``keras``, ``saved_model``, ``distribute``, ``data``, ``core``, ``ops``, ...);
never ``horovod`` (its sibling) or the package face ``unison/__init__.py``, which imports it.

Example:
    >>> import unison as tf
    >>> tf.nn.__name__, tf.io.__name__
    ('unison._faces.nn', 'unison._faces.io')
"""
