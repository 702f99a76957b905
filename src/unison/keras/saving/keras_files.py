"""Keras's own model files, written and read: the ``.keras`` zip and the legacy full-model ``.h5``.

* ``.keras`` (Keras 3): a zip of ``metadata.json``, ``config.json`` (the architecture and compile
  arguments in Keras 3's serialization, :mod:`unison.keras.saving.keras_config`) and
  ``model.weights.h5`` (Keras 3's weights layout, with the optimizer's variables under
  ``optimizer/vars`` for a compiled model with Adam or SGD).
* ``.h5`` (Keras 2 / legacy HDF5): the root's ``model_config`` and ``training_config`` attributes
  and a ``model_weights`` group in Keras 2's ``layer_names``/``weight_names`` layout.

Both are the files Keras writes, so Keras 3 and tf_keras open them. Integrity stays without a
private format: ``metadata.json`` records the SHA-256 of ``config.json`` and ``model.weights.h5``
and the list of members (a key Keras ignores); an HDF5 file carries the SHA-256 of its datasets
and config in a root attribute ``unison_sha256``. A reader checks them before building anything:
a flipped byte, a truncated file or a planted member raises :class:`CorruptModelFileError`, a
pickle raises :class:`UnsafeModelFileError`, and nothing is ever unpickled. Files Keras wrote have
no checksum and load as they are.

Example:
    >>> import os, tempfile
    >>> from unison import keras
    >>> model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    >>> path = os.path.join(tempfile.mkdtemp(), "m.keras")
    >>> save_keras_zip(model, path)
    >>> load_keras_file(path).count_params()
    8
"""

from __future__ import annotations

import datetime
import hashlib
import io
import json
import os
import zipfile
from typing import Any

import numpy as np

from unison.core.atomic_io import atomic_write
from unison.errors import CorruptModelFileError, SavingError, UnsafeModelFileError
from unison.keras.saving import keras_h5
from unison.keras.saving.file_kinds import describe_file
from unison.keras.saving.keras_config import from_keras, keras2_dialect, to_keras, to_keras2
from unison.keras.saving.serialization import _json_value, _namespace, _objects_from_config, from_config, model_config

KERAS_VERSION = "3.15.1"  # the Keras whose file layout these writers follow (TF 2.21's Keras)
DIGEST_ATTR = "unison_sha256"
UNISON_CLASS = "UnisonFunctional"
_MEMBERS = ("metadata.json", "config.json", "model.weights.h5")


# --- compile config ---------------------------------------------------------------------------
def _compile_config(model: Any) -> dict[str, Any] | None:
    optimizer, loss, metrics = getattr(model, "_compile_arguments", (None, None, None))
    try:
        opt = model.optimizer
        opt_config = {k: (float(v.numpy()) if hasattr(v, "numpy") else v) for k, v in opt.get_config().items()}
        return {
            "optimizer": {"class_name": type(opt).__name__, "config": _json_value(opt_config, "optimizer")},
            "loss": _json_value(loss, "loss"),
            "metrics": _json_value(metrics, "metrics"),
        }
    except (SavingError, TypeError, ValueError, AttributeError):
        return None  # a loss or metric object without a name: the loaded model needs compile() again


def compile_config(model: Any) -> dict[str, Any] | None:
    """Keras 3's ``compile_config`` of a compiled model, or None (not compiled, or unnamed objects)."""
    from unison.keras.saving.keras_config import _keras_value

    if not getattr(model, "_compiled", False):
        return None
    found = _compile_config(model)
    if found is None:
        return None
    opt = found["optimizer"]
    return {
        "optimizer": {
            "module": "keras.optimizers",
            "class_name": opt["class_name"],
            "config": opt["config"],
            "registered_name": None,
        },
        "loss": _keras_value(found["loss"]),
        "loss_weights": None,
        "metrics": _keras_value(found["metrics"]),
        "weighted_metrics": None,
        "run_eagerly": False,
        "steps_per_execution": 1,
        "jit_compile": False,
    }


