"""The elastic agent's generations in the store, as workers read them (unison.comm.elastic), in one process."""

from __future__ import annotations

import os
import pathlib
import time

import pytest
import torch.distributed as dist

from unison.comm.elastic import Generation, publish, publish_error, read_latest, wait_for_generation
from unison.comm.store import AuthenticatedStore
from unison.errors import ElasticMembershipError, HostsUpdatedInterrupt, StoreAuthenticationError


def _store() -> AuthenticatedStore:
    return AuthenticatedStore(dist.HashStore(), b"s" * 32)


def test_a_published_generation_is_read_back_with_ranks_in_member_order() -> None:
    store = _store()
    assert read_latest(store) is None
    publish(store, Generation(0, (0, 1, 2)))
    publish(store, Generation(1, (0, 2)))
    latest = read_latest(store)
    assert latest == Generation(1, (0, 2))
    assert latest.size == 2 and latest.rank_of(2) == 1


def test_waiting_returns_the_next_generation_that_includes_this_worker() -> None:
    store = _store()
    publish(store, Generation(0, (0, 1, 2)))
    publish(store, Generation(1, (0, 2, 3)))
    assert wait_for_generation(store, 3, 0, 1.0, "joining") == Generation(1, (0, 2, 3))


def test_a_worker_left_out_of_the_new_generation_is_told_it_was_removed() -> None:
    store = _store()
    publish(store, Generation(4, (0, 2)))
    with pytest.raises(ElasticMembershipError, match="Worker 1 is not a member of the elastic job's generation 4"):
        wait_for_generation(store, 1, 3, 1.0, "a collective failed")


def test_no_new_generation_within_the_timeout_is_a_named_error_not_a_hang() -> None:
    store = _store()
    publish(store, Generation(0, (0, 1)))
    started = time.monotonic()
    with pytest.raises(ElasticMembershipError, match=r"waited 0s for the elastic agent .* after 0 \(a collective"):
        wait_for_generation(store, 0, 0, 0.2, "a collective failed")
    assert time.monotonic() - started < 5


def test_the_agents_error_reaches_every_waiting_worker() -> None:
    store = _store()
    publish(store, Generation(0, (0, 1)))
    publish_error(store, "the elastic job has 1 worker(s) left, fewer than --min-workers 2")
    with pytest.raises(ElasticMembershipError, match="fewer than --min-workers 2"):
        wait_for_generation(store, 0, 0, 5.0, "a collective failed")


def test_a_membership_written_without_the_jobs_secret_is_refused() -> None:
    raw = dist.HashStore()
    AuthenticatedStore(raw, b"x" * 32).set("unison/elastic/generation", "0")  # another secret
    with pytest.raises(StoreAuthenticationError):
        read_latest(AuthenticatedStore(raw, b"s" * 32))


def test_hosts_updated_interrupt_is_not_a_collective_failure() -> None:
    from unison.errors import UnisonError

    assert not issubclass(HostsUpdatedInterrupt, UnisonError)  # hvd.elastic.run must not roll back
    assert HostsUpdatedInterrupt().skip_sync is False


def test_a_multi_worker_strategy_in_an_elastic_worker_is_refused_not_run_alone() -> None:
    from unison.cluster.resolvers import default_cluster_resolver

    with pytest.raises(ElasticMembershipError, match=r"re-forms through Horovod's API only\. Fix: use"):
        default_cluster_resolver({"UNISON_ELASTIC_STORE": "127.0.0.1:5000", "UNISON_ELASTIC_WORKER": "1"})


