"""The JAX backend: what it computes, the errors it raises, what it refuses, and its caches.

Results are compared with the numpy backend (the corpus in ``tests/conftest.py`` does that for
every control-flow test); here are the behaviours of the backend itself.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import traceback

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="JAX is not installed: pip install 'autoloop[jax]' runs the JAX backend's tests")

import autoloop as al  # noqa: E402
from autoloop.errors import BackendError, DivisionByZeroError, InvalidArgumentError  # noqa: E402
from tests.backends.differential import assert_close  # noqa: E402


def both(fn, *args, **options):
    """`fn` on both backends: (numpy result, jax result) as numpy values."""
    results = []
    for backend in ("numpy", "jax"):
        result = al.function(fn, backend=backend, **options)(*args)
        results.append(al.nest.map_structure(lambda t: t.numpy() if isinstance(t, al.Tensor) else t, result))
    return results


def _line_of(error) -> int:
    return traceback.extract_tb(error.__traceback__)[-1].lineno


# -- the front door ----------------------------------------------------------------------------------
def test_import_autoloop_never_imports_jax():
    code = ("import sys, autoloop as al\n"
            "al.function(lambda x: x + 1, autograph=False)(al.constant(1))\n"
            "f = al.function(lambda x: x + 1, autograph=False, backend='jax')\n"  # naming the backend imports nothing yet
            "assert 'jax' not in sys.modules, 'jax imported'\n"
            "f(al.constant(1))\n"
            "assert 'jax' in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_an_unknown_backend_and_a_missing_jax_are_clear_errors(monkeypatch):
    with pytest.raises(ValueError, match="backend must be one of 'numpy', 'jax', got 'xla'"):
        al.function(lambda x: x, backend="xla")
    with pytest.raises(ValueError, match="jax_arrays=True returns JAX arrays from backend='jax'"):
        al.function(lambda x: x, jax_arrays=True)
    import autoloop.backends as backends
    monkeypatch.setattr(backends.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ImportError, match=r"pip install 'autoloop\[jax\]'"):
        al.function(lambda x: x, backend="jax")


def test_the_workloads_agree_with_numpy():
    def sum_square(n):
        i = result = n - n
        while i < n:
            result += i * i
            i += 1
        return result

    def rnn(w, x, h):
        for t in al.range(al.shape(x)[0]):
            h = al.tanh(w @ h + x[t])
        return h

    rng = np.random.default_rng(0)
    w = (rng.standard_normal((8, 8)) / 3).astype(np.float32)
    x, h = rng.standard_normal((20, 8)).astype(np.float32), np.zeros(8, np.float32)
    expected, found = both(sum_square, al.constant(1000))
    assert found == expected == sum(i * i for i in range(1000)) % 2 ** 32 - (2 ** 32 if sum(
        i * i for i in range(1000)) % 2 ** 32 >= 2 ** 31 else 0)
    expected, found = both(rnn, w, x, h)
    assert_close(expected, found)


def test_64_bit_values_keep_their_dtypes_without_changing_jax_settings():
    def f(x, y):
        return x * 3, y / 2, al.cast(x, al.float64) + y

    x, y = np.array([2 ** 40, -5], np.int64), np.array([1e-300, 2.0])
    expected, found = both(f, x, y)
    for a, b in zip(expected, found):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    assert not jax.config.jax_enable_x64  # the process-wide setting is the user's


def test_jax_arrays_come_back_without_a_copy_to_the_host():
    f = al.function(lambda x: (x * 2, {"sum": al.reduce_sum(x)}), backend="jax", jax_arrays=True)
    doubled, parts = f(jax.numpy.arange(3.0))
    assert isinstance(doubled, jax.Array) and isinstance(parts["sum"], jax.Array)
    assert doubled.tolist() == [0.0, 2.0, 4.0] and float(parts["sum"]) == 3.0
    tensors = al.function(lambda x: x * 2, backend="jax")(jax.numpy.arange(3.0))  # JAX inputs accepted
    assert isinstance(tensors, al.Tensor) and tensors.numpy().tolist() == [0.0, 2.0, 4.0]


# -- run-time checks: the numpy executor's errors, after the call ------------------------------------
def collatz_checked(n):
    print("start", n)
    assert n > 0, "n must be positive"
    steps = n - n
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    print("steps", steps)
    return steps


def test_a_failed_assert_raises_the_users_error_and_nothing_after_it_runs(capsys):
    f = al.function(collatz_checked, backend="jax")
    assert f(al.constant(6)).numpy() == 8
    assert capsys.readouterr().out == "start 6\nsteps 8\n"
    with pytest.raises(AssertionError, match="n must be positive") as raised:
        f(al.constant(0))  # the loop after the assert would never end: it does not run
    assert capsys.readouterr().out == "start 0\n"
    assert _line_of(raised.value) == collatz_checked.__code__.co_firstlineno + 2


def test_errors_match_the_numpy_executors():
    def unbound(x):
        if x > 0:
            y = x * 2
        return y

    def divide(a, b):
        return a // b

    def read(n):
        ta = al.TensorArray(al.float32, size=3).write(0, 1.0)
        return ta.read(n)

    def index(x, i):
        return x[i] * 2

    cases = [(unbound, (al.constant(-1),), UnboundLocalError),
             (divide, (al.constant(3), al.constant(0)), DivisionByZeroError),
             (read, (al.constant(5),), InvalidArgumentError),
             (index, (al.constant([1, 2]), al.constant(2)), InvalidArgumentError)]
    for fn, args, error_type in cases:
        errors = []
        for backend in ("numpy", "jax"):
            with pytest.raises(error_type) as raised:
                al.function(fn, backend=backend)(*args)
            errors.append(raised.value)
        assert str(errors[1]) == str(errors[0]) and _line_of(errors[1]) == _line_of(errors[0])


def test_prints_in_loops_and_branches_come_in_program_order(capsys):
    def f(n):
        for i in range(n):
            if i % 2 == 0:
                print("even", i)
            else:
                al.print("odd", i, [i, i * 2])
        print("done")
        return n

    expected, found = [], []
    for backend, out in (("numpy", expected), ("jax", found)):
        al.function(f, backend=backend)(al.constant(4))
        out.append(capsys.readouterr().out)
    assert found == expected and expected[0].count("\n") == 5


def test_random_numbers_are_the_numpy_backends():
    def f():
        return al.random.normal([3], seed=1) + al.random.uniform([3], seed=2)

    runs = []
    for backend in ("numpy", "jax"):
        al.random.set_seed(5)
        g = al.function(f, backend=backend)
        runs.append([g().numpy(), g().numpy()])
    assert_close(runs[0][0], runs[1][0]) and assert_close(runs[0][1], runs[1][1])
    assert not np.array_equal(runs[1][0], runs[1][1])  # each call draws the next numbers


# -- what XLA cannot compile: a BackendError at trace time, naming the line and the fix ---------------
def test_a_loop_variable_whose_shape_changes():
    def f(x):
        while al.shape(x)[0] < 8:
            al.autograph.experimental.set_loop_options(shape_invariants=[(x, al.TensorShape([None]))])
            x = al.concat([x, x], 0)
        return x

    assert al.function(f)(al.constant([1])).numpy().tolist() == [1] * 8
    with pytest.raises(BackendError, match=r"while loop's variable x has shape \(1,\) before an iteration and "
                                           r"\(2,\) after it") as raised:
        al.function(f, backend="jax")(al.constant([1]))
    assert f"{__file__}:{f.__code__.co_firstlineno + 1}" in str(raised.value)
    assert _line_of(raised.value) == f.__code__.co_firstlineno + 1 and "backend='numpy'" in str(raised.value)


def test_lists_that_grow_without_a_bound(capsys):
    def appended(n):
        print("appending")  # an effect: a second run would print again, so the program is not grown
        out = []
        i = 0
        while i < n:
            out.append(i * i)
            i += 1
        return al.stack(out)

    def dynamic(n):
        print("appending")
        ta = al.TensorArray(al.int32, size=0, dynamic_size=True)
        i = 0
        while i < n:
            ta = ta.write(i, i)
            i += 1
        return ta.stack()

    def explicit(n):
        print("appending")
        ta = al.TensorArray(al.int32, size=0, dynamic_size=True)
        _, ta = al.while_loop(lambda i, ta: i < n, lambda i, ta: (i + 1, ta.write(i, i)), (0, ta))
        return ta.stack()

    cases = ((appended, "the list out, appended to", 5, 4), (dynamic, r"the TensorArray ta \(dynamic_size=True\), "
             "written", 5, 4), (explicit, r"the TensorArray loop_vars\[1\] \(dynamic_size=True\), written", 3, 3))
    for fn, what, grows, loop in cases:
        first = fn.__code__.co_firstlineno
        with pytest.raises(BackendError, match=f"{what} at {__file__}:{first + grows} in a loop whose number of "
                                               f"iterations is not known when compiling, so the loop "
                                               f"\\(at {__file__}:{first + loop}\\)") as raised:
            al.function(fn, backend="jax")(al.constant(4))
        assert "give the loop a capacity, capacity=N to while_loop" in str(raised.value)
        assert "maximum_iterations" not in str(raised.value)  # it would cut the loop short
        assert _line_of(raised.value) == first + loop and raised.value.__cause__ is None
        assert capsys.readouterr().out == ""


def test_lists_that_grow_without_a_bound_in_a_program_without_effects_compile():
    # (appends in a converted loop: test_jax_capacity's collatz)
    def explicit(n):
        ta = al.TensorArray(al.int32, size=0, dynamic_size=True)
        _, ta = al.while_loop(lambda i, ta: i < n, lambda i, ta: (i + 1, ta.write(i, i * i)), (0, ta))
        return ta.stack()

    for n in (4, 200):  # 200: past the first capacity
        found = al.function(explicit, backend="jax")(al.constant(n)).numpy()
        assert found.tolist() == al.function(explicit)(al.constant(n)).numpy().tolist() == [i * i for i in range(n)]


def test_a_bound_makes_them_compile():
    def appended(n):
        out = []
        i = 0
        while i < n:
            al.autograph.experimental.set_loop_options(maximum_iterations=10)
            out.append(i * i)
            i += 1
        return al.stack(out)

    def counted(xs):
        out = []
        for x in xs:  # a counted loop: the list's length is known, so it can be used further
            out.append(x * 2)
        return al.reduce_sum(al.stack(out))

    expected, found = both(appended, al.constant(4))
    assert found.tolist() == expected.tolist() == [0, 1, 4, 9]  # trimmed to the length it ran
    expected, found = both(counted, al.constant([1, 2, 3]))
    assert found == expected == 12


def test_shapes_that_depend_on_values():
    def f(x, n):
        return x[:n]

    with pytest.raises(BackendError, match=r"x\[i:j\]") as raised:
        al.function(f, backend="jax")(al.constant([1, 2, 3]), al.constant(2))
    assert f"{__file__}:{f.__code__.co_firstlineno + 1}" in str(raised.value)


def test_tf1_variables_and_graphs_are_named():
    import autoloop.compat.v1 as v1
    counter = v1.Variable(2.0, name="counter")

    def step(x):
        counter.assign_add(1.0)
        return x * counter.read_value()

    assert al.function(step)(al.constant(1.0)).numpy() == 3.0  # on numpy: the variable is state
    # An eager variable is carried in and out of the XLA program (autoloop.backends.jax.variables).
    assert al.function(step, backend="jax")(al.constant(1.0)).numpy() == 4.0
    assert counter.numpy() == 4.0

    def double(x):
        return x * 2

    on_jax = al.function(double, backend="jax")
    with v1.Graph().as_default():
        placeholder = v1.placeholder(al.float32, [])
        with pytest.raises(BackendError, match=r"double, a backend='jax' function, is called while a TF1 graph "
                                               r"\(autoloop.compat.v1\) is built .*make it with backend='numpy'") \
                as raised:
            on_jax(placeholder)
        line = sys._getframe().f_lineno - 1
        assert f"{__file__}:{line}" in str(raised.value) and _line_of(raised.value) == line
        doubled = al.function(double)(placeholder)  # a numpy function is part of the graph, as in TF1
        with v1.Session() as session:
            assert session.run(doubled, {placeholder: 1.5}) == 3.0


def test_tf1_print_and_no_op_run_in_order(capsys):
    import autoloop.compat.v1 as v1

    def f(x):
        y = v1.Print(x, [x, x * 2], "x, 2x: ")
        with v1.control_dependencies([v1.no_op()]):
            return y + 1

    outs = []
    for backend in ("numpy", "jax"):
        assert al.function(f, backend=backend)(al.constant(1.5)).numpy() == 2.5
        outs.append(capsys.readouterr().err)
    assert outs[0] == outs[1] == "x, 2x: [1.5][3]\n"


# -- caches: per trace, per shape, and from threads --------------------------------------------------
def test_retracing_with_new_dtypes_and_shapes_and_unrelated_functions():
    def double(x):
        return x * 2

    def total(x):
        result = x[0] * 0
        for value in x:
            result += value
        return result

    f, g = al.function(double, backend="jax"), al.function(total, backend="jax")
    assert g(al.constant([1, 2])).numpy() == 3
    assert f(al.constant(2.5)).numpy() == 5.0
    assert f(al.constant([1, 2])).numpy().tolist() == [2, 4]
    assert g(al.constant([1.5, 2.5, 3.0])).numpy() == 7.0
    assert f(al.constant([[1]], al.int64)).numpy().dtype == np.int64
    assert f.experimental_get_tracing_count() == 3 and g.experimental_get_tracing_count() == 2


def test_array_subclasses_pass_their_data_and_masked_arrays_are_refused():
    class Labelled(np.ndarray):
        pass

    f = al.function(lambda x: x * 2, backend="jax")
    labelled = np.arange(3, dtype=np.int32).view(Labelled)
    for _ in range(2):
        assert f(al.Tensor(labelled)).numpy().tolist() == [0, 2, 4]
    with pytest.raises(TypeError, match=r"a masked array cannot be an argument of a backend='jax' function: XLA has "
                                        r"no masks. Pass its values \(array.filled\(fill_value\)\)"):
        f(al.Tensor(np.ma.masked_array([1, 2], mask=[False, True], dtype=np.int32)))


def test_jax_arrays_take_the_short_call_path_with_new_dtypes_and_shapes():
    jnp = jax.numpy

    def scale(x, y):
        return x * 2 + al.cast(y, x.dtype)

    f = al.function(scale, backend="jax")
    calls = [(jnp.arange(3.0), jnp.int32(1)), (jnp.arange(3.0), jnp.int32(2)), (jnp.arange(4, dtype=jnp.int32),
             jnp.int32(1)), (al.constant([1.0, 2.0, 3.0]), jnp.int32(5)), (jnp.arange(3.0), al.constant(2)),
             (jnp.arange(3.0), jnp.int32(7)), (jnp.ones((2, 2)), jnp.int32(1))]
    for x, y in calls * 2:  # the second time round every call takes the short path
        found = f(x, y).numpy()
        expected = np.asarray(x) * 2 + np.asarray(y).astype(np.asarray(x).dtype)
        assert found.dtype == expected.dtype and np.array_equal(found, expected)
    assert f.experimental_get_tracing_count() == 3  # (float32 (3,)), (int32 (4,)), (float32 (2, 2))
    assert len(f._device_array_types) == 1  # JAX's array type, found in a call
    # The short path keys a JAX array by its abstract value: fresh arrays of one dtype and shape (new
    # objects, results of other computations) share one entry, so the table does not grow per call.
    entries = len(f._fast_runs)
    for step in range(20):
        x = jnp.arange(3.0) + step
        assert f(x, jnp.int32(step)).numpy().tolist() == (np.arange(3.0) * 2 + 3 * step).tolist()
    assert len(f._fast_runs) == entries


def test_reduce_retracing_still_traces_per_shape_for_xla():
    f = al.function(lambda x: x + 1, backend="jax", reduce_retracing=True)
    f(al.constant([1, 2]))
    f(al.constant([1, 2, 3]))
    assert f.experimental_get_tracing_count() == 2  # XLA compiles per shape: so is the graph traced


def test_one_function_from_several_threads():
    def work(n):
        total = n - n
        for i in range(n):
            total += i
        return total

    f = al.function(work, backend="jax")
    results, failures = {}, []

    def call(k):
        try:
            for _ in range(3):  # Tensors and JAX arrays (int32 scalars: one trace), full and short call paths
                argument = al.constant(k) if k % 2 else jax.numpy.int32(k)
                results[k] = int(f(argument).numpy())
        except Exception as error:  # noqa: BLE001 - reported below
            failures.append(error)
    threads = [threading.Thread(target=call, args=(k,)) for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures and results == {k: k * (k - 1) // 2 for k in range(8)}
    assert f.experimental_get_tracing_count() == 1


def test_the_command_line_runs_on_jax(tmp_path):
    source = tmp_path / "model.py"
    source.write_text("def sum_square(n):\n    i = result = n - n\n    while i < n:\n        result += i * i\n"
                      "        i += 1\n    return result\n\n"
                      "def grows(n):\n    out = []\n    i = 0\n    while i < n:\n        out.append(i)\n"
                      "        i += 1\n    return out\n\n"
                      "def shouts(n):\n    out = []\n    i = 0\n    while i < n:\n        print(i)\n"
                      "        out.append(i)\n        i += 1\n    return out\n")
    run = [sys.executable, "-m", "autoloop", "run"]
    done = subprocess.run(run + [f"{source}::sum_square", "10", "--backend", "jax"], capture_output=True,
                          text=True, timeout=120)
    assert (done.returncode, done.stdout.strip()) == (0, "285")
    done = subprocess.run(run + [f"{source}::grows", "3", "--backend", "jax"], capture_output=True, text=True,
                          timeout=120)
    assert (done.returncode, done.stdout.strip()) == (0, "[0, 1, 2]")  # no effects: its capacity grows
    done = subprocess.run(run + [f"{source}::shouts", "3", "--backend", "jax"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and f"{source}:19" in done.stderr
    done = subprocess.run([sys.executable, "-m", "autoloop", "graph", f"{source}::sum_square", "--args", "[3]",
                           "--backend", "jax"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "While" in done.stdout and "lowered to JAX:" in done.stdout