def _compile_from(model: Any, config: dict[str, Any], path: str) -> None:
    from unison.keras.saving.keras_config import _unison_value

    optimizers = _namespace("optimizers")[0]
    opt = config.get("optimizer")
    if isinstance(opt, dict):
        cls = getattr(optimizers, str(opt.get("class_name")), None)
        if cls is None:
            raise SavingError(
                f"{path}: the compile config names the optimizer {opt.get('class_name')!r}, which unison lacks. "
                "Load with compile=False and compile the model yourself."
            )
        known = set(cls().get_config())
        settings = {k: v for k, v in (opt.get("config") or {}).items() if k in known}
        optimizer: Any = cls.from_config(settings)
    else:
        optimizer = opt
    model.compile(
        optimizer=optimizer, loss=_unison_value(config.get("loss")), metrics=_unison_value(config.get("metrics"))
    )


# --- optimizer variables (Keras's order) ----------------------------------------------------
def _optimizer_vars(model: Any) -> list[np.ndarray] | None:
    """Keras 3's optimizer variables: iterations, learning rate, then each slot per trainable weight.

    Adam stores (m, v) per weight and SGD with momentum one momentum each, in the order of
    ``model.trainable_weights``; an optimizer of another kind, or one not built yet, saves none.
    """
    opt: Any = getattr(model, "optimizer", None)
    torch_opt = getattr(opt, "torch_optimizer", None) if opt is not None else None
    if opt is None or torch_opt is None:
        return None
    kind = type(opt).__name__
    slots = {"Adam": ("exp_avg", "exp_avg_sq"), "SGD": ("momentum_buffer",)}.get(kind)
    if slots is None or (kind == "SGD" and not float(getattr(opt, "momentum", 0.0) or 0.0)):
        return None
    values: list[np.ndarray] = [
        np.asarray(int(opt.iterations), dtype=np.int64),
        np.asarray(float(opt.learning_rate), np.float32),
    ]
    for weight in model.trainable_weights:
        state = torch_opt.state.get(weight, {})
        for slot in slots:
            value = state.get(slot)
            values.append(
                value.detach().cpu().numpy() if value is not None else np.zeros(tuple(weight.shape), np.float32)
            )
    return values


_TORCH_OPTIMIZER = "unison_optimizer"  # the torch optimizer's state_dict, for any optimizer (Keras ignores it)


def _write_torch_optimizer(model: Any, root: Any) -> None:
    """The torch optimizer's full state (every optimizer's slots, exactly) beside Keras's ``optimizer/vars``."""
    import torch

    full = getattr(model, "_full_optimizer_state", None)
    state = full() if full is not None else None
    if not state:
        return
    try:
        groups = json.dumps(state["param_groups"])
    except (TypeError, ValueError):
        return  # a setting that is no JSON value: Keras's optimizer/vars still carry Adam's/SGD's slots
    group = root.create_group(_TORCH_OPTIMIZER)
    group.attrs["param_groups"] = groups
    group.attrs["iterations"] = int(model.optimizer.iterations)
    for index, slots in state["state"].items():
        for name, value in slots.items():
            data = value.detach().cpu().numpy() if isinstance(value, torch.Tensor) else np.asarray(value)
            dataset = group.create_dataset(f"{index}/{name}", data=data)
            dataset.attrs["tensor"] = isinstance(value, torch.Tensor)


def _load_torch_optimizer(model: Any, root: Any, path: str) -> bool:
    """Restore the torch optimizer's state unison wrote; False when the file has none (Keras's file)."""
    import torch

    group = root.get(_TORCH_OPTIMIZER)
    torch_opt = getattr(model.optimizer, "torch_optimizer", None)
    if group is None or torch_opt is None:
        return False
    state: dict[int, dict[str, Any]] = {}
    for index in group:
        slots = state.setdefault(int(index), {})
        for name in group[index]:
            dataset = group[index][name]
            value = np.array(dataset)
            slots[name] = torch.from_numpy(value) if bool(dataset.attrs.get("tensor", True)) else value.item()
    try:
        torch_opt.load_state_dict(
            {"state": state, "param_groups": json.loads(keras_h5._text(group.attrs["param_groups"]))}
        )
    except (ValueError, KeyError) as exc:
        raise SavingError(
            f"The optimizer state in {path!r} does not fit the rebuilt model's optimizer ({exc}). "
            "Load with compile=False and compile again."
        ) from None
    return True


