"""`case` and `switch_case`: many-way branches, built as nested `cond`s.

Reference semantics::

    def case(pred_fn_pairs, default):
        for pred, fn in pred_fn_pairs:
            if pred:
                return fn()
        return default()

    def switch_case(branch_index, branch_fns, default):
        if 0 <= branch_index < len(branch_fns):
            return branch_fns[branch_index]()
        return default()

Every branch must return the same structure and dtypes (the rules of
`cond`). Eagerly only the chosen branch runs; in a graph every branch is
traced once into the nested ``Cond`` nodes.
"""

from __future__ import annotations

from typing import Any, Callable

from autoloop import dtypes
from autoloop.control_flow.cond import cond
from autoloop.ops.dispatch import convert
from autoloop.ops.logging_ops import Assert
from autoloop.ops.math_ops import cast, equal, less_equal
from autoloop.ops.reduction_ops import reduce_sum
from autoloop.ops.shape_ops import stack


def case(pred_fn_pairs: Any, default: Callable[[], Any] | None = None, exclusive: bool = False, strict: bool = False,
         name: str = "case") -> Any:
    """The result of the first callable whose predicate is true, else of `default`.

    `pred_fn_pairs` is a list of ``(bool scalar, callable)`` pairs. Without
    `default`, the last pair's callable serves as the default and raises
    `InvalidArgumentError` when it runs with no predicate true. With
    `exclusive`, more than one true predicate is an `InvalidArgumentError`.
    A callable returning a one-element list or tuple gives its element,
    unless `strict`.

        >>> x = constant(3)
        >>> case([(x < 0, lambda: constant(-1)), (x > 0, lambda: constant(1))], default=lambda: constant(0)).numpy()
        np.int32(1)
    """
    pairs = _pairs(pred_fn_pairs)
    predicates = [predicate for predicate, _ in pairs]
    if exclusive:
        count = reduce_sum(cast(stack(predicates), dtypes.int32))
        Assert(less_equal(count, 1), [f"{name}: more than one predicate is true with exclusive=True; "
                                      f"predicates:", stack(predicates)])
    if default is None:
        last_predicate, last_fn = pairs.pop()

        def default():
            Assert(last_predicate, [f"{name}: none of the predicates is true and there is no default; "
                                    f"predicates:", stack(predicates)])
            return last_fn()
    elif not callable(default):
        raise TypeError(f"{name}: default must be callable, got {default!r}")
    return _first_true(pairs, default, strict, name)


def _pairs(pred_fn_pairs) -> list:
    if isinstance(pred_fn_pairs, dict):
        pred_fn_pairs = list(pred_fn_pairs.items())
    if not isinstance(pred_fn_pairs, list | tuple) or not pred_fn_pairs:
        raise TypeError(f"case: pred_fn_pairs must be a non-empty list of (predicate, callable) pairs, "
                        f"got {pred_fn_pairs!r}")
    pairs = []
    for position, pair in enumerate(pred_fn_pairs):
        if not isinstance(pair, tuple | list) or len(pair) != 2 or not callable(pair[1]):
            raise TypeError(f"case: pair #{position} must be (predicate, callable), got {pair!r}")
        predicate = convert(pair[0])
        if predicate.dtype is not dtypes.bool_ or predicate.shape.rank not in (0, None):
            raise TypeError(f"case: predicate #{position} must be a bool scalar, got a {predicate.dtype.name} "
                            f"tensor of shape {predicate.shape}")
        pairs.append((predicate, pair[1]))
    return pairs


def _first_true(pairs, default, strict, name):
    if not pairs:
        return _unpacked(default, strict)()
    (predicate, fn), rest = pairs[0], pairs[1:]
    return cond(predicate, _unpacked(fn, strict), lambda: _first_true(rest, default, strict, name), name=name)


def _unpacked(fn, strict):
    """`fn`, whose one-element list or tuple result becomes its element unless `strict`."""
    if strict:
        return fn

    def call():
        result = fn()
        if isinstance(result, list | tuple) and len(result) == 1 and not hasattr(result, "_fields"):
            return result[0]
        return result
    return call


def switch_case(branch_index: Any, branch_fns: Any, default: Callable[[], Any] | None = None,
                name: str = "switch_case") -> Any:
    """The result of ``branch_fns[branch_index]()``; `default` (else the last branch) when out of range.

    `branch_fns` is a list of callables, a list of ``(int, callable)`` pairs
    or a dict of them, whose keys must be 0, 1, ..., N-1. `branch_index` is
    an int32 or int64 scalar.

        >>> switch_case(constant(1), [lambda: constant(10), lambda: constant(20)]).numpy()
        np.int32(20)
    """
    branches = _branches(branch_fns)
    index = convert(branch_index)
    if index.dtype not in (dtypes.int32, dtypes.int64) or index.shape.rank not in (0, None):
        raise TypeError(f"switch_case: branch_index must be an int32 or int64 scalar, got a "
                        f"{index.dtype.name} tensor of shape {index.shape}")
    if default is None:
        default = branches[-1]
    elif not callable(default):
        raise TypeError(f"switch_case: default must be callable, got {default!r}")
    pairs = [(equal(index, convert(key, index.dtype)), fn) for key, fn in enumerate(branches)]
    return _first_true(pairs, default, strict=True, name=name)


def _branches(branch_fns) -> list:
    if isinstance(branch_fns, dict):
        branch_fns = list(branch_fns.items())
    if not isinstance(branch_fns, list | tuple) or not branch_fns:
        raise TypeError(f"switch_case: branch_fns must be a non-empty list or dict of callables, got "
                        f"{branch_fns!r}")
    if all(callable(fn) for fn in branch_fns):
        return list(branch_fns)
    keyed = {}
    for entry in branch_fns:
        if not isinstance(entry, tuple | list) or len(entry) != 2 or not callable(entry[1]):
            raise TypeError(f"switch_case: expected callables or (int, callable) pairs, got {entry!r}")
        keyed[entry[0]] = entry[1]
    if sorted(keyed) != list(range(len(keyed))):
        raise ValueError(f"switch_case: branch keys must be 0, 1, ..., {len(keyed) - 1}; got "
                         f"{sorted(keyed)}")
    return [keyed[key] for key in range(len(keyed))]
