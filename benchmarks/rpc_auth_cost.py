"""CPU cost of authenticating parameter-server messages: one echo of N bytes through
``RpcServer``/``RpcClient`` (client and server in this process, both directions), CPU time of
the whole process per call, median over the repeats.

Usage::

    PYTHONPATH=src python benchmarks/rpc_auth_cost.py                # Poly1305 chunk tags
    PYTHONPATH=src python benchmarks/rpc_auth_cost.py --mac hmac     # HMAC-SHA256 chunk tags
    PYTHONPATH=src python benchmarks/rpc_auth_cost.py --mac none     # no token: no authentication

CPU time rather than wall time: on a shared machine it moves much less with the load.
"""

from __future__ import annotations

import argparse
import secrets
import statistics
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mac", choices=("poly1305", "hmac", "none"), default="poly1305")
    parser.add_argument("--sizes-mb", type=int, nargs="+", default=[1, 8, 64])
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()

    import torch

    import unison.comm.auth as auth
    from unison.comm.rpc import RpcClient, RpcServer, keep_freed_memory

    keep_freed_memory()  # as every `unison server` task does
    if args.mac == "hmac":
        auth._POLY1305 = None
    token = None if args.mac == "none" else secrets.token_hex(32)
    server = RpcServer(
        "127.0.0.1:0", {"echo": lambda h, ts: ({}, ts)}, token=token, allow_unauthenticated=token is None
    )  # the unauthenticated baseline row
    client = RpcClient(f"127.0.0.1:{server.port}", "ps:0", token=token or "", tls=False, timeout_s=60)
    print(f"| N | CPU per echo ({args.mac}) |\n| --- | --- |")
    for mb in args.sizes_mb:
        x = torch.randn(mb << 18)
        dest = [torch.empty_like(x)]
        times = []
        for _ in range(args.repeats + 2):
            t0 = time.process_time()
            client.call("echo", {}, [x], reply_bytes=x.nbytes, into=dest)
            times.append(time.process_time() - t0)
        print(f"| {mb} MB | {statistics.median(times[2:]) * 1000:.1f} ms |")
    client.close()
    server.stop()


if __name__ == "__main__":
    main()