def _load_optimizer_vars(model: Any, group: Any) -> None:
    """Put Keras's ``optimizer/vars`` (Adam's moments, SGD's momentum) into the compiled optimizer."""
    import torch

    opt = model.optimizer
    torch_opt = getattr(opt, "torch_optimizer", None)
    kind = type(opt).__name__
    slots = {"Adam": ("exp_avg", "exp_avg_sq"), "SGD": ("momentum_buffer",)}.get(kind)
    weights = list(model.trainable_weights)
    if torch_opt is None or slots is None or len(group) != 2 + len(slots) * len(weights):
        return  # Keras skips an optimizer state that does not fit, with a warning; so does unison
    iterations = int(np.asarray(group["0"]))
    with torch.no_grad():
        for i, weight in enumerate(weights):
            state = torch_opt.state.setdefault(weight, {})
            for j, slot in enumerate(slots):
                value = np.asarray(group[str(2 + i * len(slots) + j)])
                state[slot] = torch.as_tensor(value, dtype=weight.dtype).reshape(weight.shape).to(weight.device)
            if kind == "Adam":
                state["step"] = torch.tensor(float(iterations))
    opt._counter.count.fill_(iterations)


# --- digests ------------------------------------------------------------------------------------
def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _h5_digest(root: Any, extra: bytes = b"") -> str:
    """SHA-256 over every dataset (path, dtype, shape, bytes) and ``extra``, in sorted order."""
    digest = hashlib.sha256(extra)
    names: list[str] = []
    root.visititems(lambda name, obj: names.append(name) if hasattr(obj, "shape") else None)
    for name in sorted(names):
        array = np.asarray(root[name][()])
        digest.update(f"{name}|{array.dtype.str}|{array.shape}|".encode())
        digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()


# --- .keras -------------------------------------------------------------------------------------
def _state(model: Any) -> dict[str, Any]:
    # whole tensors of a sharded model too (gathered by model.save before the chief writes)
    full = getattr(model, "_full_state", None)
    return dict(full() if full is not None else model.state_dict())


def _weights_bytes(model: Any, with_optimizer: bool) -> bytes:
    h5py = keras_h5._h5py()
    buffer = io.BytesIO()
    with h5py.File(buffer, "w") as root:
        keras_h5.write_keras3_weights(
            model, root, _optimizer_vars(model) if with_optimizer else None, state=_state(model)
        )
        if with_optimizer:
            _write_torch_optimizer(model, root)
    return buffer.getvalue()


def architecture(model: Any) -> dict[str, Any]:
    """``config.json``'s entry: Keras 3's config, or where Keras has none, one unison rebuilds.

    A functional graph that calls torch functions (``torch.mean`` on a KerasTensor) has no Keras
    entry: its config is unison's own (class ``UnisonFunctional``), which Keras refuses to rebuild
    while its weights stay readable. A subclassed model without ``get_config`` records why it has
    no architecture (``unison_config_error``), which ``load_model`` reports.
    """
    try:
        entry = to_keras(model)
    except SavingError as exc:
        try:
            own = model_config(model)
        except SavingError:
            cls = type(model)
            return {
                "module": cls.__module__,
                "class_name": cls.__name__,
                "config": {},
                "registered_name": None,
                "unison_config_error": str(exc),
            }
        return {"module": "unison", "class_name": UNISON_CLASS, "config": own, "registered_name": None}
    # unison's own config beside Keras's (a key Keras ignores): unison rebuilds its files exactly,
    # layers Keras has no argument for included; Keras reads the standard keys.
    try:
        entry["unison_config"] = model_config(model)
    except SavingError:
        pass
    return entry


