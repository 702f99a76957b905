"""`unison launch` options: torchrun's and horovodrun's spellings, and the errors for the rest."""

from __future__ import annotations

import argparse

import pytest

from unison.cli import main
from unison.launch import cli
from unison.launch.failures import RankFailure, describe_exit, summary


def _parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="unison launch")
    cli.add_arguments(parser)
    args = parser.parse_args([*argv, __file__])
    cli._normalize(args)
    return args


@pytest.mark.parametrize(
    "argv,nproc",
    [
        (["--nproc_per_node=3"], 3),
        (["--nproc-per-node", "3"], 3),
        (["-np", "3"], 3),
        (["--num-proc", "3"], 3),
        (["-H", "localhost:2,127.0.0.1:1"], 3),
        (["-np", "2", "-H", "localhost:4"], 2),
        (["--nproc_per_node=cpu"], None),
        ([], 1),
    ],
)
def test_process_count_spellings(argv, nproc) -> None:
    args = _parse(*argv)
    assert args.nproc_per_node == (nproc if nproc is not None else __import__("os").cpu_count())


def test_torchrun_rendezvous_flags_reach_torchrun() -> None:
    args = _parse("--nnodes=2", "--nproc_per_node=2", "--rdzv_backend=c10d", "--rdzv_endpoint=10.0.0.1:29400")
    argv, _ = cli.torchrun_argv(args)
    assert argv[argv.index("--rdzv-endpoint") + 1] == "10.0.0.1:29400"
    assert argv[argv.index("--rdzv-backend") + 1] == "c10d" and "--standalone" not in argv
    args = _parse("--nnodes", "2", "--node_rank", "1", "--master_addr", "10.0.0.1", "--master_port", "29501")
    assert args.master == "10.0.0.1:29501" and args.node_rank == 1
    argv, _ = cli.torchrun_argv(args)
    assert argv[argv.index("--master-port") + 1] == "29501"


@pytest.mark.parametrize(
    "argv,fragment",
    [
        (["-H", "gpu7:4"], "-H names other hosts (gpu7): unison launch does not log in to other machines"),
        (["-np", "5", "-H", "localhost:4"], "-np 5 asks for more processes than -H localhost:4 has slots (4)"),
        (["--master", "a:1", "--rdzv_endpoint", "b:2"], "Give either --master (static rendezvous) or --rdzv-endpoint"),
    ],
)
def test_inconsistent_spellings_are_refused(argv, fragment) -> None:
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    args = parser.parse_args([*argv, __file__])
    with pytest.raises(ValueError) as err:
        cli._normalize(args)
    assert fragment in str(err.value)


def test_an_elastic_node_range_is_refused_by_name(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["launch", "--nnodes=1:4", __file__])
    assert "an elastic node range (1:4) is not supported by unison launch" in capsys.readouterr().err


def test_a_misspelt_flag_gets_a_suggestion(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["launch", "--nproc_per_nodes=2", __file__])
    err = capsys.readouterr().err
    assert "unrecognized arguments: --nproc_per_nodes=2" in err
    assert "did you mean '--nproc_per_node'?" in err and "usage: unison launch" in err


def test_summary_puts_the_first_failure_first_and_names_the_stopped_ranks(tmp_path) -> None:
    (tmp_path / "rank2.log").write_text(
        "--- attempt 0, pid 7 ---\nstale line\n--- attempt 1, pid 9 ---\nTraceback\nKeyError: 'x'\n"
    )
    failures = {
        0: RankFailure(rank=0, local_rank=0, pid=8, exitcode=-15, timestamp=5),
        2: RankFailure(rank=2, local_rank=0, pid=9, exitcode=1, timestamp=5),
    }
    text = summary(failures, str(tmp_path), world_size=4)
    lines = text.splitlines()
    assert (
        lines[0] == "unison launch: the job failed: rank 2 of 4 exited with code 1 and the launcher stopped the others."
    )
    assert lines[1] == "- rank 2 (local rank 0, pid 9): exited with code 1"
    assert lines[3:5] == ["    Traceback", "    KeyError: 'x'"]  # only the last attempt's lines
    assert "stale line" not in text
    assert (
        "- rank 0 (local rank 0, pid 8): killed by signal SIGTERM (15) (stopped by the launcher after rank 2 failed)"
        in text
    )
    assert describe_exit(-11) == "killed by signal SIGSEGV (11)"