def test_the_discovery_scripts_mistakes_are_named(tmp_path: pathlib.Path) -> None:
    from types import SimpleNamespace

    from unison.launch.elastic_agent import check_hosts, discover_hosts, discover_slots

    def script(body: str) -> str:
        path = tmp_path / f"d{len(list(tmp_path.iterdir()))}.sh"
        path.write_text("#!/bin/sh\n" + body + "\n")
        path.chmod(0o700)
        return str(path)

    assert discover_slots(script("echo localhost:2; echo 127.0.0.1:1")) == 3
    assert discover_hosts(script("echo node7:4; echo localhost:1; echo node7:2")) == {"node7": 6, "localhost": 1}
    one_host = SimpleNamespace(master=None, host_exec=None)
    check_hosts({"localhost": 2}, one_host)
    with pytest.raises(ValueError, match=r"reported host 'node7', another host than this one\. An elastic job across"):
        check_hosts({"node7": 4}, one_host)
    check_hosts({"node7": 4}, SimpleNamespace(master="10.0.0.1:29400", host_exec="ssh {host}"))
    with pytest.raises(ValueError, match="printed 'localhost:many'; expected 'HOST:SLOTS'"):
        discover_slots(script("echo localhost:many"))
    with pytest.raises(ValueError, match="exited with 3"):
        discover_slots(script("exit 3"))
    with pytest.raises(ValueError, match="could not be run"):
        discover_slots(str(tmp_path / "missing.sh"))


def test_a_worker_that_does_not_arrive_at_the_re_forming_is_named() -> None:
    from types import SimpleNamespace

    from unison.comm.elastic import ElasticGroup

    store = _store()
    generation = Generation(5, (0, 1, 2))
    publish(store, generation)
    store.set("unison/elastic/arrived/5/1", "1")  # worker 1 came; worker 2 hangs
    store.add("unison/elastic/arrived/5", 1)
    group = ElasticGroup(store, 0, SimpleNamespace(timeout_s=0.3), generation)  # type: ignore[arg-type]
    started = time.monotonic()
    with pytest.raises(
        ElasticMembershipError, match=r"Only 2 of the 3 workers .* worker 2 did not arrive\..*worker 2's log"
    ):
        group._join(generation)
    assert time.monotonic() - started < 5


def test_elastic_across_hosts_options_are_checked_together(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import argparse

    from unison.launch import cli

    script = tmp_path / "train.py"
    script.write_text("")
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    monkeypatch.delenv("UNISON_CLUSTER_TOKEN", raising=False)

    def refused(*flags: str) -> str:
        args = parser.parse_args(["--min-workers", "1", *flags, str(script)])
        assert cli.run(args) == 2
        return capsys.readouterr().err

    assert "--host-exec must contain {host}" in refused("--master", "10.0.0.1:29400", "--host-exec", "ssh node")
    assert "--host-exec was given without --master CHIEF_ADDR:PORT" in refused("--host-exec", "ssh {host}")
    assert "--master was given without --host-exec" in refused("--master", "10.0.0.1:29400")
    err = refused("--master", "10.0.0.1:29400", "--host-exec", "ssh {host}")
    assert "signs its membership store with the secret derived from UNISON_CLUSTER_TOKEN, which is not set" in err
    assert "drop --nnodes/--rdzv-endpoint/--tf-config/--max-restarts" in refused("--max-restarts", "1")


def test_a_generation_across_hosts_gives_each_worker_its_local_rank_and_size() -> None:
    store = _store()
    publish(store, Generation(2, (0, 3, 4, 5), ("h0", "h1", "h0", "h2")))
    latest = read_latest(store)
    assert latest == Generation(2, (0, 3, 4, 5), ("h0", "h1", "h0", "h2"))
    assert [latest.local_of(w) for w in latest.workers] == [(0, 2), (0, 1), (1, 2), (0, 1)]
    assert Generation(0, (0, 1)).local_of(1) == (1, 2)  # no hosts: one host


def test_an_elastic_worker_talks_on_the_interface_toward_the_chief(monkeypatch: pytest.MonkeyPatch) -> None:
    from unison.launch.rendezvous import local_ipv4_interfaces, use_interface_toward

    if "127.0.0.1" not in local_ipv4_interfaces():
        pytest.skip("no IPv4 loopback interface listed here")
    monkeypatch.delenv("GLOO_SOCKET_IFNAME", raising=False)
    use_interface_toward("127.0.0.1")
    assert os.environ["GLOO_SOCKET_IFNAME"] == local_ipv4_interfaces()["127.0.0.1"]
    monkeypatch.setenv("GLOO_SOCKET_IFNAME", "mine")
    use_interface_toward("127.0.0.1")
    assert os.environ["GLOO_SOCKET_IFNAME"] == "mine"  # the user's choice wins
