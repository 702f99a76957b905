"""Every public exception type of unison, in one place.

Every error a user can cause says what happened, what was expected and how to fix it. Plain
mistakes in arguments raise ``ValueError``/``TypeError``; the types below exist where a caller
may want to tell one failure from another. Each is also importable from the module whose
functions raise it (``from unison.distribute.coordinator import FunctionError`` keeps working).

A type that crosses the parameter-server wire has a ``wire_code``: a handler that raises it on
one task reaches the caller as a ``RemoteError`` whose ``remote_code`` is that code, so callers
match failures by a stable code, never by a class name
(:mod:`unison.distribute.parameter_server.protocol` lists them).

Example:
    >>> from unison.errors import ReplicaFailedError, ParameterServerUnavailableError
    >>> issubclass(ReplicaFailedError, RuntimeError)
    True
    >>> ParameterServerUnavailableError.wire_code
    'ps_unavailable'
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar


class UnisonError(RuntimeError):
    """Base class of unison's runtime failures (not argument mistakes).

    Attributes:
        wire_code: the stable code this error travels under between tasks (``None``: it does
            not cross the wire as itself).
    """

    wire_code: ClassVar[str | None] = None


# --- TF's status errors (tf.errors.*) -------------------------------------------------------------
class OpError(UnisonError):
    """TF's ``tf.errors.OpError``: the base of the status-code errors below.

    Built as TF builds it, ``OpError(node_def, op, message)``, or with the message alone.

    Example:
        >>> import unison as tf
        >>> try:
        ...     raise tf.errors.InvalidArgumentError(None, None, "bad shape")
        ... except tf.errors.OpError as e:
        ...     print(e.message, e.error_code)
        bad shape 3
    """

    error_code: int = 2  # TF's UNKNOWN

    def __init__(self, *args: object, error_code: int | None = None) -> None:
        if len(args) >= 3:  # TF's (node_def, op, message[, error_code])
            self.node_def, self.op, message = args[0], args[1], str(args[2])
            if len(args) >= 4 and error_code is None:
                error_code = int(args[3])  # type: ignore[call-overload]
        else:
            self.node_def, self.op = None, None
            message = str(args[0]) if args else ""
        if error_code is not None:
            self.error_code = error_code
        self.message = message
        super().__init__(message)


class CancelledError(OpError):
    """TF's ``CANCELLED``; also: a scheduled function was cancelled because an earlier one failed."""

    error_code = 1


class UnknownError(OpError):
    """TF's ``UNKNOWN``."""

    error_code = 2


class InvalidArgumentError(OpError):
    """TF's ``INVALID_ARGUMENT``: an op got an argument it cannot use (e.g. shapes that do not match)."""

    error_code = 3


class DeadlineExceededError(OpError):
    """TF's ``DEADLINE_EXCEEDED``."""

    error_code = 4


class NotFoundError(OpError):
    """TF's ``NOT_FOUND``: a file or directory that does not exist."""

    error_code = 5


class AlreadyExistsError(OpError):
    """TF's ``ALREADY_EXISTS``."""

    error_code = 6


class PermissionDeniedError(OpError):
    """TF's ``PERMISSION_DENIED``."""

    error_code = 7


class ResourceExhaustedError(OpError):
    """TF's ``RESOURCE_EXHAUSTED`` (out of memory)."""

    error_code = 8


class FailedPreconditionError(OpError):
    """TF's ``FAILED_PRECONDITION``."""

    error_code = 9


class AbortedError(OpError):
    """TF's ``ABORTED``."""

    error_code = 10


class OutOfRangeError(OpError):
    """TF's ``OUT_OF_RANGE``: e.g. ``iterator.get_next()`` past the end of a dataset."""

    error_code = 11


class EndOfSequenceError(OutOfRangeError, StopIteration):
    """``iterator.get_next()`` past the end: TF's ``OutOfRangeError``, and a ``StopIteration``
    for code written against ``next()``."""


class UnimplementedError(OpError):
    """TF's ``UNIMPLEMENTED``."""

    error_code = 12


class InternalError(OpError):
    """TF's ``INTERNAL``."""

    error_code = 13


class UnavailableError(OpError):
    """TF's ``UNAVAILABLE``."""

    error_code = 14


class DataLossError(OpError):
    """TF's ``DATA_LOSS``."""

    error_code = 15


class BatchShapeError(InvalidArgumentError, ValueError):
    """``batch()`` met elements whose component shapes differ (TF's ``InvalidArgumentError``
    "Cannot add tensor to the batch"; a ``ValueError`` too, as unison raised it before)."""


class IndexOutOfRangeError(InvalidArgumentError, ValueError):
    """An N-d index of ``gather_nd``/``scatter_nd``/``tensor_scatter_nd_*`` outside the shape (TF's
    ``InvalidArgumentError``; a ``ValueError`` too, as unison raised it before)."""


