"""``model.export(filepath, format=...)``: a Keras model as a file that serving systems run.

Keras 3's formats and spelling (``export(filepath, format="tf_saved_model", verbose=True,
input_signature=None, **kwargs)``):

* ``"onnx"``: an ONNX file through torch's exporter (:mod:`unison.keras.export.onnx`); needs the
  ``onnx`` extra; run it with onnxruntime.
* ``"tf_saved_model"``: a TensorFlow SavedModel folder (``saved_model.pb`` + ``variables/``,
  ``serving_default`` signature) that TensorFlow writes in a child process
  (:mod:`unison.saved_model.tf_graph`); needs the ``export-tf`` extra. The folder also holds
  unison's own files, so ``tf.saved_model.load`` in unison reads it back.

For PyTorch serving, :class:`~unison.keras.export.serving.ServingModule` is the model as a
module of flat tensors for ``torch.export.export`` or TorchScript (docs/export.md).

Example:
    >>> import os, tempfile, unison as tf
    >>> model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
    >>> model.export(os.path.join(tempfile.mkdtemp(), "m.onnx"), format="onnx", verbose=False)  # doctest: +SKIP
"""

from __future__ import annotations

import os
from typing import Any

from unison.errors import UnknownExportFormatError, did_you_mean
from unison.keras.export.serving import ServingInput, ServingModule, example_inputs, input_specs

__all__ = ["FORMATS", "ServingInput", "ServingModule", "example_inputs", "export_model", "input_specs"]

FORMATS = ("tf_saved_model", "onnx")


def export_model(
    model: Any,
    filepath: str | os.PathLike[str],
    format: str = "tf_saved_model",
    verbose: bool | None = True,
    input_signature: Any = None,
    **kwargs: Any,
) -> None:
    """What ``Model.export`` does (see the module doc); only the chief writes.

    Raises:
        UnknownExportFormatError: ``format`` is not one of :data:`FORMATS`.
        ModelNotBuiltError: the model's input shape is not known (and no ``input_signature``).
        ExportDependencyError: the format's packages are not installed (names the extra).
        OnnxExportError, SavedModelExportError: the model cannot be written in that format.
    """
    if format not in FORMATS:
        hint = " 'tf_saved_model' writes the SavedModel TF Serving reads." if format in ("tf", "saved_model") else ""
        raise UnknownExportFormatError(
            f"Unrecognized format={format!r}{did_you_mean(str(format), FORMATS)}. model.export supports "
            f"{list(FORMATS)}.{hint} For a Keras file use model.save('model.keras'); for PyTorch serving use "
            "torch.export (docs/export.md)."
        )
    path = os.fspath(filepath)
    specs = input_specs(model, input_signature)  # a model without input shape fails here, on every replica
    if format == "tf_saved_model" and input_signature is not None:
        raise NotImplementedError(
            "model.export(format='tf_saved_model', input_signature=...) is not supported: TensorFlow rebuilds "
            "the model from its architecture, so the SavedModel takes the model's own inputs. Drop "
            "input_signature= (or use format='onnx', which takes it)."
        )
    if kwargs:
        raise TypeError(f"model.export(format='tf_saved_model') got unexpected arguments: {sorted(kwargs)}")
    chief = model.distribute_strategy.extended.should_checkpoint
    with model._weights_gathered():  # a sharded model gathers on every replica; the chief writes
        if chief and format == "onnx":
            from unison.keras.export.onnx import export_onnx

            export_onnx(model, path, specs, verbose=bool(verbose), **kwargs)
        elif chief:
            from unison.saved_model import write_serving_export

            write_serving_export(model, path)
            if verbose:
                print(f"Saved artifact at '{path}'.")
    model._wait_for_chief("export")
