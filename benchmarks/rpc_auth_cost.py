import time, secrets, statistics, torch
from unison.comm.rpc import RpcServer, RpcClient, keep_freed_memory
keep_freed_memory()
t=secrets.token_hex(32)
s=RpcServer("127.0.0.1:0", {"echo": lambda h, ts: ({}, ts)}, token=t)
c=RpcClient(f"127.0.0.1:{s.port}", "ps:0", token=t, tls=False, timeout_s=60)
for mb in (1, 8, 64):
    x=torch.randn(mb<<18); dest=[torch.empty_like(x)]
    times=[]
    for i in range(12):
        t0=time.process_time(); c.call("echo", {}, [x], reply_bytes=x.nbytes, into=dest); times.append(time.process_time()-t0)
    print(f"{mb} MB echo: CPU median {statistics.median(times[2:])*1000:.1f} ms")
s.stop()
