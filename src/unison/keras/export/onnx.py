"""``model.export(path, format="onnx")``: an ONNX file through torch's exporter (``torch.onnx.export``).

torch 2.13's exporter traces the model with ``torch.export`` and converts the graph with
onnxscript, so it needs the ``onnx`` and ``onnxscript`` packages (``pip install 'unison[onnx]'``).
The file has Keras 3's names: inputs named after the model's ``keras.Input``s (``inputs`` for a
model that only knows its input shape), outputs ``output_0``, ``output_1``, ..., and a dynamic
batch axis wherever the input spec's batch size is ``None``.

Example:
    >>> import os, tempfile, unison as tf
    >>> model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
    >>> path = os.path.join(tempfile.mkdtemp(), "model.onnx")
    >>> model.export(path, format="onnx", verbose=False)  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import logging
import os
import re
import warnings
from collections.abc import Iterator
from typing import Any

import torch

from unison.errors import ExportDependencyError, OnnxExportError
from unison.keras.backend.torch_mode import set_torch_mode
from unison.keras.export.serving import ServingInput, ServingModule, example_inputs, output_names

__all__ = ["export_onnx", "onnx_available"]

_NEEDS = ("onnx", "onnxscript")
_MISSING_OP = re.compile(r"No ONNX function found for <OpOverload\(op='([^']+)'")


def onnx_available() -> bool:
    """Whether torch's ONNX exporter can run here (``onnx`` and ``onnxscript`` importable)."""
    return all(importlib.util.find_spec(name) is not None for name in _NEEDS)


@contextlib.contextmanager
def _quiet_exporter() -> Iterator[None]:
    """torch's exporter logs its steps and warns about optional packages (torchvision's ops)."""
    logger = logging.getLogger("torch.onnx")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            yield
    finally:
        logger.setLevel(level)


def _explain(error: BaseException, model_name: str) -> OnnxExportError:
    chain: list[str] = []
    cause: BaseException | None = error
    while cause is not None and len(chain) < 8:
        chain.append(str(cause))
        cause = cause.__cause__ or cause.__context__
    text = "\n".join(chain)
    missing = _MISSING_OP.search(text)
    if missing:
        return OnnxExportError(
            f"Model {model_name!r} cannot be exported to ONNX: it uses the torch op {missing.group(1)!r}, which "
            "torch's ONNX exporter has no conversion for. Replace it in the layer's call with ops ONNX has "
            "(see https://onnx.ai/onnx/operators/), register a conversion with "
            "torch.onnx.export(..., custom_translation_table=...), or export with format='tf_saved_model' or "
            "torch.export instead (docs/export.md)."
        )
    first = next((line for line in text.splitlines() if line.startswith("<class ")), text.splitlines()[0])
    return OnnxExportError(
        f"Model {model_name!r} cannot be exported to ONNX: torch.export could not trace its call ({first[:300]}). "
        "A call that branches in Python on tensor values, or returns something other than tensors, cannot be "
        "traced: use torch.cond / tensor ops for the branch, then export again (docs/export.md)."
    )


def export_onnx(
    model: torch.nn.Module,
    filepath: str,
    specs: list[ServingInput],
    verbose: bool = True,
    opset_version: int | None = None,
    **kwargs: Any,
) -> None:
    """Write ``model`` as an ONNX file at ``filepath`` (inputs ``specs``; see the module doc).

    Raises:
        ExportDependencyError: ``onnx`` or ``onnxscript`` is not installed.
        OnnxExportError: an op without an ONNX conversion, or a call torch.export cannot trace.
    """
    if not onnx_available():
        missing = [name for name in _NEEDS if importlib.util.find_spec(name) is None]
        raise ExportDependencyError(
            f"model.export(format='onnx') needs the packages {missing}, which are not installed. "
            "Install them with: pip install 'unison[onnx]' (onnx and onnxscript; onnxruntime to run the file)."
        )
    serving = ServingModule(model, specs)
    set_torch_mode(serving, False)
    device = next((p.device for p in model.parameters()), torch.device("cpu"))
    args = tuple(t.to(device) for t in example_inputs(specs))  # traced where the weights live
    with torch.no_grad():
        outputs = serving(*args)
    batch = torch.export.Dim("batch")
    dynamic = tuple({0: batch} if spec.shape[0] is None else None for spec in specs)
    was_training = model.training
    try:
        with _quiet_exporter():
            torch.onnx.export(
                serving,
                args,
                filepath,
                input_names=[spec.name for spec in specs],
                output_names=output_names(len(outputs)),
                dynamic_shapes=(dynamic,),
                opset_version=opset_version,
                dynamo=True,
                external_data=False,
                verbose=False,
                **kwargs,
            )
    except torch.onnx.OnnxExporterError as error:
        raise _explain(error, str(getattr(model, "name", type(model).__name__))) from None
    finally:
        set_torch_mode(model, was_training)
    if verbose:
        print(f"Saved artifact at '{os.fspath(filepath)}'.")
