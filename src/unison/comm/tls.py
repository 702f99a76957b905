"""TLS settings of the parameter-server transport: gRPC's own credentials from PEM files.

Servers present ``UNISON_TLS_CERT``/``UNISON_TLS_KEY``; every process trusts ``UNISON_TLS_CA``.
With ``UNISON_TLS_CLIENT_AUTH=1`` servers also require a certificate signed by that CA from
every caller (mutual TLS), and callers present their own ``UNISON_TLS_CERT``/``KEY``.
``unison certs`` makes a CA and one certificate per task (:mod:`unison.comm.certs`).

Example:
    >>> TlsConfig.from_env() is None or isinstance(TlsConfig.from_env(), TlsConfig)
    True
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import grpc

_TRUE = ("1", "true", "yes", "on")


@dataclass(frozen=True)
class TlsConfig:
    """PEM files for TLS: the task's certificate and key, the CA that signed them.

    ``from_env()`` reads ``UNISON_TLS_CERT``, ``UNISON_TLS_KEY``, ``UNISON_TLS_CA`` and
    ``UNISON_TLS_CLIENT_AUTH``.

    Attributes:
        cert_file: this task's certificate (servers; callers too under mutual TLS).
        key_file: its private key.
        ca_file: the CA every peer's certificate must be signed by.
        client_auth: servers require a caller certificate signed by ``ca_file`` (mutual TLS).
    """

    cert_file: str | None = None
    key_file: str | None = None
    ca_file: str | None = None
    client_auth: bool = False

    @classmethod
    def from_env(cls) -> TlsConfig | None:
        cert, key, ca = (os.environ.get(f"UNISON_TLS_{k}") for k in ("CERT", "KEY", "CA"))
        if not (cert or key or ca):
            return None
        return cls(cert, key, ca, os.environ.get("UNISON_TLS_CLIENT_AUTH", "").strip().lower() in _TRUE)

    def _read(self, path: str | None, what: str) -> bytes:
        if not path:
            raise ValueError(
                f"TLS needs {what}; set UNISON_TLS_{what.split()[0].upper()} to a PEM file "
                "(`unison certs` makes them for a cluster)."
            )
        try:
            with open(path, "rb") as f:
                return f.read()
        except OSError as exc:
            raise ValueError(
                f"Could not read the TLS {what} {path!r}: {exc.strerror}. Set "
                f"UNISON_TLS_{what.split()[0].upper()} to a readable PEM file."
            ) from None

    def server_credentials(self) -> grpc.ServerCredentials:
        pair = [(self._read(self.key_file, "key file"), self._read(self.cert_file, "cert file"))]
        if self.client_auth:
            return grpc.ssl_server_credentials(
                pair, root_certificates=self._read(self.ca_file, "ca file"), require_client_auth=True
            )
        return grpc.ssl_server_credentials(pair)

    def channel_credentials(self) -> grpc.ChannelCredentials:
        ca = self._read(self.ca_file, "ca file")
        if self.cert_file and self.key_file:  # present our certificate: mutual TLS when the server asks
            return grpc.ssl_channel_credentials(
                root_certificates=ca,
                private_key=self._read(self.key_file, "key file"),
                certificate_chain=self._read(self.cert_file, "cert file"),
            )
        return grpc.ssl_channel_credentials(root_certificates=ca)


__all__ = ["TlsConfig"]
