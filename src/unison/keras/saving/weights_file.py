"""unison's own weights and model files (any name but ``.keras``/``.h5``): checksummed, checked on load.

Keras's formats (``.keras``, ``.h5``, ``.weights.h5``) are :mod:`unison.keras.saving.keras_files`;
this is the format of every other path given to ``save_weights``/``save``/``ModelCheckpoint``.

A weights file is written by :func:`unison.core.atomic_io.write_verified`: atomically (temporary file,
fsync, rename, directory fsync), behind a header holding the SHA-256 of the ``torch.save``
bytes. :func:`read_state` verifies that checksum before torch decodes anything, so a file that
was truncated or changed on disk is refused instead of loading wrong numbers, and every error
names the file, what the model expected (its weights' names and shapes) and what was found.
Files of the previous format (a bare ``torch.save``, before the checksum) still load.

Example:
    >>> import os, tempfile, torch
    >>> path = os.path.join(tempfile.mkdtemp(), "w.weights.pt")
    >>> write_state(path, {"state_dict": {"w": torch.ones(2)}}, WEIGHTS_KIND)
    >>> read_state(path, {"w": torch.zeros(2)})["w"].tolist()
    [1.0, 1.0]
"""

from __future__ import annotations

import io
import os
import pickle
from collections.abc import Mapping
from typing import Any

import torch

from unison.core.atomic_io import (
    VerificationError,
    is_verified_file,
    read_verified,
    write_verified,
)
from unison.errors import UnsafeModelFileError, WeightsFileError
from unison.keras.saving.file_kinds import describe_file

# One checksum kind for save_weights and save files (load_weights reads both); the payload's
# "format" entry says which of the two wrote it.
WEIGHTS_KIND = "unison.weights/2"
MODEL_FORMAT = "unison.model/2"
_SHOWN = 8  # entries of a structure listed in an error before "... and N more"
# Files since Dense and Conv2D keep Keras's kernel layout say so; older ones hold torch's
# (units, in) and (filters, in, kh, kw) kernels and are converted when read.
KERAS_LAYOUT = "keras-kernels"


def write_state(path: str | os.PathLike[str], payload: Mapping[str, Any], kind: str) -> None:
    """``torch.save`` ``payload`` into ``path`` atomically, with a checksum of its bytes."""
    buffer = io.BytesIO()
    torch.save({"format": kind, "layout": KERAS_LAYOUT, **payload}, buffer)
    write_verified(path, buffer.getvalue(), kind=WEIGHTS_KIND)


def describe(state: Mapping[str, Any]) -> str:
    """``name: shape`` of the first entries of a state dict, for error messages.

    Example:
        >>> describe({"a": torch.zeros(2, 3), "b": torch.zeros(4)})
        '2 tensors: a: (2, 3), b: (4,)'
    """
    items = []
    for name, value in list(state.items())[:_SHOWN]:
        try:
            shape = str(tuple(value.shape))
        except (AttributeError, RuntimeError, ValueError):  # a lazy weight not built yet
            shape = "unbuilt" if isinstance(value, torch.Tensor) else type(value).__name__
        items.append(f"{name}: {shape}")
    more = f", ... and {len(state) - _SHOWN} more" if len(state) > _SHOWN else ""
    return f"{len(state)} tensors: " + ", ".join(items) + more


def _error(path: str, expected: Mapping[str, Any], found: str) -> WeightsFileError:
    return WeightsFileError(
        f"Cannot load weights from {path!r}: {found} Expected the weights of this model "
        f"({describe(expected)}). Fix: load a file written by save_weights() of a model with the "
        "same layers, or write it again."
    )


# The model file inside a directory written by model.save("my_model") / tf.saved_model.save
# (unison.saved_model): load_model and load_weights read it when given the directory.
EXPORTED_MODEL_FILE = "keras_model.keras"


def _payload(path: str, expected: Mapping[str, Any], device: torch.device | None) -> Any:
    if os.path.isdir(path) and os.path.isfile(os.path.join(path, EXPORTED_MODEL_FILE)):
        path = os.path.join(path, EXPORTED_MODEL_FILE)
    if not os.path.exists(path):
        raise FileNotFoundError(f"No weights file at {path!r}. Check the path, or call save_weights() first.")
    if os.path.getsize(path) == 0:
        raise _error(path, expected, "the file is empty (0 bytes): it was never written completely.")
    if is_verified_file(path):
        try:
            body = read_verified(path, kind=WEIGHTS_KIND)
        except VerificationError as exc:
            raise _error(path, expected, str(exc)) from None
    else:  # the format before the checksum: a bare torch.save (nothing to verify it against)
        what = describe_file(path)
        if what == "a Python pickle":
            raise UnsafeModelFileError(
                f"{path!r} is a Python pickle. unison never unpickles a file (unpickling runs arbitrary code). "
                "Save the model with model.save('m.keras') or model.save_weights('w.weights.h5') and load that."
            )
        if "torch.save" not in what:
            raise _error(
                path,
                expected,
                f"it is {what}, not a Keras file (.keras zip, HDF5 .h5 / .weights.h5) nor a unison checkpoint.",
            )
        with open(path, "rb") as fh:
            body = fh.read()
    try:
        return torch.load(io.BytesIO(body), map_location=device, weights_only=True)
    except Exception as exc:  # noqa: BLE001 - torch raises many kinds here, none naming the file
        # torch's own text advises weights_only=False (arbitrary code) or quotes a C++ check: not passed on
        if isinstance(exc, pickle.UnpicklingError):
            raise UnsafeModelFileError(
                f"{path!r} ({describe_file(path)}) holds Python objects other than tensors, which would need "
                "unpickling; unison refuses (unpickling runs arbitrary code). Save the model again with "
                "model.save('m.keras') or model.save_weights('w.weights.h5')."
            ) from None
        raise _error(
            path,
            expected,
            f"it is {describe_file(path)} that cannot be read as unison's checkpoint ({os.path.getsize(path)} "
            "bytes): truncated or damaged.",
        ) from None


