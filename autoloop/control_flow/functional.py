"""`map_fn`, `foldl`, `foldr`: TensorFlow's functional loops over axis 0 of `elems`.

Reference semantics (``elems`` a nest of tensors of one length ``n`` on
axis 0; ``elems[i]`` indexes every tensor of it)::

    def map_fn(fn, elems):
        return stack([fn(elems[i]) for i in range(n)])       # each leaf of the result stacked

    def foldl(fn, elems, initializer=None):
        acc, start = (elems[0], 1) if initializer is None else (initializer, 0)
        for i in range(start, n):
            acc = fn(acc, elems[i])
        return acc

    def foldr(fn, elems, initializer=None):                    # the same from the last element down
        acc, start = (elems[n - 1], n - 2) if initializer is None else (initializer, n - 1)
        for i in range(start, -1, -1):
            acc = fn(acc, elems[i])
        return acc

Each is one `while_loop` that reads the elements from TensorArrays (and
`map_fn` writes its results to TensorArrays), so it runs eagerly, traces
into one ``While`` node on every backend, and differentiates through the
loop's existing gradient rules.

    >>> map_fn(lambda x: x * x, constant([1, 2, 3])).numpy()
    array([1, 4, 9], dtype=int32)
    >>> foldl(lambda a, x: a + x, constant([1, 2, 3]), initializer=constant(10)).numpy()
    np.int32(16)
"""

from __future__ import annotations

from typing import Any, Callable

from autoloop import dtypes, nest
from autoloop.arguments import TensorSpec
from autoloop.control_flow.tensor_array import TensorArray
from autoloop.control_flow.while_loop import while_loop
from autoloop.ops.dispatch import convert
from autoloop.shapes import TensorShape
from autoloop.tensor import Tensor


def map_fn(fn: Callable[[Any], Any], elems: Any, dtype: Any = None, parallel_iterations: int | None = None,
           back_prop: bool = True, swap_memory: bool = False, infer_shape: bool = True, name: str | None = None,
           fn_output_signature: Any = None) -> Any:
    """``fn`` applied to each element of `elems` (axis 0), results stacked on a new axis 0.

    `elems` is a tensor or a nest of tensors of one length on axis 0; `fn`
    takes one element in that structure. `fn_output_signature` (or its old
    name `dtype`) gives the structure and dtypes (`DType`s or `TensorSpec`s)
    of `fn`'s result when they differ from `elems`'; without it the result
    must have the structure and dtypes of `elems`. Raises TypeError naming
    the leaf whose structure or dtype differs.
    """
    check_fn(fn, "map_fn")
    fn = converted(fn)
    if dtype is not None and fn_output_signature is not None:
        raise ValueError("map_fn: pass fn_output_signature or its deprecated alias dtype, not both")
    signature = fn_output_signature if fn_output_signature is not None else dtype
    leaves, count = elements(elems, "map_fn")
    if signature is None:
        signature = nest.map_structure(lambda t: t.dtype, nest.pack_sequence_as(elems, leaves))  # dtypes only, as TF
    specs = [_as_spec(leaf) for leaf in nest.flatten(signature)]
    inputs = _input_arrays(leaves, count)
    outputs = [TensorArray(spec.dtype, size=count, element_shape=spec.shape if infer_shape else None,
                           clear_after_read=False) for spec in specs]

    def body(i, results):
        value = fn(nest.pack_sequence_as(elems, [array.read(i) for array in inputs]))
        written = [array.write(i, leaf) for array, leaf in zip(results, _matching(signature, value, "map_fn"))]
        return i + 1, written

    _, results = while_loop(lambda i, results: i < count, body, (convert(0), outputs),
                            parallel_iterations=parallel_iterations or 10, back_prop=back_prop,
                            swap_memory=swap_memory, name=name or "map")
    stacked = [array.stack() for array in results]
    if infer_shape and isinstance(count, int):
        for tensor, spec in zip(stacked, specs):
            tensor.set_shape(TensorShape([count]).concatenate(spec.shape))
    return nest.pack_sequence_as(signature, stacked)


def foldl(fn: Callable[[Any, Any], Any], elems: Any, initializer: Any = None, parallel_iterations: int = 10,
          back_prop: bool = True, swap_memory: bool = False, name: str | None = None) -> Any:
    """``fn(acc, element)`` folded over `elems` from the first element; see the module docstring."""
    return _fold(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name or "foldl", "foldl")


def foldr(fn: Callable[[Any, Any], Any], elems: Any, initializer: Any = None, parallel_iterations: int = 10,
          back_prop: bool = True, swap_memory: bool = False, name: str | None = None) -> Any:
    """``fn(acc, element)`` folded over `elems` from the last element; see the module docstring."""
    return _fold(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name or "foldr", "foldr")


