"""Names whose values are TF's constants: status codes, SavedModel names, errors' classes, versions."""

from __future__ import annotations

import pytest
from tf_oracle import same_as_tf

CODES = (
    "errors.OK",
    "errors.CANCELLED",
    "errors.UNKNOWN",
    "errors.INVALID_ARGUMENT",
    "errors.DEADLINE_EXCEEDED",
    "errors.NOT_FOUND",
    "errors.ALREADY_EXISTS",
    "errors.PERMISSION_DENIED",
    "errors.RESOURCE_EXHAUSTED",
    "errors.FAILED_PRECONDITION",
    "errors.ABORTED",
    "errors.OUT_OF_RANGE",
    "errors.UNIMPLEMENTED",
    "errors.INTERNAL",
    "errors.UNAVAILABLE",
    "errors.DATA_LOSS",
    "errors.UNAUTHENTICATED",
)
ERRORS = (
    "errors.OpError",
    "errors.CancelledError",
    "errors.UnknownError",
    "errors.InvalidArgumentError",
    "errors.DeadlineExceededError",
    "errors.NotFoundError",
    "errors.AlreadyExistsError",
    "errors.PermissionDeniedError",
    "errors.ResourceExhaustedError",
    "errors.FailedPreconditionError",
    "errors.AbortedError",
    "errors.OutOfRangeError",
    "errors.UnimplementedError",
    "errors.InternalError",
    "errors.UnavailableError",
    "errors.DataLossError",
    "errors.UnauthenticatedError",
)


def op(tf, dotted):
    obj = tf
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


@same_as_tf(*CODES)
def test_status_codes(tf):
    return [op(tf, name) for name in CODES]


@same_as_tf(*CODES, edge=True)
def test_status_codes_are_the_error_classes_codes(tf):
    return [op(tf, code) == op(tf, cls)(None, None, "m").error_code for code, cls in zip(CODES[1:], ERRORS[1:])]


@pytest.mark.parametrize("name", ERRORS)
@same_as_tf(*ERRORS)
def test_error_classes_carry_message_and_code(tf, name):
    args = (None, None, "what happened", 3) if name == "errors.OpError" else (None, None, "what happened")
    error = op(tf, name)(*args)
    return error.message, error.error_code, isinstance(error, tf.errors.OpError), str(error)


@pytest.mark.parametrize("name", ERRORS)
@same_as_tf(*ERRORS, edge=True)
def test_error_classes_are_raised_and_caught_as_op_errors(tf, name):
    try:
        raise op(tf, name)(None, None, "", 2) if name == "errors.OpError" else op(tf, name)(None, None, "")
    except tf.errors.OpError as error:
        return type(error).__name__, error.message, error.node_def, error.op


@same_as_tf("errors.OperatorNotAllowedInGraphError")
def test_operator_not_allowed_is_a_type_error(tf):
    return issubclass(tf.errors.OperatorNotAllowedInGraphError, TypeError), str(
        tf.errors.OperatorNotAllowedInGraphError("x")
    )


@same_as_tf("errors.OperatorNotAllowedInGraphError", edge=True)
def test_operator_not_allowed_is_not_an_op_error(tf):
    return issubclass(tf.errors.OperatorNotAllowedInGraphError, tf.errors.OpError)


SAVED_MODEL = (
    "saved_model.ASSETS_DIRECTORY",
    "saved_model.ASSETS_KEY",
    "saved_model.CLASSIFY_INPUTS",
    "saved_model.CLASSIFY_METHOD_NAME",
    "saved_model.CLASSIFY_OUTPUT_CLASSES",
    "saved_model.CLASSIFY_OUTPUT_SCORES",
    "saved_model.DEBUG_DIRECTORY",
    "saved_model.DEBUG_INFO_FILENAME_PB",
    "saved_model.GPU",
    "saved_model.PREDICT_INPUTS",
    "saved_model.PREDICT_METHOD_NAME",
    "saved_model.PREDICT_OUTPUTS",
    "saved_model.REGRESS_INPUTS",
    "saved_model.REGRESS_METHOD_NAME",
    "saved_model.REGRESS_OUTPUTS",
    "saved_model.SAVED_MODEL_FILENAME_PB",
    "saved_model.SAVED_MODEL_FILENAME_PBTXT",
    "saved_model.SAVED_MODEL_SCHEMA_VERSION",
    "saved_model.SERVING",
    "saved_model.TPU",
    "saved_model.TRAINING",
    "saved_model.VARIABLES_DIRECTORY",
    "saved_model.VARIABLES_FILENAME",
    "saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY",
)


@same_as_tf(*SAVED_MODEL)
def test_saved_model_names(tf):
    return {name: op(tf, name) for name in SAVED_MODEL}


@same_as_tf(*SAVED_MODEL, edge=True)
def test_saved_model_names_are_distinct_where_tf_keeps_them_apart(tf):
    tags = {tf.saved_model.SERVING, tf.saved_model.TRAINING, tf.saved_model.GPU, tf.saved_model.TPU}
    return len(tags), tf.saved_model.PREDICT_INPUTS == tf.saved_model.CLASSIFY_INPUTS


@same_as_tf("version.VERSION", values=False, differs="tf.version.VERSION is unison's own version, not TensorFlow's")
def test_version_is_a_string(tf):
    return tf.version.VERSION, isinstance(tf.version.VERSION, str)


@same_as_tf("version.VERSION", edge=True)
def test_version_is_dotted(tf):
    return tf.version.VERSION.count(".") >= 1
