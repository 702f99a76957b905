"""The job's secret: what proves that a value in the rendezvous store was written by the job.

Two sources, read from the environment here (strategies never read it themselves):

* ``UNISON_CLUSTER_TOKEN``, the cluster's shared token, when set: every task of a multi-host
  job derives the same secret from it (an HMAC of a fixed label, so the token itself never
  goes into a store or onto the wire).
* ``UNISON_JOB_SECRET``, 32 random bytes (hex) that unison's one-host launcher (the
  ``MirroredStrategy`` re-exec, ``unison launch`` and ``unison.testing``) makes with
  :func:`launcher_secret_env` and hands to the replicas it starts, through their environment.

Example:
    >>> job_secret({"UNISON_CLUSTER_TOKEN": "x" * 32}) == job_secret({"UNISON_CLUSTER_TOKEN": "x" * 32})
    True
    >>> job_secret({}) is None
    True
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from collections.abc import Mapping

ENV_CLUSTER_TOKEN = "UNISON_CLUSTER_TOKEN"
ENV_JOB_SECRET = "UNISON_JOB_SECRET"
_LABEL = b"unison rendezvous store/1"


def cluster_secret(environ: Mapping[str, str] | None = None) -> bytes | None:
    """The secret derived from ``UNISON_CLUSTER_TOKEN`` (the same on every task), or ``None``."""
    env = os.environ if environ is None else environ
    token = env.get(ENV_CLUSTER_TOKEN, "")
    if not token:
        return None
    return hmac.new(token.encode(), _LABEL, hashlib.sha256).digest()


def job_secret(environ: Mapping[str, str] | None = None) -> bytes | None:
    """The cluster token's secret if set, else the one unison's launcher gave this process.

    Raises:
        ValueError: ``UNISON_JOB_SECRET`` is set but is not 64 hexadecimal digits.
    """
    env = os.environ if environ is None else environ
    derived = cluster_secret(env)
    if derived is not None:
        return derived
    raw = env.get(ENV_JOB_SECRET, "")
    if not raw:
        return None
    try:
        secret = bytes.fromhex(raw)
    except ValueError:
        secret = b""
    if len(secret) != 32:
        raise ValueError(
            f"{ENV_JOB_SECRET} must be 64 hexadecimal digits (unison's launcher sets it for the "
            f"replicas it starts). Received a value of {len(raw)} characters. Unset it, or set "
            f"{ENV_CLUSTER_TOKEN} instead."
        )
    return secret


def launcher_secret_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables a launcher gives its replicas so that they share this job's secret.

    Empty when ``UNISON_CLUSTER_TOKEN`` already provides it; otherwise the launcher's own
    ``UNISON_JOB_SECRET`` (if it was itself started with one) or a fresh random one.
    """
    env = os.environ if environ is None else environ
    if cluster_secret(env) is not None:
        return {}
    if env.get(ENV_JOB_SECRET):
        job_secret(env)  # validate it before handing it on
        return {ENV_JOB_SECRET: env[ENV_JOB_SECRET]}
    return {ENV_JOB_SECRET: secrets.token_hex(32)}
