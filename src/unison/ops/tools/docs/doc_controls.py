"""``tf.tools.docs.doc_controls``: marks that TF's documentation generator reads from objects.

Libraries written for TF decorate their classes and methods with these (Keras, TF-Agents, TFP do);
each sets the attribute TF's generator looks for and returns the object itself, so code importing
them runs unchanged and a documentation tool reading the marks finds TF's names.

Example:
    >>> from unison.ops.tools.docs import doc_controls
    >>> @doc_controls.do_not_generate_docs
    ... def helper():
    ...     return 1
    >>> helper(), hasattr(helper, "_tf_docs_do_not_document")
    (1, True)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Optional, TypeVar

__all__ = [
    "Optional",
    "T",
    "TypeVar",
    "do_not_doc_in_subclasses",
    "do_not_doc_inheritable",
    "do_not_generate_docs",
    "doc_in_current_and_subclasses",
    "doc_private",
    "for_subclass_implementers",
    "get_header",
    "get_inheritable_header",
    "header",
    "inheritable_header",
    "set_deprecated",
]

T = TypeVar("T")

# The attribute names are TF's: documentation tools built for TF read exactly these.
_DEPRECATED = "_tf_docs_deprecated"
_INHERITABLE_HEADER = "_tf_docs_inheritable_header"
_DO_NOT_DOC = "_tf_docs_do_not_document"
_DO_NOT_DOC_INHERITABLE = "_tf_docs_do_not_doc_inheritable"
_FOR_SUBCLASS_IMPLEMENTERS = "_tf_docs_tools_for_subclass_implementers"
_DOC_PRIVATE = "_tf_docs_doc_private"
_DOC_IN_CURRENT_AND_SUBCLASSES = "_tf_docs_doc_in_current_and_subclasses"


def _marker(attribute: str, doc: str) -> Callable[[T], T]:
    def mark(obj: T) -> T:
        setattr(obj, attribute, None)
        return obj

    mark.__doc__ = doc
    return mark


set_deprecated = _marker(_DEPRECATED, "Marks ``obj`` deprecated in the generated docs; returns ``obj``.")
do_not_generate_docs = _marker(_DO_NOT_DOC, "Leaves ``obj`` out of the generated docs; returns ``obj``.")
do_not_doc_inheritable = _marker(
    _DO_NOT_DOC_INHERITABLE, "Leaves ``obj`` and its overrides in subclasses out of the docs; returns ``obj``."
)
for_subclass_implementers = _marker(
    _FOR_SUBCLASS_IMPLEMENTERS, "Documents ``obj`` only in the class that defines it; returns ``obj``."
)
do_not_doc_in_subclasses = for_subclass_implementers
doc_private = _marker(_DOC_PRIVATE, "Documents ``obj`` although its name starts with ``_``; returns ``obj``.")
doc_in_current_and_subclasses = _marker(
    _DOC_IN_CURRENT_AND_SUBCLASSES, "Documents ``obj`` in its class and in every subclass; returns ``obj``."
)


def inheritable_header(text: str) -> Callable[[T], T]:
    """A decorator putting ``text`` at the top of a class's page and its subclasses' pages.

    Example:
        >>> @inheritable_header("Experimental")
        ... class Base:
        ...     pass
        >>> class Child(Base):
        ...     pass
        >>> get_inheritable_header(Child)
        'Experimental'
    """

    def wrapped(cls: T) -> T:
        setattr(cls, _INHERITABLE_HEADER, text)
        return cls

    return wrapped


def get_inheritable_header(obj: object) -> str | None:
    """The header set by :func:`inheritable_header` on ``obj`` or a base class, else None."""
    return getattr(obj, _INHERITABLE_HEADER, None)


header = inheritable_header
get_header = get_inheritable_header
