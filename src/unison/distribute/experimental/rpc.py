"""``tf.distribute.experimental.rpc``: call a ``tf.function`` registered on another process.

TF's API: ``Server.create("grpc", address)``, ``server.register(name, tf_function)``,
``server.start()``; ``Client.create("grpc", address)`` learns the registered methods (and adds
``client.<name>(...)`` and ``client.<name>_blocking(...)``); ``client.call(name, args)`` returns a
``StatusOrResult`` (``is_ok()``, ``get_value()``, ``get_error()``). A function that raises on the
server comes back as its status: ``get_value()`` raises the same ``tf.errors`` class, ``get_error()``
gives ``(code, message)``. An unknown method is an ``InvalidArgumentError``.

The transport is unison's gRPC layer (:mod:`unison.comm.rpc`): tensors travel as raw buffers and
every call is authenticated with the cluster token (``$UNISON_CLUSTER_TOKEN``), because a server
runs what it is asked to run. TF's RPC server has no authentication.

Example:
    >>> import os, secrets, unison as tf
    >>> os.environ["UNISON_CLUSTER_TOKEN"] = secrets.token_hex(16)
    >>> server = tf.distribute.experimental.rpc.Server.create("grpc", "localhost:0")
    >>> add = tf.function(lambda a, b: a + b, input_signature=[tf.TensorSpec([], tf.int32)] * 2)
    >>> server.register("add", add)
    >>> server.start()
    >>> client = tf.distribute.experimental.rpc.Client.create("grpc", f"localhost:{server.port}")
    >>> int(client.add(tf.constant(2), tf.constant(3)).get_value())
    5
    >>> server.stop()
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from unison import errors
from unison.comm.rpc import RpcClient, RpcServer, cluster_token
from unison.core.function import Function

_LIST, _CALL = "rpc.list", "rpc.call"


def _check_layer(rpc_layer: str) -> None:
    if rpc_layer != "grpc":
        raise ValueError(f"Only GRPC backend is supported at the moment. Received: rpc_layer={rpc_layer!r}")


def _error_class(code: int) -> type[errors.OpError]:
    for cls in vars(errors).values():
        if isinstance(cls, type) and issubclass(cls, errors.OpError) and cls.__dict__.get("error_code") == code:
            return cls
    return errors.UnknownError


class Server:
    """A server of registered ``tf.function`` s (TF's ``rpc.Server``); build it with :meth:`create`."""

    def __init__(self, address: str) -> None:
        self._address = address
        self._methods: dict[str, Function] = {}
        self._server: RpcServer | None = None
        self.port: int | None = None

    @staticmethod
    def create(rpc_layer: str, address: str) -> Server:
        """A server that will listen on ``address`` (``"host:port"``; port 0: any free port)."""
        _check_layer(rpc_layer)
        return Server(address)

    def register(self, method_name: str, func: Any) -> None:
        """Serve ``func`` (a ``tf.function``) under ``method_name``."""
        if not isinstance(func, Function):
            raise ValueError(
                "Only TF functions are supported with Register method: decorate it with @tf.function "
                f"(with an input_signature). Received: {func!r:.80}"
            )
        self._methods[method_name] = func

    def start(self) -> None:
        """Start serving (the cluster token comes from ``$UNISON_CLUSTER_TOKEN``).

        Raises:
            ValueError: no cluster token is set.
        """
        token = cluster_token()
        if token is None:
            raise ValueError(
                "rpc.Server.start needs the cluster token: a server runs the functions callers name, so every "
                "call is authenticated. Set UNISON_CLUSTER_TOKEN (make one with `unison token`) in the server's "
                "and the clients' environment."
            )
        self._server = RpcServer(self._address, {_LIST: self._list, _CALL: self._call}, token=token)
        self.port = self._server.port

    def stop(self) -> None:
        """Stop serving (a unison addition; TF's server runs until the process ends)."""
        if self._server is not None:
            self._server.stop()
            self._server = None

    def _list(self, header: dict[str, Any], tensors: list[torch.Tensor]) -> tuple[dict[str, Any], list[torch.Tensor]]:
        return {"methods": sorted(self._methods)}, []

    def _call(self, header: dict[str, Any], tensors: list[torch.Tensor]) -> tuple[dict[str, Any], list[torch.Tensor]]:
        name = header["method"]
        if name not in self._methods:
            return {"code": errors.InvalidArgumentError.error_code, "message": f"{name} is not registered."}, []
        try:
            out = self._methods[name](*tensors)
        except Exception as exc:  # the caller gets the status, as TF's StatusOrResult carries it
            code = getattr(exc, "error_code", errors.UnknownError.error_code)
            return {"code": int(code), "message": f"{type(exc).__name__}: {exc}"}, []
        many = isinstance(out, (list, tuple))
        values = list(out) if many else ([] if out is None else [out])
        return {"code": 0, "many": many, "none": out is None}, [torch.as_tensor(v) for v in values]


class StatusOrResult:
    """The outcome of :meth:`Client.call`: a value, or the status the server's function raised."""

    def __init__(self, code: int, message: str, value: Any) -> None:
        self._code, self._message, self._value = code, message, value

    def is_ok(self) -> torch.Tensor:
        """A boolean scalar tensor: whether the call succeeded."""
        return torch.tensor(self._code == 0)

    def get_value(self) -> Any:
        """The function's result; the server's error (its ``tf.errors`` class) when it failed."""
        if self._code:
            raise _error_class(self._code)(None, None, self._message)
        return self._value

    def get_error(self) -> tuple[torch.Tensor, Any]:
        """``(code, message)``: an int64 scalar tensor and a string tensor (code 0: no error)."""
        from unison.ops.string_tensor import as_string_tensor

        return torch.tensor(self._code, dtype=torch.int64), as_string_tensor(np.asarray(self._message, dtype=object))


class Client:
    """A client of a :class:`Server` (TF's ``rpc.Client``); build it with :meth:`create`."""

    def __init__(self, address: str, name: str, timeout_in_ms: int) -> None:
        self._rpc = RpcClient(address, task=f"rpc:{address}", sender=name or "rpc-client")
        self._timeout_s = timeout_in_ms / 1000 if timeout_in_ms else None
        header, _ = self._rpc.call(_LIST, timeout_s=self._timeout_s)
        for method in header["methods"]:
            setattr(self, method, self._method(method, blocking=False))
            setattr(self, f"{method}_blocking", self._method(method, blocking=True))

    @staticmethod
    def create(rpc_layer: str, address: str, name: str = "", timeout_in_ms: int = 0) -> Client:
        """Connect to the server at ``address`` and learn its methods."""
        _check_layer(rpc_layer)
        return Client(address, name, timeout_in_ms)

    def close(self) -> None:
        """Close the connection (a unison addition; TF's client closes when collected)."""
        self._rpc.close()

    def _method(self, name: str, blocking: bool) -> Any:
        def call(*args: Any) -> Any:
            result = self.call(name, list(args))
            return result.get_value() if blocking else result

        call.__name__ = name
        return call

    def call(
        self, method_name: str, args: Sequence[Any] | None = None, output_specs: Any = None, timeout_in_ms: int = 0
    ) -> StatusOrResult:
        """Run ``method_name(*args)`` on the server; its outcome as a :class:`StatusOrResult`."""
        tensors = [torch.as_tensor(a) for a in (args or [])]
        timeout = timeout_in_ms / 1000 if timeout_in_ms else self._timeout_s
        header, values = self._rpc.call(_CALL, {"method": method_name}, tensors, timeout_s=timeout)
        if header["code"]:
            return StatusOrResult(header["code"], header["message"], None)
        value: Any = None if header["none"] else (tuple(values) if header["many"] else values[0])
        return StatusOrResult(0, "", value)


__all__ = ["Client", "Server", "StatusOrResult"]