def save_keras_zip(model: Any, path: str | os.PathLike[str]) -> None:
    """Write ``model`` as Keras 3's ``.keras`` zip, atomically, with SHA-256s in ``metadata.json``."""
    entry = architecture(model)
    compiled = compile_config(model)
    if compiled is not None:
        entry["compile_config"] = compiled
        entry["unison_compile_config"] = _compile_config(model)
    config = json.dumps(entry).encode()
    weights = _weights_bytes(model, compiled is not None)
    metadata = {
        "keras_version": KERAS_VERSION,
        "date_saved": datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S"),
        "unison": {"sha256": {"config.json": _sha256(config), "model.weights.h5": _sha256(weights)}},
    }

    def write(fh: Any) -> None:
        with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED) as archive:
            archive.writestr("metadata.json", json.dumps(metadata))
            archive.writestr("config.json", config)
            archive.writestr("model.weights.h5", weights)

    atomic_write(path, write)


def read_keras_zip(path: str) -> tuple[dict[str, Any], bytes]:
    """``config.json`` (parsed) and ``model.weights.h5`` (bytes) of a ``.keras`` file, verified.

    Raises:
        CorruptModelFileError: not a readable zip, a member missing, or a checksum that differs.
        UnsafeModelFileError: the archive holds a pickle (``.pkl``, ``data.pkl``, pickle bytes).
    """
    what = describe_file(path)
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            _refuse_pickles(archive, names, path)
            missing = [n for n in ("config.json", "model.weights.h5") if n not in names]
            if missing:
                raise CorruptModelFileError(
                    f"{path} ({what}): the archive lacks {missing}; a Keras 3 .keras file holds "
                    f"{list(_MEMBERS)}. It holds {names[:8]}. Save the model again with model.save(path)."
                )
            config_bytes = archive.read("config.json")
            weights = archive.read("model.weights.h5")
            metadata = json.loads(archive.read("metadata.json")) if "metadata.json" in names else {}
    except (zipfile.BadZipFile, EOFError, OSError, ValueError, KeyError) as exc:
        if isinstance(exc, (CorruptModelFileError, UnsafeModelFileError)):
            raise
        raise CorruptModelFileError(
            f"{path} ({what}): the zip archive cannot be read ({type(exc).__name__}: {exc}); it is truncated or "
            "damaged. Copy it again from its source, or save the model again."
        ) from None
    sums = (metadata.get("unison") or {}).get("sha256") if isinstance(metadata, dict) else None
    if sums:
        extra = [n for n in names if n not in _MEMBERS and not n.startswith("assets/")]
        if extra:
            raise CorruptModelFileError(
                f"{path}: members {extra[:8]} were added after unison wrote the file (its metadata.json lists "
                f"{list(_MEMBERS)}). Refusing a file changed since it was saved; save the model again."
            )
        for name, data in (("config.json", config_bytes), ("model.weights.h5", weights)):
            if sums.get(name) != _sha256(data):
                raise CorruptModelFileError(
                    f"{path}: the SHA-256 of {name} differs from the one recorded when the file was saved: the "
                    "file was damaged or changed since. Copy it again from its source, or save the model again."
                )
    try:
        return json.loads(config_bytes), weights
    except ValueError as exc:
        raise CorruptModelFileError(f"{path}: config.json is not valid JSON ({exc}). Save the model again.") from None


def _refuse_pickles(archive: zipfile.ZipFile, names: list[str], path: str) -> None:
    for name in names:
        head = archive.open(name).read(2) if not name.endswith("/") else b""
        if name.endswith((".pkl", ".pickle")) or (len(head) == 2 and head[0] == 0x80 and head[1] <= 5):
            raise UnsafeModelFileError(
                f"{path}: the archive holds {name!r}, a Python pickle. unison never unpickles a file (unpickling runs "
                "arbitrary code), and a Keras file has no pickle in it. Load a file written by model.save('m.keras') "
                "in unison or Keras."
            )


