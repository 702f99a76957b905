"""``tf.tools.docs``: the decorators that steer TF's API-documentation generator.

Example:
    >>> import unison as tf
    >>> def helper():
    ...     return 1
    >>> tf.tools.docs.doc_controls.do_not_generate_docs(helper) is helper
    True
"""

from unison.ops.tools.docs import doc_controls as doc_controls

__all__ = ["doc_controls"]