class CorruptRecordError(DataLossError):
    """A TFRecord file holds a record whose checksum does not match, or ends inside a record.

    Attributes:
        path: the file.
        offset: the byte offset of the record's header in the uncompressed record stream.
    """

    def __init__(self, path: str, offset: int, what: str) -> None:
        self.path, self.offset = path, offset
        super().__init__(
            f"corrupted record at {offset} in {path!r}: {what}. The file is damaged or is not a TFRecord "
            "file (or is compressed: pass compression_type='GZIP' or 'ZLIB' as it was written)."
        )


class ExampleParseError(InvalidArgumentError):
    """A serialized ``tf.train.Example`` that ``tf.io.parse_example`` cannot read with its spec:
    undecodable bytes, a feature of another list type (a wrong dtype), a missing required feature
    or a count the spec's shape does not take. TF raises ``InvalidArgumentError`` (this is one).

    Attributes:
        feature: the feature's name (None when the record itself cannot be decoded).
        index: the record's place in the batch given to ``parse_example`` (0 for one record).
        path: the TFRecord file the record was read from, when unison's ``TFRecordDataset`` or
            ``tf_record_iterator`` read it (else None).
        offset: the byte offset of the record's header in that file's (uncompressed) record
            stream, as :class:`CorruptRecordError` counts it (else None).
    """

    def __init__(
        self,
        message: str,
        feature: str | None = None,
        index: int | None = None,
        path: str | None = None,
        offset: int | None = None,
    ) -> None:
        self.feature, self.index, self.path, self.offset = feature, index, path, offset
        super().__init__(message)


class PathNotFoundError(NotFoundError, FileNotFoundError):
    """``tf.io.gfile``'s missing path: TF's ``NotFoundError`` that is also Python's ``FileNotFoundError``."""


class PathExistsError(AlreadyExistsError, FileExistsError):
    """``tf.io.gfile``'s existing target: TF's ``AlreadyExistsError``, also Python's ``FileExistsError``."""


class PathIsDirectoryError(FailedPreconditionError, IsADirectoryError):
    """``tf.io.gfile``: a directory where a file was expected (TF's ``FailedPreconditionError``)."""


# TF's status codes, as ``tf.errors.<CODE>`` (the ``error_code`` of the classes above)
OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


class OperatorNotAllowedInGraphError(TypeError):
    """TF's ``tf.errors.OperatorNotAllowedInGraphError``: a Python operation on a symbolic tensor.

    unison runs eagerly, so only symbolic (Keras functional-API) values can raise it.
    """


# --- collectives and replicas --------------------------------------------------------------------
class ReplicaFailedError(UnisonError):
    """Another replica (process) of the job failed; carries its rank and traceback.

    Attributes:
        rank: the global rank of the replica that failed.
        remote_traceback: the traceback text the failed replica reported, or ``""``.
    """

    def __init__(self, message: str, rank: int | None = None, remote_traceback: str = "") -> None:
        super().__init__(message)
        self.rank = rank
        self.remote_traceback = remote_traceback


class CollectiveTimeoutError(UnisonError):
    """A collective did not complete within the strategy's timeout."""


class CollectiveMismatchError(UnisonError):
    """Replicas issued different collectives at the same point (op, shape, dtype or root differ).

    Raised on every replica before any data moves (gloo would abort the receiving process).
    """


class SharedMemoryError(RuntimeError):
    """A replica died or did not arrive; the communicator turns it into a named error.

    Attributes:
        missing: the ranks that had not arrived (read from their counters).
    """

    def __init__(self, message: str, missing: list[int]) -> None:
        super().__init__(message)
        self.missing = missing


class ReplicaMismatchError(UnisonError):
    """Replicas hold different models (names, shapes, dtypes or values)."""


class UnsynchronizedTrainingError(ReplicaMismatchError, ValueError):
    """A model or optimizer would train apart on each replica of a multi-replica strategy."""


class NonFiniteGradientError(UnisonError):
    """A gradient held NaN or Inf on some replica (policy ``nonfinite="raise"``)."""


# --- starting and joining a job ------------------------------------------------------------------
class LaunchError(UnisonError):
    """The replicas could not be started (for example, there is no script to re-run)."""


class RendezvousError(UnisonError):
    """The replicas of a multi-worker job could not find each other."""


class StoreAuthenticationError(UnisonError):
    """A value in the rendezvous store was not written by a process holding the job's secret."""


class CollectiveAuthenticationError(UnisonError):
    """An object collective's bytes were not pickled by a process holding the job's secret (not unpickled)."""


class WeakTokenError(ValueError):
    """The cluster token is too short or too predictable to protect the cluster."""


