"""The share of the cores a decode-and-resize map gets, by how its threads take their work (issue 39).

The same work (``read_file -> decode_jpeg -> resize 224x224`` over ``--images`` JPEGs of a folder,
e.g. the one ``image_files_vs_tf.py`` makes), in one process, four ways, alternated for ``--rounds``:

* ``runs1`` / ``runs2``: 1 or 2 threads, each running its share of the files back to back;
* ``tasks2`` / ``tasks4``: 2 or 4 threads taking one file at a time from a queue and handing each
  result back (TF's workers and unison's threaded ``map`` for costly elements work this way).

Printed per way: images/s, cores used (process CPU seconds / wall seconds), CPU ms per image and the
load average. On a quiet machine the ways differ little; on a host whose cores other programs keep
busy, the scheduler gives threads that wait between short tasks a larger share.

    PYTHONPATH=src python benchmarks/map_task_share.py --dir /tmp/pipes/img --images 300 --rounds 3
"""

from __future__ import annotations

import argparse
import glob
import itertools
import os
import queue
import shlex
import sys
import threading
import time
from collections.abc import Callable


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", required=True, help="a folder of .jpg files")
    parser.add_argument("--images", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print("$ " + shlex.join([sys.executable, *sys.argv]), flush=True)
    import unison as tf
    from unison.data import intraop

    files = sorted(glob.glob(os.path.join(args.dir, "*.jpg")))[: args.images]
    if not files:
        parser.error(f"no .jpg files in --dir {args.dir}")

    def load(path: str) -> object:
        return tf.image.resize(tf.io.decode_jpeg(tf.io.read_file(path), channels=3), [224, 224])

    def runs(k: int) -> None:
        def work(part: list[str]) -> None:
            intraop.set_for_this_thread(1)
            for path in part:
                load(path)

        threads = [threading.Thread(target=work, args=(files[i::k],)) for i in range(k)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    def tasks(k: int) -> None:
        todo: queue.Queue[str | None] = queue.Queue()
        done: queue.Queue[object] = queue.Queue()

        def work() -> None:
            intraop.set_for_this_thread(1)
            while (path := todo.get()) is not None:
                done.put(load(path))

        threads = [threading.Thread(target=work) for _ in range(k)]
        for thread in threads:
            thread.start()
        paths = iter(files)
        first = list(itertools.islice(paths, k))  # k in flight: one more handed out per result taken
        for path in first:
            todo.put(path)
        for path in paths:
            done.get()
            todo.put(path)
        for _ in first:
            done.get()
        for _ in threads:
            todo.put(None)
        for thread in threads:
            thread.join()

    ways: list[tuple[str, Callable[[int], None], int]] = [
        ("runs1", runs, 1),
        ("runs2", runs, 2),
        ("tasks2", tasks, 2),
        ("tasks4", tasks, 4),
    ]
    load(files[0])  # imports and first-call set-up outside the timings
    for round_ in range(args.rounds):
        for name, way, k in ways:
            start, cpu = time.perf_counter(), time.process_time()
            way(k)
            wall, cpu = time.perf_counter() - start, time.process_time() - cpu
            print(
                f"round {round_ + 1}: {name:6s} {len(files) / wall:7.1f} images/s, cores used {cpu / wall:.2f}, "
                f"{1e3 * cpu / len(files):.2f} CPU ms/image (load {os.getloadavg()[0]:.1f})",
                flush=True,
            )


if __name__ == "__main__":
    main()
