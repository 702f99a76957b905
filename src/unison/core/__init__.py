"""TensorFlow's core on torch: ``GradientTape``, ``Variable``, ``function``, ``Module``, ``summary``, ``profiler``.

Owns the eager core a TF program is written against (TF's ``eager/``, ``framework/``, ``module/``,
``summary/``): :mod:`~unison.core.tape`, :mod:`~unison.core.variables`, :mod:`~unison.core.function`,
:mod:`~unison.core.module`, :mod:`~unison.core.summary`, :mod:`~unison.core.profiler`, and
:mod:`~unison.core.atomic_io`, the one atomic, verified file writer every room may use. It may import
``ops`` and ``errors`` (``atomic_io`` only ``errors``); never ``data``, ``distribute`` or ``keras``.
This file imports nothing, so a low room that writes files through ``atomic_io`` loads no more of
the core; the public names are ``unison.GradientTape``, ``unison.Variable``, ...

Example:
    >>> import unison as tf
    >>> tf.GradientTape.__module__
    'unison.core.tape'
"""