class ElasticMembershipError(UnisonError):
    """An elastic job cannot go on: fewer workers than ``--min-workers``, or this worker left the job.

    ``hvd.elastic.run`` does not retry it (a lost collective, :class:`UnisonError`, it does).
    """


class HostsUpdatedInterrupt(RuntimeError):
    """Horovod's signal that workers joined an elastic job: ``hvd.elastic.run`` re-forms it in place.

    Raised by ``state.commit()`` / ``state.check_host_updates()`` on every worker at the same
    commit; not a failure, so the state is not rolled back (it was just committed).

    Attributes:
        skip_sync: Horovod's flag; ``False`` here: the new workers need the state.
    """

    def __init__(self, skip_sync: bool = False) -> None:
        super().__init__("The elastic job's workers changed; hvd.elastic.run re-forms the job in place.")
        self.skip_sync = skip_sync


# --- the parameter-server wire -------------------------------------------------------------------
class TaskUnavailableError(UnisonError):
    """A task of the cluster did not answer (dead, unreachable, or too slow for the deadline).

    Attributes:
        task: the task, e.g. ``"ps:1"``.
        op: the operation that failed, e.g. ``"push"``.
    """

    def __init__(self, message: str, task: str, op: str) -> None:
        super().__init__(message)
        self.task, self.op = task, op


class UnauthenticatedError(OpError):
    """TF's ``UNAUTHENTICATED``; unison raises it when a call or a reply did not prove that its
    sender holds the cluster token.

    Either a task refused this process's call (missing or wrong token), or a task's reply
    failed its check (nothing in it was decoded). Built as TF builds it,
    ``UnauthenticatedError(node_def, op, message)``, or ``UnauthenticatedError(message, task=, op=)``.

    Attributes:
        task: the task, e.g. ``"worker:1"`` (None when raised as TF's error).
        op: the operation.
    """

    error_code = 16

    def __init__(self, *args: object, task: str | None = None, op: str | None = None) -> None:
        super().__init__(*args)
        self.task = task
        if op is not None:
            self.op = op


