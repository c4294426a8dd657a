"""The statements converted code calls: `while_stmt`, `for_stmt`, `if_stmt`, `if_exp`.

Each decides at run time. A Python condition or iterable runs as plain
Python with exactly Python's semantics; a symbolic `Tensor` one (while a
graph is being traced) stages graph control flow. Reference semantics of
`while_stmt`, for Python values::

    def while_stmt(loop_cond, loop_body, loop_vars, names):
        while loop_cond(*loop_vars):
            loop_vars = loop_body(*loop_vars)
        return loop_vars

A loop whose condition turns into a Tensor after some iterations (a
``return`` or ``break`` under a tensor ``if``) keeps the iterations that ran
as Python and continues from the current state as a graph loop.

State functions take one argument per name and return the single value
(one name), a tuple (several) or nothing (none).
"""

from __future__ import annotations

from autoloop.ir import context
from autoloop.runtime import explain, staged_branches, staged_loops
from autoloop.runtime.locations import caller_location, describe, raise_from_user
from autoloop.runtime.staged_loops import TensorRange, is_staged_iterable
from autoloop.runtime.staging import pack, unpack
from autoloop.runtime.values import is_graph_tensor


def while_stmt(loop_cond, loop_body, loop_vars, names, *, appended=(), options=None, unsupported=None):
    """Run or stage ``while loop_cond(*state): state = loop_body(*state)``."""
    state = tuple(loop_vars)
    test = loop_cond(*state)
    iterations = 0
    while not is_graph_tensor(test):
        if not test:
            _record("while loop", False, f"its condition is {explain.describe_value(test)}")
            return unpack(state, names)
        state = pack(loop_body(*state), names)
        iterations += 1
        test = loop_cond(*state)
    if iterations:
        reason = (f"its condition became a Tensor after {iterations} iteration"
                  f"{'s' if iterations != 1 else ''} ran as Python; the rest runs as a graph loop")
    else:
        reason = "its condition is a Tensor"
    _record("while loop", True, reason)
    _reject_batched_test(test, caller_location())
    return unpack(staged_loops.staged_while(loop_cond, loop_body, state, names, appended=appended,
                                            options=options, unsupported=unsupported,
                                            location=caller_location()), names)


def for_stmt(iterable, loop_body, loop_vars, names, *, extra_test=None, appended=(), options=None,
             unsupported=None):
    """Run or stage ``for item in iterable: state = loop_body(item, *state)``.

    `extra_test(*state)`, when given, must hold before each iteration (it is
    how ``break`` stops a ``for`` loop).
    """
    state = tuple(loop_vars)
    if is_staged_iterable(iterable):
        _record("for loop", True, f"it iterates over {_describe_iterable(iterable)}")
        return unpack(staged_loops.staged_for(iterable, loop_body, state, names, extra_test=extra_test,
                                              appended=appended, options=options, unsupported=unsupported,
                                              location=caller_location()), names)
    _record("for loop", False, f"it iterates over {_describe_iterable(iterable)}")
    iterator = iter(iterable)
    while True:
        if extra_test is not None:
            test = extra_test(*state)
            if is_graph_tensor(test):  # a break under a tensor condition: guard the rest
                return unpack(_guarded_iterations(iterator, loop_body, state, names, extra_test,
                                                  unsupported), names)
            if not test:
                break
        try:
            item = next(iterator)
        except StopIteration:
            break
        state = pack(loop_body(item, *state), names)
    return unpack(state, names)


def _guarded_iterations(iterator, loop_body, state, names, extra_test, unsupported):
    """The remaining Python iterations, each run only while `extra_test` holds (as a graph cond)."""
    location = caller_location(3)
    for item in iterator:
        test = extra_test(*state)
        state = staged_branches.staged_if(test, lambda *s: pack(loop_body(item, *s), names),
                                          lambda *s: s, names, state, location=location,
                                          unsupported=unsupported, packed=True, entries=state,
                                          guard=("break", ()))
    return state


def if_stmt(test, if_true, if_false, names, inputs=(), *, unsupported=None, guard=None):
    """Run or stage ``if test: if_true(*inputs) else: if_false(*inputs)``.

    A `guard` marks an ``if`` that conversion wrote to skip the code after a
    ``return``, ``break`` or ``continue`` (``('break', (12,))``): messages
    name that jump, and ``--explain`` does not list it.
    """
    if is_graph_tensor(test):
        if guard is None:
            _record("if statement", True, "its condition is a Tensor")
        return unpack(staged_branches.staged_if(test, if_true, if_false, names, tuple(inputs),
                                                location=caller_location(), unsupported=unsupported,
                                                guard=guard),
                      names)
    if guard is None:
        _record("if statement", False, f"its condition is {explain.describe_value(test)}")
    if test:
        return if_true(*inputs)
    if if_false is None:
        return None
    return if_false(*inputs)


def if_exp(test, if_true, if_false):
    """``if_true() if test else if_false()``, staged for a tensor test."""
    if is_graph_tensor(test):
        return staged_branches.staged_if_exp(test, if_true, if_false, location=caller_location())
    return if_true() if test else if_false()


def _reject_batched_test(test, location) -> None:
    """A graph while loop needs one boolean: a condition with one per entry (shape [B]) means a scan."""
    if not test.shape.rank:
        return
    raise_from_user(TypeError(
        f"the while loop condition at {describe(location)} is a {test.dtype.name} tensor of shape {test.shape}, "
        f"but a graph while loop needs one boolean. To stop each entry on its own (its state frozen once its "
        f"condition is false), use autoloop.scan(body=..., cond=..., initial=..., "
        f"cond_dims={test.shape.as_list()}); to loop while any entry holds, test autoloop.reduce_any(...)"),
        location)


def _record(statement, staged, reason):
    if context.current_graph() is not None:
        explain.record(caller_location(3), statement, staged, reason)


def _describe_iterable(iterable) -> str:
    if isinstance(iterable, TensorRange):
        return "a range with Tensor bounds"
    if is_staged_iterable(iterable):
        return "a Tensor" if is_graph_tensor(iterable) else type(iterable).__name__
    return f"a Python {type(iterable).__name__}"
