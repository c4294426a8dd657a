"""An element-wise chain summed whole, run block by block: its large intermediate never exists whole.

    fused = FusedSum(chain_nodes, last)    # planning (`Plan._fused`): a chain's nodes, the Sum's index
    results = fused(values)                # a pool worker: the Sum's results, or None

A pool chain (`Plan.chain_next`) like ``reduce_sum(tanh(x * c))``: an
element-wise ufunc kernel (the *head*), unary ones after it (each reading
only the one before), and a ``Sum`` over every axis. Run kernel by kernel it
holds a whole array of the head's result while it runs, one per worker when
iterations overlap on the thread pool: twice the compiled executor's one
array on two workers. Run here instead, it goes block by block: each block
of the head's result is made in one small buffer (or, where the head may
write into its input, in that input's own elements), goes through the
unary kernels there in place, and is summed at once; the blocks' sums are
added up. A worker holds one block (`BLOCK_BYTES`, at most half of the
array), not one array.

Bit for bit the reference's result:

- an element of an element-wise kernel does not depend on the others, and
  each block is contiguous like the whole array, so numpy runs the same
  inner loop on it;
- a float sum depends on its order, and numpy sums a contiguous array
  pairwise (``pairwise_sum`` in numpy's ``loops_utils.h.src``): over
  n > 128 elements it is the sum of the first
  ``n2 = n // 2 - (n // 2) % 8`` plus the sum of the rest. The blocks are
  the leaves of that recursion (`_summed` cuts where numpy cuts, until a
  part fits a block), a leaf's ``np.sum`` is numpy's sum of that part, and
  the parts are added in numpy's order: the same additions of the same
  values. (``np.sum`` starts from ``0``, which changes nothing but a
  ``-0.0``, and numpy's whole sum starts from ``0`` too.) Integer sums wrap
  the same in any order. `numpy_sums_pairwise` checks numpy's rule once per
  process, on probes where other orders differ; if numpy ever sums
  otherwise, nothing is fused.

Left whole (None: the chain runs kernel by kernel): float16 (numpy sums it
in float32), complex, bool; arrays that are not C-contiguous (numpy sums
them in memory order); inputs that broadcast to a larger shape; unary
kernels that change the dtype; arrays of at most four of numpy's own blocks
(`PAIRWISE_LEAF`); and any failure of a one-element probe of the chain (the
kernels then raise it, named as their node's). Once blocks are written
(maybe into the head's input), a failure is raised as its node's at once.

The checks and the probe run once for each kind of inputs (`_signature`:
types, dtypes, shapes, layouts); a later call with inputs of a kind
already decided goes straight to its blocks. Their Python cost, run on
both workers while the other waits for the GIL, made the benchmark's
memory-bound loop about 5% slower than the same blocks written by hand.
"""

from __future__ import annotations

import functools

import numpy as np

from autoloop.execute.errors import raise_for_node
from autoloop.ops import registry
from autoloop.ops.static_args import runtime_axes

# A block of the head's result: at most half of it (so two workers hold one array, as the compiled loop's one
# product does) and at most 2 MiB. Not smaller: each block's kernels take the GIL back, and two workers
# handing it back and forth ran the benchmark's memory-bound loop 1.50x faster than one iteration at a time
# with halves, 1.45x with quarters (1 MiB) and 1.28x with eighths (medians of 61 rounds, the same rounds).
BLOCK_BYTES = 1 << 21
PAIRWISE_LEAF = 128  # numpy's PW_BLOCKSIZE: it cuts only parts larger than this, so blocks must be larger too
MOST_SIGNATURES = 16  # decisions a chain keeps (`FusedSum.decisions`); more kinds of inputs start again
VALUE_BASED_CASTING = np.lib.NumpyVersion(np.__version__) < "2.0.0"  # a scalar's value may pick the dtype
_UNDECIDED = object()


