"""``tf.math`` functions torch lacks, computed by SciPy: ``betainc`` and the special functions
``dawsn``, ``expint``, ``fresnel_cos``, ``fresnel_sin``, ``spence``; and ``approx_max_k``/``approx_min_k``.

SciPy is optional (the ``tf`` extra installs it): without it these functions raise an ImportError
saying how to install it. Values are computed in float64 and returned in the input's dtype (float32
or float64, as TF accepts); they carry no gradient (TF's have one; use them on data, not parameters).

Example:
    >>> import unison as tf
    >>> round(float(tf.math.betainc(2.0, 3.0, 0.5)), 6)
    0.6875
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import torch

from unison.errors import InvalidArgumentError
from unison.ops.dtypes import to_tensor

__all__ = ["approx_max_k", "approx_min_k", "betainc", "dawsn", "expint", "fresnel_cos", "fresnel_sin", "spence"]


def _scipy_special() -> Any:
    try:
        import scipy.special
    except ImportError as error:
        raise ImportError(
            "This tf.math function is computed with SciPy, which is not installed. Install it: "
            "pip install scipy (or pip install 'unison[tf]')."
        ) from error
    return scipy.special


def _floats(x: Any, fn: str) -> torch.Tensor:
    t = to_tensor(x)
    if t.dtype not in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        raise InvalidArgumentError(
            None, None, f"tf.math.{fn} takes float16, bfloat16, float32 or float64 values. Received dtype {t.dtype}."
        )
    return t


def _elementwise(name: str, compute: Callable[[Any, np.ndarray], np.ndarray]) -> Callable[..., torch.Tensor]:
    def fn(x: Any, name: str | None = None) -> torch.Tensor:
        t = _floats(x, fn.__name__)
        out = compute(_scipy_special(), t.detach().cpu().double().numpy())
        return torch.from_numpy(np.asarray(out, dtype=np.float64)).to(t.dtype).to(t.device)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``tf.math.special.{name}(x)``, elementwise (SciPy)."
    return fn


dawsn = _elementwise("dawsn", lambda sp, x: sp.dawsn(x))
# TF's expint is the exponential integral Ei(x) (NaN below 0, as TF's for negative x)
expint = _elementwise("expint", lambda sp, x: np.where(x < 0, np.nan, sp.expi(x)))
fresnel_cos = _elementwise("fresnel_cos", lambda sp, x: sp.fresnel(x)[1])
fresnel_sin = _elementwise("fresnel_sin", lambda sp, x: sp.fresnel(x)[0])
spence = _elementwise("spence", lambda sp, x: sp.spence(x))


def betainc(a: Any, b: Any, x: Any, name: str | None = None) -> torch.Tensor:
    """``tf.math.betainc``: the regularized incomplete beta function I_x(a, b), broadcasting a, b and x.

    The three arguments must share one dtype (float32 or float64), as in TF; NaN where undefined.

    Example:
        >>> float(betainc(1.0, 1.0, 0.25))
        0.25
    """
    ta, tb, tx = (_floats(v, "betainc") for v in (a, b, x))
    if not (ta.dtype == tb.dtype == tx.dtype):
        raise InvalidArgumentError(
            None,
            None,
            f"tf.math.betainc needs a, b and x of one dtype. Received {ta.dtype}, {tb.dtype} and {tx.dtype}: cast them first.",
        )
    shapes = [tuple(t.shape) for t in (ta, tb, tx) if t.dim()]
    if len(set(shapes)) > 1:  # TF does not broadcast: each is a scalar or all share one shape
        raise InvalidArgumentError(
            None,
            None,
            f"tf.math.betainc: shapes of a, b and x are inconsistent: {[list(t.shape) for t in (ta, tb, tx)]}. "
            "Give them one shape (scalars are allowed); tf.broadcast_to can make them match.",
        )
    shape = shapes[0] if shapes else ()
    ta, tb, tx = (t.expand(shape) for t in (ta, tb, tx))
    sp = _scipy_special()
    na, nb, nx = (t.detach().cpu().double().numpy() for t in (ta, tb, tx))
    with np.errstate(invalid="ignore"):
        out = sp.betainc(na, nb, nx)
        # TF: NaN outside a > 0, b > 0, 0 <= x <= 1
        out = np.where((na > 0) & (nb > 0) & (nx >= 0) & (nx <= 1), out, np.nan)
    return torch.from_numpy(np.asarray(out, dtype=np.float64)).to(tx.dtype)


class ApproxTopK(NamedTuple):
    """``tf.math.approx_max_k``'s result: ``values`` and their ``indices`` (int32)."""

    values: torch.Tensor
    indices: torch.Tensor


