"""Devices: JAX arrays placed on a device or sharded over several are inputs, and the loop runs there.

XLA on a CPU can pretend to have several devices
(``XLA_FLAGS=--xla_force_host_platform_device_count=2``), but only when it
starts, so the program runs in a fresh Python process. It runs two batched
loops, a while loop with a data-dependent trip count and an RNN, on inputs
sharded over the batch axis (`NamedSharding`), and one on an input placed on
the second device; it checks the results against the numpy backend and that
the results stay sharded (or placed) as their inputs were.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("jax", reason="JAX is not installed: pip install 'autoloop[jax]' runs the JAX backend's tests")

PROGRAM = textwrap.dedent('''
    import numpy as np
    import jax
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    import autoloop as al

    def collatz(n):  # steps to reach 1, per element: the loop runs until the slowest element is done
        steps = al.zeros_like(n)
        while al.reduce_any(n != 1):
            going = n != 1
            n = al.where(going, al.where(n % 2 == 0, n // 2, 3 * n + 1), n)
            steps += al.cast(going, al.int32)
        return steps

    def rnn(w, xs, h):  # h: (batch, d); xs: (time, batch, d)
        for x in xs:
            h = al.tanh(h @ w + x)
        return h

    devices = jax.devices()
    assert len(devices) == 2, devices
    by_batch = NamedSharding(jax.sharding.Mesh(np.array(devices), ("batch",)), P("batch"))
    rng = np.random.default_rng(0)
    n = np.arange(1, 9, dtype=np.int32) * 7
    w = (rng.standard_normal((4, 4)) / 2).astype(np.float32)
    xs, h = rng.standard_normal((5, 8, 4)).astype(np.float32), np.zeros((8, 4), np.float32)

    on_jax = al.function(collatz, backend="jax", jax_arrays=True)
    steps = on_jax(jax.device_put(n, by_batch))
    assert np.array_equal(np.asarray(steps), al.function(collatz)(n).numpy())
    assert steps.sharding.is_equivalent_to(by_batch, 1), steps.sharding
    assert sorted((s.device.id, s.data.shape) for s in steps.addressable_shards) == [(0, (4,)), (1, (4,))]

    xs_sharded = jax.device_put(xs, NamedSharding(by_batch.mesh, P(None, "batch")))
    found = al.function(rnn, backend="jax", jax_arrays=True)(w, xs_sharded, jax.device_put(h, by_batch))
    np.testing.assert_allclose(np.asarray(found), al.function(rnn)(w, xs, h).numpy(), rtol=1e-5, atol=1e-6)
    assert found.sharding.is_equivalent_to(by_batch, 2), found.sharding

    placed = on_jax(jax.device_put(n, devices[1]))
    assert placed.devices() == {devices[1]}, placed.devices()
    tensor = al.function(collatz, backend="jax")(jax.device_put(n, by_batch))  # Tensors: gathered to the host
    assert isinstance(tensor, al.Tensor) and np.array_equal(tensor.numpy(), np.asarray(steps))
    print("ok")
''')


def test_a_batched_loop_sharded_over_two_devices_keeps_its_sharding(tmp_path):
    program = tmp_path / "sharded.py"  # a file: autoloop converts functions from their source
    program.write_text(PROGRAM)
    environment = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=2", JAX_PLATFORMS="cpu")
    done = subprocess.run([sys.executable, str(program)], capture_output=True, text=True, timeout=300,
                          env=environment)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]
