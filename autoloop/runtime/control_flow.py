"""The statements converted code calls: `while_stmt`, `for_stmt`, `if_stmt`, `if_exp`.

Each decides at run time. A Python condition or iterable runs as plain
Python with exactly Python's semantics; a symbolic `Tensor` one (while a
graph is being traced) stages graph control flow (`staging`). Reference
semantics of `while_stmt`, for Python values::

    def while_stmt(loop_cond, loop_body, loop_vars, names):
        while loop_cond(*loop_vars):
            loop_vars = loop_body(*loop_vars)
        return loop_vars

State functions take one argument per name and return the single value
(one name), a tuple (several) or nothing (none).
"""

from __future__ import annotations

from autoloop.runtime import explain, staged_branches, staged_loops
from autoloop.runtime.locations import caller_location, describe, raise_from_user
from autoloop.runtime.values import is_graph_tensor


def pack(values, names):
    """The state tuple from what a state function returned."""
    if len(names) == 1:
        return (values,)
    if not names:
        return ()
    return tuple(values)


def unpack(state, names):
    """What converted code assigns from a state tuple."""
    if len(names) == 1:
        return state[0]
    if not names:
        return None
    return tuple(state)


def while_stmt(loop_cond, loop_body, loop_vars, names, *, appended=(), options=None, unsupported=None):
    """Run or stage ``while loop_cond(*state): state = loop_body(*state)``."""
    state = tuple(loop_vars)
    test = loop_cond(*state)
    if explain.active():
        explain.record(caller_location(), "while loop", is_graph_tensor(test),
                       f"its condition is {explain.describe_value(test)}")
    if is_graph_tensor(test):
        _reject_batched_test(test, caller_location())
        return unpack(staged_loops.staged_while(loop_cond, loop_body, state, names, test=test,
                                           appended=appended, options=options,
                                           unsupported=unsupported, location=caller_location()),
                      names)
    while test:
        state = pack(loop_body(*state), names)
        test = loop_cond(*state)
        if is_graph_tensor(test):
            _became_tensor(test, loop_vars, state, names, "while loop condition")
    return unpack(state, names)


def for_stmt(iterable, loop_body, loop_vars, names, *, extra_test=None, appended=(), options=None,
             unsupported=None):
    """Run or stage ``for item in iterable: state = loop_body(item, *state)``.

    `extra_test(*state)`, when given, must hold before each iteration (it is
    how ``break`` stops a ``for`` loop).
    """
    state = tuple(loop_vars)
    if explain.active():
        staged = staged_loops.is_staged_iterable(iterable)
        explain.record(caller_location(), "for loop", staged,
                       f"it iterates over {explain.describe_iterable(iterable)}")
    if staged_loops.is_staged_iterable(iterable):
        return unpack(staged_loops.staged_for(iterable, loop_body, state, names, extra_test=extra_test,
                                         appended=appended, options=options, unsupported=unsupported,
                                         location=caller_location()), names)
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
                                  unsupported=unsupported, packed=True)
    return state


def if_stmt(test, if_true, if_false, names, inputs=(), *, unsupported=None):
    """Run or stage ``if test: if_true(*inputs) else: if_false(*inputs)``."""
    if explain.active():
        explain.record(caller_location(), "if statement", is_graph_tensor(test),
                       f"its condition is {explain.describe_value(test)}")
    if is_graph_tensor(test):
        return unpack(staged_branches.staged_if(test, if_true, if_false, names, tuple(inputs),
                                        location=caller_location(), unsupported=unsupported),
                      names)
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


def _became_tensor(test, before, after, names, what):
    changed = [name for name, old, new in zip(names, before, after)
               if is_graph_tensor(new) and not is_graph_tensor(old)]
    location = caller_location(3)
    flags = [n for n in changed if n.rstrip("0123456789") in ("break_", "continue_", "do_return", "retval_")]
    if flags and len(flags) == len(changed):
        raise_from_user(TypeError(
            f"the {what} at {describe(location)} tests Python values, but a break or return inside "
            f"it is decided by a Tensor condition; make the loop's own condition a Tensor (for "
            f"example initialize its counter with autoloop.constant(...)) so the loop is staged"),
            location)
    if changed:
        detail = (f"because {', '.join(repr(n) for n in changed)} "
                  f"{'was' if len(changed) == 1 else 'were'} a Python value before the loop and a "
                  f"Tensor after an iteration; make {'it' if len(changed) == 1 else 'them'} a "
                  f"Tensor before the loop (for example {changed[0]} = autoloop.constant(...))")
    else:
        detail = "after an iteration; make the values it tests Tensors before the loop"
    raise_from_user(TypeError(
        f"the {what} at {describe(location)} was a Python bool on entry but became a Tensor "
        f"{detail}, so the loop can be neither run in Python nor staged as a graph loop"), location)