def approx_max_k(
    operand: Any,
    k: int,
    reduction_dimension: int = -1,
    recall_target: float = 0.95,
    reduction_input_size_override: int = -1,
    aggregate_to_topk: bool = True,
    name: str | None = None,
) -> ApproxTopK:
    """``tf.math.approx_max_k``: the ``k`` largest values along ``reduction_dimension`` and their indices.

    TF's CPU kernel gives the exact top k (the approximation is a TPU speed-up); so does this.
    NaN ranks below every number.

    Example:
        >>> values, indices = approx_max_k([[1.0, 5.0, 3.0]], 2)
        >>> values.tolist(), indices.tolist()
        ([[5.0, 3.0]], [[1, 2]])
    """
    t = to_tensor(operand)
    if t.dtype not in (torch.float16, torch.bfloat16, torch.float32):
        raise InvalidArgumentError(
            None, None, f"tf.math.approx_max_k takes half, bfloat16 or float values (as TF). Received dtype {t.dtype}."
        )
    dim = reduction_dimension % t.dim() if t.dim() else 0
    if not 0 < int(k) <= t.shape[dim]:
        raise InvalidArgumentError(
            None,
            None,
            f"tf.math.approx_max_k: k must be in [1, {t.shape[dim]}] (the size of the reduced dimension). Received: k={k}.",
        )
    # TF's kernel never picks NaN over a number: rank NaN lowest, return the values at the picks
    key = torch.where(torch.isnan(t), torch.full_like(t, float("-inf")), t)
    _, indices = torch.topk(key, int(k), dim=dim, largest=True, sorted=True)
    return ApproxTopK(torch.gather(t, dim, indices), indices.to(torch.int32))


def approx_min_k(
    operand: Any,
    k: int,
    reduction_dimension: int = -1,
    recall_target: float = 0.95,
    reduction_input_size_override: int = -1,
    aggregate_to_topk: bool = True,
    name: str | None = None,
) -> ApproxTopK:
    """``tf.math.approx_min_k``: the ``k`` smallest values along ``reduction_dimension`` and their indices.

    TF runs it through XLA (``tf.function(jit_compile=True)``) or on a GPU/TPU (its CPU kernel
    takes only ``approx_max_k``); XLA's CPU result is the exact bottom k, ties by lowest index,
    which is what this gives everywhere. NaN ranks above every number here (XLA's place for it
    depends on the values around it).

    Example:
        >>> values, indices = approx_min_k([[3.0, 1.0, 2.0, 5.0]], 2)
        >>> values.tolist(), indices.tolist()
        ([[1.0, 2.0]], [[1, 2]])
    """
    t = to_tensor(operand)
    if t.dtype not in (torch.float16, torch.bfloat16, torch.float32):
        raise InvalidArgumentError(
            None, None, f"tf.math.approx_min_k takes half, bfloat16 or float values (as TF). Received dtype {t.dtype}."
        )
    dim = reduction_dimension % t.dim() if t.dim() else 0
    if not 0 < int(k) <= t.shape[dim]:
        raise ValueError(  # TF's shape check when the function is traced
            f"input must have last dimension >= k = {k} but was {t.shape[dim]}: tf.math.approx_min_k's k must be "
            f"in [1, {t.shape[dim]}] (the size of the reduced dimension)."
        )
    key = torch.where(torch.isnan(t), torch.full_like(t, float("inf")), t)
    order = torch.sort(key, dim=dim, stable=True).indices.narrow(dim, 0, int(k))
    return ApproxTopK(torch.gather(t, dim, order), order.to(torch.int32))
