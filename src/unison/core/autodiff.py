"""``tf.autodiff``: ``GradientTape`` (reverse mode) and ``ForwardAccumulator`` (forward mode).

``ForwardAccumulator(primals, tangents)`` gives Jacobian-vector products of what is computed from
``primals`` inside its ``with`` block. TF propagates tangents forward op by op; here the product is
computed when asked, by differentiating a vector-Jacobian product with respect to its vector (the
"double backward" identity ``J v = d/du (u^T J) v``), which gives the same numbers from torch's
reverse mode without replacing the user's tensors by dual numbers. As in TF, ``jvp`` of a tensor
that does not depend on the primals is None (or zeros with ``unconnected_gradients="zero"``).

Example:
    >>> import unison as tf
    >>> x = tf.constant([1.0, 2.0])
    >>> with tf.autodiff.ForwardAccumulator(primals=x, tangents=tf.constant([1.0, 0.0])) as acc:
    ...     y = x * x
    >>> acc.jvp(y).tolist()
    [2.0, 0.0]
"""

from __future__ import annotations

from typing import Any

import torch

from unison.core.tape import GradientTape, UnconnectedGradients
from unison.ops import tree

__all__ = ["ForwardAccumulator", "GradientTape"]


class ForwardAccumulator:
    """``tf.autodiff.ForwardAccumulator``: Jacobian-vector products with respect to ``primals``.

    Unlike TF, which fails at the first op, a tangent whose shape is not its primal's is an error at
    construction.

    Args:
        primals: a tensor or variable, or a nested structure of them, to differentiate with respect to.
        tangents: the direction, a structure like ``primals`` with tensors of the same shapes.

    Example:
        >>> import unison as tf
        >>> v = tf.Variable(3.0)
        >>> with tf.autodiff.ForwardAccumulator(v, tf.constant(2.0)) as acc:
        ...     loss = v**2
        >>> float(acc.jvp(loss))
        12.0
    """

    def __init__(self, primals: Any, tangents: Any) -> None:
        primal_list, tangent_list = tree.flatten(primals), tree.flatten(tangents)
        if len(primal_list) != len(tangent_list):
            raise ValueError(
                "ForwardAccumulator needs one tangent per primal. Received "
                f"{len(primal_list)} primals and {len(tangent_list)} tangents."
            )
        self._primals: list[torch.Tensor] = []
        self._tangents: list[torch.Tensor] = []
        for p, t in zip(primal_list, tangent_list):
            if not isinstance(p, torch.Tensor):
                raise TypeError(f"ForwardAccumulator's primals must be tensors or variables. Received: {p!r:.80}")
            t = torch.as_tensor(t, dtype=p.dtype) if not isinstance(t, torch.Tensor) else t
            if tuple(t.shape) != tuple(p.shape):
                raise ValueError(
                    f"ForwardAccumulator's tangent has shape {list(t.shape)} but its primal has shape "
                    f"{list(p.shape)}: each tangent must have its primal's shape."
                )
            if p.is_floating_point() or p.is_complex():
                if not p.requires_grad:
                    p.requires_grad_(True)  # as GradientTape.watch: recorded from here on
                self._primals.append(p)
                self._tangents.append(t.to(p.dtype))
        self._active = False

    def __enter__(self) -> ForwardAccumulator:
        self._active = True
        return self

    def __exit__(self, *exc: object) -> None:
        self._active = False

    def jvp(self, primals: Any, unconnected_gradients: UnconnectedGradients | str = UnconnectedGradients.NONE) -> Any:
        """The Jacobian-vector product of each tensor of ``primals`` (a nested structure) with the tangents."""
        zero = str(getattr(unconnected_gradients, "value", unconnected_gradients)) == "zero"
        return tree.map_structure(lambda y: self._jvp(y, zero), primals)

    def _jvp(self, y: Any, zero: bool) -> torch.Tensor | None:
        if not isinstance(y, torch.Tensor) or not y.requires_grad or not (y.is_floating_point() or y.is_complex()):
            return torch.zeros_like(torch.as_tensor(y)) if zero else None
        u = torch.zeros_like(y, requires_grad=True)
        grads = torch.autograd.grad(y, self._primals, grad_outputs=u, create_graph=True, allow_unused=True)
        pairs = [(g, t) for g, t in zip(grads, self._tangents) if g is not None and g.requires_grad]
        if not pairs:
            return torch.zeros_like(y).detach() if zero else None
        (out,) = torch.autograd.grad(
            [g for g, _ in pairs], u, grad_outputs=[t for _, t in pairs], retain_graph=True, allow_unused=True
        )
        if out is None:
            return torch.zeros_like(y).detach() if zero else None
        return out.detach()
