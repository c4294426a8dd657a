"""When staging a loop or branch fails, the code around it sees the values it had before.

A loop or branch body may write variables it shares with the enclosing
function (``nonlocal``, for names closures capture) while it is traced. If
staging then fails (a limitation, an error), those variables must not keep
values of a graph that was never built: a ``finally`` or ``except`` around
the statement reads the value from before the statement.
"""

import pytest

import autoloop as al
from autoloop import runtime as al__


def _shared_counter(n, staged_if):
    c = 0
    get = lambda: c  # noqa: E731 - a closure sharing c with the statement's functions

    def loop_cond(c_):
        return c_ < n

    def loop_body(c_):
        nonlocal c
        c = c_ + 1
        return object()  # a Python object the graph loop cannot carry: staging fails

    def if_true():
        nonlocal c
        c = n * 2
        return object()

    try:
        if staged_if:
            al__.if_stmt(n > 0, if_true, lambda: c, ("c",))
        else:
            al__.while_stmt(loop_cond, loop_body, (c,), ("c",))
    except ValueError:
        return get()
    return None


@pytest.mark.parametrize("staged_if", [False, True])
def test_a_failed_statement_leaves_shared_variables_as_they_were(staged_if):
    result = al.function(_shared_counter, autograph=False)(al.constant(3), staged_if)
    assert result == 0  # not a tensor of the abandoned loop body or branch