class RemoteError(UnisonError):
    """A handler on another task raised; carries the remote exception's code, type and traceback.

    Attributes:
        task: the task that raised.
        op: the operation it was running.
        remote_type: the exception class name on the remote side (for people to read).
        remote_traceback: the traceback text printed there.
        remote_message: the remote exception's message.
        remote_task: the ``task`` attribute of the remote exception, if it had one (e.g. the
            parameter server a worker could not reach).
        remote_code: the remote exception's ``wire_code`` (what programs match on), or ``None``.
    """

    def __init__(
        self,
        message: str,
        task: str,
        op: str,
        remote_type: str,
        remote_traceback: str,
        remote_message: str = "",
        remote_task: str | None = None,
        remote_code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.task, self.op = task, op
        self.remote_type, self.remote_traceback = remote_type, remote_traceback
        self.remote_message, self.remote_task = remote_message, remote_task
        self.remote_code = remote_code


class ParameterServerUnavailableError(UnisonError):
    """A parameter server did not answer; training cannot go on without its variables.

    Attributes:
        task: the parameter server, e.g. ``"ps:1"``.
        op: the operation that failed.
    """

    wire_code = "ps_unavailable"

    def __init__(self, message: str, task: str, op: str = "") -> None:
        super().__init__(message)
        self.task, self.op = task, op


class WorkerRestartedError(UnisonError):
    """The worker is a new process since the coordinator last synchronised it (it must re-send)."""

    wire_code = "worker_restarted"


class DatasetExhaustedError(OutOfRangeError):
    """A worker's dataset ran out inside a scheduled function (``.repeat()`` it)."""

    wire_code = "dataset_exhausted"


class FunctionError(UnisonError):
    """A scheduled function raised on a worker; carries the worker and its traceback.

    Attributes:
        task: the worker, e.g. ``"worker:1"``.
        remote_type: the exception class raised there.
        remote_traceback: its traceback text.
    """

    def __init__(self, message: str, task: str, remote_type: str, remote_traceback: str) -> None:
        super().__init__(message)
        self.task, self.remote_type, self.remote_traceback = task, remote_type, remote_traceback


class NoWorkerAvailableError(UnisonError):
    """No worker answered for ``timeout_seconds`` while functions were waiting."""


class TPUNotSupportedError(ValueError):
    """A TPU-only name was used (``TPUStrategy``, ``TPUClusterResolver``): unison's backend has no TPUs.

    A ``ValueError``, the class TF raises when it finds no TPU, so the usual probe falls back::

        try:
            strategy = tf.distribute.TPUStrategy(tf.distribute.cluster_resolver.TPUClusterResolver())
        except ValueError:
            strategy = tf.distribute.MirroredStrategy()
    """


# --- files and checkpoints -----------------------------------------------------------------------
class VerificationError(ValueError):
    """A verified file is damaged, truncated, empty or of another kind than expected."""


class CorruptCheckpointError(UnisonError):
    """A checkpoint file is truncated, damaged, or not a checkpoint of the kind being read.

    One type for both unison's internal numbered checkpoints and ``tf.train.Checkpoint`` files.
    """


class UnreadableCheckpointsError(CorruptCheckpointError):
    """Checkpoints exist in a directory but not one of them can be read.

    Attributes:
        directory: the checkpoint directory.
        failures: ``(path, reason)`` for every checkpoint file, newest first.
    """

    def __init__(self, directory: str, failures: list[tuple[str, str]], fix: str = "") -> None:
        self.directory = directory
        self.failures = list(failures)
        listed = "\n".join(f"  {path}: {reason}" for path, reason in self.failures)
        super().__init__(
            f"No checkpoint in {directory!r} can be read; every file failed:\n{listed}\n"
            f"The files were left untouched. {fix or 'Restore them from a copy.'}"
        )


class CheckpointDirectoryError(ValueError):
    """A checkpoint or backup directory is a file, lies under a file, or cannot be written.

    Raised when the object that will write there is made, not at its first save (a preemption's
    save would be lost).
    """


class IncompatibleCheckpointError(ValueError):
    """A sharded checkpoint does not fit the model (or optimizer) it is restored into."""


class WeightsFileError(ValueError):
    """A weights file is missing, damaged, of another format, or does not fit the model."""


class ModelFileError(WeightsFileError):
    """A model or weights file cannot be read; the message names the file, what it is and what to do."""


class CorruptModelFileError(ModelFileError):
    """A Keras file whose bytes are damaged: a checksum that differs, a truncated or unreadable archive."""


class UnsafeModelFileError(ModelFileError):
    """A file that would need unpickling (a pickle, a ``torch.save`` of objects): refused, never run."""


class SavingError(ValueError):
    """A model (or a file) cannot be turned into an architecture config (or back)."""


class ModelFileNotFoundError(SavingError, FileNotFoundError):
    """``load_model`` of a path where nothing is: Keras 3's ValueError, and a FileNotFoundError as tf_keras raises."""


class UnknownLayerError(SavingError, TypeError):
    """``keras.layers.deserialize`` of a class it cannot find (a TypeError, as Keras 3's "Could not locate class")."""


# --- data and Keras ------------------------------------------------------------------------------
class StringInputError(TypeError):
    """A ``tf.strings`` function was given something that is not strings (a numeric tensor, ...)."""


class DatasetError(ValueError):
    """A data set could not be found, read or verified."""


class DownloadError(DatasetError):
    """A download (``keras.utils.get_file``) failed or did not match its hash; ``reason`` says how in one phrase."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class NotCompiledError(RuntimeError):
    """A Keras-style model was used for training before ``compile()``."""


def format_choices(choices: Iterable[str]) -> str:
    """Return a sorted, quoted, comma-separated list for error messages.

    Example:
        >>> format_choices({"b", "a"})
        "'a', 'b'"
    """
    return ", ".join(repr(c) for c in sorted(choices))


# --- export for serving (keras/export/, saved_model/tf_graph.py) --------------------------------
class ExportError(ValueError):
    """``model.export(...)`` cannot write the requested serving format; the message says why and what to do."""


class UnknownExportFormatError(ExportError):
    """``model.export(format=...)`` got a format it does not know (the message lists the formats)."""


class ModelNotBuiltError(ExportError):
    """The model has no input shape yet, so there is nothing to trace for an export."""


class OnnxExportError(ExportError):
    """torch's ONNX exporter could not convert the model (an op ONNX has no conversion for, or
    Python control flow torch.export cannot trace); the message names the op and the fix."""


class SavedModelExportError(ExportError):
    """TensorFlow could not rebuild or write the model as a SavedModel (names the layer and the fix)."""


class ExportDependencyError(ImportError):
    """An export needs a package that is not installed (TensorFlow, onnx, onnxscript); names the extra."""


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest choice to a misspelt ``name``, or ``""``.

    Case is ignored (``'Adamm'`` is close to ``'adam'``), the suggestion keeps its own spelling.

    Example:
        >>> did_you_mean("acuracy", ["accuracy", "auc", "mse"])
        " (did you mean 'accuracy'?)"
        >>> did_you_mean("zzz", ["accuracy"])
        ''
    """
    import difflib

    by_lower: dict[str, str] = {}
    for choice in sorted(choices, key=lambda c: (c != c.lower(), c)):  # 'accuracy' before 'Accuracy'
        by_lower.setdefault(choice.lower(), choice)
    close = difflib.get_close_matches(name.lower(), list(by_lower), n=1, cutoff=0.7)
    return f" (did you mean {by_lower[close[0]]!r}?)" if close else ""
