"""``unison certs``: a private CA and one TLS certificate per task of a cluster, in one command.

The CA signs a certificate for every task (its host as subject alternative name, usable as a
server and as a client, for mutual TLS). Private keys are written ``0600``; the CA's key is
only needed to make more certificates later, and should not be copied to the tasks.

Example (hosts from ``TF_CONFIG``'s cluster, or ``--hosts``)::

    unison certs --out certs/
    # on each task, e.g. worker 1:
    export UNISON_TLS_CA=certs/ca.pem UNISON_TLS_CERT=certs/worker-1.pem UNISON_TLS_KEY=certs/worker-1-key.pem

In Python::

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as out:
    ...     sorted(make_cluster_certs({"ps-0": "127.0.0.1"}, out))
    ['ca-key.pem', 'ca.pem', 'ps-0-key.pem', 'ps-0.pem']
"""

from __future__ import annotations

import argparse
import datetime
import ipaddress
import json
import os
import sys
from typing import Any

from unison.cluster.spec import ClusterSpec, parse_address
from unison.core.atomic_io import atomic_write_bytes

_MISSING = (
    "`unison certs` needs the `cryptography` package: pip install 'unison[tls]' (or pip install 'cryptography>=41')."
)


def _crypto() -> Any:
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
    except ImportError:
        raise ImportError(_MISSING) from None
    return x509, hashes, serialization, ec, ExtendedKeyUsageOID, NameOID


def _san(x509: Any, host: str) -> Any:
    try:
        return x509.IPAddress(ipaddress.ip_address(host))
    except ValueError:
        return x509.DNSName(host)


def make_cluster_certs(tasks: dict[str, str], out_dir: str, days: int = 365) -> dict[str, str]:
    """Write ``ca.pem``/``ca-key.pem`` and ``<name>.pem``/``<name>-key.pem`` for each task.

    Args:
        tasks: file name stem -> host (IP address or DNS name) the task is reached at.
        out_dir: the directory (created; existing files of the same names are replaced).
        days: validity of every certificate.

    Returns:
        file name -> path of every file written.
    """
    if not tasks:
        raise ValueError("No tasks to make certificates for: give --hosts, or set TF_CONFIG to the cluster.")
    if days <= 0:
        raise ValueError(f"days must be > 0. Received: days={days}")
    x509, hashes, serialization, ec, eku, name_oid = _crypto()
    now = datetime.datetime.now(datetime.timezone.utc)
    start, end = now - datetime.timedelta(hours=1), now + datetime.timedelta(days=days)

    def pem_key(key: Any) -> bytes:
        return key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(name_oid.COMMON_NAME, "unison cluster CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=False,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    files = {"ca.pem": ca.public_bytes(serialization.Encoding.PEM), "ca-key.pem": pem_key(ca_key)}
    for stem, host in tasks.items():
        key = ec.generate_private_key(ec.SECP256R1())
        cert = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(name_oid.COMMON_NAME, stem)]))
            .issuer_name(ca_name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(start)
            .not_valid_after(end)
            .add_extension(x509.SubjectAlternativeName([_san(x509, host)]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([eku.SERVER_AUTH, eku.CLIENT_AUTH]), critical=False)
            .sign(ca_key, hashes.SHA256())
        )
        files[f"{stem}.pem"] = cert.public_bytes(serialization.Encoding.PEM)
        files[f"{stem}-key.pem"] = pem_key(key)
    os.makedirs(out_dir, mode=0o700, exist_ok=True)
    written = {}
    for name, data in files.items():
        path = os.path.join(out_dir, name)
        # a private key is 0600 from its first byte (never readable by others, whatever the umask);
        # certificates are public
        atomic_write_bytes(path, data, mode=0o600 if name.endswith("-key.pem") else 0o644)
        written[name] = path
    return written


def tasks_from_cluster(cluster: dict[str, Any]) -> dict[str, str]:
    """``{"worker-1": host, ...}`` for every task of a cluster spec (``TF_CONFIG``'s ``cluster``)."""
    spec = ClusterSpec(cluster)
    return {
        f"{job}-{i}": parse_address(spec.task_address(job, i), f"cluster.{job}[{i}]")[0]
        for job in spec.jobs
        for i in spec.task_indices(job)
    }


# --- `unison certs` ----------------------------------------------------------------------------------
def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Make a private CA and a TLS certificate for every task of a parameter-server cluster "
        "(hosts from TF_CONFIG's cluster, or --hosts), for UNISON_TLS_CERT/KEY/CA."
    )
    parser.add_argument("--out", default="unison-certs", help="directory to write into (default: unison-certs)")
    parser.add_argument(
        "--hosts",
        nargs="+",
        default=None,
        help="host names or IP addresses, one certificate each (instead of TF_CONFIG)",
    )
    parser.add_argument("--days", type=int, default=365, help="validity in days (default 365)")


def run(args: argparse.Namespace) -> int:
    try:
        if args.hosts:
            tasks = {h: h for h in args.hosts}
        else:
            raw = os.environ.get("TF_CONFIG", "").strip()
            if not raw:
                print("unison certs: give --hosts HOST [HOST ...], or set TF_CONFIG to the cluster.", file=sys.stderr)
                return 2
            try:
                cluster = json.loads(raw)["cluster"]
            except (ValueError, KeyError, TypeError):
                print(
                    f'unison certs: TF_CONFIG is not JSON with a "cluster" entry. Received: TF_CONFIG={raw[:200]!r}',
                    file=sys.stderr,
                )
                return 2
            tasks = tasks_from_cluster(cluster)
        written = make_cluster_certs(tasks, args.out, args.days)
    except (ImportError, ValueError, OSError) as exc:
        print(f"unison certs: {exc}", file=sys.stderr)
        return 2
    print(
        f"unison certs: wrote a CA and {len(tasks)} certificate(s) into {args.out}/ (keep ca-key.pem off the "
        "tasks). On each task set:"
    )
    for stem in tasks:
        print(
            f"  {stem}: UNISON_TLS_CA={written['ca.pem']} UNISON_TLS_CERT={written[stem + '.pem']} "
            f"UNISON_TLS_KEY={written[stem + '-key.pem']}"
        )
    print("Add UNISON_TLS_CLIENT_AUTH=1 on every task (the coordinator included) for mutual TLS.")
    return 0


__all__ = ["make_cluster_certs", "tasks_from_cluster"]
