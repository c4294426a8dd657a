"""What a trace learns stays with that trace: no leaks between functions, retraces or threads.

Staging a loop or branch learns facts by tracing (the layout of its state);
they live on the trace. These tests break any cache that outlives it: the
same statement met with new dtypes and shapes, unrelated functions called in
different orders, one function traced from several threads at once.
"""

import random
import threading

import numpy as np
import pytest

import autoloop as al

from ..compiler.programs import make_function
from .programs import assert_same_outcome, generate, make, outcome

# -- the two repros of the shared-cache defects ------------------------------------------------

LOOP_SOURCE = """
def make_vector_{k}(n):
    i = 0
    while i < n:
        v = al.zeros([{k}])
        i += 1
    return v
"""


def _loop_function(k):
    return al.function(make_function(LOOP_SOURCE.format(k=k), f"make_vector_{k}", {"al": al}))


def test_two_functions_with_the_same_loop_shape_do_not_share_what_they_learned():
    three, two = _loop_function(3), _loop_function(2)
    assert three(al.constant(2)).numpy().shape == (3,)
    assert two(al.constant(2)).numpy().shape == (2,)  # raised ShapeInvariantError "(3,) ... (2,)"
    assert three(al.constant(1)).numpy().shape == (3,)


def test_retracing_a_loop_with_another_dtype_learns_again():
    @al.function
    def last_square(x, n):
        i = 0
        while i < n:
            last = x * x
            i += 1
        return last

    assert last_square(al.constant(3), al.constant(2)).numpy() == 9
    result = last_square(al.constant(1.5), al.constant(2))
    assert result.dtype is al.float32 and result.numpy() == 2.25
    assert last_square(al.constant([1.0, 2.0], al.float64), al.constant(1)).numpy().tolist() == [1.0, 4.0]


def test_branch_planned_for_an_int_is_planned_again_for_a_float():
    @al.function
    def h(x, c):
        if c > 0:
            y = x
        return y

    assert h(2, al.constant(1)).numpy() == 2
    result = h(2.5, al.constant(1))  # failed after h(2, ...): the plan said int32
    assert result.numpy() == 2.5 and result.dtype is al.float32
    with pytest.raises(UnboundLocalError, match="'y'"):
        h(2.5, al.constant(-1))


def test_same_statement_in_one_trace_with_two_dtypes():
    def first_positive(x):
        i = 0
        while i < 3:
            found = x * i
            i += 1
        return found

    @al.function
    def both(a, b):
        return first_positive(a), first_positive(b)

    ints, floats = both(al.constant(2), al.constant(0.5))
    assert ints.numpy() == 4 and ints.dtype is al.int32
    assert floats.numpy() == 1.0 and floats.dtype is al.float32


def test_captured_python_values_are_part_of_what_a_statement_learned():
    def make(width):
        def f(n):
            i = 0
            while i < n:
                row = al.ones([width])
                i += 1
            return row
        return f

    @al.function
    def both(n):
        return make(2)(n), make(3)(n)

    two, three = both(al.constant(1))
    assert two.numpy().shape == (2,) and three.numpy().shape == (3,)


# -- threads -------------------------------------------------------------------------------------

def _in_threads(call, arguments):
    results, errors = [None] * len(arguments), []
    barrier = threading.Barrier(len(arguments))

    def work(position):
        barrier.wait()
        try:
            results[position] = call(*arguments[position])
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)
    threads = [threading.Thread(target=work, args=(p,)) for p in range(len(arguments))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    return results


def test_one_function_first_traced_from_several_threads_at_once():
    def scaled_sum(x, n):
        total = x * 0
        seen = []
        for i in range(n):
            if al.reduce_sum(x) > 2:
                total = total + x * 2
                last = i
            seen.append(i)
        return total, len(seen)

    staged = al.function(scaled_sum)
    arguments = [(al.constant(np.full([size], value, dtype)), al.constant(count))
                 for size, value, dtype, count in [(1, 2, np.int32, 3), (2, 1.5, np.float32, 2),
                                                   (3, 0.5, np.float64, 4), (2, 3, np.int32, 1)] * 2]
    results = _in_threads(staged, arguments)
    for (x, n), (total, count) in zip(arguments, results):
        expected_total, expected_count = scaled_sum(x, int(n.numpy()))
        np.testing.assert_allclose(total.numpy(), expected_total.numpy())
        assert total.dtype is x.dtype and count.numpy() == expected_count


def test_explain_decisions_stay_with_their_trace_across_threads():
    def f(x, flag):
        if flag:
            x = x + 1
        while x < 10:
            x = x * 2
        return x

    staged = al.function(f)
    concretes = _in_threads(staged.get_concrete_function,
                            [(al.constant(1), flag) for flag in (True, False, True, False)])
    for concrete, flag in zip(concretes, (True, False, True, False)):
        kinds = sorted((d.statement, d.staged) for d in concrete.decisions)
        assert kinds == [("if statement", False), ("while loop", True)]


# -- generated programs, called in random orders with new dtypes and shapes ---------------------

DTYPES = (np.int32, np.float32, np.float64)
SHAPES = ((), (1,), (3,))


@pytest.mark.filterwarnings("ignore::autoloop.traced_function.RetracingWarning")  # retracing is the point
@pytest.mark.parametrize("seed", range(3))
def test_generated_programs_retraced_in_random_orders_match_python(seed):
    rng = random.Random(seed)
    programs = [make(generate(rng)) for _ in range(5)]
    calls = [(program, dtype, shape, count, tensor_count) for program in range(len(programs))
             for dtype in DTYPES for shape in SHAPES for count in (0, 2) for tensor_count in (True, False)]
    rng.shuffle(calls)
    for program, dtype, shape, count, tensor_count in calls[:40]:
        plain, converted = programs[program]
        x = (np.arange(int(np.prod(shape))).reshape(shape) % 3 - 1).astype(dtype)
        n = al.constant(count) if tensor_count else count
        expected = outcome(plain, x, count)
        got = outcome(converted, al.constant(x), n)
        source = converted.python_function.__code__.co_filename
        assert_same_outcome(got, expected, f"program {program} ({source}) on {dtype.__name__}{shape}, n={n}")


def test_different_functions_converted_and_traced_from_several_threads_at_once():
    def make(scale):
        def scaled_first(x, n):
            i = 0
            while i < n:
                first = x * scale
                i += 1
            return first
        return scaled_first

    functions = [al.function(make(scale)) for scale in range(8)]
    results = _in_threads(lambda f, x: f(x, al.constant(2)),
                          [(f, al.constant(np.float32(1.5) if k % 2 else 3)) for k, f in enumerate(functions)])
    for k, result in enumerate(results):
        expected = (1.5 if k % 2 else 3) * k
        assert result.numpy() == expected and result.dtype is (al.float32 if k % 2 else al.int32)
