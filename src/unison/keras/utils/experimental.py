"""``tf.keras.utils.experimental.DatasetCreator``: a dataset built by each worker from a function.

Example:
    >>> from unison.distribute import InputContext
    >>> creator = DatasetCreator(lambda ctx: [ctx.input_pipeline_id] * 2)
    >>> creator(InputContext(num_input_pipelines=2, input_pipeline_id=1))
    [1, 1]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class DatasetCreator:
    """Wraps ``dataset_fn(input_context) -> iterable of batches`` for ``model.fit``.

    Under ``ParameterServerStrategy`` every worker calls it with its own ``InputContext``
    (``input_pipeline_id`` = the worker's index) and reads its batches from the result; under
    any other strategy each replica (one process each) calls it and reads per-replica batches,
    as ``distribute_datasets_from_function`` does.

    Args:
        dataset_fn: the function; it should return an endless iterable (repeat the data), as
            ``fit`` bounds each epoch with ``steps_per_epoch``.
        input_options: a ``tf.distribute.InputOptions`` (accepted for TF compatibility; unused).
    """

    def __init__(self, dataset_fn: Callable[..., Any], input_options: Any = None) -> None:
        if not callable(dataset_fn):
            raise TypeError(f"DatasetCreator takes a function of an InputContext. Received: {dataset_fn!r}")
        if input_options is not None:
            from unison.distribute.input_options import InputOptions

            if not isinstance(input_options, InputOptions):
                raise TypeError(
                    "`input_options` for `DatasetCreator` must be a `tf.distribute.InputOptions`. "
                    f"Received: {input_options!r}"
                )
        self.dataset_fn = dataset_fn
        self.input_options = input_options

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.dataset_fn(*args, **kwargs)


__all__ = ["DatasetCreator"]
