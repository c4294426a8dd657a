"""Several processes, one program: JAX's own distributed runtime for ``backend="jax"`` functions.

Every process runs the same Python program (SPMD). Each first joins the
runtime, then builds its batch as one *global* array sharded over every
process's devices, calls the same ``backend="jax"`` function on it, and
gathers the result where it wants it whole::

    import autoloop as al

    al.distributed.initialize()                  # from the cluster's environment, or pass them
    batch = al.distributed.shard(full_batch)     # axis 0 split over all processes' devices
    step = al.function(newton_sqrt, backend="jax", jax_arrays=True)
    result = al.distributed.gather(step(batch))  # the whole result, a numpy array, on every process

XLA partitions the traced graph over the global devices: a loop whose body
works entry by entry runs on each process's own entries, and the
collectives the program needs (for example the all-reduce behind a
``reduce_any`` in a ``while`` condition) sit where XLA puts them.
autoloop implements no communication of its own: on a CPU the processes
talk through Gloo, on GPUs through NCCL, as JAX sets them up.

`initialize` takes its settings from its arguments, else from the
environment, in this order:

1. ``JAX_COORDINATOR_ADDRESS``, ``JAX_NUM_PROCESSES``, ``JAX_PROCESS_ID``;
2. the launcher variables of ``torchrun``-style launchers:
   ``MASTER_ADDR``/``MASTER_PORT``, ``WORLD_SIZE``, ``RANK``;
3. JAX's own cluster detection (Slurm, Open MPI, Cloud TPU, ...), where none
   of the above is set.

``autoloop run --processes N FILE::FUNC ARGS`` starts N local processes
this way on the loopback address, for trying a program before a cluster.
JAX is needed (``pip install 'autoloop[jax]'``); importing this module does
not import it.
"""

from __future__ import annotations

import os
from typing import NamedTuple

from autoloop import nest

ENTRY_AXIS = "entries"  # the mesh axis `shard` splits a batch over


class Cluster(NamedTuple):
    """What `initialize` joined: this process's index, how many there are, and all their devices."""
    process_id: int
    num_processes: int
    devices: tuple


def initialize(coordinator_address: str | None = None, num_processes: int | None = None,
               process_id: int | None = None, *, local_device_ids=None, cpu_collectives: str = "gloo",
               timeout_seconds: int = 300) -> Cluster:
    """Join JAX's distributed runtime (``jax.distributed.initialize``); call before any other JAX work.

    Settings missing from the arguments come from the environment (see the module docstring).
    `cpu_collectives` is how CPU devices of different processes talk (``"gloo"``, or ``"mpi"``
    where jaxlib has it); it does not affect GPUs. Returns the `Cluster` joined, for example
    ``Cluster(process_id=1, num_processes=2, devices=(CpuDevice(id=0), CpuDevice(id=2048)))``.

    Raises `RuntimeError` (JAX's) when JAX has already computed something in this process, and
    `ValueError` when an environment variable that should be a number is not.
    """
    jax = _jax()
    coordinator_address, num_processes, process_id = _settings(coordinator_address, num_processes, process_id,
                                                               os.environ)
    if cpu_collectives is not None:
        jax.config.update("jax_cpu_collectives_implementation", cpu_collectives)
    jax.distributed.initialize(coordinator_address=coordinator_address, num_processes=num_processes,
                               process_id=process_id, local_device_ids=local_device_ids,
                               initialization_timeout=timeout_seconds)
    return Cluster(jax.process_index(), jax.process_count(), tuple(jax.devices()))


def _settings(coordinator_address, num_processes, process_id, environment):
    """The three settings, each from its argument, else ``JAX_*``, else the launcher's variables
    (`environment` is ``os.environ``); those still None are left to JAX's cluster detection."""
    if coordinator_address is None:
        coordinator_address = environment.get("JAX_COORDINATOR_ADDRESS")
    if coordinator_address is None and "MASTER_ADDR" in environment and "MASTER_PORT" in environment:
        coordinator_address = f"{environment['MASTER_ADDR']}:{environment['MASTER_PORT']}"
    if num_processes is None:
        num_processes = _number(environment, "JAX_NUM_PROCESSES", "WORLD_SIZE")
    if process_id is None:
        process_id = _number(environment, "JAX_PROCESS_ID", "RANK")
    return coordinator_address, num_processes, process_id


def _number(environment, *names):
    for name in names:
        text = environment.get(name)
        if text is not None:
            try:
                return int(text)
            except ValueError:
                raise ValueError(f"the environment variable {name} should be a whole number (it sets the "
                                 f"distributed runtime), found {text!r}") from None
    return None


def shutdown() -> None:
    """Leave the distributed runtime (``jax.distributed.shutdown``); every process should call it."""
    _jax().distributed.shutdown()


def process_index() -> int:
    """This process's index among all processes (0 in a single process)."""
    return _jax().process_index()


def process_count() -> int:
    """How many processes the runtime joined (1 in a single process)."""
    return _jax().process_count()


def mesh():
    """A one-axis ``jax.sharding.Mesh`` over every device of every process, the axis named ``"entries"``."""
    import numpy as np
    jax = _jax()
    return jax.sharding.Mesh(np.array(jax.devices()), (ENTRY_AXIS,))


def shard(value, axis: int = 0):
    """`value`, which every process holds whole, as one global JAX array split along `axis` over all
    processes' devices (each process keeps only its own devices' part). A nest is sharded leaf by leaf.

    `axis` must be divisible by the number of devices: a ``ValueError`` says by how much it is not.
    """
    import numpy as np
    jax = _jax()
    sharding_mesh = mesh()
    count = sharding_mesh.size

    def one(leaf):
        array = np.asarray(leaf.numpy() if hasattr(leaf, "numpy") and not isinstance(leaf, np.ndarray) else leaf)
        if array.ndim <= axis or array.shape[axis] % count:
            size = "no" if array.ndim <= axis else f"{array.shape[axis]}"
            raise ValueError(f"shard splits axis {axis} over {count} devices, so its length must be a multiple "
                             f"of {count}; the value of shape {array.shape} has {size} entries there. Pad the "
                             f"batch to a multiple of {count}, or keep it whole (replicated) by not sharding it")
        spec = [None] * array.ndim
        spec[axis] = ENTRY_AXIS
        sharding = jax.sharding.NamedSharding(sharding_mesh, jax.sharding.PartitionSpec(*spec))
        return jax.make_array_from_callback(array.shape, sharding, lambda index: array[index])

    return nest.map_structure(one, value)


def gather(value):
    """The whole of a (possibly sharded) result as numpy arrays, on every process; a nest leaf by leaf.

    Every process must call it (it is a collective), as every process called the function.
    """
    import numpy as np
    jax = _jax()
    from jax.experimental import multihost_utils

    def one(leaf):
        array = leaf.numpy() if not isinstance(leaf, jax.Array) and hasattr(leaf, "numpy") else leaf
        if isinstance(array, jax.Array) and not array.is_fully_addressable:
            return np.asarray(multihost_utils.process_allgather(array, tiled=True))
        return np.asarray(array)

    return nest.map_structure(one, value)


def _jax():
    try:
        import jax
    except ImportError:
        raise ImportError("autoloop.distributed runs on JAX's distributed runtime: pip install 'autoloop[jax]'") \
            from None
    return jax
