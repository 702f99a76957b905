"""Rendezvous of a multi-worker job at the chief's address (TF_CONFIG, SLURM, explicit clusters).

The chief's first replica serves torch's ``TCPStore`` on the chief's ``host:port`` from the
cluster spec, listening only on that address's interface (torch alone listens on all of them);
every other replica connects to it. Each replica then announces itself, so a task
that never arrives is named in the error instead of surfacing as a gloo timeout. Failures say
which setting holds the address and how to fix it (docs/semantics.md#errors).

Example (what ``MultiWorkerMirroredStrategy`` does with a :class:`~unison.cluster.JobPlan`)::

    use_interface_of(plan.local_host)
    store = open_store(plan, timeout_s=300)
    wait_for_tasks(store, plan, timeout_s=300)
"""

from __future__ import annotations

import datetime
import errno
import fcntl
import os
import socket
import struct

import torch.distributed as dist

from unison.cluster.plan import ENV, SERVE, JobPlan
from unison.comm.store import serve_tcp_store
from unison.errors import RendezvousError

_SIOCGIFADDR = 0x8915


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def local_ipv4_interfaces() -> dict[str, str]:
    """``{ipv4 address: interface name}`` of this network namespace (Linux; ``{}`` elsewhere)."""
    found: dict[str, str] = {}
    if not hasattr(socket, "if_nameindex"):
        return found
    # An ioctl on a datagram socket only asks the kernel; nothing is sent.
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        for _, name in socket.if_nameindex():
            try:
                packed = fcntl.ioctl(probe.fileno(), _SIOCGIFADDR, struct.pack("256s", name.encode()[:15]))
            except OSError:
                continue
            found[socket.inet_ntoa(packed[20:24])] = name
    return found


def interface_for_host(host: str | None) -> str | None:
    """The local interface that holds ``host``'s address, or ``None`` if it is not this machine's."""
    if not host:
        return None
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(host, None, socket.AF_INET)}
    except OSError:
        return None
    interfaces = local_ipv4_interfaces()
    for address in sorted(addresses):
        if address in interfaces:
            return interfaces[address]
    return None


def use_interface_of(host: str | None) -> None:
    """Make gloo talk on the interface of this task's own address (unless the user chose one).

    gloo otherwise picks the address its host name resolves to, which on a machine with several
    networks (or inside a network namespace) may not be the one the other workers can reach.
    """
    if "GLOO_SOCKET_IFNAME" in os.environ:
        return
    name = interface_for_host(host)
    if name:
        os.environ["GLOO_SOCKET_IFNAME"] = name


def use_interface_toward(host: str) -> None:
    """Make gloo talk on the interface this machine reaches ``host`` through (unless the user chose one).

    An elastic worker knows only the chief's store address: the interface its route to that
    address leaves by is the one the other hosts' workers reach it on (the chief's own host
    included, whose address is then that of a real interface, not the loopback).

    Example::

        use_interface_toward("10.0.0.1")   # GLOO_SOCKET_IFNAME=eth0 where eth0 routes to 10.0.0.1
    """
    if "GLOO_SOCKET_IFNAME" in os.environ:
        return
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect((host, 9))  # a datagram socket's connect only picks the route; nothing is sent
            address = probe.getsockname()[0]
    except OSError:
        return
    name = local_ipv4_interfaces().get(address)
    if name:
        os.environ["GLOO_SOCKET_IFNAME"] = name


def open_store(plan: JobPlan, timeout_s: float) -> dist.Store:
    """Serve the job's store (the chief's first replica) or connect to it (every other replica).

    Under torchrun (``store_mode="env"``) the store is the elastic agent's; this attempt's keys
    get their own prefix.
    """
    timeout = datetime.timedelta(seconds=timeout_s)
    where = f"{plan.origin} {plan.chief_field}"
    if plan.store_mode == SERVE:
        try:
            return serve_tcp_store(plan.store_host, plan.store_port, plan.world_size, timeout_s)
        except (RuntimeError, OSError) as exc:
            text = _first_line(exc)
            if "EADDRINUSE" in text or "already in use" in text or getattr(exc, "errno", None) == errno.EADDRINUSE:
                raise RendezvousError(
                    f"The chief ({plan.task}) cannot serve the rendezvous on port {plan.store_port}: "
                    f"the port is already in use on this host ({where} = {plan.store_address!r}). "
                    f"Fix: choose a free port for {plan.chief_field} (the same cluster in every "
                    f"process's {plan.origin}), or stop the program holding it (`ss -ltnp "
                    f"'sport = :{plan.store_port}'` shows it)."
                ) from None
            own = interface_for_host(plan.store_host)
            hint = (
                ""
                if own
                else f" {plan.store_host!r} is not an address of this machine: is this process really the chief?"
            )
            raise RendezvousError(
                f"The chief ({plan.task}) could not serve the rendezvous at {plan.store_address} "
                f"({where}) within {timeout_s:.0f}s: {text}.{hint}"
            ) from None
    try:
        client = dist.TCPStore(plan.store_host, plan.store_port, None, is_master=False, timeout=timeout)
    except RuntimeError as exc:
        raise RendezvousError(
            f"{plan.task} could not reach the chief at {plan.store_address} ({where}) within "
            f"{timeout_s:.0f}s: {_first_line(exc)}. The chief's address never answered. Fix: start "
            f"the chief task, check that {plan.chief_field} holds the chief's reachable address "
            "and port (the same cluster in every process), and that no firewall blocks it."
        ) from None
    if plan.store_mode == ENV:
        # torchrun's agent keeps its store across restarts: without a prefix per attempt, a
        # restarted process could read the previous attempt's (dead) peers' addresses.
        return dist.PrefixStore(f"{plan.run_key}/", client)
    return client


def wait_for_tasks(store: dist.Store, plan: JobPlan, timeout_s: float) -> None:
    """Announce this replica and wait until every replica of the job has announced itself."""
    prefix = f"{plan.run_key}/arrived/"
    keys = [f"{prefix}{r}" for r in range(plan.world_size)]
    try:
        store.set(keys[plan.rank], plan.task_of_rank(plan.rank))
        store.wait(keys, datetime.timedelta(seconds=timeout_s))
        return
    except RuntimeError as exc:
        failure = _first_line(exc)
    try:
        missing = [r for r, key in enumerate(keys) if not store.check([key])]
    except RuntimeError:
        raise RendezvousError(
            f"{plan.task} lost the chief's rendezvous at {plan.store_address} while waiting for "
            f"the other tasks ({failure}); the chief task stopped."
        ) from None
    names = sorted({plan.task_of_rank(r) for r in missing})
    fix = (
        "the launcher started them: its log says why they did not get here"
        if plan.store_mode == ENV
        else f"start them with the same cluster in their {plan.origin} (and their own task)"
    )
    raise RendezvousError(
        f"{plan.task_of_rank(plan.rank)} waited {timeout_s:.0f}s at the rendezvous "
        f"{plan.store_address} but these tasks never arrived: {', '.join(names)}. Fix: {fix}, and "
        f"check that they can reach {plan.store_address}."
    )
