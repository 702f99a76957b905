"""``tf.tools``: the part of TF's tooling a program imports, ``tf.tools.docs.doc_controls``.

Example:
    >>> import unison as tf
    >>> @tf.tools.docs.doc_controls.header("Experimental")
    ... class Layer:
    ...     pass
    >>> tf.tools.docs.doc_controls.get_header(Layer)
    'Experimental'
"""

from unison.ops.tools import docs as docs

__all__ = ["docs"]
