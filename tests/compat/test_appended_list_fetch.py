"""A list a traced function appends to in a graph loop, returned inside a TF1 graph: `stack` fetches it.

Found by the fuzzer's session mode: ``autoloop.stack(l)`` outside converted
code iterated the list and raised "len() of a list built in graph control
flow is a tensor ... call autoloop.size(autoloop.stack(l))", the very call
that had failed.
"""

from __future__ import annotations

import numpy as np

import autoloop as al
import autoloop.compat.v1 as v1


def rows(n):
    acc = []
    for i in range(n):
        acc.append(al.fill([2], i))
    return acc


def test_stack_of_a_returned_appended_list_on_any_axis():
    graph = v1.Graph()
    with graph.as_default():
        n = v1.placeholder(al.int32, shape=[])
        appended = al.function(rows)(n)
        fetches = [al.stack(appended), al.stack(appended, axis=1), al.stack(appended, axis=-1),
                   al.size(al.stack(appended))]
    with v1.Session(graph=graph) as session:
        by_row, by_column, last_axis, size = session.run(fetches, feed_dict={n: 3})
        empty = session.run(fetches[0], feed_dict={n: 0})
    np.testing.assert_array_equal(by_row, [[0, 0], [1, 1], [2, 2]])
    np.testing.assert_array_equal(by_column, [[0, 1, 2], [0, 1, 2]])
    np.testing.assert_array_equal(last_axis, by_column)
    assert size == 6 and empty.shape == (0, 2)
