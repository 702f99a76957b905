"""The training loop of ``keras.Model`` (Keras 3's ``trainers/``): what ``fit``/``evaluate``/``predict`` run.

``trainer.py`` holds the mixin ``Model`` inherits (``train_step``/``test_step``/``predict_step``,
``compute_loss``, ``metrics``; it owns the model's ``_training_state``), ``state.py`` that state
(placement, optimizer and its ``DistributedOptimizer``, loss scaling, metric states), ``loop.py``
the one loop, ``local_steps.py`` and ``coordinated_steps.py`` the two step executors (the
strategy picks one through ``Strategy.step_executor``), ``data_adapters.py`` and
``compile_utils.py`` the data and the compiled losses/metrics. It may import layers, losses,
metrics, optimizers, mixed_precision, callbacks and ``unison.distribute``; never models (the model
is the argument) nor saving.

Example:
    >>> from unison.keras.trainers.trainer import StepMethods
    >>> from unison import keras
    >>> issubclass(keras.Model, StepMethods)
    True
"""