def load_keras_file(
    path: str | os.PathLike[str], custom_objects: dict[str, Any] | None = None, compile: bool = True
) -> Any:
    """Rebuild the model in a ``.keras`` zip or a full-model ``.h5`` (either Keras's or unison's).

    Raises:
        CorruptModelFileError / UnsafeModelFileError: see :func:`read_keras_zip`, :func:`read_legacy_h5`.
        SavingError: the file holds weights only, or a class that is not known here.
    """
    from unison.keras.utils.object_registration import CustomObjectScope

    name = os.fspath(path)
    h5py = keras_h5._h5py()
    with CustomObjectScope(custom_objects):
        if zipfile.is_zipfile(name):
            config, weights = read_keras_zip(name)
            model = _build(config, custom_objects, name)
            with h5py.File(io.BytesIO(weights), "r") as root:
                _load_into(model, root, name, keras3=True)
                if compile and config.get("compile_config"):
                    _compile(model, config, name)
                    if _load_torch_optimizer(model, root, name):
                        model.optimizer._counter.count.fill_(int(root[_TORCH_OPTIMIZER].attrs["iterations"]))
                    elif "optimizer" in root and "vars" in root["optimizer"]:
                        _load_optimizer_vars(model, root["optimizer"]["vars"])
            return model
        with _open_h5(name) as root:
            raw = root.attrs.get("model_config")
            if raw is None:
                raise SavingError(
                    f"{name} ({describe_file(name)}) holds weights only, not a model architecture (no "
                    "'model_config'). Build the model in code and call model.load_weights(path)."
                )
            config = json.loads(keras_h5._text(raw))
            _check_h5_digest(root, name, keras_h5._text(raw).encode())
            model = _build(config, custom_objects, name)
            _load_into(model, root, name, keras3=False)
            training = root.attrs.get("training_config")
            if compile and training is not None:
                _compile(
                    model, {**config, "compile_config": _legacy_training(json.loads(keras_h5._text(training)))}, name
                )
            return model


def _load_into(model: Any, root: Any, path: str, keras3: bool) -> None:
    """Weights into ``model``: by key from unison's ``unison_state`` when present, else as Keras lays them out."""
    from unison.keras.saving.weights_file import check_state

    state = keras_h5.read_unison_state(root)
    if state is not None:
        model.load_state_dict(check_state(path, state, model.state_dict()), strict=True)
    elif keras3:
        keras_h5._load_keras3(model, root, path)
    else:
        weights = root["model_weights"]
        keras_h5._load_legacy(model, weights, [keras_h5._text(n) for n in weights.attrs["layer_names"]], path)


def _compile(model: Any, config: dict[str, Any], path: str) -> None:
    own = config.get("unison_compile_config")
    if not own:
        _compile_from(model, config["compile_config"], path)
        return
    opt = own["optimizer"]
    cls = getattr(_namespace("optimizers")[0], opt["class_name"])
    model.compile(
        optimizer=cls.from_config(opt["config"]),
        loss=_objects_from_config(own["loss"]),
        metrics=_objects_from_config(own["metrics"]),
    )


def _legacy_training(training: dict[str, Any]) -> dict[str, Any]:
    opt = training.get("optimizer_config")
    return {**training, "optimizer": opt if opt else None}


def _build(config: dict[str, Any], custom_objects: Any, path: str) -> Any:

    if config.get("unison_config_error"):
        raise SavingError(
            f"{path} holds the weights of a model whose architecture was not saved: {config['unison_config_error']}"
        )
    if config.get("class_name") == UNISON_CLASS:
        return from_config(config["config"], custom_objects)
    if config.get("unison_config"):
        return from_config(config["unison_config"], custom_objects)
    model = from_keras(config, custom_objects)
    if not getattr(model, "built", True):
        raise SavingError(f"{path}: the model in the file has no input shape, so its weights cannot be placed.")
    return model


