"""The training loop of ``keras.Model`` (Keras 3's ``trainers/``): what ``fit``/``evaluate``/``predict`` run.

``trainer.py`` holds ``Trainer``, the first base of ``Model``: the steps
(``train_step``/``test_step``/``predict_step``), ``compute_loss``, ``metrics``, what a compiled
model trains with (compiled loss and metrics, loss tracker, the strategy's synchroniser, loss
scale) and ``fit_state_dict``; ``step_loss.py`` the loss a step differentiates and reports,
``model_setup.py`` the first build and placement, ``epoch_iterator.py`` one fit's data position,
seed and resume point, ``loop.py`` the one loop, ``local_steps.py`` and ``coordinated_steps.py``
the two step executors (the strategy picks one through ``Strategy.step_executor``),
``data_adapters/`` and ``compile_utils.py`` the data and the compiled losses/metrics. It may
import layers, losses, metrics, optimizers, mixed_precision, callbacks and ``unison.distribute``;
never models (the model is the argument) nor saving.

Example:
    >>> from unison.keras.trainers.trainer import Trainer
    >>> from unison import keras
    >>> issubclass(keras.Model, Trainer)
    True
"""
