"""``autoloop run --processes N``: N local processes of JAX's distributed runtime, on the loopback address.

The launcher starts N copies of ``autoloop run ... --distributed``, each told
its place through the variables `autoloop.distributed.initialize` reads
(``JAX_COORDINATOR_ADDRESS``, ``JAX_NUM_PROCESSES``, ``JAX_PROCESS_ID``), the
way a cluster launcher would start them on N hosts. Process 0 prints the
result; every process's one-line error reaches stderr prefixed with its
index. The exit status is the first failing process's (0 when all succeed);
once one process fails the others are stopped, since they would wait for it
in their next collective.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time

_POLL_SECONDS = 0.05
_GRACE_SECONDS = 5.0  # how long the others may finish on their own after one process failed


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now (the coordinator binds it next)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def launch(child_arguments: list[str], count: int, debug: bool = False) -> int:
    """Run ``python -m autoloop *child_arguments`` as `count` processes of one distributed run; the exit
    status of the run (see the module docstring). With `debug`, each process's whole stderr is shown
    (tracebacks, JAX's and Gloo's messages), not only autoloop's one-line errors."""
    address = f"127.0.0.1:{free_port()}"
    children, logs = [], []
    # Process 0's output and every stderr go to files, not pipes (a chatty process must never block on a full
    # pipe), and are shown when the run ends.
    printed = tempfile.TemporaryFile("w+")
    for index in range(count):
        environment = dict(os.environ, JAX_COORDINATOR_ADDRESS=address, JAX_NUM_PROCESSES=str(count),
                           JAX_PROCESS_ID=str(index))
        logs.append(tempfile.TemporaryFile("w+"))
        children.append(subprocess.Popen([sys.executable, "-m", "autoloop", *child_arguments], env=environment,
                                         stdout=printed if index == 0 else subprocess.DEVNULL, stderr=logs[-1]))
    try:
        status = _wait(children)
    except KeyboardInterrupt:
        _stop(children)
        raise
    finally:
        printed.seek(0)
        for line in printed.read().splitlines():
            # Gloo's C++ side reports its connections on stdout; that is the runtime's chatter, not the program's.
            if debug or not line.startswith("[Gloo] "):
                print(line)
        printed.close()
        _relay_errors(logs, debug)
    return status


def _relay_errors(logs, debug: bool) -> None:
    """autoloop's one-line errors from each process's stderr, once if every process said the same, else each
    prefixed with its process; with `debug`, everything each process wrote."""
    said = []
    for index, log in enumerate(logs):
        log.seek(0)
        for line in log.read().splitlines():
            if debug:
                print(f"[process {index}] {line}", file=sys.stderr)
            elif line.startswith("autoloop:"):
                said.append((index, line))
        log.close()
    if len({line for _, line in said}) == 1 and len(said) == len(logs):
        print(said[0][1], file=sys.stderr)
        return
    for index, line in said:
        print(f"autoloop: process {index}:{line[len('autoloop:'):]}", file=sys.stderr)


def _wait(children) -> int:
    """The first non-zero exit status, or 0; stops the rest a grace period after a failure."""
    failed_at = None
    status = 0
    while True:
        codes = [child.poll() for child in children]
        for code in codes:
            if code not in (None, 0) and status == 0:
                status, failed_at = code, time.monotonic()
        if all(code is not None for code in codes):
            return status
        if failed_at is not None and time.monotonic() - failed_at > _GRACE_SECONDS:
            _stop(children)
            return status
        time.sleep(_POLL_SECONDS)


def _stop(children) -> None:
    for child in children:
        if child.poll() is None:
            child.kill()
    for child in children:
        child.wait()
