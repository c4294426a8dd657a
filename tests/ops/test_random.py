"""The seeding rule of `autoloop.random` (see `autoloop.ops.random_ops`), eagerly and in graphs."""

import sys
import threading

import numpy as np
import pytest

import autoloop as al


def _draws(make, count):
    return [make().numpy().tolist() for _ in range(count)]


def test_same_seed_same_sequence_eagerly():
    al.random.set_seed(3)
    first = _draws(lambda: al.random.uniform([3], seed=1), 3)
    al.random.set_seed(3)
    again = _draws(lambda: al.random.uniform([3], seed=1), 3)
    assert first == again
    assert len({tuple(d) for d in first}) == 3  # one stream, three different draws


def test_a_function_continues_the_sequence_the_eager_code_gives():
    al.random.set_seed(3)
    eager = _draws(lambda: al.random.normal([2], seed=9), 3)
    al.random.set_seed(3)
    f = al.function(lambda: al.random.normal([2], seed=9))
    assert [f().numpy().tolist() for _ in range(3)] == eager


def test_without_op_seeds_ops_are_numbered_the_same_eagerly_and_in_a_trace():
    def program():
        return al.random.uniform([2]), al.random.normal([2]), al.random.uniform([2], dtype=al.float64)
    al.random.set_seed(11)
    eager = [t.numpy().tolist() for t in program()]
    al.random.set_seed(11)
    traced = [t.numpy().tolist() for t in al.function(program)()]
    assert traced == eager
    assert eager[0] != eager[2][:2]


def test_a_random_op_in_a_graph_loop_draws_anew_every_iteration():
    @al.function
    def samples(n):
        values = al.TensorArray(al.float32, size=n)
        for i in al.range(n):
            values = values.write(i, al.random.uniform([], seed=5))
        return values.stack()
    al.random.set_seed(1)
    drawn = samples(al.constant(4)).numpy()
    al.random.set_seed(1)
    assert drawn.tolist() == _draws(lambda: al.random.uniform([], seed=5), 4)


def test_random_ops_traced_in_branches_and_loop_bodies_get_distinct_streams():
    @al.function
    def f(x):
        a = al.random.uniform([4])
        if x > 0:
            b = al.random.uniform([4])
        else:
            b = al.random.uniform([4])
        i = al.constant(0)
        c = al.zeros([4])
        while i < 1:
            c = al.random.uniform([4])
            i += 1
        return a, b, c
    al.random.set_seed(2)
    a, b, c = (t.numpy().tolist() for t in f(al.constant(1)))
    assert a != b and b != c and a != c


def test_a_new_trace_restarts_its_streams_and_set_seed_later_does_not_change_a_trace():
    f = al.function(lambda x: x + al.random.uniform([2], dtype=x.dtype, seed=4))
    al.random.set_seed(8)
    first32 = f(np.zeros(2, np.float32)).numpy().tolist()
    first64 = f(np.zeros(2, np.float64)).numpy().tolist()
    second32 = f(np.zeros(2, np.float32)).numpy().tolist()
    al.random.set_seed(99)
    third32 = f(np.zeros(2, np.float32)).numpy().tolist()
    stream = np.random.Generator(np.random.PCG64(np.random.SeedSequence([8, 4])))
    expected = [stream.random(2, dtype=np.float32).tolist() for _ in range(3)]
    assert [first32, second32, third32] == expected
    assert first64 == pytest.approx(
        np.random.Generator(np.random.PCG64(np.random.SeedSequence([8, 4]))).random(2).tolist())


def test_unseeded_ops_differ_between_runs():
    al.random.set_seed(None)
    assert al.random.uniform([4]).numpy().tolist() != al.random.uniform([4]).numpy().tolist()
    f = al.function(lambda: al.random.normal([4]))
    assert f().numpy().tolist() != f().numpy().tolist()


def test_distributions_have_the_documented_range_and_moments():
    al.random.set_seed(0)
    uniform = al.random.uniform([20000], -1.0, 3.0).numpy()
    assert uniform.min() >= -1.0 and uniform.max() < 3.0 and abs(uniform.mean() - 1.0) < 0.05
    integers = al.random.uniform([20000], 2, 5, dtype=al.int32).numpy()
    assert set(np.unique(integers).tolist()) == {2, 3, 4}
    normal = al.random.normal([20000], 5.0, 2.0, dtype=al.float64).numpy()
    assert abs(normal.mean() - 5.0) < 0.1 and abs(normal.std() - 2.0) < 0.1
    assert al.random.normal([3], dtype=al.float16).dtype is al.float16


def test_integer_uniform_needs_maxval():
    with pytest.raises(ValueError, match="give maxval for the integer dtype int32"):
        al.random.uniform([2], dtype=al.int32)
    with pytest.raises(TypeError, match="set_seed takes an int or None"):
        al.random.set_seed(1.5)


def test_one_function_called_from_several_threads_draws_each_number_once():
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # the first calls, which trace, really do overlap
    try:
        _draw_from_threads()
    finally:
        sys.setswitchinterval(interval)


def _draw_from_threads():
    al.random.set_seed(21)
    f = al.function(lambda: al.random.uniform([], seed=1))
    results, start = [], threading.Barrier(4)

    def worker():
        start.wait()
        for _ in range(25):
            results.append(float(f().numpy()))
    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stream = np.random.Generator(np.random.PCG64(np.random.SeedSequence([21, 1])))
    assert sorted(results) == sorted(stream.random(100, dtype=np.float32).tolist())


def test_a_functions_numbers_do_not_depend_on_other_functions_traced_before_it():
    def program():
        return al.random.uniform([3]), al.random.normal([3])

    def numbers(trace_other_first):
        al.random.set_seed(6)
        if trace_other_first:
            al.function(lambda: al.random.uniform([5]) + al.random.uniform([5]))()
            al.random.uniform([2])  # an eager op in between, too
        f = al.function(program)
        return [[t.numpy().tolist() for t in f()] for _ in range(2)]
    assert numbers(False) == numbers(True)
