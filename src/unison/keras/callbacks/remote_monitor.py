"""``RemoteMonitor``: post each epoch's logs to an HTTP server (Keras 3's ``keras.callbacks.RemoteMonitor``)."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
import warnings
from typing import Any

from unison.keras.callbacks._common import is_chief
from unison.keras.callbacks.callback import Callback, Logs


def _plain(value: Any) -> Any:
    """A log value as a JSON number (numpy and torch scalars have ``item()``)."""
    item = getattr(value, "item", None)
    return item() if callable(item) and getattr(value, "ndim", 0) == 0 else value


class RemoteMonitor(Callback):
    """At each epoch end, POST ``{"epoch": epoch, **logs}`` to ``root + path`` (chief only).

    As in Keras, the body is a form with the JSON text in ``field``
    (``data={"epoch": 0, "loss": ...}``), or with ``send_as_json=True`` the JSON itself
    (``Content-Type: application/json``). A server that cannot be reached gives a warning, not an
    error, so training goes on. The request uses the standard library (``urllib``).

    Args:
        root: the server's root URL.
        path: the path appended to ``root``.
        field: the form field that holds the JSON (form bodies only).
        headers: extra HTTP headers.
        send_as_json: send the JSON as the request body.
        timeout: seconds to wait for the server (a unison addition; Keras waits indefinitely).

    Example:
        >>> monitor = RemoteMonitor(root="http://127.0.0.1:9000")
        >>> monitor.root + monitor.path
        'http://127.0.0.1:9000/publish/epoch/end/'
    """

    def __init__(
        self,
        root: str = "http://localhost:9000",
        path: str = "/publish/epoch/end/",
        field: str = "data",
        headers: dict[str, str] | None = None,
        send_as_json: bool = False,
        timeout: float = 10.0,
    ) -> None:
        super().__init__()
        if not isinstance(root, str) or not root.startswith(("http://", "https://")):
            raise ValueError(f"RemoteMonitor needs an http:// or https:// root URL. Received: root={root!r}")
        self.root, self.path, self.field = root, path, field
        self.headers = dict(headers or {})
        self.send_as_json, self.timeout = bool(send_as_json), float(timeout)

    def on_epoch_end(self, epoch: int, logs: Logs | None = None) -> None:
        if not is_chief(self.model):
            return
        send = {"epoch": epoch, **{k: _plain(v) for k, v in (logs or {}).items()}}
        headers = dict(self.headers)
        if self.send_as_json:
            body = json.dumps(send).encode("utf-8")
            headers.setdefault("Content-Type", "application/json")
        else:
            body = urllib.parse.urlencode({self.field: json.dumps(send)}).encode("utf-8")
            headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
        request = urllib.request.Request(self.root + self.path, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                response.read()
        except (urllib.error.URLError, OSError) as error:
            warnings.warn(
                f"Could not reach RemoteMonitor root server at {self.root} ({error}).", RuntimeWarning, stacklevel=2
            )


__all__ = ["RemoteMonitor"]