def read_state(
    path: str | os.PathLike[str], expected: Mapping[str, Any], device: torch.device | None = None
) -> dict[str, Any]:
    """The state dict in ``path``, verified and checked against ``expected`` (names and shapes).

    Raises:
        FileNotFoundError: there is no file at ``path``.
        WeightsFileError: the file is empty, truncated, damaged (checksum), not a weights file,
            or its names or shapes differ from ``expected``; the message names the file, the
            expected structure and what was found.
    """
    name = os.fspath(path)
    payload = _payload(name, expected, device)
    state = payload.get("state_dict") if isinstance(payload, dict) and "state_dict" in payload else payload
    if not isinstance(state, Mapping):
        raise _error(name, expected, f"it holds a {type(state).__name__}, not a dict of weights.")
    if not (isinstance(payload, dict) and payload.get("layout") == KERAS_LAYOUT):
        state = _kernels_from_torch_layout(state, expected)
    return check_state(name, state, expected)


def check_state(name: str, state: Mapping[str, Any], expected: Mapping[str, Any]) -> dict[str, Any]:
    """``state`` when its names and shapes are ``expected``'s; else a ``WeightsFileError`` naming ``name``."""
    missing = [k for k in expected if k not in state]
    unexpected = [k for k in state if k not in expected]
    if missing or unexpected:
        raise _error(
            name,
            expected,
            f"it holds {describe(state)}; missing here: {missing[:_SHOWN]}, not in this model: {unexpected[:_SHOWN]}.",
        )
    wrong = [
        f"{k}: file {tuple(state[k].shape)} vs model {tuple(v.shape)}"
        for k, v in expected.items()
        if _has_shape(v) and isinstance(state[k], torch.Tensor) and state[k].shape != v.shape
    ]
    if wrong:
        raise _error(name, expected, f"shapes differ: {'; '.join(wrong[:_SHOWN])}.")
    return dict(state)


def _has_shape(value: Any) -> bool:
    """A tensor whose shape is known (a lazy weight not built yet has none to compare)."""
    return isinstance(value, torch.Tensor) and not torch.nn.parameter.is_lazy(value)


def _kernels_from_torch_layout(state: Mapping[str, Any], expected: Mapping[str, Any]) -> dict[str, Any]:
    """A file written before Dense/Conv2D kept Keras's layout: turn its kernels into that layout.

    Only a ``kernel`` whose shape is the old layout of the shape this model expects is converted
    (``(units, in)`` -> ``(in, units)``, ``(filters, in, kh, kw)`` -> ``(kh, kw, in, filters)``);
    anything else is left for the usual shape check to report.

    Example:
        >>> _kernels_from_torch_layout({"d.kernel": torch.zeros(3, 2)}, {"d.kernel": torch.zeros(2, 3)})["d.kernel"].shape
        torch.Size([2, 3])
    """
    out = dict(state)
    for key, want in expected.items():
        value = out.get(key)
        if (
            not (key == "kernel" or key.endswith(".kernel"))
            or not _has_shape(want)
            or not isinstance(value, torch.Tensor)
        ):
            continue
        if value.shape == want.shape:
            continue
        turned = _old_kernel(value, want.shape)
        if turned is not None:
            out[key] = turned
    return out


def _old_kernel(value: torch.Tensor, want: torch.Size) -> torch.Tensor | None:
    """``value`` turned from torch's kernel layout into Keras's ``want`` shape, or None."""
    if value.dim() == 2 and value.t().shape == want:
        return value.t().contiguous()
    if value.dim() == 4 and value.permute(2, 3, 1, 0).shape == want:
        return value.permute(2, 3, 1, 0).contiguous()
    return None


def optimizer_slots_from_torch_layout(payload: Any, optimizer: torch.optim.Optimizer) -> None:
    """After loading an older file's optimizer state: turn kernel-shaped slots (Adam's moments) around.

    Files written since the layout change are left alone; a slot already of its parameter's shape
    too.
    """
    if isinstance(payload, dict) and payload.get("layout") == KERAS_LAYOUT:
        return
    for group in optimizer.param_groups:
        for param in group["params"]:
            for name, value in optimizer.state.get(param, {}).items():
                if isinstance(value, torch.Tensor) and value.shape != param.shape and value.dim() >= 2:
                    turned = _old_kernel(value, param.shape)
                    if turned is not None:
                        optimizer.state[param][name] = turned
