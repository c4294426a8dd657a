"""Several processes of JAX's distributed runtime on this machine, as a cluster would run them.

Two local processes join through the loopback address (Gloo carries the CPU
collectives) and run the sample's batched Newton loop on a batch sharded
between them; the result must equal the single-process one. The settings
rule of `autoloop.distributed.initialize` and the launcher's errors and exit
codes are checked too.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

from autoloop import distributed
from autoloop.cli import processes

ROOT = pathlib.Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "sharded_newton.py"
BATCH = "[1, 2, 9, 100, 0.25, 7, 1e6, 3]"
TIMEOUT = 180  # each process starts Python, JAX and XLA on a shared 2-core machine


def _gloo_missing() -> str | None:
    try:
        from jax._src.lib import _jax
    except ImportError:
        return "JAX is not installed: pip install 'autoloop[jax]' runs the distributed tests"
    if not hasattr(_jax, "make_gloo_tcp_collectives"):
        return "this jaxlib has no Gloo CPU collectives, so CPU processes cannot run one program together"
    return None


needs_gloo = pytest.mark.skipif(_gloo_missing() is not None, reason=str(_gloo_missing()))


def autoloop(*args, environment=None):
    return subprocess.run([sys.executable, "-m", "autoloop", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, timeout=TIMEOUT, env=environment)


# -- the settings rule ---------------------------------------------------------------------------------------

def test_arguments_win_over_the_environment():
    environment = {"JAX_COORDINATOR_ADDRESS": "10.0.0.1:1", "JAX_NUM_PROCESSES": "4", "JAX_PROCESS_ID": "3"}
    assert distributed._settings("127.0.0.1:5", 2, 1, environment) == ("127.0.0.1:5", 2, 1)


def test_jax_variables_win_over_a_launchers():
    environment = {"JAX_COORDINATOR_ADDRESS": "h0:1234", "JAX_NUM_PROCESSES": "4", "JAX_PROCESS_ID": "3",
                   "MASTER_ADDR": "other", "MASTER_PORT": "9", "WORLD_SIZE": "8", "RANK": "7"}
    assert distributed._settings(None, None, None, environment) == ("h0:1234", 4, 3)


def test_a_torchrun_style_launchers_variables_are_read():
    environment = {"MASTER_ADDR": "node0", "MASTER_PORT": "29500", "WORLD_SIZE": "8", "RANK": "5"}
    assert distributed._settings(None, None, None, environment) == ("node0:29500", 8, 5)


def test_nothing_set_is_left_to_jaxs_cluster_detection():
    assert distributed._settings(None, None, None, {}) == (None, None, None)


def test_a_count_that_is_not_a_number_names_its_variable():
    with pytest.raises(ValueError, match=r"JAX_NUM_PROCESSES should be a whole number .* found 'two'"):
        distributed._settings(None, None, None, {"JAX_NUM_PROCESSES": "two"})


def test_importing_autoloop_does_not_import_jax():
    result = subprocess.run([sys.executable, "-c", "import sys, autoloop; autoloop.distributed; "
                             "print('jax' in sys.modules)"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.stdout == "False\n", result.stderr


def test_the_launchers_port_is_free():
    import socket
    port = processes.free_port()
    with socket.socket() as server:
        server.bind(("127.0.0.1", port))  # would raise if something held it


# -- shard and gather in one process with two devices ---------------------------------------------------------

@needs_gloo
def test_shard_splits_axis_0_over_the_devices_and_gather_makes_it_whole():
    program = textwrap.dedent("""
        import numpy as np, autoloop as al
        batch = np.arange(8, dtype=np.float32)
        sharded = al.distributed.shard({"x": batch})["x"]
        print(len(sharded.addressable_shards), tuple(sharded.sharding.spec))
        print(al.distributed.gather(al.function(lambda x: x * 2, autograph=False, backend="jax", jax_arrays=True)(sharded)))
        try:
            al.distributed.shard(np.arange(3.0))
        except ValueError as error:
            print(error)
        """)
    environment = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=2")
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, cwd=ROOT,
                            timeout=TIMEOUT, env=environment)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "2 ('entries',)"
    assert lines[1] == "[ 0.  2.  4.  6.  8. 10. 12. 14.]"
    assert lines[2].startswith("shard splits axis 0 over 2 devices, so its length must be a multiple of 2; "
                               "the value of shape (3,) has 3 entries there")


# -- two processes -----------------------------------------------------------------------------------------

@needs_gloo
def test_two_processes_give_the_single_process_result():
    one = autoloop("run", "--backend", "jax", f"{SAMPLE}::newton_sqrt", BATCH)
    two = autoloop("run", "--processes", "2", f"{SAMPLE}::newton_sqrt", BATCH)
    assert one.returncode == 0, one.stderr
    assert two.returncode == 0, two.stderr
    assert two.stdout == one.stdout
    assert "[ 0  4  5  7  4  5 13  4]" in two.stdout


@needs_gloo
def test_the_sample_run_as_a_cluster_launcher_would_agrees_with_one_process():
    port = processes.free_port()
    runs = [subprocess.Popen([sys.executable, str(SAMPLE)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=dict(os.environ, JAX_COORDINATOR_ADDRESS=f"127.0.0.1:{port}", JAX_NUM_PROCESSES="2",
                                      JAX_PROCESS_ID=str(index)))
            for index in range(2)]
    try:
        outputs = [run.communicate(timeout=TIMEOUT) for run in runs]
    finally:
        for run in runs:
            run.kill()
    assert [run.returncode for run in runs] == [0, 0], [err for _, err in outputs]
    printed = [line for line in outputs[0][0].splitlines() if not line.startswith("[Gloo]")]
    assert printed == ["2 processes agree with one: True"]


@needs_gloo
def test_a_failing_assert_in_every_process_is_one_line_and_exit_1(tmp_path):
    model = tmp_path / "model.py"
    model.write_text(textwrap.dedent("""
        import autoloop as al

        def positive_total(a):
            assert al.reduce_sum(a) < 0, "the total must be negative"
            return a
        """))
    result = autoloop("run", "--processes", "2", f"{model}::positive_total", "[1.0, 2.0]")
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.splitlines() == [f"autoloop: error: AssertionError: the total must be negative ({model}:5)"]


def test_processes_with_the_numpy_backend_is_refused_in_one_line():
    result = autoloop("run", "--processes", "2", "--backend", "numpy", f"{SAMPLE}::newton_sqrt", BATCH)
    assert result.returncode == 2
    assert result.stderr.splitlines() == ["autoloop: error: --processes runs on JAX's distributed runtime, so it "
                                          "needs --backend jax (the default with --processes), not --backend numpy"]


def test_a_process_count_below_one_is_a_usage_error():
    result = autoloop("run", "--processes", "0", f"{SAMPLE}::newton_sqrt", BATCH)
    assert result.returncode == 2
    assert "expected a whole number of processes, at least 1, got '0'" in result.stderr


@needs_gloo
def test_the_scaling_benchmark_runs_one_and_two_processes():
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_distributed.py"), "--quick",
                             "--per-process", "64", "--calls", "2"], capture_output=True, text=True, cwd=ROOT,
                            timeout=TIMEOUT)
    assert result.returncode == 0, result.stderr
    rows = result.stdout.splitlines()
    assert rows[2].startswith("| 1 process | 64 |")
    assert rows[4].startswith("| 2 processes, strong scaling (the same 128) | 128 |")
    assert "The loop ran" in result.stdout