class FusedSum:
    """``head -> unary kernels -> Sum`` of one chain, run block by block (see the module docstring)."""

    def __init__(self, nodes: list, last: int, in_place: int | None = None):
        self.nodes = nodes  # the chain's dataflow nodes, head first, the Sum last
        self.last = last  # the Sum's index in the plan: the chain goes on from there
        self.target = in_place  # the head's input it may overwrite (`Plan._in_place_slots`): blocks go there
        self.head = _ufunc(nodes[0])
        self.in_place = [_ufunc(node) for node in nodes[1:-1]]  # unary: each writes into the block
        self.axis, self.keepdims = nodes[-1].attrs["axis"], nodes[-1].attrs["keepdims"]
        self.name = "+".join(node.name for node in nodes)  # the trace's box for the whole run
        self.op = "+".join(node.op for node in nodes)
        self.decisions: dict = {}  # `_signature` of the inputs -> `_decide`'s answer: decided once per kind

    def __call__(self, values) -> list | None:
        """The Sum's results for the head's input `values`, or None where this chain must run kernel by kernel."""
        key = _signature(values)
        decision = self.decisions.get(key, _UNDECIDED)
        if decision is _UNDECIDED:
            decision = self._decide(values)
            if len(self.decisions) >= MOST_SIGNATURES:
                self.decisions.clear()
            self.decisions[key] = decision
        if decision is None:
            return None
        dtype, block, size, ndim = decision
        flat = [(value.reshape(-1), True) if isinstance(value, np.ndarray) and value.ndim else (value, False)
                for value in values]  # `_decide` saw that every input of rank 1 or more is an ndarray
        target = flat[self.target][0] if self.target is not None else None
        if isinstance(target, np.ndarray) and target.dtype == dtype and target.size == size:
            place = lambda start, stop: target[start:stop]  # noqa: E731 - its own elements
        else:
            buffer = np.empty(block, dtype)  # one block, used again for each
            place = lambda start, stop: buffer[:stop - start]  # noqa: E731
        total = self._summed(flat, 0, size, place, block, dtype)  # may write into the head's input: no way back
        return [np.reshape(total, (1,) * ndim) if self.keepdims else total]

    def _decide(self, values) -> tuple | None:
        """``(dtype, block, size, ndim)`` of the run for inputs like `values`, or None where the blocks cannot
        take them (see the module docstring): the checks and the one-element probe, once per `_signature`."""
        array = None
        for value in values:
            if np.ndim(value):
                if not isinstance(value, np.ndarray) or not value.flags.c_contiguous or (
                        array is not None and value.shape != array.shape):
                    return None
                array = value
        if array is None or not numpy_sums_pairwise():
            return None
        ndim, size = array.ndim, array.size
        axis = runtime_axes(self.axis, ndim, "Sum")
        if axis is not None and tuple(axis) != tuple(range(ndim)):
            return None
        try:  # a one-element probe: whatever fails here, the kernels raise as their nodes' (nothing written yet)
            probe = self.head(*[value.reshape(-1)[:1] if np.ndim(value) else value for value in values])
            dtype = probe.dtype
            for kernel in self.in_place:  # each writes into the block as its own result: same dtype only
                probe = kernel(probe)
                if probe.dtype != dtype:
                    return None
        except Exception:  # noqa: BLE001 - the chain then runs kernel by kernel and raises it as its node's
            return None
        if not (dtype.kind in "iu" or dtype in (np.float32, np.float64)):
            return None
        block = max(min(BLOCK_BYTES // dtype.itemsize, size // 2), 4 * PAIRWISE_LEAF)
        return None if size <= block else (dtype, block, size, ndim)

    def _summed(self, flat, start: int, stop: int, place, block: int, dtype):
        """numpy's pairwise sum of the chain's result over elements [start, stop), cut where numpy cuts.

        Each block of at most `block` elements is made in ``place(start,
        stop)``: its elements of the input the head may overwrite, or one
        block's buffer.
        """
        count = stop - start
        if count <= block:
            out = place(start, stop)
            stage = 0
            try:
                self.head(*[value[start:stop] if sliced else value for value, sliced in flat], out=out)
                for stage, kernel in enumerate(self.in_place, 1):
                    kernel(out, out=out)
                stage = len(self.nodes) - 1
                return np.add.reduce(out, dtype=dtype)  # np.sum of a 1-D array, without its Python layer
            except Exception as error:  # noqa: BLE001 - raised as the failing node's, as its kernel would
                raise_for_node(self.nodes[stage].source, error)
        half = count // 2
        half -= half % 8
        return (self._summed(flat, start, start + half, place, block, dtype)
                + self._summed(flat, start + half, stop, place, block, dtype))


def _signature(values) -> tuple:
    """What `FusedSum._decide` depends on in `values`: their types, dtypes, shapes and layouts, and where
    numpy picks a result's dtype from a scalar's value (before numpy 2, NEP 50), the scalars' values.

    A later run with the same signature fuses as the first did without its probe: a failure that depends on
    values (an integer power's negative exponent) is then raised from the block as the head's node's, as its
    kernel would raise it.
    """
    key: list = []
    for value in values:
        if isinstance(value, np.ndarray):
            key.append((value.dtype, value.shape, value.flags.c_contiguous,
                        value.tobytes() if VALUE_BASED_CASTING and not value.ndim else None))
        else:
            key.append((type(value), value if VALUE_BASED_CASTING else None))
    return tuple(key)


@functools.cache
def numpy_sums_pairwise() -> bool:
    """Whether this numpy sums a contiguous float array by the pairwise rule `FusedSum` follows (checked once).

    The probes' values span many magnitudes in random order, so another
    order of additions (another cut, blocks added left to right, one by one)
    or a wider accumulator gives other bits on at least one of them.
    """
    size = 5 * 4096 + 13
    for seed in range(3):
        rng = np.random.default_rng(seed)
        probe = rng.standard_normal(size) * np.exp(rng.uniform(-12, 12, size))
        for dtype in (np.float32, np.float64):
            values = probe.astype(dtype)

            def pairwise(start, stop):
                count = stop - start
                if count <= 1024:
                    return np.sum(values[start:stop], dtype=dtype)
                half = count // 2
                half -= half % 8
                return pairwise(start, start + half) + pairwise(start + half, stop)

            if pairwise(0, size).tobytes() != np.sum(values, dtype=dtype).tobytes():
                return False
    return True


def _ufunc(node):
    """The numpy function of `node`'s kernel: a `np.ufunc` where the chain may be fused."""
    return registry.get(node.op).kernel_for("numpy").fn
