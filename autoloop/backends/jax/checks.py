"""Run-time checks on XLA: an error state threaded through the computation, raised after the call.

The numpy executor raises the moment an op fails (a failed ``assert``, a
variable no path assigned, an integer division by zero, an index out of
range). An XLA computation cannot stop in the middle, so the lowered
program carries an *error state* instead, as ``jax.experimental.checkify``
does, written out by hand so that the host can raise exactly the numpy
executor's error:

- ``code``: 0 while nothing failed, else the number of the first check
  that failed (a `Site`: one node of the graph);
- ``witness``: per site that needs them, the values its message is made
  of (an Assert's data, the index that was out of range), set when that
  site fails first.

After the call, a non-zero code makes the host run the failing node's
numpy kernel on the witness, which raises the numpy executor's own error
(type and message), and `raise_for_node` adds the node and the user's
line, as every executor does.

The lowering keeps Python's order of events: a check that fails stops
every later effect (a print after a failed assert prints nothing) and
every loop (a ``while`` whose condition a failure made meaningless stops),
so what a program printed before it failed is what numpy prints.

Sites with witness values are known before lowering (`find_sites`: the
error state is a loop variable of every loop, so its layout must be fixed
first); a site without witness values may also be added while lowering
(an op that fails on values known while compiling, inside a branch that
may never run).

    >>> state = ErrorState.initial(sites)
    >>> state = state.fail(site, index >= length, (index, length))
    >>> raise_failure(sites, state.code, state.witness)   # on the host, after the call
"""

from __future__ import annotations

import threading
from typing import Callable

import numpy as np

from autoloop.execute.errors import raise_for_node
from autoloop.ir.graph import op_attrs_of


class Site:
    """One check: `node` may fail; `reproduce(*witness)` raises the numpy executor's error for it.

    `witness` is the ``((numpy dtype, shape), ...)`` of the values the message needs. (A plain class: a
    dataclass costs 0.5 ms to define, on the first call of every backend='jax' process.)
    """

    __slots__ = ("number", "node", "witness", "reproduce")

    def __init__(self, number: int, node, witness: tuple = (), reproduce: Callable | None = None):
        self.number, self.node, self.witness, self.reproduce = number, node, witness, reproduce

    def raise_error(self, witness_values):
        try:
            self.reproduce(*witness_values)
        except Exception as error:  # noqa: BLE001 - the numpy kernel's own error, reported as the node's
            raise_for_node(self.node, error)
        raise AssertionError(f"internal error: check {self.node.name} failed on XLA, but its numpy kernel "
                             f"does not fail on {witness_values!r}")


class Sites:
    """The checks of one program, numbered from 1: those found before lowering (`find_sites`), then
    failures found while lowering (`failure`), numbered once per program so every trace agrees."""

    def __init__(self):
        self.by_node: dict = {}
        self.numbered: list = []
        self._failures: dict = {}
        self._lock = threading.Lock()

    def add(self, node, witness=(), reproduce=None) -> Site:
        with self._lock:
            site = Site(len(self.numbered) + 1, node, tuple(witness), reproduce)
            self.numbered.append(site)
            self.by_node.setdefault(node, site)
            return site

    def failure(self, node, error: Exception) -> Site:
        """The site of `node` always failing with `error` (an op on values known while compiling)."""
        key = (id(node), type(error), str(error))
        with self._lock:
            site = self._failures.get(key)
        if site is None:
            def reproduce():
                raise error
            site = self.add(node, (), reproduce)
            with self._lock:
                site = self._failures.setdefault(key, site)
        return site

    @property
    def with_witness(self) -> list:
        return [site for site in self.numbered if site.witness]

    def __bool__(self):
        return bool(self.numbered)


class ErrorState:
    """The first failure so far: a code and the witness values of each site (a JAX pytree)."""

    __slots__ = ("code", "witness")

    def __init__(self, code, witness: dict):
        self.code = code
        self.witness = witness  # site number -> tuple of arrays

    @classmethod
    def initial(cls, sites: Sites) -> ErrorState:
        import jax.numpy as jnp
        return cls(jnp.int32(0), {site.number: tuple(jnp.zeros(shape, dtype) for dtype, shape in site.witness)
                                  for site in sites.with_witness})

    @property
    def ok(self):
        """A boolean scalar: nothing failed yet."""
        return self.code == 0

    def fail(self, site: Site, failed, witness=()) -> ErrorState:
        """The state after `site` is checked: it failed where `failed` holds and nothing failed before."""
        import jax.numpy as jnp
        failed = jnp.asarray(failed)
        if failed.shape:
            failed = jnp.any(failed)
        first = failed & (self.code == 0)
        code = jnp.where(first, jnp.int32(site.number), self.code)
        values = dict(self.witness)
        if site.witness:
            values[site.number] = tuple(jnp.where(first, jnp.asarray(new, old.dtype), old)
                                        for new, old in zip(witness, self.witness[site.number]))
        return ErrorState(code, values)

    def tree_flatten(self):
        keys = sorted(self.witness)
        return (self.code, tuple(self.witness[k] for k in keys)), tuple(keys)

    @classmethod
    def tree_unflatten(cls, keys, children):
        code, values = children
        return cls(code, dict(zip(keys, values)))


def register_pytree() -> None:
    import jax
    jax.tree_util.register_pytree_node(ErrorState, ErrorState.tree_flatten, ErrorState.tree_unflatten)


def raise_failure(sites: Sites, code, witness: dict) -> None:
    """On the host: raise the error of site number `code` (nothing if 0)."""
    code = int(code)
    if code == 0:
        return
    site = sites.numbered[code - 1]
    values = [np.asarray(v)[()] if np.ndim(v) == 0 else np.asarray(v) for v in witness.get(code, ())]
    site.raise_error(values)


def replay(*positions, when=None):
    """A site rule (`autoloop.backends.jax.marks.checked`) for a node whose numpy kernel raises.

    The witness is the node's inputs at `positions` (those it has); on failure the numpy
    kernel runs again on them (the other inputs: their values if tracing
    knew them, else zeros of their static shape) and raises its own error.
    `when(node)` may say that a node needs no check. A node whose inputs'
    shapes are not static gets no check.
    """
    def site(node):
        from autoloop.ir.trips import known
        from autoloop.ops import registry
        if when is not None and not when(node):
            return None
        if not all(v.shape.is_fully_defined() for v in node.inputs):
            return None
        fill = []
        for value in node.inputs:
            found = known(value)
            fill.append(found if found is not None else
                        np.zeros(value.shape.as_list(), value.dtype.as_numpy_dtype)[()])
        chosen = [p for p in positions if p < len(node.inputs)]
        witness = [(np.dtype(node.inputs[p].dtype.as_numpy_dtype), tuple(node.inputs[p].shape.as_list()))
                   for p in chosen]
        kernel = registry.get(node.op).kernel
        attrs = op_attrs_of(node.attrs)

        def reproduce(*values):
            args = list(fill)
            for position, value in zip(chosen, values):
                args[position] = value
            with np.errstate(all="ignore"):
                kernel(*args, **attrs)
        return witness, reproduce
    return site