# --- legacy .h5 -----------------------------------------------------------------------------------
def save_legacy_h5(model: Any, path: str | os.PathLike[str]) -> None:
    """Write ``model`` as Keras's full-model HDF5 file (``model_config`` + ``model_weights``), atomically."""
    h5py = keras_h5._h5py()
    with keras2_dialect():  # the layers' configs as Keras 2 wrote them (tf_keras refuses Keras 3's new keys)
        entry = architecture(model)
    if "unison_config_error" not in entry and entry.get("class_name") != UNISON_CLASS:
        own = entry.pop("unison_config", None)
        entry = to_keras2(entry)  # Keras 2's dialect, as tf_keras writes .h5 (Keras 3 reads it too)
        if own is not None:
            entry["unison_config"] = own
    compiled = compile_config(model)
    if compiled is not None:
        entry["unison_compile_config"] = _compile_config(model)
    config = json.dumps(entry)
    buffer = io.BytesIO()
    with h5py.File(buffer, "w") as root:
        root.attrs["keras_version"] = KERAS_VERSION
        root.attrs["backend"] = "tensorflow"
        root.attrs["model_config"] = config
        if compiled is not None:
            training = {**compiled, "optimizer_config": compiled["optimizer"]}
            training.pop("optimizer")
            root.attrs["training_config"] = json.dumps(training)
        keras_h5.write_legacy_weights(model, root.create_group("model_weights"), state=_state(model))
        root.attrs[DIGEST_ATTR] = _h5_digest(root, config.encode())
    data = buffer.getvalue()
    atomic_write(path, lambda fh: fh.write(data))


def save_weights_h5(model: Any, path: str | os.PathLike[str]) -> None:
    """``save_weights``: Keras 3's layout for ``.weights.h5``, Keras 2's for any other ``.h5``; atomic."""
    h5py = keras_h5._h5py()
    buffer = io.BytesIO()
    with h5py.File(buffer, "w") as root:
        if os.fspath(path).endswith(".weights.h5"):
            keras_h5.write_keras3_weights(model, root, state=_state(model))
        else:
            keras_h5.write_legacy_weights(model, root, state=_state(model))
        root.attrs[DIGEST_ATTR] = _h5_digest(root)
    data = buffer.getvalue()
    atomic_write(path, lambda fh: fh.write(data))


class _open_h5:
    """``h5py.File(path)`` whose failure names the file and what it is (a context manager)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __enter__(self) -> Any:
        h5py = keras_h5._h5py()
        try:
            self.root = h5py.File(self.path, "r")
        except OSError as exc:
            raise CorruptModelFileError(
                f"{self.path} ({describe_file(self.path)}): HDF5 cannot open it ({exc}); the file is truncated or "
                "damaged. Copy it again from its source, or save it again."
            ) from None
        return self.root

    def __exit__(self, *exc: Any) -> None:
        self.root.close()


def _check_h5_digest(root: Any, path: str, extra: bytes = b"") -> None:
    recorded = root.attrs.get(DIGEST_ATTR)
    if recorded is None:
        return  # a file Keras wrote: nothing recorded to check against
    try:
        found = _h5_digest(root, extra)
    except (OSError, RuntimeError, KeyError) as exc:
        raise CorruptModelFileError(
            f"{path} (HDF5): a dataset cannot be read ({exc}); the file is damaged. Save it again."
        ) from None
    if keras_h5._text(recorded) != found:
        raise CorruptModelFileError(
            f"{path} (HDF5): the SHA-256 of its weights differs from the one recorded when it was saved: the file "
            "was damaged or changed since. Copy it again from its source, or save it again."
        )


def verified_unison_state(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """Check unison's checksums in a Keras file (zip or HDF5); its ``state_dict`` if unison wrote it.

    None for a file Keras wrote, whose weights go in by Keras's layout.
    """
    h5py = keras_h5._h5py()
    name = os.fspath(path)
    if zipfile.is_zipfile(name):
        _, weights = read_keras_zip(name)
        with h5py.File(io.BytesIO(weights), "r") as root:
            return keras_h5.read_unison_state(root)
    verify_h5(name)
    with _open_h5(name) as root:
        return keras_h5.read_unison_state(root)


def verify_h5(path: str | os.PathLike[str]) -> None:
    """Check the checksum of an HDF5 weights or model file unison wrote (Keras's files pass as they are)."""
    name = os.fspath(path)
    with _open_h5(name) as root:
        raw = root.attrs.get("model_config")
        _check_h5_digest(root, name, keras_h5._text(raw).encode() if raw is not None else b"")


__all__ = [
    "DIGEST_ATTR",
    "KERAS_VERSION",
    "compile_config",
    "load_keras_file",
    "read_keras_zip",
    "save_keras_zip",
    "save_legacy_h5",
    "save_weights_h5",
    "verify_h5",
    "verified_unison_state",
]
