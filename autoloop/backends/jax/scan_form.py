"""How ``backend="jax"`` runs a batched scan that may compact: masked in one loop, or in stages.

XLA needs static shapes, so the numpy executor's compaction (drop each row
as its entry finishes) becomes *stages* (`autoloop.backends.jax.scan`):
one ``lax.while_loop`` per size in ``B, B/2, B/4, ..., 1``. A stage runs
while more of its rows are active than the next size holds; then the
active rows are gathered to the front of the next, smaller stage, and the
finished ones written back to the full state. Each stage works on at most
twice its active rows, so the work follows the sum of the trip counts
within 2x, and never exceeds the masked loop's (``B x longest``) by more
than a gather and a scatter per stage. Every step also counts the active
rows and writes its ys frames by scatter: a small fixed cost, which pays
only when a step's work is large.

The cost rule (`jax_form`), for a Scan whose cond and body were proven to
treat entries independently (``compaction="compact"``):

- ``scan(compaction=True)``: stages (the user asked for compaction);
- fewer than `MIN_ENTRIES` entries: masked (few stages, little to save);
- a body with a matrix product: stages (XLA's CPU product of one row per
  entry costs about a call per row, so each dropped row saves one: 64
  entries of ``tanh(h @ W)``, W 4 x 4, ran 1.7x-4.9x faster in stages);
- an element-wise body whose estimated work per step over the whole batch
  is below `MIN_WORK` (a few numbers per entry): masked, which is exactly
  ``jax.vmap`` of a ``lax.while_loop``; a step costs about the same on 64
  rows as on 1 there, so dropping rows saves less than the stages cost
  (64 entries of ``h * 0.5 + 1``: 1 number each, masked 1.6x-3x faster;
  64 numbers, even; 256 numbers, stages 2.9x faster);
- otherwise stages.

The work estimate (`row_work`) counts, per row, the elements every op of
the cond and body produces (times the inner dimension for a matrix product).
``autoloop run --explain --backend jax`` prints the choice and why.

The gradient of such a Scan (`jax_gradient_form`) is compacted
(`autoloop.autodiff.scan_compacted_grad`: a forward in stages that saves
each frame's state, a backward scan in stages, captured tensors' gradients
summed in chunks) where the forward runs in stages and a step's work over
the batch is at least `MIN_GRADIENT_WORK` (XLA preallocates the saved
states to the frames' bound, or without one to a capacity the program
grows: `autoloop.backends.jax.growth`), or the scan is itself a part of
such a gradient (a second derivative); otherwise it is
masked (a ``lax.while_loop`` and its stacks). The saved frames and the
extra loops cost more than the rows they drop on narrow bodies: 64 entries
of ``tanh(h @ W)``, trip counts up to 1,000, took 1.9x (W 4 x 4, about
1,400 flops a step) and 1.1x (32 x 32, 68,000) the masked gradient's time,
but 0.7x at 64 x 64 (266,000) and 128 x 128 and 0.4x at 256 x 256; 16
entries of 64 x 64 (66,000), 1.3x; 16 of 256 x 256 (1,050,000), about
even (0.7x-1.2x over runs).

    >>> jax_form(scan_node)       # 64 entries of h = tanh(h @ W)
    ('stages', 'compacted in stages of 64, 32, ..., 1 rows (a matrix product per entry)')
"""

from __future__ import annotations

MIN_ENTRIES = 8
MIN_WORK = 16_384  # flops a step over the batch: below it, a step of XLA's loop costs about the same at any size
MIN_GRADIENT_WORK = 131_072  # the same estimate, below which the masked gradient is the faster one


def jax_form(node) -> tuple[str, str]:
    """``("stages" | "masked", why)`` for the Scan `node` on ``backend="jax"``; see the module docstring."""
    if node.attrs["compaction"] != "compact":
        return "masked", "masked (cond and body not proven to treat entries independently)"
    rows = entry_rows(node)
    sizes = f"stages of {rows}, {(rows + 1) // 2 if rows else '?'}, ..., 1 rows"
    if node.attrs.get("_compaction_required"):
        return "stages", f"compacted in {sizes} (compaction=True)"
    if rows is None or rows < MIN_ENTRIES:
        return "masked", f"masked like jax.vmap: {rows} entries, fewer than {MIN_ENTRIES}, leave little to drop"
    if any(inner.op == "MatMul" for key in ("cond", "body") for inner in node.attrs[key].walk()):
        return "stages", f"compacted in {sizes} (a matrix product per entry)"
    work = rows * row_work(node, rows)
    if work < MIN_WORK:
        return "masked", (f"masked like jax.vmap: a step is about {work:,} flops over the batch, below "
                          f"{MIN_WORK:,}, so dropping rows saves less than compacting costs")
    return "stages", f"compacted in {sizes} (a step is about {work:,} flops over the batch)"


def jax_gradient_form(node) -> tuple[str, str]:
    """``("compacted" | "masked", why)`` for the gradient of the Scan `node` on ``backend="jax"``; see the
    module docstring."""
    form, why = jax_form(node)
    if node.attrs["compaction"] == "compact" and node.attrs.get("_gradient_of"):
        # a scan of a compacted gradient (a second derivative): the masked gradient of a body with gradients
        # inside cannot compile on static shapes (the shapes it saves become values of the run)
        return "compacted", f"compacted backward (a part of the compacted gradient of {node.attrs['_gradient_of']!r})"
    if form != "stages":
        return "masked", f"masked backward: the forward runs {why}"
    if node.attrs.get("_compaction_required"):
        return "compacted", "compacted backward (compaction=True)"
    rows = entry_rows(node)
    work = rows * row_work(node, rows)
    if work < MIN_GRADIENT_WORK:
        return "masked", (f"masked backward: a step is about {work:,} flops over the batch, below "
                          f"{MIN_GRADIENT_WORK:,}, so the states it saves cost more than the rows it drops")
    return "compacted", f"compacted backward (a step is about {work:,} flops over the batch)"


def entry_rows(node):
    """The number of rows (axis 0 of the state) of the batched Scan `node`, if known while compiling."""
    from autoloop.ir import control_flow
    shape = control_flow.operands(node).initial[0].shape
    return shape[0] if shape.rank else None


def stage_sizes(rows: int) -> list:
    """The row counts of the stages: `rows`, then halved (rounded up) down to 1."""
    sizes = [rows]
    while sizes[-1] > 1:
        sizes.append((sizes[-1] + 1) // 2)
    return sizes


def row_work(node, rows) -> int:
    """An estimate of the flops of one step of the Scan `node`'s cond and body for one row of `rows`: the
    elements each op produces (per row where its axis 0 is the rows'), times the inner dimension for a matrix
    product. The parameters and captures are no work."""
    work = 0
    for key in ("cond", "body"):
        for inner in node.attrs[key].walk():
            if inner.op == "Placeholder":
                continue
            factor = _inner_dimension(inner) if inner.op == "MatMul" else 1
            for value in inner.outputs:
                work += factor * _elements(value.shape, rows)
    return work


def _inner_dimension(product) -> int:
    """The dimension a matrix product sums over (1 where unknown)."""
    left = product.inputs[0].shape
    if left.rank is None or left.rank < 2:
        return 1
    return left.dims[-1] if left.dims[-1] is not None else 1


def _elements(shape, rows) -> int:
    if shape.rank is None:
        return 1
    dims = shape.dims[1:] if shape.rank and shape.dims[0] in (None, rows) else shape.dims
    count = 1
    for dim in dims:
        count *= dim if dim is not None else 1
    return count