def _fold(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name, what):
    check_fn(fn, what)
    fn = converted(fn)
    leaves, count = elements(elems, what)
    inputs = _input_arrays(leaves, count)
    backward = what == "foldr"

    def element(i):
        return nest.pack_sequence_as(elems, [array.read(i) for array in inputs])

    if initializer is None:
        if isinstance(count, int) and count == 0:
            raise ValueError(f"{what}: elems is empty and no initializer was given; pass initializer, the value "
                             f"to return for no elements")
        first = count - 1 if backward else 0
        initializer, start = element(first), first + (-1 if backward else 1)
    else:
        initializer = nest.map_structure(_as_tensor, initializer)
        start = count - 1 if backward else 0
    structure = initializer

    def cond(i, acc):
        return i >= 0 if backward else i < count

    def body(i, acc):
        result = fn(acc, element(i))
        return i + (-1 if backward else 1), nest.pack_sequence_as(structure, _matching(structure, result, what))

    _, acc = while_loop(cond, body, (convert(start), initializer), parallel_iterations=parallel_iterations,
                        back_prop=back_prop, swap_memory=swap_memory, name=name)
    return acc


# -- arguments ------------------------------------------------------------------------------
def check_fn(fn, what: str) -> None:
    if not callable(fn):
        raise TypeError(f"{what}: fn must be callable, got {type(fn).__name__} {fn!r}")


def converted(fn):
    """`fn` converted as an ``@function``'s body is (TensorFlow converts the fn of its functional loops too), so
    that its Python ``while``/``if`` on tensors become graph control flow; as it is when it is library code or
    has no source to convert (a lambda typed at a prompt)."""
    from autoloop.compiler import conversion, parse  # the front door's job, done here for fn alone
    if conversion.is_library(fn):
        return fn
    try:
        return conversion.convert(fn)
    except parse.SourceNotFoundError:
        return fn


def _as_tensor(value):
    return value if isinstance(value, TensorArray) else convert(value)


def elements(elems, what: str):
    """The leaves of `elems` as tensors, and their common length on axis 0 (an int, or an int32 scalar)."""
    leaves = [convert(leaf) for leaf in nest.flatten(elems)]
    if not leaves:
        raise ValueError(f"{what}: elems must hold at least one tensor, got {elems!r}")
    counts = set()
    for leaf in leaves:
        if leaf.shape.rank == 0:
            raise ValueError(f"{what}: elems must be tensors with an axis 0 to loop over, got a scalar "
                             f"({leaf.dtype.name}); pass a tensor of shape [n, ...]")
        if leaf.shape.rank is not None and leaf.shape[0] is not None:
            counts.add(leaf.shape[0])
    if len(counts) > 1:
        raise ValueError(f"{what}: the tensors of elems have different lengths on axis 0: {sorted(counts)}; "
                         f"every tensor of elems holds the same number of elements")
    if counts:
        return leaves, counts.pop()
    from autoloop.ops.api import shape  # the length is only known when the graph runs
    return leaves, shape(leaves[0])[0]


def _input_arrays(leaves, count) -> list:
    return [TensorArray(leaf.dtype, size=count, element_shape=leaf.shape[1:], clear_after_read=False).unstack(leaf)
            for leaf in leaves]


def _as_spec(leaf) -> TensorSpec:
    if isinstance(leaf, TensorSpec):
        return leaf
    if isinstance(leaf, dtypes.DType):
        return TensorSpec(None, leaf)
    try:
        return TensorSpec(None, dtypes.as_dtype(leaf))
    except (TypeError, ValueError):
        raise TypeError(f"map_fn: fn_output_signature must hold DTypes or TensorSpecs, got {leaf!r}") from None


def _matching(signature, value, what: str) -> list:
    """The leaves of `value` (fn's result), checked against `signature`'s structure and dtypes."""
    try:
        nest.assert_same_structure(signature, value, check_types=False)
    except (ValueError, TypeError):
        hint = ("pass fn_output_signature with the structure and dtypes fn returns" if what == "map_fn" else
                "fn must return an accumulator with the structure of initializer")
        raise TypeError(f"{what}: fn returned {nest.map_structure_up_to_leaves(value)!r}, expected the structure "
                        f"{nest.map_structure_up_to_leaves(signature)!r}; {hint}") from None
    leaves = []
    for expected, leaf in zip(nest.flatten(signature), nest.flatten(value)):
        want = _as_spec(expected).dtype if what == "map_fn" else expected.dtype
        tensor = leaf if isinstance(leaf, Tensor | TensorArray) else convert(leaf, want)
        if tensor.dtype is not want:
            hint = "pass fn_output_signature with the dtypes fn returns" if what == "map_fn" else "cast it"
            raise TypeError(f"{what}: fn returned a {tensor.dtype.name} value where {want.name} is expected; {hint}")
        leaves.append(tensor)
    return leaves
