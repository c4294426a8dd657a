"""TensorArray elements: functional versions that share a store, so writes take O(1) time."""

from __future__ import annotations

import threading

import autoloop as al
from autoloop.control_flow.array_elements import ArrayElements


def test_writes_to_the_newest_version_fill_one_store_in_place():
    versions = [ArrayElements([None] * 3)]
    for index in range(5):
        versions.append(versions[-1].write(index, f"x{index}"))
    assert all(v._store is versions[0]._store for v in versions)
    assert list(versions[-1]) == ["x0", "x1", "x2", "x3", "x4"]


def test_every_older_version_keeps_what_it_held():
    versions = [ArrayElements([None] * 2)]
    for index in range(4):
        versions.append(versions[-1].write(index, index * 10))
    assert [list(v) for v in versions] == [
        [None, None], [0, None], [0, 10], [0, 10, 20], [0, 10, 20, 30]]
    assert [len(v) for v in versions] == [2, 2, 2, 3, 4]
    assert versions[1][1] is None and versions[2][1] == 10


def test_writing_to_an_older_version_or_over_an_element_copies():
    empty = ArrayElements([None, None])
    first = empty.write(0, "a")
    other = empty.write(0, "b")  # empty is no longer the newest: a copy
    again = first.write(0, "c")  # slot 0 is written: a copy
    assert other._store is not first._store and again._store is not first._store
    assert (list(empty), list(first), list(other), list(again)) == (
        [None, None], ["a", None], ["b", None], ["c", None])
    assert list(first.write(1, "d")) == ["a", "d"]  # first is still the head of its store


def test_one_version_written_from_many_threads_gives_each_its_own_result():
    base = ArrayElements([None] * 4)
    results: dict = {}

    def write(k):
        results[k] = base.write(0, k)

    threads = [threading.Thread(target=write, args=(k,)) for k in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(list(results[k]) == [k, None, None, None] for k in range(16))
    assert list(base) == [None] * 4


def test_tensor_array_versions_eagerly():
    empty = al.TensorArray(al.float32, size=2, element_shape=[])
    first = empty.write(0, 1.0)
    other = empty.write(0, 5.0)
    assert first.read(0).numpy() == 1.0 and other.read(0).numpy() == 5.0
    assert empty.stack().numpy().tolist() == [0.0, 0.0]


def test_a_tensor_array_constant_shared_by_every_run_of_a_graph():
    empty = al.TensorArray(al.int32, size=3)  # eager: becomes a constant of the graph

    @al.function(autograph=False)
    def fill(x):
        return al.while_loop(lambda i, ta: i < 3, lambda i, ta: (i + 1, ta.write(i, x * i)),
                             (al.constant(0), empty))[1].stack()

    assert fill(al.constant(2)).numpy().tolist() == [0, 2, 4]
    assert fill(al.constant(3)).numpy().tolist() == [0, 3, 6]
    results = {}

    def run(k):
        results[k] = fill(al.constant(k)).numpy().tolist()

    threads = [threading.Thread(target=run, args=(k,)) for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {k: [0, k, 2 * k] for k in range(8)}
    assert list(empty.flow.numpy()) == [None, None, None]  # the constant itself never changed
