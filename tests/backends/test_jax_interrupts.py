"""Ctrl-C stops a running graph loop on both backends: `KeyboardInterrupt` from the user's loop line, within a
second or two, and the process goes on working; ``autoloop run`` prints one line and exits 130.

A compiled XLA loop never returns to Python by itself: on ``backend="jax"``
a loop that may run long asks the host now and then
(`autoloop.backends.jax.interrupts`). Each test runs a fresh process and
sends it SIGINT while its loop runs.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from tests.child_processes import interruptible

pytest.importorskip("jax", reason="JAX is not installed: pip install 'autoloop[jax]' runs the JAX backend's tests")

ROOT = Path(__file__).resolve().parents[2]
ENDLESS = textwrap.dedent("""
    import autoloop as al

    def spin(x):
        while x > 0:
            x = x + 1
            x = x - 1
        return x

    def nested(x):
        total = x - x
        for i in range(x):
            while x > 0:
                x = x * 1
            total += i
        return total
    """)
SCRIPT = textwrap.dedent("""
    import json, sys, time, traceback
    import autoloop as al
    from endless import spin, nested

    fn = {"spin": spin, "nested": nested}[sys.argv[2]]
    f = al.function(fn, backend=sys.argv[1])
    f(al.constant(0))  # traced and compiled before the clock starts
    print("running", flush=True)
    start = time.perf_counter()
    try:
        f(al.constant(1))
    except KeyboardInterrupt as interrupt:
        seconds = time.perf_counter() - start
        frame = traceback.extract_tb(interrupt.__traceback__)[-1]
        print(json.dumps({"seconds": seconds, "location": list(interrupt.autoloop_location),
                          "frame": [frame.filename, frame.lineno],
                          "after": int(f(al.constant(0)))}))
    """)


def _interrupt(tmp_path, command, delay=0.5, source=ENDLESS):
    (tmp_path / "endless.py").write_text(source)
    (tmp_path / "script.py").write_text(SCRIPT)
    process = subprocess.Popen(interruptible(command[1:]), cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(
                                   filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))})
    try:
        assert process.stdout.readline() == "running\n"
        time.sleep(delay)  # the loop runs
        sent = time.perf_counter()
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
        waited = time.perf_counter() - sent
    finally:
        process.kill()
    return process.returncode, out, err, waited


@pytest.mark.parametrize("on", ["numpy", "jax"])
@pytest.mark.parametrize("program, line", [("spin", 5), ("nested", 13)])
def test_ctrl_c_stops_the_loop_at_the_users_line_and_the_process_goes_on(tmp_path, on, program, line):
    code, out, err, waited = _interrupt(tmp_path, [sys.executable, "script.py", on, program])
    assert code == 0, err
    report = json.loads(out)
    where = [str(tmp_path / "endless.py"), line]
    assert report["location"] == where and report["frame"] == where
    assert report["seconds"] > 0.4 and waited < 3  # stopped by the Ctrl-C, within a second or two
    assert report["after"] == 0  # the function still runs


def test_the_command_line_prints_one_line_and_exits_130_on_jax(tmp_path):
    printing = ENDLESS.replace("def spin(x):\n", "def spin(x):\n    print('running')\n")
    code, out, err, waited = _interrupt(tmp_path, [sys.executable, "-m", "autoloop", "run", "endless.py::spin", "1",
                                                   "--backend", "jax"], delay=0.5, source=printing)
    assert code == 130 and waited < 3
    assert err == "autoloop: interrupted while the graph ran, at endless.py:6\n"


def _on_a_device_thread(watch, location):
    """Run `watch`'s host call as a GPU runs it: on another thread, while the main thread waits where Python's
    handlers never run (SIGINT blocked in it, so no system call there is interrupted); the Ctrl-C arrives on
    that other thread just before the host call. Returns the host call's answer."""
    answers = []

    def device_thread():
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)
        answers.append(watch.ask(location, 10, -1))

    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        thread = threading.Thread(target=device_thread)
        thread.start()
        thread.join()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    return answers[0]


def test_a_host_call_off_the_main_thread_hears_ctrl_c_before_pythons_handler_runs(pythons_sigint_handler):
    from autoloop.backends.jax.interrupts import Watch
    watch, loop = Watch(("f.py", 3)), ("f.py", 5)
    answers, wakeup = [], signal.set_wakeup_fd(-1)  # whatever had the descriptor before (an event loop's, say)
    signal.set_wakeup_fd(wakeup)
    with pytest.raises(KeyboardInterrupt) as caught:
        watch.run(lambda: answers.append(_on_a_device_thread(watch, loop)), (), listen=True)
    assert bool(answers[0][0])  # the host call told the loop to stop
    assert caught.value.autoloop_location == loop
    assert watch.listen_first  # its host calls run off the main thread: later calls listen from their start
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler and signal.set_wakeup_fd(wakeup) == wakeup
    assert watch.run(lambda: 7, ()) == 7  # and the next call, listening from its start, runs


def test_the_wakeup_descriptor_is_given_back_with_the_signals_the_call_did_not_consume(pythons_sigint_handler):
    from autoloop.backends.jax.interrupts import Watch
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    before = signal.set_wakeup_fd(write_end)  # an event loop's, say
    previous = signal.signal(signal.SIGUSR1, lambda *_: None)
    try:
        watch = Watch(("f.py", 3))

        def call():
            signal.raise_signal(signal.SIGUSR1)
            return watch.ask(("f.py", 5), 10, -1)

        assert not bool(watch.run(call, (), listen=True)[0])  # not a Ctrl-C
        assert signal.set_wakeup_fd(-1) == write_end  # given back
        assert os.read(read_end, 16) == bytes([signal.SIGUSR1])  # and told of the signal it missed
    finally:
        signal.signal(signal.SIGUSR1, previous)
        signal.set_wakeup_fd(before)
        os.close(read_end)
        os.close(write_end)
